// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_PRECOMPUTED_COMPRESSED_SEGMENTATION_H_
#define PATCHFEED_CODEC_PRECOMPUTED_COMPRESSED_SEGMENTATION_H_

/// \file
/// Neuroglancer's compressed_segmentation encoding of uint32 and uint64 label chunks
/// (https://github.com/google/neuroglancer/blob/master/src/sliceview/compressed_segmentation/README.md):
/// per channel, the chunk is cut into blocks of a fixed size (x fastest); each block stores a
/// table of the distinct labels in it and, for each voxel, its index into the table in 0, 1, 2,
/// 4, 8, 16 or 32 bits, packed into little-endian 32-bit words.
///
/// Only the blocks a region touches are decoded, and only the voxels of the region. Every
/// offset in the chunk is untrusted: a channel, block header, index or table entry that points
/// outside the chunk, or a bit width not in that list, is kDataLoss saying which.
/// Stateless; safe to call concurrently.

#include <cstddef>
#include <cstdint>
#include <span>

#include "codec/precomputed/info.h"
#include "common/status.h"

namespace patchfeed::codec::precomputed {

/// Where decoded voxels go: `data` holds voxel (x, y, z) of the region at
/// data + x*stride[0] + y*stride[1] + z*stride[2] (byte strides).
struct VoxelsOut {
  std::byte* data = nullptr;
  std::array<int64_t, 3> stride{};
};

/// Decodes the voxels [lo, hi) (chunk coordinates, x first) of channel `channel` of `chunk`, a
/// compressed_segmentation chunk of `size` voxels (clipped at the volume's end) in blocks of
/// `block`, with items of `itemsize` bytes (4 or 8), into `out`.
Status DecodeCompressedSegmentation(std::span<const std::byte> chunk, int64_t itemsize,
                                    const Vec3& size, const Vec3& block, int64_t channel,
                                    const Vec3& lo, const Vec3& hi, const VoxelsOut& out);

}  // namespace patchfeed::codec::precomputed

#endif  // PATCHFEED_CODEC_PRECOMPUTED_COMPRESSED_SEGMENTATION_H_
