// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/precomputed/reader.h"

#include <algorithm>
#include <utility>

#include "codec/internal/nd_copy.h"
#include "codec/precomputed/compressed_segmentation.h"
#include "common/str_cat.h"

namespace patchfeed::codec::precomputed {
namespace {

using internal_codec::CopyStridedRegion;
using internal_codec::FillRegion;
using internal_codec::Index;

// An `info` larger than this is not one a writer made (a layer with thousands of scales).
constexpr uint64_t kMaxInfoBytes = uint64_t{16} << 20;
// A gzip'd chunk of n bytes is at most n plus 5 bytes per 16 KiB stored block plus the
// header and trailer: anything longer is not one.
int64_t MaxGzipBytes(int64_t n) { return n + n / 1024 + 1024; }

bool IsGzip(std::span<const std::byte> bytes) {
  return bytes.size() >= 2 && bytes[0] == std::byte{0x1f} && bytes[1] == std::byte{0x8b};
}

}  // namespace

bool IsPrecomputedLayer(const std::string& path, const storage::Store& store) {
  const Result<storage::EntryKind> kind = store.Stat(storage::JoinPath(path, "info"));
  return kind.ok() && *kind == storage::EntryKind::kFile;
}

Result<PrecomputedReader> PrecomputedReader::Open(const std::string& layer,
                                                  std::shared_ptr<const storage::Store> store,
                                                  int scale) {
  const std::string info_path = storage::JoinPath(layer, "info");
  PATCHFEED_ASSIGN_OR_RETURN(const std::string text,
                             storage::ReadSmallFile(*store, info_path, kMaxInfoBytes));
  PrecomputedReader r;
  {
    Result<Info> info = ParseInfo(text);
    if (!info.ok())
      return info.status().WithContext(info_path);
    r.info_ = std::move(*info);
  }
  if (scale < 0 || static_cast<size_t>(scale) >= r.info_.scales.size()) {
    return InvalidArgumentError(
        StrCat(layer, ": no scale ", scale, " (the info has ", r.info_.scales.size(), ")"));
  }
  r.scale_ = scale;
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
  if (s.kind != Encoding::kRaw && s.kind != Encoding::kCompressedSegmentation) {
    return UnimplementedError(
        StrCat(r.path_, ": encoding '", s.encoding, "'",
               " (patchfeed reads raw and compressed_segmentation precomputed chunks so far)"));
  }
  if (s.sharding.has_value()) {
    return UnimplementedError(
        StrCat(r.path_, ": a sharded scale (patchfeed reads unsharded chunk files so far)"));
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
  return f;
}

std::string PrecomputedReader::ChunkPath(int64_t chunk) const {
  // The grid is (1, z, y, x) chunks, C order.
  Vec3 index{};
  for (int d = 3; d >= 1; --d) {
    const auto i = static_cast<size_t>(d);
    index[3 - i] = chunk % geom_.chunks_per_dim[i];
    chunk /= geom_.chunks_per_dim[i];
  }
  return storage::JoinPath(path_, ChunkName(ChunkBoundsAt(scale(), index)));
}

Result<std::span<const std::byte>> PrecomputedReader::ReadChunk(const storage::ByteSource& file,
                                                                const std::string& path,
                                                                int64_t expected,
                                                                BoxReadScratch& scratch) const {
  const uint64_t size = file.size();
  if (size > static_cast<uint64_t>(MaxGzipBytes(expected))) {
    return DataLossError(StrCat(path, ": ", size, " bytes, more than a chunk of ", expected,
                                " bytes can be stored in"));
  }
  // The whole file: in place when a source fetched it ahead; else announced (a source that
  // fetches ahead learns it needs all of it) and read.
  const storage::FileRange all{0, size};
  std::span<const std::byte> stored;
  if (const std::byte* image = file.ChunkImage(0, size, std::span(&all, 1))) {
    stored = std::span(image, static_cast<size_t>(size));
  } else {
    file.WillRead(all, std::span(&all, 1));
    PATCHFEED_ASSIGN_OR_RETURN(stored, file.Get(0, static_cast<size_t>(size), scratch.chunk), path);
  }
  const bool segmentation = scale().kind == Encoding::kCompressedSegmentation;
  if (!IsGzip(stored)) {
    if (segmentation ? stored.size() % 4 == 0 : static_cast<int64_t>(stored.size()) == expected)
      return stored;
    return DataLossError(StrCat(path, ": ", stored.size(), " bytes, neither ",
                                segmentation ? "whole 32-bit words" : "the chunk's raw bytes",
                                " nor gzip"));
  }
  int64_t decoded = expected;
  if (segmentation) {
    // gzip's trailer says the decoded size (mod 2^32; `expected` bounds it well below that).
    const std::byte* t = stored.data() + stored.size() - 4;
    decoded =
        static_cast<int64_t>(static_cast<uint32_t>(t[0]) | static_cast<uint32_t>(t[1]) << 8 |
                             static_cast<uint32_t>(t[2]) << 16 | static_cast<uint32_t>(t[3]) << 24);
    if (decoded > expected || decoded % 4 != 0) {
      return DataLossError(StrCat(path, ": gzip says ", decoded,
                                  " bytes, not a compressed_segmentation chunk of at most ",
                                  expected));
    }
  }
  scratch.whole.resize(static_cast<size_t>(decoded));
  PATCHFEED_RETURN_IF_ERROR(scratch.streams.DecodeGzip(stored, scratch.whole), path);
  return std::span<const std::byte>(scratch.whole);
}

Status PrecomputedReader::ReadSegmentationPiece(const storage::ByteSource& file,
                                                const std::string& path, const BoxPlan& plan,
                                                const BoxPiece& piece, const NdIndex& extent,
                                                const NdView& dst, BoxReadScratch& scratch) const {
  // The largest chunk the encoding makes of these voxels: per channel, two header words per
  // block and, per voxel, at most one word of index and a table entry.
  const Vec3 size = {extent[3], extent[2], extent[1]};
  const Vec3& block = scale().segmentation_block;
  int64_t blocks = 1;
  for (size_t d = 0; d < 3; ++d)
    blocks *= (size[d] + block[d] - 1) / block[d];
  const int64_t voxels = (blocks * block[0] * block[1] * block[2]);
  const int64_t bound = 4 * extent[0] * (1 + 2 * blocks + voxels * (1 + geom_.itemsize / 4));
  PATCHFEED_ASSIGN_OR_RETURN(const std::span<const std::byte> chunk,
                             ReadChunk(file, path, bound, scratch));
  const int64_t* dst_origin = plan.box().start.data();
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
        DecodeCompressedSegmentation(chunk, geom_.itemsize, size, block, c, lo, hi, out), path);
  }
  return Status::Ok();
}

Status PrecomputedReader::ReadChunkPiece(const BoxPlan& plan, const BoxPiece& piece,
                                         const NdView& dst, std::span<const std::byte> pad_item,
                                         BoxReadScratch& scratch) const {
  const int n = geom_.ndim;
  const int64_t* dst_origin = plan.box().start.data();
  if (plan.filtered() && !plan.wants(piece, piece.block_lo)) {
    FillRegion(n, piece.lo.data(), piece.hi.data(), dst, dst_origin, pad_item);
    return Status::Ok();
  }
  const storage::Store& store = scratch.store != nullptr ? *scratch.store : *store_;
  std::string path = ChunkPath(piece.chunk);
  auto source = store.Open(path, storage::IoMode::kPread);
  if (!source.ok() && source.status().code() == StatusCode::kNotFound) {
    path += ".gz";  // cloud-volume's gzip'd chunks in a local folder
    source = store.Open(path, storage::IoMode::kPread);
  }
  if (!source.ok()) {
    if (source.status().code() != StatusCode::kNotFound)
      return source.status();
    // A chunk never written reads as zeros (cloud-volume's fill_missing).
    const std::vector<std::byte> zero(static_cast<size_t>(geom_.itemsize), std::byte{0});
    FillRegion(n, piece.lo.data(), piece.hi.data(), dst, dst_origin, zero);
    return Status::Ok();
  }
  // The chunk's extent, clipped at the volume's end: its file holds exactly these voxels.
  Index extent{};
  int64_t expected = geom_.itemsize;
  for (int d = 0; d < n; ++d) {
    const auto i = static_cast<size_t>(d);
    extent[i] = std::min(geom_.chunkshape[i], geom_.shape[i] - piece.origin[i]);
    expected *= extent[i];
  }
  if (scale().kind == Encoding::kCompressedSegmentation) {
    return ReadSegmentationPiece(**source, path, plan, piece, extent, dst, scratch);
  }
  PATCHFEED_ASSIGN_OR_RETURN(const std::span<const std::byte> voxels,
                             ReadChunk(**source, path, expected, scratch));
  Index strides{};
  int64_t stride = geom_.itemsize;
  for (int d = n - 1; d >= 0; --d) {
    strides[static_cast<size_t>(d)] = stride;
    stride *= extent[static_cast<size_t>(d)];
  }
  CopyStridedRegion(n, geom_.itemsize, piece.lo.data(), piece.hi.data(), voxels.data(),
                    piece.origin.data(), strides.data(), dst, dst_origin);
  return Status::Ok();
}

}  // namespace patchfeed::codec::precomputed
