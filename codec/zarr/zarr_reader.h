// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_ZARR_ZARR_READER_H_
#define PATCHFEED_CODEC_ZARR_ZARR_READER_H_

/// \file
/// Boxes out of a zarr array in a local directory store, v2 (`.zarray`) or v3 (`zarr.json`),
/// through the same plan as `.b2nd` arrays (array_reader.h): a zarr chunk (or v3 shard) is the
/// plan's chunk; its blocks are the shard's inner chunks, or the whole chunk when unsharded.
///
/// Only what a box needs is read and decoded:
/// - a sharded array reads the shard's index, then only the inner chunks the box touches;
/// - a Blosc chunk (zarr v2's default compressor, v3's `blosc` codec) decodes only the Blosc
///   blocks that hold the box's rows, and a chunk the box covers whole is decoded straight
///   into the destination when its layout matches.
/// A missing chunk or shard file, or an inner chunk the shard's index marks empty, reads as the
/// array's fill value (zeros for a v2 `null`). Big-endian items are swapped to little-endian
/// (dtype() is the little-endian NumPy dtype).
///
/// Chunk files are read with positional reads, opened per read: a zarr array is many files, and
/// mapping each would cost more than it saves. Every size and offset in the store is untrusted:
/// a chunk file larger than its chunk can compress to, an index entry past the shard's end, a
/// checksum that differs, are kDataLoss naming the file; a feature not read (see zarr_meta.h
/// and zarr_v3_meta.h) is kUnimplemented naming it.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "codec/array_reader.h"
#include "codec/blosc/chunk_format.h"
#include "common/result.h"
#include "storage/byte_source.h"

namespace patchfeed::codec {

/// How a zarr chunk's bytes were made from its items: an optional transpose, the items' byte
/// order, and bytes-to-bytes steps in the order they were applied (a read undoes them back).
struct ZarrChunkCodecs {
  enum class Step : uint8_t { kBlosc, kZstd, kLz4, kGzip, kZlib, kCrc32c };
  std::vector<int> transpose_order;  ///< stored axis i is the chunk's axis order[i]; empty: none
  bool big_endian = false;
  std::vector<Step> steps;
};

/// A zarr metadata document (`.zarray`, `zarr.json`, `.zattrs`) read whole; kNotFound when it
/// is absent, kDataLoss when it is larger than any a writer makes (16 MiB).
Result<std::string> ReadZarrMetadataFile(const storage::Store& store, const std::string& path);

class ZarrArrayReader final : public ArrayReader {
 public:
  /// Opens the array in directory `dir` of `store`: `.zarray` (v2) or `zarr.json` (v3) must be
  /// there.
  static Result<ZarrArrayReader> Open(const std::string& dir,
                                      std::shared_ptr<const storage::Store> store);

  const char* format() const override { return version_ == 2 ? "zarr v2" : "zarr v3"; }
  ArrayFootprint Footprint() const override;
  const storage::Store* chunk_store() const override { return store_.get(); }

  int zarr_format() const { return version_; }
  bool sharded() const { return sharded_; }
  /// The array's fill value: one little-endian item.
  const std::vector<std::byte>& fill_item() const { return fill_; }
  /// The file that holds chunk (shard) number `chunk` (C order over the chunk grid).
  std::string ChunkPath(int64_t chunk) const;

 private:
  Status ReadChunkPiece(const BoxPlan& plan, const BoxPiece& piece, const NdView& dst,
                        std::span<const std::byte> pad_item,
                        BoxReadScratch& scratch) const override;
  // A chunk piece of a sharded array from its shard `file` (at `path`, for messages).
  Status ReadShardPiece(const BoxPlan& plan, const BoxPiece& piece, const storage::ByteSource& file,
                        const std::string& path, const NdView& dst,
                        std::span<const std::byte> pad_item, BoxReadScratch& scratch) const;
  // Decodes the stored bytes of one (inner) chunk whose first item is `origin` and copies its
  // region [lo, hi) into dst (whose origin is `dst_origin`).
  Status CopyFromChunk(std::span<const std::byte> stored, const int64_t* origin, const int64_t* lo,
                       const int64_t* hi, const NdView& dst, const int64_t* dst_origin,
                       BoxReadScratch& scratch, const std::string& context) const;
  // The stored bytes of an (inner) chunk at [pos, pos + nbytes) of `file`: for a Blosc chunk
  // with nothing around it, only the header and the blocks holding [lo, hi).
  Result<std::span<const std::byte>> ReadStored(const storage::ByteSource& file, uint64_t pos,
                                                uint64_t nbytes, const int64_t* origin,
                                                const int64_t* lo, const int64_t* hi,
                                                BoxReadScratch& scratch) const;
  // The Blosc blocks of a chunk (first item `origin`) that hold region [lo, hi).
  void BloscBlocksFor(const ChunkHeader& h, const int64_t* origin, const int64_t* lo,
                      const int64_t* hi, std::vector<int32_t>* blocks) const;
  // The decoded chunk in scratch.whole, or in dst directly (*direct set).
  Status Decode(std::span<const std::byte> stored, const int64_t* origin, const int64_t* lo,
                const int64_t* hi, const NdView& dst, const int64_t* dst_origin,
                BoxReadScratch& scratch, std::span<const std::byte>* decoded, bool* direct) const;

  int version_ = 2;
  std::string dir_;
  std::shared_ptr<const storage::Store> store_;  // the chunk files are there
  char key_separator_ = '.';
  bool key_prefix_c_ = false;  // v3 "default" keys start with "c"
  ZarrChunkCodecs codecs_;     // of each chunk, or each inner chunk when sharded
  bool sharded_ = false;
  bool index_at_end_ = true;
  bool index_crc32c_ = false;
  std::vector<int64_t> unit_shape_;  // the shape of what is decoded at once (inner chunk)
  int64_t unit_bytes_ = 0;
  int64_t max_stored_bytes_ = 0;  // a stored (inner) chunk's largest possible size
  std::vector<std::byte> fill_;
};

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_ZARR_ZARR_READER_H_
