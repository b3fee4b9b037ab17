// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_BLOSC_BITSHUFFLE_H_
#define PATCHFEED_CODEC_BLOSC_BITSHUFFLE_H_

/// \file
/// The bit shuffle (filter id 2, the kiyo-masui "bitshuffle" layout used by c-blosc and
/// c-blosc2), with SSE2 and AVX2 kernels chosen at run time and a portable fallback. Stateless:
/// safe to call concurrently.
///
/// Layout for `n` elements of `t` bytes, `n` a multiple of 8: the output is `8*t` bit rows of
/// `n/8` bytes; row `8*k + b` holds bit `b` (LSB = 0) of byte `k` of every element, element `i`
/// at byte `i/8`, bit `i%8`.
///
/// These functions apply the Blosc2 rule for a block of `size` bytes: with `m = size / t`, the
/// first `m - m % 8` elements are transformed and every remaining byte is copied unchanged.
/// (The Blosc1 rule - transform only when `m % 8 == 0`, else copy the whole block - is the
/// caller's choice; when `m % 8 == 0` the two rules agree.)

#include <cstddef>
#include <cstdint>

namespace patchfeed::codec {

/// Bit-shuffles `size` bytes from `src` into `dst`. Ranges must not overlap. typesize >= 1.
void BitShuffle(int32_t typesize, const std::byte* src, std::byte* dst, size_t size);

/// Inverse of BitShuffle. Ranges must not overlap. typesize >= 1.
void BitUnshuffle(int32_t typesize, const std::byte* src, std::byte* dst, size_t size);

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_BLOSC_BITSHUFFLE_H_
