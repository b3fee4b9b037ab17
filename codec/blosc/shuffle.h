// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_BLOSC_SHUFFLE_H_
#define PATCHFEED_CODEC_BLOSC_SHUFFLE_H_

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

/// Unshuffles `rows` runs of `count` items from a shuffled buffer that holds `n` whole items
/// (byte plane k at `src + k * n`): run r is items [first + r * src_row_step, ... + count)
/// and goes to `dst + r * dst_row_step` bytes. The rows of a patch that one block holds, without
/// unshuffling the rest of the block or copying it a second time. Runs must lie within n.
void UnshuffleItemRows(int32_t typesize, const std::byte* src, size_t n, size_t first, size_t count,
                       size_t rows, size_t src_row_step, std::byte* dst, size_t dst_row_step);

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_BLOSC_SHUFFLE_H_
