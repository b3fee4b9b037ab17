// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_PRECOMPUTED_INFO_H_
#define PATCHFEED_CODEC_PRECOMPUTED_INFO_H_

/// \file
/// Neuroglancer precomputed volumes (the format cloud-volume writes and reads): the `info`
/// document at the layer's root, with its scales, and the name of a chunk file.
/// (https://github.com/google/neuroglancer/blob/master/src/datasource/precomputed/volume.md)
///
/// Spatial vectors are as the document writes them, x first. Everything in the document is
/// untrusted: a malformed or out-of-range field is kDataLoss naming it, a feature patchfeed
/// does not read (another data type, more than one chunk size read at once) is kUnimplemented
/// naming it, and a chunk larger than kMaxChunkBytes is refused before anything is sized by it.
/// Stateless functions; safe to call concurrently.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace patchfeed::codec::precomputed {

/// Largest chunk, in bytes (all channels), a scale may declare.
inline constexpr int64_t kMaxChunkBytes = (int64_t{1} << 31) - 1;
/// Most channels a volume may declare.
inline constexpr int64_t kMaxChannels = 1 << 16;

/// x, y, z.
using Vec3 = std::array<int64_t, 3>;

enum class Encoding : uint8_t { kRaw, kCompressedSegmentation, kJpeg, kPng, kOther };

/// `neuroglancer_uint64_sharded_v1`: how chunks are grouped into shard files.
struct Sharding {
  int preshift_bits = 0;
  bool murmurhash = false;  ///< hash "murmurhash3_x86_128"; else "identity"
  int minishard_bits = 0;
  int shard_bits = 0;
  bool minishard_index_gzip = false;
  bool data_gzip = false;
};

struct Scale {
  std::string key;  ///< the scale's folder, relative to the layer
  Vec3 size{};
  Vec3 voxel_offset{};
  Vec3 chunk_size{};  ///< the first of chunk_sizes (the one the chunk files were written with)
  std::array<double, 3> resolution{};
  std::string encoding;  ///< as written ("raw", "jpeg", ...)
  Encoding kind = Encoding::kRaw;
  Vec3 segmentation_block{};  ///< compressed_segmentation_block_size
  std::optional<Sharding> sharding;
};

struct Info {
  std::string type;       ///< "image" or "segmentation" (as written; others allowed)
  std::string data_type;  ///< "uint8", ..., "float32"
  std::string dtype;      ///< the NumPy dtype of the items, little-endian ("<u2")
  int64_t itemsize = 0;
  int64_t num_channels = 0;
  std::vector<Scale> scales;
};

/// Parses and validates an `info` document.
Result<Info> ParseInfo(std::string_view json);

/// The index of the scale `selector` names: its key ("8_8_40"), or its resolution as three
/// comma-separated numbers ("8,8,40", matched within 0.1 %). kNotFound listing the keys when no
/// scale matches.
Result<int> FindScale(const Info& info, std::string_view selector);

/// The chunk at grid position `index` (x, y, z) of `scale`: its first voxel and one past its
/// last, in the scale's coordinates (voxel_offset included), clipped to the volume.
struct ChunkBounds {
  Vec3 lo{}, hi{};
};
ChunkBounds ChunkBoundsAt(const Scale& scale, const Vec3& index);

/// The chunk file's name in the scale's folder, "x0-x1_y0-y1_z0-z1".
std::string ChunkName(const ChunkBounds& bounds);

}  // namespace patchfeed::codec::precomputed

#endif  // PATCHFEED_CODEC_PRECOMPUTED_INFO_H_
