// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
//
// SSE2 byte shuffle kernels. SSE2 has no byte permute (pshufb is SSSE3), so everything is built
// from unpacks (interleave two vectors) and saturating packs (keep every other byte).
//
// A batch is 16 elements: one 16-byte vector per byte plane. Moving between the plane-major and
// element-major layouts of a batch is a byte transpose, done as a network of those operations
// on an array of vectors that the compiler keeps in registers once the loops are unrolled.

#include <emmintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "codec/internal/shuffle_kernels.h"

namespace patchfeed::internal_codec {
namespace {

// The helpers take and return whole arrays of vectors; unless inlined, those go through the
// stack and the kernels run several times slower, so inlining is not left to the heuristics.
#define PF_INLINE inline __attribute__((always_inline))

using Vec = __m128i;
constexpr size_t kBatch = 16;  // elements per vector of a byte plane

PF_INLINE Vec Load(const std::byte* p) { return _mm_loadu_si128(reinterpret_cast<const Vec*>(p)); }
PF_INLINE void Store(std::byte* p, Vec v) { _mm_storeu_si128(reinterpret_cast<Vec*>(p), v); }

// Interleaves the `kBytes`-byte units of the low (high) halves of a and b.
template <int kBytes>
PF_INLINE Vec UnpackLo(Vec a, Vec b) {
  if constexpr (kBytes == 1)
    return _mm_unpacklo_epi8(a, b);
  if constexpr (kBytes == 2)
    return _mm_unpacklo_epi16(a, b);
  if constexpr (kBytes == 4)
    return _mm_unpacklo_epi32(a, b);
  if constexpr (kBytes == 8)
    return _mm_unpacklo_epi64(a, b);
}
template <int kBytes>
PF_INLINE Vec UnpackHi(Vec a, Vec b) {
  if constexpr (kBytes == 1)
    return _mm_unpackhi_epi8(a, b);
  if constexpr (kBytes == 2)
    return _mm_unpackhi_epi16(a, b);
  if constexpr (kBytes == 4)
    return _mm_unpackhi_epi32(a, b);
  if constexpr (kBytes == 8)
    return _mm_unpackhi_epi64(a, b);
}

// One step of Interleave: before it, each group of kGroup consecutive planes is already
// interleaved into kGroup vectors (vector q of a group holds elements [q*16/kGroup, ...) with
// kGroup bytes each); pairs of groups are merged into groups of twice the size.
template <int kPlanes, int kGroup>
PF_INLINE void InterleaveStep(Vec (&v)[kPlanes]) {
  Vec out[kPlanes];
#pragma GCC unroll 16
  for (int m = 0; m < kPlanes / (2 * kGroup); ++m) {
#pragma GCC unroll 16
    for (int q = 0; q < kGroup; ++q) {
      const Vec a = v[2 * m * kGroup + q];
      const Vec b = v[(2 * m + 1) * kGroup + q];
      out[2 * m * kGroup + 2 * q] = UnpackLo<kGroup>(a, b);
      out[2 * m * kGroup + 2 * q + 1] = UnpackHi<kGroup>(a, b);
    }
  }
#pragma GCC unroll 16
  for (int k = 0; k < kPlanes; ++k)
    v[k] = out[k];
}

// v[k] holds byte k of 16 elements; afterwards v[q] holds bytes [16q, 16q + 16) of those
// elements laid end to end. For kPlanes == 16 this is a 16x16 transpose, its own inverse.
template <int kPlanes>
PF_INLINE void Interleave(Vec (&v)[kPlanes]) {
  if constexpr (kPlanes >= 2)
    InterleaveStep<kPlanes, 1>(v);
  if constexpr (kPlanes >= 4)
    InterleaveStep<kPlanes, 2>(v);
  if constexpr (kPlanes >= 8)
    InterleaveStep<kPlanes, 4>(v);
  if constexpr (kPlanes >= 16)
    InterleaveStep<kPlanes, 8>(v);
}

// Inverse of Interleave for 2, 4 or 8 planes. Each step splits the byte stream held in v into
// its even bytes (kept by a mask, then packed) followed by its odd bytes (shifted down, then
// packed). Seen on byte addresses that rotates the address right by one bit, so log2(kPlanes)
// steps move the byte-within-element bits to the top: the plane-major layout. It takes one pack
// per output vector and step, where an unpack network would need four steps.
template <int kPlanes>
PF_INLINE void Deinterleave(Vec (&v)[kPlanes]) {
  const Vec low_bytes = _mm_set1_epi16(0x00ff);
  constexpr int kSteps = kPlanes == 2 ? 1 : kPlanes == 4 ? 2 : 3;
  static_assert(kPlanes == 2 || kPlanes == 4 || kPlanes == 8);
#pragma GCC unroll 4
  for (int step = 0; step < kSteps; ++step) {
    Vec out[kPlanes];
#pragma GCC unroll 8
    for (int j = 0; j < kPlanes / 2; ++j) {
      const Vec a = v[2 * j];
      const Vec b = v[2 * j + 1];
      out[j] = _mm_packus_epi16(_mm_and_si128(a, low_bytes), _mm_and_si128(b, low_bytes));
      out[kPlanes / 2 + j] = _mm_packus_epi16(_mm_srli_epi16(a, 8), _mm_srli_epi16(b, 8));
    }
#pragma GCC unroll 16
    for (int k = 0; k < kPlanes; ++k)
      v[k] = out[k];
  }
}

// ---- Type sizes 2, 4, 8: whole vectors in and out, no waste. ----

template <size_t kTs>
size_t ShufflePow2(const std::byte* src, std::byte* dst, size_t n) {
  size_t i = 0;
  for (; i + kBatch <= n; i += kBatch) {
    Vec v[kTs];
    const std::byte* s = src + i * kTs;
#pragma GCC unroll 16
    for (size_t j = 0; j < kTs; ++j)
      v[j] = Load(s + 16 * j);
    Deinterleave<kTs>(v);
#pragma GCC unroll 16
    for (size_t k = 0; k < kTs; ++k)
      Store(dst + k * n + i, v[k]);
  }
  return i;
}

template <size_t kTs>
size_t UnshufflePow2(const std::byte* src, std::byte* dst, size_t n) {
  size_t i = 0;
  for (; i + kBatch <= n; i += kBatch) {
    Vec v[kTs];
#pragma GCC unroll 16
    for (size_t k = 0; k < kTs; ++k)
      v[k] = Load(src + k * n + i);
    Interleave<kTs>(v);
    std::byte* d = dst + i * kTs;
#pragma GCC unroll 16
    for (size_t q = 0; q < kTs; ++q)
      Store(d + 16 * q, v[q]);
  }
  return i;
}

// Vectors below may read or write up to 16 bytes from any element start in a batch, so batches
// stop where that stays inside the n * ts whole-element bytes.
size_t PaddedEnd(size_t ts, size_t n) {
  const size_t bytes = n * ts;
  return bytes < 16 ? 0 : (bytes - 16) / ts / kBatch * kBatch;
}

// ---- Type sizes 3, 5, 6, 7: padded to 8-byte slots. ----
// An element sits in an 8-byte slot, two to a vector, so the 8-plane networks apply; the slots'
// spare bytes are scratch. Stores are 8 bytes at each element start, in increasing order, so
// each one overwrites the spare bytes its predecessor spilled into it.

template <size_t kTs>
size_t ShuffleNarrow(const std::byte* src, std::byte* dst, size_t n) {
  const size_t end = PaddedEnd(kTs, n);
  for (size_t i = 0; i < end; i += kBatch) {
    const std::byte* s = src + i * kTs;
    Vec v[8];
#pragma GCC unroll 16
    for (size_t c = 0; c < 8; ++c) {
      const Vec even = _mm_loadl_epi64(reinterpret_cast<const Vec*>(s + 2 * c * kTs));
      const Vec odd = _mm_loadl_epi64(reinterpret_cast<const Vec*>(s + (2 * c + 1) * kTs));
      v[c] = _mm_unpacklo_epi64(even, odd);
    }
    Deinterleave<8>(v);
#pragma GCC unroll 16
    for (size_t k = 0; k < kTs; ++k)
      Store(dst + k * n + i, v[k]);
  }
  return end;
}

template <size_t kTs>
size_t UnshuffleNarrow(const std::byte* src, std::byte* dst, size_t n) {
  const size_t end = PaddedEnd(kTs, n);
  for (size_t i = 0; i < end; i += kBatch) {
    Vec v[8];
#pragma GCC unroll 16
    for (size_t k = 0; k < 8; ++k) {
      v[k] = k < kTs ? Load(src + k * n + i) : _mm_setzero_si128();
    }
    Interleave<8>(v);
    std::byte* d = dst + i * kTs;
#pragma GCC unroll 16
    for (size_t c = 0; c < 8; ++c) {
      _mm_storel_epi64(reinterpret_cast<Vec*>(d + 2 * c * kTs), v[c]);
      // movhps: stores the high half without spending a shuffle to move it down.
      _mm_storeh_pi(reinterpret_cast<__m64*>(d + (2 * c + 1) * kTs), _mm_castsi128_ps(v[c]));
    }
  }
  return end;
}

// ---- Type sizes 9 and up (16 included): 16x16 byte transposes. ----
// A tile is bytes [first, first + 16) of every element. Wide types are covered by tiles at
// 0, 16, 32, ... with the last one moved back to end at the type's last byte (overlapping its
// neighbour, which only rewrites equal bytes). Types of 9..15 bytes use one tile whose missing
// planes repeat the last one; their extra bytes are scratch, as in the narrow case.

void ShuffleTile(const std::byte* src, std::byte* dst, size_t n, size_t ts, size_t first,
                 size_t begin, size_t end) {
  const size_t rows = std::min<size_t>(16, ts - first);
  for (size_t i = begin; i < end; i += kBatch) {
    const std::byte* s = src + i * ts + first;
    Vec v[16];
#pragma GCC unroll 16
    for (size_t e = 0; e < 16; ++e)
      v[e] = Load(s + e * ts);
    Interleave<16>(v);
#pragma GCC unroll 16
    for (size_t r = 0; r < 16; ++r) {
      if (r < rows)
        Store(dst + (first + r) * n + i, v[r]);
    }
  }
}

void UnshuffleTile(const std::byte* src, std::byte* dst, size_t n, size_t ts, size_t first,
                   size_t begin, size_t end) {
  const std::byte* plane[16];
#pragma GCC unroll 16
  for (size_t r = 0; r < 16; ++r)
    plane[r] = src + std::min(first + r, ts - 1) * n;
  for (size_t i = begin; i < end; i += kBatch) {
    Vec v[16];
#pragma GCC unroll 16
    for (size_t r = 0; r < 16; ++r)
      v[r] = Load(plane[r] + i);
    Interleave<16>(v);
    std::byte* d = dst + i * ts + first;
#pragma GCC unroll 16
    for (size_t e = 0; e < 16; ++e)
      Store(d + e * ts, v[e]);
  }
}

// Elements go in blocks whose element-major side (~16 KiB) stays in L1 while every tile passes
// over it; each tile pass then reads its 16 planes as sequential runs.
constexpr size_t kTileBlockBytes = 16384;

template <typename TileFn>
size_t RunTiles(TileFn tile, const std::byte* src, std::byte* dst, size_t ts, size_t n) {
  const size_t end = ts >= 16 ? n / kBatch * kBatch : PaddedEnd(ts, n);
  const size_t block = std::max(kBatch, kTileBlockBytes / ts / kBatch * kBatch);
  for (size_t b = 0; b < end; b += block) {
    const size_t e = std::min(end, b + block);
    for (size_t first = 0; first < ts; first += 16) {
      tile(src, dst, n, ts, ts < 16 ? 0 : std::min(first, ts - 16), b, e);
    }
  }
  return end;
}

#undef PF_INLINE

}  // namespace

size_t ShuffleSse2(size_t typesize, const std::byte* src, std::byte* dst, size_t num_elements) {
  switch (typesize) {
    case 2:
      return ShufflePow2<2>(src, dst, num_elements);
    case 3:
      return ShuffleNarrow<3>(src, dst, num_elements);
    case 4:
      return ShufflePow2<4>(src, dst, num_elements);
    case 5:
      return ShuffleNarrow<5>(src, dst, num_elements);
    case 6:
      return ShuffleNarrow<6>(src, dst, num_elements);
    case 7:
      return ShuffleNarrow<7>(src, dst, num_elements);
    case 8:
      return ShufflePow2<8>(src, dst, num_elements);
    default:
      if (typesize < 9)
        return 0;
      return RunTiles(ShuffleTile, src, dst, typesize, num_elements);
  }
}

size_t UnshuffleSse2(size_t typesize, const std::byte* src, std::byte* dst, size_t num_elements) {
  switch (typesize) {
    case 2:
      return UnshufflePow2<2>(src, dst, num_elements);
    case 3:
      return UnshuffleNarrow<3>(src, dst, num_elements);
    case 4:
      return UnshufflePow2<4>(src, dst, num_elements);
    case 5:
      return UnshuffleNarrow<5>(src, dst, num_elements);
    case 6:
      return UnshuffleNarrow<6>(src, dst, num_elements);
    case 7:
      return UnshuffleNarrow<7>(src, dst, num_elements);
    case 8:
      return UnshufflePow2<8>(src, dst, num_elements);
    default:
      if (typesize < 9)
        return 0;
      return RunTiles(UnshuffleTile, src, dst, typesize, num_elements);
  }
}

}  // namespace patchfeed::internal_codec
