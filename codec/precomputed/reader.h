// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_PRECOMPUTED_READER_H_
#define PATCHFEED_CODEC_PRECOMPUTED_READER_H_

/// \file
/// Boxes out of one scale of a Neuroglancer precomputed volume (info.h), through the same
/// plan as `.b2nd` and zarr arrays (array_reader.h).
///
/// The view: (C, z, y, x) in C order, index 0 of each spatial axis at the scale's
/// voxel_offset. Precomputed stores a chunk's voxels x fastest, then y, z and channel, which is
/// exactly this C order, so a chunk is copied without a transpose; cloud-volume's cutouts are
/// the same voxels as (x, y, z, C) (numpy's `.transpose()` of this view with the channel moved
/// last).
///
/// Chunks are files of their own, `<layer>/<key>/x0-x1_y0-y1_z0-z1` (or with `.gz`, as
/// cloud-volume writes gzip'd chunks to local folders), read whole and gunzipped when they
/// start with gzip's magic (objects stored with Content-Encoding: gzip). A missing chunk reads
/// as zeros, as cloud-volume's fill_missing does, or is an error when asked to be. Sharded scales
/// (sharding.h) read the shard index entry, the minishard index (kept by a remote store per shard
/// version) and the chunk's bytes alone. Encodings raw, compressed_segmentation
/// (compressed_segmentation.h: only the blocks a box touches are decoded) and jpeg (jpeg_chunk.h)
/// are read; others are kUnimplemented naming them. Every size in the layer is untrusted: a chunk
/// file whose bytes do not decode to exactly its voxels is kDataLoss naming the file.

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "codec/array_reader.h"
#include "codec/precomputed/info.h"
#include "common/result.h"
#include "storage/store.h"

namespace patchfeed::codec::precomputed {

/// Whether `path` (a folder) holds a precomputed layer's `info`.
bool IsPrecomputedLayer(const std::string& path, const storage::Store& store);

/// The `info` of the layer in folder `layer`, parsed (errors name the file).
Result<Info> ReadInfo(const std::string& layer, const storage::Store& store);

/// The layer folder when `path` names one of its scales as `<layer>/<scale key>` (the folder
/// the scale's chunks are in), the way OME-Zarr levels are named: `path`'s parent holds a
/// layer's `info`. nullopt otherwise; the key itself is checked when the scale is opened.
std::optional<std::string> LayerOfScaleFolder(const std::string& path, const storage::Store& store);

class PrecomputedReader final : public ArrayReader {
 public:
  /// Opens scale `scale` (an index into the info's scales, 0: the finest) of the layer in
  /// folder `layer` of `store`. Without `fill_missing`, reading a chunk that was never written
  /// is kNotFound naming its file.
  static Result<PrecomputedReader> Open(const std::string& layer,
                                        std::shared_ptr<const storage::Store> store, int scale = 0,
                                        bool fill_missing = true);
  /// The scale named by `selector`: its key ("8_8_40") or resolution ("8,8,40"), FindScale.
  static Result<PrecomputedReader> Open(const std::string& layer,
                                        std::shared_ptr<const storage::Store> store,
                                        std::string_view selector, bool fill_missing = true);

  const char* format() const override { return "precomputed"; }
  /// (0, z, y, x) of the scale's voxel_offset.
  std::vector<int64_t> origin() const override;
  ArrayFootprint Footprint() const override;
  const storage::Store* chunk_store() const override { return store_.get(); }

  const Info& info() const { return info_; }
  const Scale& scale() const { return info_.scales[static_cast<size_t>(scale_)]; }
  /// The file of chunk number `chunk` (C order over the (C, z, y, x) chunk grid), without the
  /// `.gz` a gzip'd local file has.
  std::string ChunkPath(int64_t chunk) const;

 private:
  Status ReadChunkPiece(const BoxPlan& plan, const BoxPiece& piece, const NdView& dst,
                        std::span<const std::byte> pad_item,
                        BoxReadScratch& scratch) const override;
  // Chunk number `chunk`'s position in the scale's grid (x, y, z).
  Vec3 GridPosition(int64_t chunk) const;
  // The chunk's bytes as stored (at most `max_bytes` once decoded), from its file or its shard,
  // or nullopt when it was never written; `*where` names the file (and chunk) for messages.
  Result<std::optional<std::span<const std::byte>>> StoredChunk(const storage::Store& store,
                                                                int64_t chunk, int64_t max_bytes,
                                                                std::string* where,
                                                                BoxReadScratch& scratch) const;
  // `stored` gunzipped when it is gzip'd: a raw chunk's exactly `expected` bytes, a
  // compressed_segmentation chunk's at most `expected`.
  Result<std::span<const std::byte>> Decoded(std::span<const std::byte> stored, int64_t expected,
                                             BoxReadScratch& scratch) const;
  int64_t MaxSegmentationBytes(const NdIndex& extent) const;

  Info info_;
  int scale_ = 0;
  bool fill_missing_ = true;
  std::string layer_;
  std::shared_ptr<const storage::Store> store_;
};

}  // namespace patchfeed::codec::precomputed

#endif  // PATCHFEED_CODEC_PRECOMPUTED_READER_H_
