// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_PRECOMPUTED_PNG_CHUNK_H_
#define PATCHFEED_CODEC_PRECOMPUTED_PNG_CHUNK_H_

/// \file
/// Precomputed's `png` encoding of uint8 and uint16 chunks: one PNG image per chunk, `x` voxels
/// wide and `y * z` rows high, one component per channel (1 to 4), decoded by libpng (Debian's
/// libpng16). Lossless: the voxels come back exactly. Stateless; safe to call concurrently.

#include <cstddef>
#include <cstdint>
#include <span>

#include "codec/precomputed/info.h"
#include "common/status.h"

namespace patchfeed::codec::precomputed {

/// Decodes `png`, a chunk of `size` voxels (x, y, z) with `channels` channels of `itemsize`
/// (1 or 2) bytes, into `out` as precomputed's raw layout (channel-major, then z, y, x; items
/// little-endian). kDataLoss when the image is not one, or its width, height, channels or bit
/// depth are not the chunk's.
Status DecodePngChunk(std::span<const std::byte> png, const Vec3& size, int64_t channels,
                      int64_t itemsize, std::span<std::byte> out);

/// `interleaved` (voxel after voxel, `channels` items of `itemsize` bytes each) as
/// channel-major planes in `out`: how the image encodings' pixels become precomputed's layout.
void InterleavedToPlanes(const std::byte* interleaved, size_t voxels, int64_t channels,
                         int64_t itemsize, std::byte* out);

}  // namespace patchfeed::codec::precomputed

#endif  // PATCHFEED_CODEC_PRECOMPUTED_PNG_CHUNK_H_
