// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/zarr/zarr_reader.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "codec/blosc/partial_chunk_read.h"
#include "codec/blosc/read_context.h"
#include "codec/internal/nd_copy.h"
#include "codec/zarr/zarr_meta.h"
#include "codec/zarr/zarr_v3_meta.h"
#include "common/str_cat.h"
#include "storage/byte_source.h"

#include <isa-l/crc.h>

namespace patchfeed::codec {
namespace {

using internal_codec::CopyStridedRegion;
using internal_codec::FillRegion;
using internal_codec::ForEachIndex;
using internal_codec::Index;
using internal_codec::SwapRegionBytes;
using Step = ZarrChunkCodecs::Step;

// A metadata document larger than this is not one a zarr writer made.
constexpr int64_t kMaxMetadataBytes = int64_t{16} << 20;
// Sharding index entries: offset and size, little-endian; both all ones mark an empty chunk.
constexpr int64_t kIndexEntryBytes = 16;
constexpr uint64_t kEmptyEntry = ~uint64_t{0};

uint64_t LoadLe64(const std::byte* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | static_cast<uint64_t>(p[i]);
  return v;
}

uint32_t LoadLe32(const std::byte* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

// CRC-32C (Castagnoli) as zarr's crc32c codec computes it: ISA-L's iSCSI CRC, which takes
// and returns the register without the final inversions.
uint32_t Crc32c(std::span<const std::byte> bytes) {
  auto* p = reinterpret_cast<unsigned char*>(const_cast<std::byte*>(bytes.data()));
  return ~crc32_iscsi(p, static_cast<int>(bytes.size()), ~0u);
}

// Whether the steps are ones this reader undoes: checksums outermost, at most one compressor.
Status CheckSteps(const std::vector<Step>& steps, const std::string& where) {
  size_t n = steps.size();
  while (n > 0 && steps[n - 1] == Step::kCrc32c)
    --n;
  if (n > 1 || (n == 1 && steps[0] == Step::kCrc32c)) {
    return UnimplementedError(StrCat(where,
                                     ": a chain of more than one compressor, or a checksum "
                                     "inside a compressor"));
  }
  return Status::Ok();
}

// The step that undoes a zarr v2 compressor; none for chunks stored raw.
std::optional<Step> StepOfV2(ZarrCompressor compressor) {
  switch (compressor) {
    case ZarrCompressor::kBlosc:
      return Step::kBlosc;
    case ZarrCompressor::kZstd:
      return Step::kZstd;
    case ZarrCompressor::kLz4:
      return Step::kLz4;
    case ZarrCompressor::kGzip:
      return Step::kGzip;
    case ZarrCompressor::kZlib:
      return Step::kZlib;
    case ZarrCompressor::kNone:
      break;
  }
  return std::nullopt;
}

Result<std::vector<Step>> StepsOfV3(const ZarrV3Codecs& codecs) {
  std::vector<Step> steps;
  for (const ZarrV3BytesCodec c : codecs.bytes_codecs) {
    switch (c) {
      case ZarrV3BytesCodec::kBlosc:
        steps.push_back(Step::kBlosc);
        break;
      case ZarrV3BytesCodec::kZstd:
        steps.push_back(Step::kZstd);
        break;
      case ZarrV3BytesCodec::kGzip:
        steps.push_back(Step::kGzip);
        break;
      case ZarrV3BytesCodec::kCrc32c:
        steps.push_back(Step::kCrc32c);
        break;
    }
  }
  return steps;
}

}  // namespace

Result<std::string> ReadZarrMetadataFile(const storage::Store& store, const std::string& path) {
  return storage::ReadSmallFile(store, path, static_cast<uint64_t>(kMaxMetadataBytes));
}

Result<ZarrArrayReader> ZarrArrayReader::Open(const std::string& dir,
                                              std::shared_ptr<const storage::Store> store) {
  ZarrArrayReader r;
  r.dir_ = dir;
  r.path_ = dir;
  r.store_ = std::move(store);
  std::vector<int64_t> shape, chunks;
  auto v2_text = ReadZarrMetadataFile(*r.store_, dir + "/.zarray");
  if (v2_text.ok()) {
    auto meta = ParseZarrV2Meta(*v2_text);
    if (!meta.ok())
      return meta.status().WithContext(dir + "/.zarray");
    r.version_ = 2;
    shape = meta->shape;
    chunks = meta->chunks;
    r.key_separator_ = meta->dimension_separator;
    r.key_prefix_c_ = false;
    r.codecs_.big_endian = meta->dtype[0] == '>' && meta->itemsize > 1;
    r.dtype_ = meta->dtype;
    if (r.dtype_[0] == '>')
      r.dtype_[0] = '<';
    r.fill_.assign(static_cast<size_t>(meta->itemsize), std::byte{0});
    if (meta->fill_value.has_value()) {
      r.fill_ = *meta->fill_value;
      if (r.codecs_.big_endian)
        std::reverse(r.fill_.begin(), r.fill_.end());
    }
    if (const std::optional<Step> step = StepOfV2(meta->compressor))
      r.codecs_.steps.push_back(*step);
    r.unit_shape_ = chunks;
    PATCHFEED_ASSIGN_OR_RETURN(r.geom_, GridGeometry(shape, chunks, chunks, meta->itemsize),
                               dir + "/.zarray");
  } else if (v2_text.status().code() != StatusCode::kNotFound) {
    return v2_text.status();
  } else {
    auto v3_text = ReadZarrMetadataFile(*r.store_, dir + "/zarr.json");
    if (!v3_text.ok()) {
      if (v3_text.status().code() == StatusCode::kNotFound) {
        return NotFoundError(StrCat(dir, ": not a zarr array (no .zarray and no zarr.json in it)"));
      }
      return v3_text.status();
    }
    auto meta = ParseZarrV3Meta(*v3_text);
    if (!meta.ok())
      return meta.status().WithContext(dir + "/zarr.json");
    r.version_ = 3;
    shape = meta->shape;
    chunks = meta->chunks;
    r.key_separator_ = meta->chunk_key_separator;
    r.key_prefix_c_ = !meta->v2_chunk_keys;
    r.dtype_ = meta->numpy_dtype;
    r.fill_ = meta->fill_value;
    const ZarrV3Codecs* chunk_codecs = &meta->codecs;
    std::vector<int64_t> blocks = chunks;
    if (meta->sharding.has_value()) {
      r.sharded_ = true;
      r.index_at_end_ = meta->sharding->index_at_end;
      r.index_crc32c_ = meta->sharding->index_crc32c;
      blocks = meta->sharding->inner_chunks;
      chunk_codecs = &meta->sharding->inner;
    }
    r.codecs_.transpose_order = chunk_codecs->transpose_order;
    r.codecs_.big_endian = chunk_codecs->big_endian && meta->itemsize > 1;
    PATCHFEED_ASSIGN_OR_RETURN(r.codecs_.steps, StepsOfV3(*chunk_codecs));
    r.unit_shape_ = blocks;
    PATCHFEED_ASSIGN_OR_RETURN(r.geom_, GridGeometry(shape, chunks, blocks, meta->itemsize),
                               dir + "/zarr.json");
  }
  PATCHFEED_RETURN_IF_ERROR(CheckSteps(r.codecs_.steps, r.dir_));
  r.unit_bytes_ = r.geom_.block_nitems * r.geom_.itemsize;
  if (r.unit_bytes_ > kMaxZarrChunkBytes) {
    return UnimplementedError(
        StrCat(dir, ": chunks of ", r.unit_bytes_, " bytes (patchfeed reads chunks up to 2 GiB)"));
  }
  // The worst expansion of zstd, LZ4, deflate and Blosc on incompressible data is far below
  // 1/64 of the input plus 64 KiB; checksums add 4 bytes each.
  r.max_stored_bytes_ =
      r.unit_bytes_ + r.unit_bytes_ / 64 + 65536 + 4 * static_cast<int64_t>(r.codecs_.steps.size());
  if (static_cast<int64_t>(r.fill_.size()) != r.geom_.itemsize)
    return DataLossError(StrCat(dir, ": the fill value is not one item"));
  return r;
}

ArrayFootprint ZarrArrayReader::Footprint() const {
  ArrayFootprint f;
  // Unknown without reading every chunk file: the bytes-read metric counts decoded bytes.
  f.compression_ratio = 1.0;
  f.open_state_bytes = 1024 + static_cast<int64_t>(dir_.size());
  f.block_bytes = unit_bytes_;
  f.chunk_bytes = unit_bytes_;
  // Every (inner) chunk is decoded into scratch unless a Blosc chunk lands whole in place.
  f.whole_chunks = true;
  return f;
}

std::string ZarrArrayReader::ChunkPath(int64_t chunk) const {
  const NdGeometry& g = geom_;
  Index idx{};
  for (int d = g.ndim - 1; d >= 0; --d) {
    const auto i = static_cast<size_t>(d);
    idx[i] = chunk % g.chunks_per_dim[i];
    chunk /= g.chunks_per_dim[i];
  }
  // v3 "default" keys: "c", then each index after the separator; v2 keys: the indices joined
  // by it, "0" for a 0-d array.
  std::string key;
  for (int d = 0; d < g.ndim; ++d) {
    if (d > 0)
      key.push_back(key_separator_);
    key.append(std::to_string(idx[static_cast<size_t>(d)]));
  }
  if (key_prefix_c_) {
    key = g.ndim == 0 ? std::string("c") : StrCat("c", std::string(1, key_separator_), key);
  } else if (g.ndim == 0) {
    key.push_back('0');  // key is empty here
  }
  return dir_ + "/" + key;
}

void ZarrArrayReader::BloscBlocksFor(const ChunkHeader& h, const int64_t* origin, const int64_t* lo,
                                     const int64_t* hi, std::vector<int32_t>* blocks) const {
  const int n = geom_.ndim;
  const int64_t itemsize = geom_.itemsize;
  // The region's first and last byte in the chunk's C order (all of it when stored
  // transposed): Blosc1 blocks are byte ranges of the chunk, so these bound the blocks needed.
  int64_t first = 0, last = unit_bytes_;
  if (codecs_.transpose_order.empty() && n > 0) {
    int64_t s = itemsize, f = 0, l = 0;
    for (int d = n - 1; d >= 0; --d) {
      f += (lo[d] - origin[d]) * s;
      l += (hi[d] - 1 - origin[d]) * s;
      s *= unit_shape_[static_cast<size_t>(d)];
    }
    first = f;
    last = l + itemsize;
  }
  blocks->clear();
  if (h.blocksize <= 0)
    return;
  const int64_t bs = h.blocksize;
  for (int64_t b = first / bs; b <= (last - 1) / bs && b < h.nblocks; ++b)
    blocks->push_back(static_cast<int32_t>(b));
}

Result<std::span<const std::byte>> ZarrArrayReader::ReadStored(const storage::ByteSource& file,
                                                               uint64_t pos, uint64_t nbytes,
                                                               const int64_t* origin,
                                                               const int64_t* lo, const int64_t* hi,
                                                               BoxReadScratch& scratch) const {
  BloscReadContext& blosc = scratch.Context<BloscReadContext>();
  // A Blosc chunk alone (a checksum after it covers all of its bytes): read only its blocks.
  if (codecs_.steps.size() == 1 && codecs_.steps[0] == Step::kBlosc) {
    std::vector<int32_t> picked;
    PATCHFEED_ASSIGN_OR_RETURN(const auto image,
                               ReadChunkBlocksAt(
                                   file, pos, static_cast<int64_t>(nbytes),
                                   [&](const ChunkHeader& h, std::vector<int32_t>* blocks) {
                                     BloscBlocksFor(h, origin, lo, hi, blocks);
                                   },
                                   &picked, scratch.chunk, &blosc.header));
    if (image)
      return *image;
  }
  // The whole stored chunk: in place when a source fetched it ahead; else announced (a source
  // that fetches ahead learns it needs all of it) and read.
  const storage::FileRange all{pos, nbytes};
  if (const std::byte* image = file.ChunkImage(pos, nbytes, std::span(&all, 1)))
    return std::span<const std::byte>(image, static_cast<size_t>(nbytes));
  file.WillRead(all, std::span(&all, 1));
  return file.Get(pos, static_cast<size_t>(nbytes), scratch.chunk);
}

Status ZarrArrayReader::Decode(std::span<const std::byte> stored, const int64_t* origin,
                               const int64_t* lo, const int64_t* hi, const NdView& dst,
                               const int64_t* dst_origin, BoxReadScratch& scratch,
                               std::span<const std::byte>* decoded, bool* direct) const {
  BloscReadContext& blosc = scratch.Context<BloscReadContext>();
  const int n = geom_.ndim;
  const int64_t itemsize = geom_.itemsize;
  *direct = false;
  // Checksums first: they cover the bytes as stored, outermost last.
  size_t nsteps = codecs_.steps.size();
  while (nsteps > 0 && codecs_.steps[nsteps - 1] == Step::kCrc32c) {
    if (stored.size() < 4)
      return DataLossError("a crc32c checksum needs 4 bytes, the chunk holds fewer");
    const auto body = stored.first(stored.size() - 4);
    const uint32_t want = LoadLe32(stored.data() + body.size());
    const uint32_t got = Crc32c(body);
    if (want != got) {
      return DataLossError(StrCat("crc32c checksum ", got, " differs from the stored ", want,
                                  " (the chunk changed)"));
    }
    stored = body;
    --nsteps;
  }
  const auto unit = static_cast<size_t>(unit_bytes_);
  if (nsteps == 0) {
    if (stored.size() != unit) {
      return DataLossError(
          StrCat("an uncompressed chunk of ", stored.size(), " bytes, expected ", unit));
    }
    *decoded = stored;
    return Status::Ok();
  }
  const Step step = codecs_.steps[0];
  if (step == Step::kBlosc) {
    ChunkHeader& h = blosc.header;
    PATCHFEED_RETURN_IF_ERROR(ParseChunkHeader(stored, &h));
    if (h.nbytes != unit_bytes_) {
      return DataLossError(
          StrCat("the Blosc chunk holds ", h.nbytes, " bytes, the array's chunks ", unit_bytes_));
    }
    // Whole chunk straight into dst: the region is the whole chunk and dst has its layout.
    bool whole = codecs_.transpose_order.empty() && !codecs_.big_endian;
    int64_t stride = itemsize;
    for (int d = n - 1; d >= 0 && whole; --d) {
      const auto i = static_cast<size_t>(d);
      whole = lo[d] == origin[d] && hi[d] == origin[d] + unit_shape_[i] &&
              (unit_shape_[i] == 1 || dst.byte_strides[i] == stride);
      stride *= unit_shape_[i];
    }
    if (whole) {
      int64_t off = 0;
      for (int d = 0; d < n; ++d)
        off += (origin[d] - dst_origin[d]) * dst.byte_strides[static_cast<size_t>(d)];
      *direct = true;
      return blosc.decoder.DecodeChunk(stored, std::span(dst.data + off, unit));
    }
    if (h.memcpyed && h.special == SpecialValue::kNone) {
      // Stored raw after the header (incompressible data): copy the region straight from it.
      // ParseChunkHeader checked that the chunk holds header_size + nbytes bytes.
      *decoded = stored.subspan(static_cast<size_t>(h.header_size), unit);
      return Status::Ok();
    }
    scratch.whole.resize(unit);
    if (!h.is_regular() || h.blocksize <= 0) {
      PATCHFEED_RETURN_IF_ERROR(blosc.decoder.DecodeChunk(stored, scratch.whole));
    } else {
      // Only the blocks ReadStored read (the same choice).
      BloscBlocksFor(h, origin, lo, hi, &scratch.wanted_blocks);
      for (const int32_t b : scratch.wanted_blocks) {
        PATCHFEED_RETURN_IF_ERROR(
            blosc.decoder.DecodeBlock(stored, h, b,
                                      std::span(scratch.whole.data() + int64_t{b} * h.blocksize,
                                                static_cast<size_t>(h.block_nbytes(b)))));
      }
    }
    *decoded = scratch.whole;
    return Status::Ok();
  }
  scratch.whole.resize(unit);
  const std::span<std::byte> out(scratch.whole.data(), unit);
  switch (step) {
    case Step::kZstd:
      PATCHFEED_RETURN_IF_ERROR(blosc.streams.Decode(CodecFormat::kZstd, stored, out, {}));
      break;
    case Step::kZlib:
      PATCHFEED_RETURN_IF_ERROR(blosc.streams.Decode(CodecFormat::kZlib, stored, out, {}));
      break;
    case Step::kGzip:
      PATCHFEED_RETURN_IF_ERROR(blosc.streams.DecodeGzip(stored, out));
      break;
    case Step::kLz4: {
      // numcodecs' LZ4: the decoded size as 4 little-endian bytes, then one LZ4 block.
      if (stored.size() < 4 || LoadLe32(stored.data()) != unit) {
        return DataLossError(StrCat("the lz4 chunk's size prefix does not say ", unit, " bytes"));
      }
      PATCHFEED_RETURN_IF_ERROR(
          blosc.streams.Decode(CodecFormat::kLZ4, stored.subspan(4), out, {}));
      break;
    }
    case Step::kBlosc:
    case Step::kCrc32c:
      return InternalError("unreachable zarr step");
  }
  *decoded = out;
  return Status::Ok();
}

Status ZarrArrayReader::CopyFromChunk(std::span<const std::byte> stored, const int64_t* origin,
                                      const int64_t* lo, const int64_t* hi, const NdView& dst,
                                      const int64_t* dst_origin, BoxReadScratch& scratch,
                                      const std::string& context) const {
  const int n = geom_.ndim;
  std::span<const std::byte> decoded;
  bool direct = false;
  PATCHFEED_RETURN_IF_ERROR(
      Decode(stored, origin, lo, hi, dst, dst_origin, scratch, &decoded, &direct), context);
  if (direct)
    return Status::Ok();
  // The chunk's strides as stored: C order over the transposed shape.
  Index strides{};
  {
    const std::vector<int>& order = codecs_.transpose_order;
    int64_t s = geom_.itemsize;
    for (int i = n - 1; i >= 0; --i) {
      const auto axis = order.empty() ? i : order[static_cast<size_t>(i)];
      strides[static_cast<size_t>(axis)] = s;
      s *= unit_shape_[static_cast<size_t>(axis)];
    }
  }
  CopyStridedRegion(n, geom_.itemsize, lo, hi, decoded.data(), origin, strides.data(), dst,
                    dst_origin);
  if (codecs_.big_endian)
    SwapRegionBytes(n, geom_.itemsize, lo, hi, dst, dst_origin);
  return Status::Ok();
}

Status ZarrArrayReader::ReadChunkPiece(const BoxPlan& plan, const BoxPiece& piece,
                                       const NdView& dst, std::span<const std::byte> pad_item,
                                       BoxReadScratch& scratch) const {
  const int n = geom_.ndim;
  const int64_t* dst_origin = plan.box().start.data();
  if (!sharded_ && plan.filtered() && !plan.wants(piece, piece.block_lo)) {
    FillRegion(n, piece.lo.data(), piece.hi.data(), dst, dst_origin, pad_item);
    return Status::Ok();
  }
  const std::string path = ChunkPath(piece.chunk);
  const storage::Store& store = scratch.store != nullptr ? *scratch.store : *store_;
  auto source = store.Open(path, storage::IoMode::kPread);
  if (!source.ok()) {
    if (source.status().code() != StatusCode::kNotFound)
      return source.status();
    // zarr writes no file for a chunk (or shard) that is all fill value.
    FillRegion(n, piece.lo.data(), piece.hi.data(), dst, dst_origin, fill_);
    return Status::Ok();
  }
  if (sharded_)
    return ReadShardPiece(plan, piece, **source, path, dst, pad_item, scratch);
  const uint64_t size = (*source)->size();
  if (size > static_cast<uint64_t>(max_stored_bytes_)) {
    return DataLossError(StrCat(path, ": ", size, " bytes, more than a chunk of ", unit_bytes_,
                                " bytes can be stored in"));
  }
  PATCHFEED_ASSIGN_OR_RETURN(
      const auto stored,
      ReadStored(**source, 0, size, piece.origin.data(), piece.lo.data(), piece.hi.data(), scratch),
      path);
  return CopyFromChunk(stored, piece.origin.data(), piece.lo.data(), piece.hi.data(), dst,
                       dst_origin, scratch, path);
}

Status ZarrArrayReader::ReadShardPiece(const BoxPlan& plan, const BoxPiece& piece,
                                       const storage::ByteSource& file, const std::string& path,
                                       const NdView& dst, std::span<const std::byte> pad_item,
                                       BoxReadScratch& scratch) const {
  const NdGeometry& g = geom_;
  const int n = g.ndim;
  const int64_t* dst_origin = plan.box().start.data();
  const uint64_t size = file.size();
  int64_t inner = 1;
  for (int d = 0; d < n; ++d)
    inner *= g.blocks_per_chunk[static_cast<size_t>(d)];
  // Shards hold at most as many inner chunks as the grid allows; the index size follows.
  const uint64_t index_bytes =
      static_cast<uint64_t>(inner) * kIndexEntryBytes + (index_crc32c_ ? 4 : 0);
  if (size < index_bytes) {
    return DataLossError(StrCat(path, ": a shard of ", size, " bytes cannot hold its index of ",
                                index_bytes, " bytes"));
  }
  // The index: kept by the store from an earlier read of the same version of the shard (a
  // remote object's ETag), or read now and handed to the store to keep.
  const std::string version = file.version();
  const std::string memo_key = StrCat(path, "\n", version, "\nzarr shard index");
  const std::shared_ptr<const std::vector<std::byte>> kept =
      version.empty() ? nullptr : store_->Recall(memo_key);
  std::span<const std::byte> index;
  if (kept != nullptr && kept->size() == index_bytes) {
    index = *kept;
  } else {
    const uint64_t index_at = index_at_end_ ? size - index_bytes : 0;
    PATCHFEED_ASSIGN_OR_RETURN(index,
                               file.Get(index_at, static_cast<size_t>(index_bytes), scratch.index));
    if (index_crc32c_) {
      const auto body = index.first(index.size() - 4);
      if (LoadLe32(body.data() + body.size()) != Crc32c(body))
        return DataLossError(StrCat(path, ": the shard index's crc32c checksum differs"));
    }
    if (!version.empty())
      store_->Keep(memo_key, index);
  }
  return ForEachIndex(
      n, piece.block_lo.data(), piece.block_hi.data(), [&](const Index& k) -> Status {
        Index blo{}, ilo{}, ihi{};
        int64_t number = 0;
        for (int d = 0; d < n; ++d) {
          const auto i = static_cast<size_t>(d);
          blo[i] = piece.origin[i] + k[i] * g.blockshape[i];
          ilo[i] = std::max(piece.lo[i], blo[i]);
          ihi[i] = std::min(piece.hi[i], blo[i] + g.blockshape[i]);
          number = number * g.blocks_per_chunk[i] + k[i];
        }
        if (plan.filtered() && !plan.wants(piece, k)) {
          FillRegion(n, ilo.data(), ihi.data(), dst, dst_origin, pad_item);
          return Status::Ok();
        }
        const std::byte* entry = index.data() + number * kIndexEntryBytes;
        const uint64_t offset = LoadLe64(entry);
        const uint64_t nbytes = LoadLe64(entry + 8);
        if (offset == kEmptyEntry && nbytes == kEmptyEntry) {
          FillRegion(n, ilo.data(), ihi.data(), dst, dst_origin, fill_);
          return Status::Ok();
        }
        const std::string where = StrCat(path, ": inner chunk ", number);
        if (offset > size || nbytes > size - offset ||
            nbytes > static_cast<uint64_t>(max_stored_bytes_)) {
          return DataLossError(StrCat(where, ": the index says ", nbytes, " bytes at ", offset,
                                      ", outside the shard's ", size, " bytes"));
        }
        PATCHFEED_ASSIGN_OR_RETURN(
            auto stored,
            ReadStored(file, offset, nbytes, blo.data(), ilo.data(), ihi.data(), scratch), where);
        return CopyFromChunk(stored, blo.data(), ilo.data(), ihi.data(), dst, dst_origin, scratch,
                             where);
      });
}

}  // namespace patchfeed::codec
