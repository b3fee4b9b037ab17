// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/blosc/bitshuffle.h"

#include <algorithm>
#include <cstring>

#include "codec/blosc/internal/bitshuffle_kernels.h"
#include "codec/blosc/internal/cpu_features.h"

// The SIMD kernel files are only built for x86-64 (see codec/CMakeLists.txt).
#if defined(__x86_64__) || defined(_M_X64)
#define PATCHFEED_BITSHUFFLE_X86 1
#endif

namespace patchfeed::internal_codec {
namespace {

// Transposes the 8x8 bit matrix held in `x`, row i = byte i (bit j = column j, LSB first):
// three rounds of swapping the off-diagonal halves of 2x2, 4x4 and 8x8 blocks. Bit 8i+j moves
// to bit 8j+i.
inline uint64_t TransposeBits8x8(uint64_t x) {
  uint64_t d = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAULL;
  x ^= d ^ (d << 7);
  d = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCULL;
  x ^= d ^ (d << 14);
  d = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ULL;
  x ^= d ^ (d << 28);
  return x;
}

// Gathers 8 bytes spaced `stride` apart into a word, first byte least significant. Written with
// shifts rather than memcpy so the result does not depend on the host byte order.
inline uint64_t Gather8(const uint8_t* p, size_t stride) {
  uint64_t x = 0;
  for (int i = 0; i < 8; ++i) {
    x |= static_cast<uint64_t>(p[static_cast<size_t>(i) * stride]) << (8 * i);
  }
  return x;
}

inline void Scatter8(uint64_t x, uint8_t* p, size_t stride) {
  for (int i = 0; i < 8; ++i) {
    p[static_cast<size_t>(i) * stride] = static_cast<uint8_t>(x >> (8 * i));
  }
}

// Groups visited per pass over the bit rows: two 64-byte lines of each row. Taking every byte
// k for a run of groups (rather than every group for one k) keeps the run's element bytes
// (8 * 128 * t) cached while each row is touched in one sequential stretch; with power-of-two
// row lengths all 8t rows share an L1 set, so revisiting them per group would miss every time.
constexpr size_t kRunGroups = 128;

}  // namespace

// Group j (elements 8j..8j+7) and byte k of the element form one 8x8 bit matrix: its rows are
// the 8 elements' byte k (forward) or the 8 bit rows 8k..8k+7 at column j (inverse), so one
// word transpose moves 64 bits. Correct for any t; the SIMD kernels are the fast paths.
void BitShuffleScalar(const uint8_t* src, uint8_t* dst, size_t n, size_t t) {
  const size_t row_len = n / 8;
  for (size_t j0 = 0; j0 < row_len; j0 += kRunGroups) {
    const size_t j1 = std::min(row_len, j0 + kRunGroups);
    for (size_t k = 0; k < t; ++k) {
      for (size_t j = j0; j < j1; ++j) {
        const uint64_t x = TransposeBits8x8(Gather8(src + 8 * j * t + k, t));
        Scatter8(x, dst + 8 * k * row_len + j, row_len);
      }
    }
  }
}

void BitUnshuffleScalar(const uint8_t* src, uint8_t* dst, size_t n, size_t t) {
  const size_t row_len = n / 8;
  for (size_t j0 = 0; j0 < row_len; j0 += kRunGroups) {
    const size_t j1 = std::min(row_len, j0 + kRunGroups);
    for (size_t k = 0; k < t; ++k) {
      for (size_t j = j0; j < j1; ++j) {
        const uint64_t x = TransposeBits8x8(Gather8(src + 8 * k * row_len + j, row_len));
        Scatter8(x, dst + 8 * j * t + k, t);
      }
    }
  }
}

}  // namespace patchfeed::internal_codec

namespace patchfeed::codec {
namespace {

using internal_codec::SimdLevel;
using KernelFn = void (*)(const uint8_t*, uint8_t*, size_t, size_t);

// Applies the Blosc2 block rule around `kernel`: whole groups of 8 elements are transformed and
// the rest (up to 7 elements plus size % typesize bytes) is copied to the same offsets, which is
// where c-blosc2's `bitshuffle`/`bitunshuffle` (blosc/shuffle.c) put them.
void Apply(KernelFn kernel, int32_t typesize, const std::byte* src, std::byte* dst, size_t size) {
  if (size == 0) {
    return;
  }
  // typesize < 1 breaks the contract; copying keeps the bytes intact instead of dividing by 0.
  const size_t t = typesize > 0 ? static_cast<size_t>(typesize) : 0;
  const size_t whole = t == 0 ? 0 : size / t;
  const size_t n = whole - whole % 8;
  const size_t done = n * t;
  if (n != 0) {
    kernel(reinterpret_cast<const uint8_t*>(src), reinterpret_cast<uint8_t*>(dst), n, t);
  }
  if (done < size) {
    std::memcpy(dst + done, src + done, size - done);
  }
}

}  // namespace

void BitShuffle(int32_t typesize, const std::byte* src, std::byte* dst, size_t size) {
  KernelFn kernel = internal_codec::BitShuffleScalar;
#ifdef PATCHFEED_BITSHUFFLE_X86
  switch (internal_codec::ActiveSimdLevel()) {
    case SimdLevel::kAvx2:
      kernel = internal_codec::BitShuffleAvx2;
      break;
    case SimdLevel::kSse2:
      kernel = internal_codec::BitShuffleSse2;
      break;
    case SimdLevel::kScalar:
      break;
  }
#endif
  Apply(kernel, typesize, src, dst, size);
}

void BitUnshuffle(int32_t typesize, const std::byte* src, std::byte* dst, size_t size) {
  KernelFn kernel = internal_codec::BitUnshuffleScalar;
#ifdef PATCHFEED_BITSHUFFLE_X86
  switch (internal_codec::ActiveSimdLevel()) {
    case SimdLevel::kAvx2:
      kernel = internal_codec::BitUnshuffleAvx2;
      break;
    case SimdLevel::kSse2:
      kernel = internal_codec::BitUnshuffleSse2;
      break;
    case SimdLevel::kScalar:
      break;
  }
#endif
  Apply(kernel, typesize, src, dst, size);
}

}  // namespace patchfeed::codec
