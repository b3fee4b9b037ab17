// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_BLOSC_FILTERS_H_
#define PATCHFEED_CODEC_BLOSC_FILTERS_H_

/// \file
/// The small Blosc filters: DELTA (XOR against block 0), BYTEDELTA (byte differences inside
/// each byte plane) and TRUNC_PREC (drop float mantissa bits). Shuffle and bitshuffle, the hot
/// ones, live in shuffle.h and bitshuffle.h. All functions are stateless and safe to call
/// concurrently; they work on one block, as Blosc does.
///
/// Formats: ../shared/reference/blosc2-formats.md sections 3.4-3.6.

#include <cstddef>
#include <cstdint>

#include "common/status.h"

namespace patchfeed::codec {

/// Width in bytes of the words DELTA XORs: typesize if 1, 2, 4 or 8; else 8 if typesize is a
/// multiple of 8, else 1.
int32_t DeltaWordSize(int32_t typesize);

/// Forward DELTA of one block of `size` bytes. `block0` is the chunk's unfiltered block 0, or
/// nullptr when `src` is block 0 itself (then each word is XORed with its predecessor).
/// Bytes past the last whole word are copied.
void DeltaEncode(int32_t typesize, const std::byte* block0, const std::byte* src, std::byte* dst,
                 size_t size);

/// Inverse DELTA, in place. `block0` is the chunk's fully decoded block 0, or nullptr when
/// `data` is block 0 itself.
void DeltaDecode(int32_t typesize, const std::byte* block0, std::byte* data, size_t size);

/// Forward BYTEDELTA: the first `size / streams * streams` bytes are `streams` runs of equal
/// length; each byte becomes its difference to the previous byte of its run (mod 256).
void ByteDeltaEncode(int32_t streams, const std::byte* src, std::byte* dst, size_t size);

/// Inverse BYTEDELTA, in place (a running sum per run).
void ByteDeltaDecode(int32_t streams, std::byte* data, size_t size);

/// TRUNC_PREC: keeps `precision_bits` mantissa bits of each float (typesize 4 or 8), or drops
/// `-precision_bits` bits when negative. Returns kInvalidArgument for other typesizes or a
/// precision outside the mantissa.
Status TruncatePrecision(int32_t typesize, int8_t precision_bits, const std::byte* src,
                         std::byte* dst, size_t size);

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_BLOSC_FILTERS_H_
