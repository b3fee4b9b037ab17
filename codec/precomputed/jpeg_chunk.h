// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_PRECOMPUTED_JPEG_CHUNK_H_
#define PATCHFEED_CODEC_PRECOMPUTED_JPEG_CHUNK_H_

/// \file
/// Precomputed's `jpeg` encoding of uint8 chunks: one JPEG image per chunk, `x` voxels wide and
/// `y * z` rows high, with 1 (grayscale) or 3 (RGB) components, decoded by libjpeg-turbo (Debian's
/// libjpeg62-turbo, the library cloud-volume's simplejpeg wraps) with its defaults (the accurate
/// integer IDCT, smooth chroma upsampling). Stateless; safe to call concurrently.

#include <cstddef>
#include <span>

#include "codec/precomputed/info.h"
#include "common/status.h"

namespace patchfeed::codec::precomputed {

/// Decodes `jpeg`, a chunk of `size` voxels (x, y, z) with `channels` components, into `out`
/// (size[0] * size[1] * size[2] * channels bytes) as precomputed's raw layout: channel-major,
/// then z, y, x (x fastest). kDataLoss when the image is not one, or its width, height or
/// components are not the chunk's.
Status DecodeJpegChunk(std::span<const std::byte> jpeg, const Vec3& size, int64_t channels,
                       std::span<std::byte> out);

}  // namespace patchfeed::codec::precomputed

#endif  // PATCHFEED_CODEC_PRECOMPUTED_JPEG_CHUNK_H_
