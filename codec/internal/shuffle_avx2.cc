// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
//
// AVX2 byte shuffle kernels. A batch is 32 elements: one 32-byte vector per byte plane.
//
// AVX2 unpacks, packs and byte permutes work inside each 128-bit lane, so a batch is run as two
// independent 16-element halves, one per lane: lane 0 holds elements [i, i + 16), lane 1
// [i + 16, i + 32). The byte-plane side of a batch is laid out like that already (a plain 32-byte
// load of a plane). The element-major side of each half is 16 * typesize contiguous bytes, so it
// is loaded into the lanes with a 16-byte load plus a 16-byte insert from memory, and stored with
// a 16-byte store plus an extract to memory: no lane-crossing permutes, which would compete with
// the transposes for the shuffle unit.

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "codec/internal/shuffle_kernels.h"

namespace patchfeed::internal_codec {
namespace {

// The helpers take and return arrays of vectors; unless inlined, those go through the stack and
// the kernels run several times slower, so inlining is not left to the heuristics.
#define PF_INLINE inline __attribute__((always_inline))

using Vec = __m256i;
constexpr size_t kBatch = 32;  // elements per vector of a byte plane
constexpr size_t kHalf = 16;   // elements per lane

PF_INLINE Vec Load(const std::byte* p) {
  return _mm256_loadu_si256(reinterpret_cast<const Vec*>(p));
}
PF_INLINE void Store(std::byte* p, Vec v) { _mm256_storeu_si256(reinterpret_cast<Vec*>(p), v); }
// Lane 0 from lo, lane 1 from hi.
PF_INLINE Vec LoadLanes(const std::byte* lo, const std::byte* hi) {
  const __m128i l = _mm_loadu_si128(reinterpret_cast<const __m128i*>(lo));
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(hi));
  return _mm256_inserti128_si256(_mm256_castsi128_si256(l), h, 1);
}
PF_INLINE void StoreLane0(std::byte* p, Vec v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(v));
}
PF_INLINE void StoreLane1(std::byte* p, Vec v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_extracti128_si256(v, 1));
}

// Hides how a batch's base pointer derives from the loop counter. Otherwise GCC turns each of
// the up to 32 strided addresses of a batch into an induction variable of its own and spills
// them all, which costs more than the vector work.
template <typename T>
PF_INLINE T Opaque(T p) {
  asm("" : "+r"(p));
  return p;
}

// Interleaves the `kBytes`-byte units of the low (high) halves of each lane of a and b.
template <int kBytes>
PF_INLINE Vec UnpackLo(Vec a, Vec b) {
  if constexpr (kBytes == 1)
    return _mm256_unpacklo_epi8(a, b);
  if constexpr (kBytes == 2)
    return _mm256_unpacklo_epi16(a, b);
  if constexpr (kBytes == 4)
    return _mm256_unpacklo_epi32(a, b);
  if constexpr (kBytes == 8)
    return _mm256_unpacklo_epi64(a, b);
}
template <int kBytes>
PF_INLINE Vec UnpackHi(Vec a, Vec b) {
  if constexpr (kBytes == 1)
    return _mm256_unpackhi_epi8(a, b);
  if constexpr (kBytes == 2)
    return _mm256_unpackhi_epi16(a, b);
  if constexpr (kBytes == 4)
    return _mm256_unpackhi_epi32(a, b);
  if constexpr (kBytes == 8)
    return _mm256_unpackhi_epi64(a, b);
}

// One step of Interleave: before it, each group of kGroup consecutive planes is already
// interleaved into kGroup vectors (vector q of a group holds the lane's elements
// [q*16/kGroup, ...) with kGroup bytes each); pairs of groups merge into groups twice the size.
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

// Per lane: v[k] holds byte k of 16 elements; afterwards v[q] holds bytes [16q, 16q + 16) of
// those elements laid end to end.
template <int kPlanes>
PF_INLINE void Interleave(Vec (&v)[kPlanes]) {
  if constexpr (kPlanes >= 2)
    InterleaveStep<kPlanes, 1>(v);
  if constexpr (kPlanes >= 4)
    InterleaveStep<kPlanes, 2>(v);
  if constexpr (kPlanes >= 8)
    InterleaveStep<kPlanes, 4>(v);
}

// Per lane, the inverse of Interleave for 2, 4 or 8 planes. Each step splits the byte stream
// held in v into its even bytes (masked, then packed) followed by its odd bytes (shifted down,
// then packed): on byte addresses, a rotation right by one bit, so log2(kPlanes) steps bring the
// byte-within-element bits to the top, which is the plane-major layout. That is one pack per
// vector and step; the masks and shifts run beside the packs on other execution ports.
template <int kPlanes>
PF_INLINE void Deinterleave(Vec (&v)[kPlanes]) {
  static_assert(kPlanes == 2 || kPlanes == 4 || kPlanes == 8);
  constexpr int kSteps = kPlanes == 2 ? 1 : kPlanes == 4 ? 2 : 3;
  const Vec low_bytes = _mm256_set1_epi16(0x00ff);
#pragma GCC unroll 4
  for (int step = 0; step < kSteps; ++step) {
    Vec out[kPlanes];
#pragma GCC unroll 8
    for (int j = 0; j < kPlanes / 2; ++j) {
      const Vec a = v[2 * j];
      const Vec b = v[2 * j + 1];
      out[j] = _mm256_packus_epi16(_mm256_and_si256(a, low_bytes), _mm256_and_si256(b, low_bytes));
      out[kPlanes / 2 + j] = _mm256_packus_epi16(_mm256_srli_epi16(a, 8), _mm256_srli_epi16(b, 8));
    }
#pragma GCC unroll 16
    for (int k = 0; k < kPlanes; ++k)
      v[k] = out[k];
  }
}

// ---- Type sizes 2, 4, 8: whole vectors in and out, no waste. ----

template <size_t kTs>
PF_INLINE void ShuffleBatch(const std::byte* s, Vec (&v)[kTs]) {
#pragma GCC unroll 16
  for (size_t j = 0; j < kTs; ++j)
    v[j] = LoadLanes(s + 16 * j, s + kHalf * kTs + 16 * j);
  Deinterleave<kTs>(v);
}

template <size_t kTs>
size_t ShufflePow2(const std::byte* src, std::byte* dst, size_t n) {
  size_t i = 0;
  // Two batches per round, so that each plane gets a whole 64-byte line at once: with
  // power-of-two plane distances the planes share cache sets, and a half-written line can be
  // evicted before the next batch completes it.
  for (; i + 2 * kBatch <= n; i += 2 * kBatch) {
    Vec v[kTs], w[kTs];
    ShuffleBatch<kTs>(src + i * kTs, v);
    ShuffleBatch<kTs>(src + (i + kBatch) * kTs, w);
#pragma GCC unroll 16
    for (size_t k = 0; k < kTs; ++k) {
      Store(dst + k * n + i, v[k]);
      Store(dst + k * n + i + kBatch, w[k]);
    }
  }
  for (; i + kBatch <= n; i += kBatch) {
    Vec v[kTs];
    ShuffleBatch<kTs>(src + i * kTs, v);
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
    for (size_t q = 0; q < kTs; ++q) {
      StoreLane0(d + 16 * q, v[q]);
      StoreLane1(d + kHalf * kTs + 16 * q, v[q]);
    }
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
// Within a lane two elements sit in 8-byte slots, so the 8-plane networks apply; a byte permute
// moves the elements between their packed 2 * ts bytes and the slots. Stores are 16 bytes at
// every second element start, in increasing order, so each overwrites the scratch bytes its
// predecessor spilled past its two elements.

// Byte permutes of a lane: packed pair of elements <-> pair of 8-byte slots (-1: zero).
template <size_t kTs>
constexpr std::array<int8_t, 16> SlotsFromPacked() {
  std::array<int8_t, 16> m{};
  for (size_t j = 0; j < 8; ++j) {
    m[j] = static_cast<int8_t>(j < kTs ? static_cast<int>(j) : -1);
    m[8 + j] = static_cast<int8_t>(j < kTs ? static_cast<int>(kTs + j) : -1);
  }
  return m;
}
template <size_t kTs>
constexpr std::array<int8_t, 16> PackedFromSlots() {
  std::array<int8_t, 16> m{};
  for (size_t j = 0; j < 16; ++j) {
    m[j] = static_cast<int8_t>(j < kTs       ? static_cast<int>(j)
                               : j < 2 * kTs ? static_cast<int>(j - kTs + 8)
                                             : -1);
  }
  return m;
}
PF_INLINE Vec LaneMask(const std::array<int8_t, 16>& m) {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(m.data())));
}

template <size_t kTs>
size_t ShuffleNarrow(const std::byte* src, std::byte* dst, size_t n) {
  static constexpr std::array<int8_t, 16> kMask = SlotsFromPacked<kTs>();
  const Vec mask = LaneMask(kMask);
  const size_t end = PaddedEnd(kTs, n);
  for (size_t i = 0; i < end; i += kBatch) {
    const std::byte* s = src + i * kTs;
    Vec v[8];
#pragma GCC unroll 8
    for (size_t c = 0; c < 8; ++c) {
      v[c] = _mm256_shuffle_epi8(LoadLanes(s + 2 * c * kTs, s + (kHalf + 2 * c) * kTs), mask);
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
  static constexpr std::array<int8_t, 16> kMask = PackedFromSlots<kTs>();
  const Vec mask = LaneMask(kMask);
  const size_t end = PaddedEnd(kTs, n);
  for (size_t i = 0; i < end; i += kBatch) {
    Vec v[8];
#pragma GCC unroll 8
    for (size_t k = 0; k < 8; ++k) {
      v[k] = k < kTs ? Load(src + k * n + i) : _mm256_setzero_si256();
    }
    Interleave<8>(v);
    std::byte* d = dst + i * kTs;
#pragma GCC unroll 8
    for (size_t c = 0; c < 8; ++c)
      v[c] = _mm256_shuffle_epi8(v[c], mask);
#pragma GCC unroll 8
    for (size_t c = 0; c < 8; ++c)
      StoreLane0(d + 2 * c * kTs, v[c]);
#pragma GCC unroll 8
    for (size_t c = 0; c < 8; ++c)
      StoreLane1(d + (kHalf + 2 * c) * kTs, v[c]);
  }
  return end;
}

// ---- Type sizes 9 and up: 16x16 byte transposes per lane. ----
// A tile is bytes [first, first + 16) of every element. Wide types are covered by tiles at
// 0, 16, 32, ... with the last one moved back to end at the type's last byte (overlapping its
// neighbour, which only rewrites equal bytes). Types of 9..15 bytes use one tile (see TileRow).
//
// A tile runs in one of two ways. Direct: per batch, the 16 plane vectors are loaded,
// transposed and stored. Staged: the first half of the transpose runs four planes at a time over
// a block of elements into a stage in L1, the second half from there. The round trip through the
// stage costs, but it never walks more than four planes at once. That wins when the planes lie a
// multiple of a large power of two apart (as Blosc's power-of-two blocks make them): then the 16
// streams of the direct way fall into the same few L1 sets and evict each other's lines, which
// halves the speed or worse.

// The transpose in three parts (it is Interleave for 16 planes, and its own inverse). Inputs are
// loaded right before their first use and outputs handed on as soon as they are ready: with 16
// vector registers, holding all inputs or all outputs at once spills.
template <typename LoadFn>
PF_INLINE void TransposeFirstSteps(LoadFn load, Vec (&v)[16]) {
#pragma GCC unroll 8
  for (size_t m = 0; m < 8; ++m) {
    const Vec a = load(2 * m);
    const Vec b = load(2 * m + 1);
    v[2 * m] = UnpackLo<1>(a, b);
    v[2 * m + 1] = UnpackHi<1>(a, b);
  }
  InterleaveStep<16, 2>(v);
}
template <typename StoreFn>
PF_INLINE void TransposeLastSteps(Vec (&v)[16], StoreFn store) {
  InterleaveStep<16, 4>(v);
#pragma GCC unroll 8
  for (size_t q = 0; q < 8; ++q) {
    store(2 * q, UnpackLo<8>(v[q], v[8 + q]));
    store(2 * q + 1, UnpackHi<8>(v[q], v[8 + q]));
  }
}

// Where row r of a tile comes from: plane first + r. Types under 16 bytes have rows past their
// end; those take the next element's leading bytes (plane r - ts, one element on), so that each
// 16-byte store of an element also writes correct bytes into the next one, and stores may go in
// any order. PaddedEnd keeps that one-element-on read inside the plane.
PF_INLINE const std::byte* TileRow(const std::byte* src, size_t n, size_t ts, size_t first,
                                   size_t r) {
  return first + r < ts ? src + (first + r) * n : src + (first + r - ts) * n + 1;
}

// Stores element e of both lanes of a transposed batch at d.
PF_INLINE void StoreElement(std::byte* d, size_t ts, size_t e, Vec v) {
  StoreLane0(d + e * ts, v);
  StoreLane1(d + (kHalf + e) * ts, v);
}

template <size_t kTs>  // kTs == 0: the type size is known at run time only
void UnshuffleTileDirect(const std::byte* src, std::byte* dst, size_t n, size_t runtime_ts,
                         size_t first, size_t begin, size_t end) {
  const size_t ts = kTs != 0 ? kTs : runtime_ts;
  const std::byte* plane[16];
  for (size_t r = 0; r < 16; ++r)
    plane[r] = TileRow(src, n, ts, first, r);
  for (size_t i = begin; i < end; i += kBatch) {
    std::byte* d = Opaque(dst + i * ts + first);
    Vec v[16];
    TransposeFirstSteps([&](size_t r) { return Load(plane[r] + i); }, v);
    TransposeLastSteps(v, [&](size_t e, Vec x) { StoreElement(d, ts, e, x); });
  }
}

constexpr size_t kStageBatches = 8;  // a 4 KiB stage

template <size_t kTs>
void UnshuffleTileStaged(const std::byte* src, std::byte* dst, size_t n, size_t runtime_ts,
                         size_t first, size_t begin, size_t end) {
  const size_t ts = kTs != 0 ? kTs : runtime_ts;
  alignas(32) Vec stage[kStageBatches][16];
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
        Interleave<4>(v);  // the first two steps of the transpose, for these four planes
#pragma GCC unroll 4
        for (size_t q = 0; q < 4; ++q)
          stage[t][g + q] = v[q];
      }
    }
    for (size_t t = 0; t < batches; ++t) {
      std::byte* d = Opaque(dst + (b + t * kBatch) * ts + first);
      Vec v[16];
#pragma GCC unroll 16
      for (size_t r = 0; r < 16; ++r)
        v[r] = stage[t][r];
      TransposeLastSteps(v, [&](size_t e, Vec x) { StoreElement(d, ts, e, x); });
    }
  }
}

template <size_t kTs>
void ShuffleTileDirect(const std::byte* src, std::byte* dst, size_t n, size_t runtime_ts,
                       size_t first, size_t begin, size_t end) {
  const size_t ts = kTs != 0 ? kTs : runtime_ts;
  const size_t rows = std::min<size_t>(16, ts);
  for (size_t i = begin; i < end; i += kBatch) {
    const std::byte* s = Opaque(src + i * ts + first);
    std::byte* d = Opaque(dst + first * n + i);
    Vec v[16];
    TransposeFirstSteps([&](size_t e) { return LoadLanes(s + e * ts, s + (kHalf + e) * ts); }, v);
    TransposeLastSteps(v, [&](size_t r, Vec x) {
      if (r < rows)
        Store(d + r * n, x);
    });
  }
}

template <size_t kTs>
void ShuffleTileStaged(const std::byte* src, std::byte* dst, size_t n, size_t runtime_ts,
                       size_t first, size_t begin, size_t end) {
  const size_t ts = kTs != 0 ? kTs : runtime_ts;
  const size_t rows = std::min<size_t>(16, ts);
  alignas(32) Vec stage[kStageBatches][16];
  for (size_t b = begin; b < end; b += kStageBatches * kBatch) {
    const size_t batches = std::min(end - b, kStageBatches * kBatch) / kBatch;
    for (size_t t = 0; t < batches; ++t) {
      const std::byte* s = Opaque(src + (b + t * kBatch) * ts + first);
      TransposeFirstSteps([&](size_t e) { return LoadLanes(s + e * ts, s + (kHalf + e) * ts); },
                          stage[t]);
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

// Whether planes 0..15 start at too few distinct line positions modulo 4 KiB (the span that
// maps onto all L1 sets), so that a direct tile would thrash its sets.
bool PlanesCollide(size_t n) {
  uint8_t hits[64] = {};
  uint8_t most = 0;
  for (size_t r = 0; r < 16; ++r)
    most = std::max<uint8_t>(most, ++hits[r * n % 4096 / 64]);
  return most > 2;
}

// Elements go in blocks whose element-major side stays in L2-near caches while every tile
// passes over it; each tile pass then reads or writes its 16 planes as sequential runs.
constexpr size_t kTileBlockBytes = 32768;

template <size_t kTs, bool kUnshuffle>
size_t RunTiles(const std::byte* src, std::byte* dst, size_t runtime_ts, size_t n) {
  const size_t ts = kTs != 0 ? kTs : runtime_ts;
  const size_t end = ts >= 16 ? n / kBatch * kBatch : PaddedEnd(ts, n);
  const size_t block = std::max(kBatch, kTileBlockBytes / ts / kBatch * kBatch);
  const bool staged = PlanesCollide(n);
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

// Common type sizes get their stride compiled in: the 32 strided addresses of a batch become
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
    default:
      return RunTiles<0, kUnshuffle>(src, dst, ts, n);
  }
}

#undef PF_INLINE

}  // namespace

size_t ShuffleAvx2(size_t typesize, const std::byte* src, std::byte* dst, size_t num_elements) {
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
      return typesize < 9 ? 0 : Tiles<false>(src, dst, typesize, num_elements);
  }
}

size_t UnshuffleAvx2(size_t typesize, const std::byte* src, std::byte* dst, size_t num_elements) {
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
      return typesize < 9 ? 0 : Tiles<true>(src, dst, typesize, num_elements);
  }
}

}  // namespace patchfeed::internal_codec
