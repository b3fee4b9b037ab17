// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_BLOSC_INTERNAL_SHUFFLE_AVX2_VECTORS_H_
#define PATCHFEED_CODEC_BLOSC_INTERNAL_SHUFFLE_AVX2_VECTORS_H_

/// \file
/// The AVX2 vector primitives of the byte-shuffle kernels: loads and stores of whole vectors
/// and lanes, the per-lane interleave of byte planes into elements and its inverse, and the
/// strided unshuffle of whole batches. Included only by files compiled with -mavx2
/// (shuffle_avx2.cc: whole buffers; unshuffle_rows_avx2.cc: runs of items of a block). A batch
/// is 32 elements: one 32-byte vector per byte plane, lane 0 holding elements [i, i + 16) and
/// lane 1 [i + 16, i + 32) (shuffle_avx2.cc says why).

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace patchfeed::internal_codec::avx2 {

// The helpers take and return arrays of vectors; unless inlined, those go through the stack and
// the kernels run several times slower, so inlining is not left to the heuristics.
#define PATCHFEED_AVX2_INLINE inline __attribute__((always_inline))

using Vec = __m256i;
constexpr size_t kBatch = 32;  // elements per vector of a byte plane
constexpr size_t kHalf = 16;   // elements per lane

PATCHFEED_AVX2_INLINE Vec Load(const std::byte* p) {
  return _mm256_loadu_si256(reinterpret_cast<const Vec*>(p));
}
PATCHFEED_AVX2_INLINE void Store(std::byte* p, Vec v) {
  _mm256_storeu_si256(reinterpret_cast<Vec*>(p), v);
}
// Lane 0 from lo, lane 1 from hi.
PATCHFEED_AVX2_INLINE Vec LoadLanes(const std::byte* lo, const std::byte* hi) {
  const __m128i l = _mm_loadu_si128(reinterpret_cast<const __m128i*>(lo));
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(hi));
  return _mm256_inserti128_si256(_mm256_castsi128_si256(l), h, 1);
}
PATCHFEED_AVX2_INLINE void StoreLane0(std::byte* p, Vec v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(v));
}
PATCHFEED_AVX2_INLINE void StoreLane1(std::byte* p, Vec v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_extracti128_si256(v, 1));
}

// Hides how a batch's base pointer derives from the loop counter. Otherwise GCC turns each of
// the up to 32 strided addresses of a batch into an induction variable of its own and spills
// them all, which costs more than the vector work.
template <typename T>
PATCHFEED_AVX2_INLINE T Opaque(T p) {
  asm("" : "+r"(p));
  return p;
}

// Interleaves the `kBytes`-byte units of the low (high) halves of each lane of a and b.
template <int kBytes>
PATCHFEED_AVX2_INLINE Vec UnpackLo(Vec a, Vec b) {
  return kBytes == 1   ? _mm256_unpacklo_epi8(a, b)
         : kBytes == 2 ? _mm256_unpacklo_epi16(a, b)
         : kBytes == 4 ? _mm256_unpacklo_epi32(a, b)
                       : _mm256_unpacklo_epi64(a, b);
}
template <int kBytes>
PATCHFEED_AVX2_INLINE Vec UnpackHi(Vec a, Vec b) {
  return kBytes == 1   ? _mm256_unpackhi_epi8(a, b)
         : kBytes == 2 ? _mm256_unpackhi_epi16(a, b)
         : kBytes == 4 ? _mm256_unpackhi_epi32(a, b)
                       : _mm256_unpackhi_epi64(a, b);
}

// One step of Interleave: before it, each group of kGroup consecutive planes is already
// interleaved into kGroup vectors (vector q of a group holds the lane's elements
// [q*16/kGroup, ...) with kGroup bytes each); pairs of groups merge into groups twice the size.
template <int kPlanes, int kGroup>
PATCHFEED_AVX2_INLINE void InterleaveStep(Vec (&v)[kPlanes]) {
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

// Per lane: v[k] holds byte k of 16 elements; afterwards v[q] holds bytes [16q, 16q + 16) of
// those elements laid end to end. For 16 planes, a 16x16 transpose: its own inverse.
template <int kPlanes, int kGroup = 1>
PATCHFEED_AVX2_INLINE void Interleave(Vec (&v)[kPlanes]) {
  InterleaveStep<kPlanes, kGroup>(v);
  if constexpr (2 * kGroup < kPlanes)
    Interleave<kPlanes, 2 * kGroup>(v);
}

// Per lane, the inverse of Interleave for 2, 4 or 8 planes. Two planes: the even bytes of the
// stream (masked, then packed) followed by its odd bytes (shifted down, then packed). More:
// four steps that each interleave the bytes of vector j with those of vector j + kPlanes / 2.
// On a byte's address (vector bits above byte-in-lane bits) a step is a rotation left by one
// bit, so four steps move the four element bits below the plane bits: the plane-major layout.
// (Repeating the even/odd split needs fewer steps but more instructions; it measured slower.)
template <int kPlanes>
PATCHFEED_AVX2_INLINE void Deinterleave(Vec (&v)[kPlanes]) {
  static_assert(kPlanes == 2 || kPlanes == 4 || kPlanes == 8);
  if constexpr (kPlanes == 2) {
    const Vec low_bytes = _mm256_set1_epi16(0x00ff);
    const Vec a = v[0];
    const Vec b = v[1];
    v[0] = _mm256_packus_epi16(_mm256_and_si256(a, low_bytes), _mm256_and_si256(b, low_bytes));
    v[1] = _mm256_packus_epi16(_mm256_srli_epi16(a, 8), _mm256_srli_epi16(b, 8));
  } else {
#pragma GCC unroll 4
    for (int step = 0; step < 4; ++step) {
      Vec out[kPlanes];
#pragma GCC unroll 8
      for (int j = 0; j < kPlanes / 2; ++j) {
        out[2 * j] = UnpackLo<1>(v[j], v[j + kPlanes / 2]);
        out[2 * j + 1] = UnpackHi<1>(v[j], v[j + kPlanes / 2]);
      }
#pragma GCC unroll 16
      for (int k = 0; k < kPlanes; ++k)
        v[k] = out[k];
    }
  }
}

// kWholeStores: join the lanes of two vectors with a permute and store 32 contiguous bytes,
// instead of storing each lane on its own.
// Byte plane k starts at `src + k * stride`; elements [0, n) of the planes are interleaved into
// dst (stride == n for a whole buffer, larger for a run of items inside a block).
template <size_t kTs, bool kWholeStores>
size_t UnshufflePow2Strided(const std::byte* src, size_t stride, std::byte* dst, size_t n) {
  size_t i = 0;
  for (; i + kBatch <= n; i += kBatch) {
    Vec v[kTs];
#pragma GCC unroll 16
    for (size_t k = 0; k < kTs; ++k)
      v[k] = Load(src + k * stride + i);
    Interleave<kTs>(v);
    std::byte* d = dst + i * kTs;
#pragma GCC unroll 8
    for (size_t j = 0; j < kTs / 2; ++j) {
      if constexpr (kWholeStores) {
        Store(d + 32 * j, _mm256_permute2x128_si256(v[2 * j], v[2 * j + 1], 0x20));
        Store(d + kHalf * kTs + 32 * j, _mm256_permute2x128_si256(v[2 * j], v[2 * j + 1], 0x31));
      } else {
        StoreLane0(d + 32 * j, v[2 * j]);
        StoreLane0(d + 32 * j + 16, v[2 * j + 1]);
        StoreLane1(d + kHalf * kTs + 32 * j, v[2 * j]);
        StoreLane1(d + kHalf * kTs + 32 * j + 16, v[2 * j + 1]);
      }
    }
  }
  return i;
}

}  // namespace patchfeed::internal_codec::avx2

#endif  // PATCHFEED_CODEC_BLOSC_INTERNAL_SHUFFLE_AVX2_VECTORS_H_
