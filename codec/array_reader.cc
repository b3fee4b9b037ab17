// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/array_reader.h"

#include <new>
#include <string>
#include <utility>

#include "codec/internal/nd_copy.h"
#include "codec/nd_reader.h"
#include "codec/ome_zarr.h"
#include "codec/precomputed/reader.h"
#include "codec/zarr_reader.h"
#include "codec/zarr_v3_meta.h"
#include "common/byte_size.h"
#include "common/str_cat.h"
#include "storage/byte_source.h"
#include "storage/store.h"

namespace patchfeed::codec {

using internal_codec::FillRegion;

Status ArrayReader::CheckDestination(const BoxPlan& plan, const NdView& dst,
                                     std::span<const std::byte> pad_item) const {
  const int n = geom_.ndim;
  if (dst.ndim() != n || static_cast<int>(dst.byte_strides.size()) != n) {
    return InvalidArgumentError(StrCat(path_, ": box and destination need ", n, " dimensions"));
  }
  if (static_cast<int64_t>(pad_item.size()) != geom_.itemsize) {
    return InvalidArgumentError(
        StrCat("pad value of ", pad_item.size(), " bytes for items of ", geom_.itemsize));
  }
  if (!plan.Fits(geom_))
    return InvalidArgumentError(StrCat(path_, ": the read was planned for another array"));
  for (int d = 0; d < n; ++d) {
    if (dst.shape[static_cast<size_t>(d)] != plan.shape()[static_cast<size_t>(d)]) {
      return InvalidArgumentError(
          StrCat("destination shape does not match the box in dimension ", d));
    }
  }
  return Status::Ok();
}

Status ArrayReader::ReadPiece(const BoxPlan& plan, const BoxPiece& piece, const NdView& dst,
                              std::span<const std::byte> pad_item, BoxReadScratch& scratch) const {
  PATCHFEED_RETURN_IF_ERROR(CheckDestination(plan, dst, pad_item));
  if (piece.chunk < 0) {
    FillRegion(geom_.ndim, piece.lo.data(), piece.hi.data(), dst, plan.box().start.data(),
               pad_item);
    return Status::Ok();
  }
  const Status st = ReadChunkPiece(plan, piece, dst, pad_item, scratch);
  Status mapping = CheckMapping();
  return mapping.ok() ? st : mapping;
}

Status ArrayReader::ReadBox(const Box& box, const NdView& dst, std::span<const std::byte> pad_item,
                            BoxReadScratch& scratch) const {
  return ReadBox(box, dst, pad_item, scratch, BlockFilter{});
}

Status ArrayReader::ReadBox(const Box& box, const NdView& dst, std::span<const std::byte> pad_item,
                            BoxReadScratch& scratch, const BlockFilter& filter) const {
  const int n = geom_.ndim;
  if (static_cast<int>(box.start.size()) != n || static_cast<int>(box.stop.size()) != n) {
    return InvalidArgumentError(StrCat(path_, ": box and destination need ", n, " dimensions"));
  }
  // PlanBox checks the untrusted coordinates, CheckDestination that dst has their extents.
  PATCHFEED_RETURN_IF_ERROR(PlanBox(geom_, box, filter, &scratch.plan), path_);
  PATCHFEED_RETURN_IF_ERROR(CheckDestination(scratch.plan, dst, pad_item));
  const BoxPlan& plan = scratch.plan;
  Status st;
  for (int64_t i = 0; i < plan.num_pieces() && st.ok(); ++i) {
    const BoxPiece piece = plan.piece(i);
    if (piece.chunk < 0) {
      FillRegion(n, piece.lo.data(), piece.hi.data(), dst, box.start.data(), pad_item);
    } else {
      st = ReadChunkPiece(plan, piece, dst, pad_item, scratch);
    }
  }
  Status mapping = CheckMapping();
  return mapping.ok() ? st : mapping;
}

Result<std::vector<std::byte>> ArrayReader::ReadBox(const Box& box,
                                                    std::span<const std::byte> pad_item) const {
  // A vector's size must fit in memory; half the address space is a generous ceiling that keeps
  // absurd boxes an error rather than an allocation failure.
  PATCHFEED_ASSIGN_OR_RETURN(std::vector<int64_t> extents,
                             BoxExtents(box, geom_.itemsize, INT64_MAX / 2));
  int64_t bytes = geom_.itemsize;
  for (int64_t e : extents)
    bytes *= e;
  std::vector<std::byte> out;
  try {
    out.resize(static_cast<size_t>(bytes));
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError(StrCat(path_, ": the box needs ", FormatBytes(bytes),
                                         " of memory, more than can be allocated"));
  }
  BoxReadScratch scratch;
  PATCHFEED_RETURN_IF_ERROR(ReadBox(
      box, NdView::Contiguous(out.data(), std::move(extents), geom_.itemsize), pad_item, scratch));
  return out;
}

namespace {

// Whether `path` is a file; a store that cannot tell (a refused request) counts as no: the
// open that follows names what is wrong.
bool IsFile(const storage::Store& store, const std::string& path) {
  const Result<storage::EntryKind> kind = store.Stat(path);
  return kind.ok() && *kind == storage::EntryKind::kFile;
}

Result<std::unique_ptr<ArrayReader>> OpenZarrArray(const std::string& dir,
                                                   std::shared_ptr<const storage::Store> store) {
  PATCHFEED_ASSIGN_OR_RETURN(ZarrArrayReader r, ZarrArrayReader::Open(dir, std::move(store)));
  return std::unique_ptr<ArrayReader>(std::make_unique<ZarrArrayReader>(std::move(r)));
}

// Level `level` of the OME-Zarr image group `dir` whose multiscales are in `attrs` (from `file`).
Result<std::string> OmeLevelPath(const std::string& dir, const std::string& file,
                                 const std::string& attrs, int level) {
  auto paths = ParseOmeMultiscalePaths(attrs);
  if (!paths.ok()) {
    if (paths.status().code() == StatusCode::kNotFound) {
      return InvalidArgumentError(
          StrCat(dir, ": a zarr group, not an array (and no OME-Zarr multiscales in ", file, ")"));
    }
    return paths.status().WithContext(file);
  }
  if (level < 0 || level >= static_cast<int>(paths->size())) {
    return InvalidArgumentError(StrCat(dir, ": OME-Zarr level ", level, " of ", paths->size(),
                                       " (levels 0 to ", paths->size() - 1, ")"));
  }
  return dir + "/" + (*paths)[static_cast<size_t>(level)];
}

}  // namespace

bool IsZarrPath(const std::string& path, const storage::Store& store) {
  return IsFile(store, path + "/.zarray") || IsFile(store, path + "/zarr.json") ||
         IsFile(store, path + "/.zgroup");
}

Result<std::unique_ptr<ArrayReader>> OpenArray(const std::string& path, FrameOpenOptions options,
                                               int ome_level) {
  std::string dir = path;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  const storage::Store& store = *options.store;
  // A file is a `.b2nd` frame: a remote store answers that in one request, before any probe
  // for zarr's metadata.
  PATCHFEED_ASSIGN_OR_RETURN(const storage::EntryKind kind, store.Stat(dir));
  std::string level_path;
  if (kind == storage::EntryKind::kFile) {
    if (ome_level != 0) {
      return InvalidArgumentError(
          StrCat(path, ": an OME-Zarr level was asked for, but this is not a zarr group"));
    }
    PATCHFEED_ASSIGN_OR_RETURN(NdArrayReader r, NdArrayReader::Open(dir, options));
    return std::unique_ptr<ArrayReader>(std::make_unique<NdArrayReader>(std::move(r)));
  }
  if (IsFile(store, dir + "/.zarray")) {
    level_path = dir;
  } else if (IsFile(store, dir + "/zarr.json")) {
    PATCHFEED_ASSIGN_OR_RETURN(const std::string text,
                               ReadZarrMetadataFile(store, dir + "/zarr.json"));
    PATCHFEED_ASSIGN_OR_RETURN(const std::string node, ZarrV3NodeType(text), dir + "/zarr.json");
    if (node != "group") {
      level_path = dir;
    } else {
      PATCHFEED_ASSIGN_OR_RETURN(level_path,
                                 OmeLevelPath(dir, dir + "/zarr.json", text, ome_level));
      ome_level = 0;
    }
  } else if (IsFile(store, dir + "/.zgroup")) {
    std::string attrs = "{}";
    if (IsFile(store, dir + "/.zattrs")) {
      PATCHFEED_ASSIGN_OR_RETURN(attrs, ReadZarrMetadataFile(store, dir + "/.zattrs"));
    }
    PATCHFEED_ASSIGN_OR_RETURN(level_path, OmeLevelPath(dir, dir + "/.zattrs", attrs, ome_level));
    ome_level = 0;
  } else if (IsFile(store, dir + "/info")) {
    // A Neuroglancer precomputed layer: the level is the scale's index.
    PATCHFEED_ASSIGN_OR_RETURN(
        precomputed::PrecomputedReader r,
        precomputed::PrecomputedReader::Open(dir, options.store, ome_level, options.fill_missing));
    return std::unique_ptr<ArrayReader>(
        std::make_unique<precomputed::PrecomputedReader>(std::move(r)));
  } else if (const std::optional<std::string> layer = precomputed::LayerOfScaleFolder(dir, store);
             layer.has_value() && !IsFile(store, dir + "/chunks.b2frame")) {
    // `<layer>/<scale key>`: the folder of one scale's chunks names that scale.
    if (ome_level != 0) {
      return InvalidArgumentError(
          StrCat(path, ": names a precomputed scale by its key; a level cannot be added"));
    }
    PATCHFEED_ASSIGN_OR_RETURN(
        precomputed::PrecomputedReader r,
        precomputed::PrecomputedReader::Open(*layer, options.store, dir.substr(layer->size() + 1),
                                             options.fill_missing));
    return std::unique_ptr<ArrayReader>(
        std::make_unique<precomputed::PrecomputedReader>(std::move(r)));
  } else {
    if (ome_level != 0) {
      return InvalidArgumentError(
          StrCat(path, ": an OME-Zarr level was asked for, but this is not a zarr group"));
    }
    PATCHFEED_ASSIGN_OR_RETURN(NdArrayReader r, NdArrayReader::Open(path, options));
    return std::unique_ptr<ArrayReader>(std::make_unique<NdArrayReader>(std::move(r)));
  }
  if (ome_level != 0) {
    return InvalidArgumentError(
        StrCat(path, ": an OME-Zarr level was asked for, but this is a zarr array"));
  }
  // A level is an array in a subfolder (a multiscales path may itself name a deeper group).
  if (!IsFile(store, level_path + "/.zarray") && !IsFile(store, level_path + "/zarr.json"))
    return NotFoundError(StrCat(level_path, ": no zarr array there"));
  return OpenZarrArray(level_path, options.store);
}

Result<NdGeometry> GridGeometry(const std::vector<int64_t>& shape,
                                const std::vector<int64_t>& chunks,
                                const std::vector<int64_t>& blocks, int64_t itemsize) {
  NdGeometry g;
  g.ndim = static_cast<int>(shape.size());
  g.itemsize = itemsize;
  g.nchunks = 1;
  g.chunk_nitems = 1;
  g.block_nitems = 1;
  bool empty = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    g.shape.push_back(shape[i]);
    g.chunkshape.push_back(chunks[i]);
    g.blockshape.push_back(blocks[i]);
    g.extchunk.push_back(chunks[i]);
    g.blocks_per_chunk.push_back(chunks[i] / blocks[i]);
    const int64_t per_dim = shape[i] == 0 ? 0 : (shape[i] - 1) / chunks[i] + 1;
    empty |= per_dim == 0;
    g.chunks_per_dim.push_back(per_dim);
    if (__builtin_mul_overflow(g.nchunks, std::max<int64_t>(per_dim, 1), &g.nchunks) ||
        __builtin_mul_overflow(g.chunk_nitems, chunks[i], &g.chunk_nitems) ||
        __builtin_mul_overflow(g.block_nitems, blocks[i], &g.block_nitems)) {
      return DataLossError("shape and chunks give sizes beyond 2^63");
    }
  }
  int64_t chunk_bytes = 0;
  if (__builtin_mul_overflow(g.chunk_nitems, itemsize, &chunk_bytes))
    return DataLossError("chunks of more than 2^63 bytes");
  if (empty)
    g.nchunks = 0;
  return g;
}

}  // namespace patchfeed::codec
