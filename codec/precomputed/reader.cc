// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/precomputed/reader.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "codec/blosc/stream_codecs.h"
#include "codec/internal/nd_copy.h"
#include "codec/precomputed/compressed_segmentation.h"
#include "codec/precomputed/jpeg_chunk.h"
#include "codec/precomputed/png_chunk.h"
#include "codec/precomputed/sharding.h"
#include "common/str_cat.h"

namespace patchfeed::codec::precomputed {
namespace {

using internal_codec::CopyStridedRegion;
using internal_codec::FillRegion;
using internal_codec::Index;

// A worker's gzip decoder (libdeflate or zlib contexts), kept in its BoxReadScratch.
struct GzipReadContext final : ReadContext {
  StreamDecoder streams;
};

// An `info` larger than this is not one a writer made (a layer with thousands of scales).
constexpr uint64_t kMaxInfoBytes = uint64_t{16} << 20;
// A gzip'd chunk of n bytes is at most n plus 5 bytes per 16 KiB stored block plus the
// header and trailer: anything longer is not one.
int64_t MaxGzipBytes(int64_t n) { return n + n / 1024 + 1024; }

// A minishard index larger than this is not one a writer made (2^21 chunks in one minishard).
constexpr uint64_t kMaxMinishardIndexBytes = uint64_t{48} << 20;

bool IsGzip(std::span<const std::byte> bytes) {
  return bytes.size() >= 2 && bytes[0] == std::byte{0x1f} && bytes[1] == std::byte{0x8b};
}

uint32_t LoadLe32(const std::byte* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

// Bytes [pos, pos + size) of `file` whole: in place when a source fetched them ahead; else
// announced (a source that fetches ahead learns it needs all of them) and read into `buffer`.
Result<std::span<const std::byte>> ReadWhole(const storage::ByteSource& file, uint64_t pos,
                                             uint64_t size, std::vector<std::byte>& buffer) {
  const storage::FileRange all{pos, size};
  if (const std::byte* image = file.ChunkImage(pos, size, std::span(&all, 1)))
    return std::span<const std::byte>(image, static_cast<size_t>(size));
  file.WillRead(all, std::span(&all, 1));
  return file.Get(pos, static_cast<size_t>(size), buffer);
}

// `stored` gunzipped into `out` when `gzip`: exactly `expected` bytes, or (`exact` false) as
// many as gzip's trailer says, at most `expected`.
Result<std::span<const std::byte>> Gunzip(std::span<const std::byte> stored, int64_t expected,
                                          bool exact, StreamDecoder& streams,
                                          std::vector<std::byte>& out) {
  int64_t decoded = expected;
  if (!exact) {
    // The trailer's size is mod 2^32; `expected` bounds it well below that.
    if (stored.size() < 18)
      return DataLossError(StrCat("a gzip stream of ", stored.size(), " bytes is cut short"));
    decoded = LoadLe32(stored.data() + stored.size() - 4);
    if (decoded > expected) {
      return DataLossError(
          StrCat("gzip says ", decoded, " bytes, more than the ", expected, " the chunk can hold"));
    }
  }
  out.resize(static_cast<size_t>(decoded));
  PATCHFEED_RETURN_IF_ERROR(streams.DecodeGzip(stored, out));
  return std::span<const std::byte>(out);
}

}  // namespace

bool IsPrecomputedLayer(const std::string& path, const storage::Store& store) {
  const Result<storage::EntryKind> kind = store.Stat(storage::JoinPath(path, "info"));
  return kind.ok() && *kind == storage::EntryKind::kFile;
}

Result<Info> ReadInfo(const std::string& layer, const storage::Store& store) {
  const std::string info_path = storage::JoinPath(layer, "info");
  PATCHFEED_ASSIGN_OR_RETURN(const std::string text,
                             storage::ReadSmallFile(store, info_path, kMaxInfoBytes));
  Result<Info> info = ParseInfo(text);
  if (!info.ok())
    return info.status().WithContext(info_path);
  return info;
}

std::optional<std::string> LayerOfScaleFolder(const std::string& path,
                                              const storage::Store& store) {
  std::string dir = path;
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  const size_t slash = dir.rfind('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == dir.size())
    return std::nullopt;
  std::string layer = dir.substr(0, slash);
  // An `info` that is not a layer's (a missing `.b2nd` beside some other file of that name)
  // leaves the path to the other formats and their errors.
  if (!IsPrecomputedLayer(layer, store) || !ReadInfo(layer, store).ok())
    return std::nullopt;
  return layer;
}

Result<PrecomputedReader> PrecomputedReader::Open(const std::string& layer,
                                                  std::shared_ptr<const storage::Store> store,
                                                  std::string_view selector, bool fill_missing) {
  PATCHFEED_ASSIGN_OR_RETURN(const Info info, ReadInfo(layer, *store));
  PATCHFEED_ASSIGN_OR_RETURN(const int scale, FindScale(info, selector),
                             storage::JoinPath(layer, "info"));
  return Open(layer, std::move(store), scale, fill_missing);
}

std::vector<int64_t> PrecomputedReader::origin() const {
  const Vec3& offset = scale().voxel_offset;
  return {0, offset[2], offset[1], offset[0]};
}

Result<PrecomputedReader> PrecomputedReader::Open(const std::string& layer,
                                                  std::shared_ptr<const storage::Store> store,
                                                  int scale, bool fill_missing) {
  const std::string info_path = storage::JoinPath(layer, "info");
  PrecomputedReader r;
  PATCHFEED_ASSIGN_OR_RETURN(r.info_, ReadInfo(layer, *store));
  if (scale < 0 || static_cast<size_t>(scale) >= r.info_.scales.size()) {
    return InvalidArgumentError(
        StrCat(layer, ": no scale ", scale, " (the info has ", r.info_.scales.size(), ")"));
  }
  r.scale_ = scale;
  r.fill_missing_ = fill_missing;
  r.layer_ = layer;
  r.path_ = storage::JoinPath(layer, r.scale().key);
  r.store_ = std::move(store);
  r.dtype_ = r.info_.dtype;
  const Scale& s = r.scale();
  if (s.kind == Encoding::kCompressedSegmentation && r.info_.itemsize != 4 &&
      r.info_.itemsize != 8) {
    return DataLossError(StrCat(r.path_, ": compressed_segmentation of ", r.info_.data_type,
                                " (it encodes uint32 and uint64 only)"));
  }
  if (s.kind == Encoding::kJpeg &&
      (r.info_.itemsize != 1 || (r.info_.num_channels != 1 && r.info_.num_channels != 3))) {
    return DataLossError(StrCat(r.path_, ": jpeg chunks of ", r.info_.num_channels, " channels of ",
                                r.info_.data_type, " (jpeg holds 1 or 3 channels of uint8)"));
  }
  if (s.kind == Encoding::kPng &&
      ((r.info_.itemsize != 1 && r.info_.itemsize != 2) || r.info_.num_channels > 4)) {
    return DataLossError(StrCat(r.path_, ": png chunks of ", r.info_.num_channels, " channels of ",
                                r.info_.data_type,
                                " (png holds 1 to 4 channels of uint8 or uint16)"));
  }
  if (s.kind == Encoding::kOther) {
    return UnimplementedError(
        StrCat(r.path_, ": encoding '", s.encoding, "'",
               " (patchfeed reads raw, compressed_segmentation, jpeg and png precomputed chunks)"));
  }
  const int64_t c = r.info_.num_channels;
  const std::vector<int64_t> shape = {c, s.size[2], s.size[1], s.size[0]};
  const std::vector<int64_t> chunks = {c, s.chunk_size[2], s.chunk_size[1], s.chunk_size[0]};
  PATCHFEED_ASSIGN_OR_RETURN(r.geom_, GridGeometry(shape, chunks, chunks, r.info_.itemsize),
                             info_path);
  return r;
}

ArrayFootprint PrecomputedReader::Footprint() const {
  ArrayFootprint f;
  f.open_state_bytes = 4096 + static_cast<int64_t>(layer_.size());
  f.block_bytes = geom_.chunk_nitems * geom_.itemsize;
  f.chunk_bytes = f.block_bytes;
  f.whole_chunks = true;  // every chunk is decoded (gunzipped) whole before it is copied
  if (!scale().sharding.has_value()) {
    // A chunk file is read whole: the most its encoding (gzip'd or not) takes.
    NdIndex extent{};
    for (int d = 0; d < geom_.ndim; ++d)
      extent[static_cast<size_t>(d)] = geom_.chunkshape[static_cast<size_t>(d)];
    const int64_t encoded = scale().kind == Encoding::kCompressedSegmentation
                                ? MaxSegmentationBytes(extent)
                            : scale().kind == Encoding::kJpeg || scale().kind == Encoding::kPng
                                ? 2 * f.chunk_bytes + 65536
                                : f.chunk_bytes;
    f.whole_file_bytes = MaxGzipBytes(encoded);
  }
  return f;
}

std::string PrecomputedReader::ChunkPath(int64_t chunk) const {
  return storage::JoinPath(path_, ChunkName(ChunkBoundsAt(scale(), GridPosition(chunk))));
}

Vec3 PrecomputedReader::GridPosition(int64_t chunk) const {
  // The grid is (1, z, y, x) chunks, C order.
  Vec3 index{};
  for (int d = 3; d >= 1; --d) {
    const auto i = static_cast<size_t>(d);
    index[3 - i] = chunk % geom_.chunks_per_dim[i];
    chunk /= geom_.chunks_per_dim[i];
  }
  return index;
}

Result<std::optional<std::span<const std::byte>>> PrecomputedReader::StoredChunk(
    const storage::Store& store, int64_t chunk, int64_t max_bytes, std::string* where,
    BoxReadScratch& scratch) const {
  GzipReadContext& gzip = scratch.Context<GzipReadContext>();
  using Stored = std::optional<std::span<const std::byte>>;
  const Scale& s = scale();
  if (!s.sharding.has_value()) {
    std::string path = ChunkPath(chunk);
    *where = path;
    auto file = store.Open(path, storage::IoMode::kPread);
    if (!file.ok() && file.status().code() == StatusCode::kNotFound) {
      path += ".gz";  // cloud-volume's gzip'd chunks in a local folder
      file = store.Open(path, storage::IoMode::kPread);
    }
    if (!file.ok()) {
      if (file.status().code() == StatusCode::kNotFound)
        return Stored();  // never written
      return file.status();
    }
    *where = path;
    const uint64_t size = (*file)->size();
    if (size > static_cast<uint64_t>(MaxGzipBytes(max_bytes))) {
      return DataLossError(StrCat(path, ": ", size, " bytes, more than a chunk of at most ",
                                  max_bytes, " bytes can be stored in"));
    }
    PATCHFEED_ASSIGN_OR_RETURN(auto bytes, ReadWhole(**file, 0, size, scratch.chunk), path);
    return Stored(bytes);
  }
  // Sharded: the shard index's entry, the minishard index, then the chunk.
  const Sharding& sh = *s.sharding;
  const Vec3 grid = {geom_.chunks_per_dim[3], geom_.chunks_per_dim[2], geom_.chunks_per_dim[1]};
  const uint64_t id = CompressedMortonCode(GridPosition(chunk), grid);
  const ShardLocation loc = LocateChunk(sh, id);
  const std::string path = storage::JoinPath(path_, loc.shard_file);
  *where = StrCat(path, " (chunk ", id, ")");
  auto file = store.Open(path, storage::IoMode::kPread);
  if (!file.ok()) {
    if (file.status().code() == StatusCode::kNotFound)
      return Stored();  // no chunk of this shard was written
    return file.status();
  }
  const storage::ByteSource& shard = **file;
  const auto within = [&](const ShardRange& r) -> Status {
    if (r.offset > shard.size() || r.size > shard.size() - r.offset) {
      return DataLossError(
          StrCat(*where, ": bytes ", r.offset, "+", r.size, " pass the shard's ", shard.size()));
    }
    return Status::Ok();
  };
  const ShardRange entry = ShardIndexEntry(loc.minishard);
  PATCHFEED_RETURN_IF_ERROR(within(entry));
  PATCHFEED_ASSIGN_OR_RETURN(auto entry_bytes, shard.Get(entry.offset, 16, scratch.index), *where);
  PATCHFEED_ASSIGN_OR_RETURN(const ShardRange range, MinishardIndexRange(entry_bytes, sh), *where);
  if (range.size == 0)
    return Stored();  // an empty minishard
  PATCHFEED_RETURN_IF_ERROR(within(range));
  if (range.size > kMaxMinishardIndexBytes)
    return DataLossError(StrCat(*where, ": a minishard index of ", range.size, " bytes"));
  // The minishard index, decoded: kept by the store from an earlier read of the same version
  // of the shard (a remote object's ETag), or read now and handed to the store to keep.
  const std::string version = shard.version();
  const std::string key = StrCat(path, "\n", version, "\nminishard ", loc.minishard);
  const std::shared_ptr<const std::vector<std::byte>> kept =
      version.empty() ? nullptr : store_->Recall(key);
  std::span<const std::byte> index;
  if (kept != nullptr) {
    index = *kept;
  } else {
    PATCHFEED_ASSIGN_OR_RETURN(index, ReadWhole(shard, range.offset, range.size, scratch.chunk),
                               *where);
    if (sh.minishard_index_gzip) {
      PATCHFEED_ASSIGN_OR_RETURN(index,
                                 Gunzip(index, static_cast<int64_t>(kMaxMinishardIndexBytes), false,
                                        gzip.streams, scratch.stage),
                                 StrCat(*where, ": its minishard index"));
    }
    if (!version.empty())
      store_->Keep(key, index);
  }
  PATCHFEED_ASSIGN_OR_RETURN(const std::optional<ShardRange> found, FindChunk(index, sh, id),
                             *where);
  if (!found)
    return Stored();  // never written
  PATCHFEED_RETURN_IF_ERROR(within(*found));
  if (found->size > static_cast<uint64_t>(MaxGzipBytes(max_bytes))) {
    return DataLossError(StrCat(*where, ": ", found->size, " bytes, more than a chunk of at most ",
                                max_bytes, " bytes can be stored in"));
  }
  PATCHFEED_ASSIGN_OR_RETURN(auto bytes,
                             ReadWhole(shard, found->offset, found->size, scratch.chunk), *where);
  return Stored(bytes);
}

Result<std::span<const std::byte>> PrecomputedReader::Decoded(std::span<const std::byte> stored,
                                                              int64_t expected,
                                                              BoxReadScratch& scratch) const {
  GzipReadContext& gzip = scratch.Context<GzipReadContext>();
  const bool segmentation = scale().kind == Encoding::kCompressedSegmentation;
  const bool exact_raw = !segmentation && static_cast<int64_t>(stored.size()) == expected;
  // Gzip'd: as the sharding says, else when it starts with gzip's magic (cloud-volume's `.gz`
  // files, objects stored with Content-Encoding: gzip). A raw chunk may start with the magic
  // too, and a gzip'd one may have the raw size: it is raw when it does not gunzip.
  if (scale().sharding.has_value() ? scale().sharding->data_gzip : IsGzip(stored)) {
    Result<std::span<const std::byte>> out =
        Gunzip(stored, expected, !segmentation, gzip.streams, scratch.whole);
    if (out.ok() || !exact_raw || scale().sharding.has_value())
      return out;
  }
  if (segmentation ? stored.size() % 4 == 0 : static_cast<int64_t>(stored.size()) == expected)
    return stored;
  return DataLossError(StrCat(stored.size(), " bytes, neither ",
                              segmentation ? "whole 32-bit words" : "the chunk's raw bytes",
                              " nor gzip"));
}

// The largest compressed_segmentation chunk of `extent` voxels (C, z, y, x): per channel, two
// header words per block and, per voxel, at most one word of index and a table entry.
int64_t PrecomputedReader::MaxSegmentationBytes(const NdIndex& extent) const {
  const Vec3& block = scale().segmentation_block;
  const Vec3 size = {extent[3], extent[2], extent[1]};
  int64_t blocks = 1;
  for (size_t d = 0; d < 3; ++d)
    blocks *= (size[d] + block[d] - 1) / block[d];
  const int64_t voxels = blocks * block[0] * block[1] * block[2];
  return 4 * extent[0] * (1 + 2 * blocks + voxels * (1 + geom_.itemsize / 4));
}

Status PrecomputedReader::ReadChunkPiece(const BoxPlan& plan, const BoxPiece& piece,
                                         const NdView& dst, std::span<const std::byte> pad_item,
                                         BoxReadScratch& scratch) const {
  GzipReadContext& gzip = scratch.Context<GzipReadContext>();
  const int n = geom_.ndim;
  const int64_t* dst_origin = plan.box().start.data();
  if (plan.filtered() && !plan.wants(piece, piece.block_lo)) {
    FillRegion(n, piece.lo.data(), piece.hi.data(), dst, dst_origin, pad_item);
    return Status::Ok();
  }
  // The chunk's extent, clipped at the volume's end: it holds exactly these voxels.
  NdIndex extent{};
  int64_t raw_bytes = geom_.itemsize;
  for (int d = 0; d < n; ++d) {
    const auto i = static_cast<size_t>(d);
    extent[i] = std::min(geom_.chunkshape[i], geom_.shape[i] - piece.origin[i]);
    raw_bytes *= extent[i];
  }
  const bool segmentation = scale().kind == Encoding::kCompressedSegmentation;
  const bool jpeg = scale().kind == Encoding::kJpeg;
  const bool png = scale().kind == Encoding::kPng;
  // What a chunk can take once gunzipped: a JPEG of noise may be larger than the voxels.
  const int64_t max_bytes = segmentation  ? MaxSegmentationBytes(extent)
                            : jpeg || png ? 2 * raw_bytes + 65536
                                          : raw_bytes;
  const storage::Store& store = scratch.store != nullptr ? *scratch.store : *store_;
  std::string where;
  PATCHFEED_ASSIGN_OR_RETURN(const auto stored,
                             StoredChunk(store, piece.chunk, max_bytes, &where, scratch));
  if (!stored) {
    if (!fill_missing_) {
      return NotFoundError(
          StrCat(where, ": this chunk was never written (reading with fill_missing off)"));
    }
    // A chunk never written reads as zeros (cloud-volume's fill_missing).
    const std::vector<std::byte> zero(static_cast<size_t>(geom_.itemsize), std::byte{0});
    FillRegion(n, piece.lo.data(), piece.hi.data(), dst, dst_origin, zero);
    return Status::Ok();
  }
  std::span<const std::byte> chunk;
  if (jpeg || png) {
    std::span<const std::byte> image = *stored;
    if (scale().sharding.has_value() && scale().sharding->data_gzip) {
      PATCHFEED_ASSIGN_OR_RETURN(
          image, Gunzip(image, max_bytes, false, gzip.streams, scratch.whole), where);
    }
    scratch.stage.resize(static_cast<size_t>(raw_bytes));
    const Vec3 size = {extent[3], extent[2], extent[1]};
    PATCHFEED_RETURN_IF_ERROR(
        jpeg ? DecodeJpegChunk(image, size, extent[0], scratch.stage)
             : DecodePngChunk(image, size, extent[0], geom_.itemsize, scratch.stage),
        where);
    chunk = scratch.stage;
  } else {
    PATCHFEED_ASSIGN_OR_RETURN(chunk, Decoded(*stored, max_bytes, scratch), where);
  }
  if (segmentation) {
    const Vec3 size = {extent[3], extent[2], extent[1]};
    const Vec3 lo = {piece.lo[3] - piece.origin[3], piece.lo[2] - piece.origin[2],
                     piece.lo[1] - piece.origin[1]};
    const Vec3 hi = {piece.hi[3] - piece.origin[3], piece.hi[2] - piece.origin[2],
                     piece.hi[1] - piece.origin[1]};
    for (int64_t c = piece.lo[0]; c < piece.hi[0]; ++c) {
      VoxelsOut out;
      out.data = dst.data;
      for (size_t d = 0; d < 4; ++d)
        out.data += ((d == 0 ? c : piece.lo[d]) - dst_origin[d]) * dst.byte_strides[d];
      out.stride = {dst.byte_strides[3], dst.byte_strides[2], dst.byte_strides[1]};
      PATCHFEED_RETURN_IF_ERROR(
          DecodeCompressedSegmentation(chunk, geom_.itemsize, size, scale().segmentation_block, c,
                                       lo, hi, out),
          where);
    }
    return Status::Ok();
  }
  Index strides{};
  int64_t stride = geom_.itemsize;
  for (int d = n - 1; d >= 0; --d) {
    strides[static_cast<size_t>(d)] = stride;
    stride *= extent[static_cast<size_t>(d)];
  }
  CopyStridedRegion(n, geom_.itemsize, piece.lo.data(), piece.hi.data(), chunk.data(),
                    piece.origin.data(), strides.data(), dst, dst_origin);
  return Status::Ok();
}

}  // namespace patchfeed::codec::precomputed
