// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_SHUFFLE_H_
#define PATCHFEED_CODEC_SHUFFLE_H_

/// \file
/// Blosc's byte shuffle (filter id 1) and its inverse, with SSE2 and AVX2 kernels chosen at run
/// time and a portable fallback. Stateless: safe to call concurrently.
///
/// Layout: `n = size / typesize` whole elements; output byte `k*n + i` is input byte
/// `i*typesize + k` (byte plane k holds byte k of every element); the `size % typesize` trailing
/// bytes are copied unchanged to the end. `typesize == 1` is a copy.

#include <cstddef>
#include <cstdint>

namespace patchfeed::codec {

/// Shuffles `size` bytes from `src` into `dst`. The ranges must not overlap. typesize >= 1.
void Shuffle(int32_t typesize, const std::byte* src, std::byte* dst, size_t size);

/// Inverse of Shuffle. The ranges must not overlap. typesize >= 1.
void Unshuffle(int32_t typesize, const std::byte* src, std::byte* dst, size_t size);

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_SHUFFLE_H_
