// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
//
// SSE2 byte shuffle kernels. SSE2 has no byte permute (pshufb is SSSE3), so everything is built
// from unpacks (interleave two vectors) and saturating packs (keep every other byte).
//
// A batch is 16 elements: one 16-byte vector per byte plane. Moving between the plane-major and
// element-major layouts of a batch is a byte transpose, done as a network of those operations
// on an array of vectors that the compiler keeps in registers once the loops are unrolled. The
// structure follows shuffle_avx2.cc, which has the longer explanations.

#include <emmintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "codec/blosc/internal/shuffle_kernels.h"

namespace patchfeed::internal_codec {
namespace {

// The helpers take and return arrays of vectors; unless inlined, those go through the stack and
// the kernels run several times slower, so inlining is not left to the heuristics.
#define PF_INLINE inline __attribute__((always_inline))

using Vec = __m128i;
constexpr size_t kBatch = 16;  // elements per vector of a byte plane

PF_INLINE Vec Load(const std::byte* p) { return _mm_loadu_si128(reinterpret_cast<const Vec*>(p)); }
PF_INLINE void Store(std::byte* p, Vec v) { _mm_storeu_si128(reinterpret_cast<Vec*>(p), v); }

// Hides how a batch's base pointer derives from the loop counter, so that GCC does not turn each
// strided address of a batch into an induction variable of its own and spill them all.
template <typename T>
PF_INLINE T Opaque(T p) {
  asm("" : "+r"(p));
  return p;
}

// Interleaves the `kBytes`-byte units of the low (high) halves of a and b.
template <int kBytes>
PF_INLINE Vec UnpackLo(Vec a, Vec b) {
  return kBytes == 1   ? _mm_unpacklo_epi8(a, b)
         : kBytes == 2 ? _mm_unpacklo_epi16(a, b)
         : kBytes == 4 ? _mm_unpacklo_epi32(a, b)
                       : _mm_unpacklo_epi64(a, b);
}
template <int kBytes>
PF_INLINE Vec UnpackHi(Vec a, Vec b) {
  return kBytes == 1   ? _mm_unpackhi_epi8(a, b)
         : kBytes == 2 ? _mm_unpackhi_epi16(a, b)
         : kBytes == 4 ? _mm_unpackhi_epi32(a, b)
                       : _mm_unpackhi_epi64(a, b);
}

// One step of Interleave: before it, each group of kGroup consecutive planes is already
// interleaved into kGroup vectors (vector q of a group holds elements [q*16/kGroup, ...) with
// kGroup bytes each); pairs of groups merge into groups of twice the size.
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
// elements laid end to end. For 16 planes, a 16x16 transpose: its own inverse.
template <int kPlanes, int kGroup = 1>
PF_INLINE void Interleave(Vec (&v)[kPlanes]) {
  InterleaveStep<kPlanes, kGroup>(v);
  if constexpr (2 * kGroup < kPlanes)
    Interleave<kPlanes, 2 * kGroup>(v);
}

// The inverse of Interleave for 2, 4 or 8 planes. Two planes: the even bytes of the
// stream (masked, then packed) followed by its odd bytes (shifted down, then packed). More:
// four steps that each interleave the bytes of vector j with those of vector j + kPlanes / 2.
// On a byte's address (vector bits above byte-in-vector bits) a step is a rotation left by one
// bit, so four steps move the four element bits below the plane bits: the plane-major layout.
// (Repeating the even/odd split needs fewer steps but more instructions; it measured slower.)
template <int kPlanes>
PF_INLINE void Deinterleave(Vec (&v)[kPlanes]) {
  static_assert(kPlanes == 2 || kPlanes == 4 || kPlanes == 8);
  if constexpr (kPlanes == 2) {
    const Vec low_bytes = _mm_set1_epi16(0x00ff);
    const Vec a = v[0];
    const Vec b = v[1];
    v[0] = _mm_packus_epi16(_mm_and_si128(a, low_bytes), _mm_and_si128(b, low_bytes));
    v[1] = _mm_packus_epi16(_mm_srli_epi16(a, 8), _mm_srli_epi16(b, 8));
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
#pragma GCC unroll 8
    for (size_t c = 0; c < 8; ++c) {
      const Vec even = _mm_loadl_epi64(reinterpret_cast<const Vec*>(s + 2 * c * kTs));
      const Vec odd = _mm_loadl_epi64(reinterpret_cast<const Vec*>(s + (2 * c + 1) * kTs));
      v[c] = _mm_unpacklo_epi64(even, odd);
    }
    Deinterleave<8>(v);
#pragma GCC unroll 8
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
#pragma GCC unroll 8
    for (size_t k = 0; k < 8; ++k) {
      v[k] = k < kTs ? Load(src + k * n + i) : _mm_setzero_si128();
    }
    Interleave<8>(v);
    std::byte* d = dst + i * kTs;
#pragma GCC unroll 8
    for (size_t c = 0; c < 8; ++c) {
      _mm_storel_epi64(reinterpret_cast<Vec*>(d + 2 * c * kTs), v[c]);
      // movhps: stores the high half without spending a shuffle to move it down.
      _mm_storeh_pi(reinterpret_cast<__m64*>(d + (2 * c + 1) * kTs), _mm_castsi128_ps(v[c]));
    }
  }
  return end;
}

// ---- Type sizes 9 and up: 16x16 byte transposes, tiled, direct or staged. ----
// As in shuffle_avx2.cc: a tile is bytes [first, first + 16) of every element; staged tiles
// walk at most four planes at once, for planes a multiple of a large power of two apart.

// Row r of a tile: plane first + r, or for rows past the end of a type under 16 bytes, the next
// element's leading bytes, so that every 16-byte element store writes only correct bytes.
PF_INLINE const std::byte* TileRow(const std::byte* src, size_t n, size_t ts, size_t first,
                                   size_t r) {
  return first + r < ts ? src + (first + r) * n : src + (first + r - ts) * n + 1;
}

PF_INLINE void StoreElements(const Vec (&v)[16], std::byte* d, size_t ts) {
#pragma GCC unroll 16
  for (size_t e = 0; e < 16; ++e)
    Store(d + e * ts, v[e]);
}

template <size_t kTs>  // kTs == 0: the type size is known at run time only
void UnshuffleTileDirect(const std::byte* src, std::byte* dst, size_t n, size_t runtime_ts,
                         size_t first, size_t begin, size_t end) {
  const size_t ts = kTs != 0 ? kTs : runtime_ts;
  const std::byte* plane[16];
  for (size_t r = 0; r < 16; ++r)
    plane[r] = TileRow(src, n, ts, first, r);
  for (size_t i = begin; i < end; i += kBatch) {
    Vec v[16];
#pragma GCC unroll 16
    for (size_t r = 0; r < 16; ++r)
      v[r] = Load(plane[r] + i);
    Interleave<16>(v);
    StoreElements(v, Opaque(dst + i * ts + first), ts);
  }
}

constexpr size_t kStageBatches = 32;  // an 8 KiB stage: longer runs per plane measured faster

template <size_t kTs>
void UnshuffleTileStaged(const std::byte* src, std::byte* dst, size_t n, size_t runtime_ts,
                         size_t first, size_t begin, size_t end) {
  const size_t ts = kTs != 0 ? kTs : runtime_ts;
  alignas(16) Vec stage[kStageBatches][16];
  for (size_t b = begin; b < end; b += kStageBatches * kBatch) {
    const size_t batches = std::min(end - b, kStageBatches * kBatch) / kBatch;
    for (size_t g = 0; g < 16; g += 4) {
      const std::byte* p[4];
      for (size_t q = 0; q < 4; ++q)
        p[q] = TileRow(src, n, ts, first, g + q) + b;
      for (size_t t = 0; t < batches; ++t) {
        Vec v[4];
#pragma GCC unroll 4
        for (size_t q = 0; q < 4; ++q)
          v[q] = Load(p[q] + t * kBatch);
        Interleave<4>(v);  // the first two steps of Interleave<16>, for these four planes
#pragma GCC unroll 4
        for (size_t q = 0; q < 4; ++q)
          stage[t][g + q] = v[q];
      }
    }
    for (size_t t = 0; t < batches; ++t) {
      Vec v[16];
#pragma GCC unroll 16
      for (size_t r = 0; r < 16; ++r)
        v[r] = stage[t][r];
      InterleaveStep<16, 4>(v);
      InterleaveStep<16, 8>(v);
      StoreElements(v, Opaque(dst + (b + t * kBatch) * ts + first), ts);
    }
  }
}

PF_INLINE void LoadElements(const std::byte* s, size_t ts, Vec (&v)[16]) {
#pragma GCC unroll 16
  for (size_t e = 0; e < 16; ++e)
    v[e] = Load(s + e * ts);
}

template <size_t kTs>
void ShuffleTileDirect(const std::byte* src, std::byte* dst, size_t n, size_t runtime_ts,
                       size_t first, size_t begin, size_t end) {
  const size_t ts = kTs != 0 ? kTs : runtime_ts;
  const size_t rows = std::min<size_t>(16, ts);
  for (size_t i = begin; i < end; i += kBatch) {
    Vec v[16];
    LoadElements(Opaque(src + i * ts + first), ts, v);
    Interleave<16>(v);
    std::byte* d = Opaque(dst + first * n + i);
#pragma GCC unroll 16
    for (size_t r = 0; r < 16; ++r) {
      if (r < rows)
        Store(d + r * n, v[r]);
    }
  }
}

template <size_t kTs>
void ShuffleTileStaged(const std::byte* src, std::byte* dst, size_t n, size_t runtime_ts,
                       size_t first, size_t begin, size_t end) {
  const size_t ts = kTs != 0 ? kTs : runtime_ts;
  const size_t rows = std::min<size_t>(16, ts);
  alignas(16) Vec stage[kStageBatches][16];
  for (size_t b = begin; b < end; b += kStageBatches * kBatch) {
    const size_t batches = std::min(end - b, kStageBatches * kBatch) / kBatch;
    for (size_t t = 0; t < batches; ++t) {
      LoadElements(Opaque(src + (b + t * kBatch) * ts + first), ts, stage[t]);
      InterleaveStep<16, 1>(stage[t]);
      InterleaveStep<16, 2>(stage[t]);
    }
    // The last two steps, four planes at a time: planes 4j..4j+3 come from vector j of each
    // group of four rows left by the first two steps.
    for (size_t j = 0; 4 * j < rows; ++j) {
      std::byte* d = dst + (first + 4 * j) * n + b;
      const size_t count = std::min<size_t>(4, rows - 4 * j);
      for (size_t t = 0; t < batches; ++t) {
        const Vec* x = stage[t];
        const Vec lo = UnpackLo<4>(x[j], x[4 + j]);
        const Vec hi = UnpackHi<4>(x[j], x[4 + j]);
        const Vec lo2 = UnpackLo<4>(x[8 + j], x[12 + j]);
        const Vec hi2 = UnpackHi<4>(x[8 + j], x[12 + j]);
        std::byte* dt = d + t * kBatch;
        Store(dt, UnpackLo<8>(lo, lo2));
        if (count > 1)
          Store(dt + n, UnpackHi<8>(lo, lo2));
        if (count > 2)
          Store(dt + 2 * n, UnpackLo<8>(hi, hi2));
        if (count > 3)
          Store(dt + 3 * n, UnpackHi<8>(hi, hi2));
      }
    }
  }
}

// The most of planes 0..15 that start at the same line position modulo 4 KiB, and the limits
// past which the staged tiles win (see shuffle_avx2.cc).
int PlanesPerSet(size_t n) {
  uint8_t hits[64] = {};
  uint8_t most = 0;
  for (size_t r = 0; r < 16; ++r)
    most = std::max<uint8_t>(most, ++hits[r * n % 4096 / 64]);
  return most;
}
constexpr int kDirectUnshuffleLimit = 8;
constexpr int kDirectShuffleLimit = 6;
constexpr size_t kDirectShuffleMaxTs = 32;

// Elements go in blocks whose element-major side (~16 KiB) stays in L1 while every tile passes
// over it; each tile pass then reads or writes its 16 planes as sequential runs.
constexpr size_t kTileBlockBytes = 16384;

template <size_t kTs, bool kUnshuffle>
size_t RunTiles(const std::byte* src, std::byte* dst, size_t runtime_ts, size_t n) {
  const size_t ts = kTs != 0 ? kTs : runtime_ts;
  const size_t end = ts >= 16 ? n / kBatch * kBatch : PaddedEnd(ts, n);
  const size_t block = std::max(kBatch, kTileBlockBytes / ts / kBatch * kBatch);
  const bool staged = kUnshuffle
                          ? PlanesPerSet(n) > kDirectUnshuffleLimit
                          : PlanesPerSet(n) > kDirectShuffleLimit || ts > kDirectShuffleMaxTs;
  for (size_t b = 0; b < end; b += block) {
    const size_t e = std::min(end, b + block);
    for (size_t first = 0; first < ts; first += 16) {
      const size_t f = ts < 16 ? 0 : std::min(first, ts - 16);
      if constexpr (kUnshuffle) {
        (staged ? UnshuffleTileStaged<kTs> : UnshuffleTileDirect<kTs>)(src, dst, n, ts, f, b, e);
      } else {
        (staged ? ShuffleTileStaged<kTs> : ShuffleTileDirect<kTs>)(src, dst, n, ts, f, b, e);
      }
    }
  }
  return end;
}

// Common type sizes get their stride compiled in: the strided addresses of a batch become
// constant offsets.
template <bool kUnshuffle>
size_t Tiles(const std::byte* src, std::byte* dst, size_t ts, size_t n) {
  switch (ts) {
    case 12:
      return RunTiles<12, kUnshuffle>(src, dst, ts, n);
    case 16:
      return RunTiles<16, kUnshuffle>(src, dst, ts, n);
    case 24:
      return RunTiles<24, kUnshuffle>(src, dst, ts, n);
    case 32:
      return RunTiles<32, kUnshuffle>(src, dst, ts, n);
    default:
      return RunTiles<0, kUnshuffle>(src, dst, ts, n);
  }
}

#undef PF_INLINE

// Indexed by type size; sizes past the table go to the tiles.
using KernelFn = size_t (*)(const std::byte*, std::byte*, size_t);
constexpr KernelFn kShuffles[] = {nullptr,          nullptr,          ShufflePow2<2>,
                                  ShuffleNarrow<3>, ShufflePow2<4>,   ShuffleNarrow<5>,
                                  ShuffleNarrow<6>, ShuffleNarrow<7>, ShufflePow2<8>};
constexpr KernelFn kUnshuffles[] = {nullptr,
                                    nullptr,
                                    UnshufflePow2<2>,
                                    UnshuffleNarrow<3>,
                                    UnshufflePow2<4>,
                                    UnshuffleNarrow<5>,
                                    UnshuffleNarrow<6>,
                                    UnshuffleNarrow<7>,
                                    UnshufflePow2<8>};

}  // namespace

size_t ShuffleSse2(size_t typesize, const std::byte* src, std::byte* dst, size_t num_elements) {
  if (typesize < 2)
    return 0;
  if (typesize < 9)
    return kShuffles[typesize](src, dst, num_elements);
  return Tiles<false>(src, dst, typesize, num_elements);
}

size_t UnshuffleSse2(size_t typesize, const std::byte* src, std::byte* dst, size_t num_elements) {
  if (typesize < 2)
    return 0;
  if (typesize < 9)
    return kUnshuffles[typesize](src, dst, num_elements);
  return Tiles<true>(src, dst, typesize, num_elements);
}

}  // namespace patchfeed::internal_codec
