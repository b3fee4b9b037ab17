// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_BLOSC_INTERNAL_BITSHUFFLE_KERNELS_H_
#define PATCHFEED_CODEC_BLOSC_INTERNAL_BITSHUFFLE_KERNELS_H_

/// \file
/// Per-instruction-set kernels behind codec/blosc/bitshuffle.h. Every kernel transforms exactly `n`
/// elements of `t` bytes (`n` a multiple of 8, `n * t` bytes, `t >= 1`); the Blosc2 remainder
/// rule and the run-time choice of kernel live in codec/blosc/bitshuffle.cc. `src` and `dst` must
/// not overlap. The bit rows are `n / 8` bytes long; an 8-element "group" is one byte column of
/// them.
///
/// The SSE2 and AVX2 kernels exist only on x86-64 (each is compiled in its own file with its own
/// -m flag) and must be called only when ActiveSimdLevel() allows. They handle inputs too short
/// for their vector width by delegating to the next narrower kernel.

#include <cstddef>
#include <cstdint>

namespace patchfeed::internal_codec {

void BitShuffleScalar(const uint8_t* src, uint8_t* dst, size_t n, size_t t);
void BitUnshuffleScalar(const uint8_t* src, uint8_t* dst, size_t n, size_t t);

void BitShuffleSse2(const uint8_t* src, uint8_t* dst, size_t n, size_t t);
void BitUnshuffleSse2(const uint8_t* src, uint8_t* dst, size_t n, size_t t);

void BitShuffleAvx2(const uint8_t* src, uint8_t* dst, size_t n, size_t t);
void BitUnshuffleAvx2(const uint8_t* src, uint8_t* dst, size_t n, size_t t);

}  // namespace patchfeed::internal_codec

#endif  // PATCHFEED_CODEC_BLOSC_INTERNAL_BITSHUFFLE_KERNELS_H_
