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
#include <cstring>

#include "codec/blosc/internal/shuffle_avx2_vectors.h"
#include "codec/blosc/internal/shuffle_kernels.h"

namespace patchfeed::internal_codec {
namespace {

using namespace avx2;  // NOLINT: the vector primitives shared with unshuffle_rows_avx2.cc
#define PF_INLINE PATCHFEED_AVX2_INLINE

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

// Split stores cost no shuffle slot on Intel and measured faster for 4- and 8-byte types at all
// sizes. For 2-byte types whole stores win once the buffer outgrows L2, where the stores miss
// (+8% at 1 MiB on Zen 4, -4% at 256 KiB).
constexpr size_t kWholeStoresFromBytes = 512 * 1024;

template <size_t kTs>
size_t UnshufflePow2(const std::byte* src, std::byte* dst, size_t n) {
  if (kTs == 2 && n * kTs >= kWholeStoresFromBytes)
    return UnshufflePow2Strided<kTs, true>(src, n, dst, n);
  return UnshufflePow2Strided<kTs, false>(src, n, dst, n);
}

// Vectors below may read or write up to 16 bytes from any element start in a batch, so batches
// stop where that stays inside the n * ts whole-element bytes.
size_t PaddedEnd(size_t ts, size_t n) {
  const size_t bytes = n * ts;
  return bytes < 16 ? 0 : (bytes - 16) / ts / kBatch * kBatch;
}

// ---- Type sizes 3, 5, 6, 7: padded to 4-byte (3) or 8-byte slots. ----
// Within a lane, 16 / kSlots elements sit in kSlots-byte slots, so the kSlots-plane networks
// apply; a byte permute moves the elements between their packed bytes and the slots. Stores
// are 16 bytes at the start of each such group of elements, in increasing order, so each
// overwrites the scratch bytes its predecessor spilled past its group.
template <size_t kTs>
constexpr size_t kSlots = kTs <= 4 ? 4 : 8;

// Byte permutes of a lane: packed elements <-> slots (-1: zero).
template <size_t kTs>
constexpr std::array<int8_t, 16> SlotsFromPacked() {
  std::array<int8_t, 16> m{};
  for (size_t j = 0; j < 16; ++j) {
    const size_t e = j / kSlots<kTs>, k = j % kSlots<kTs>;
    m[j] = static_cast<int8_t>(k < kTs ? static_cast<int>(e * kTs + k) : -1);
  }
  return m;
}
template <size_t kTs>
constexpr std::array<int8_t, 16> PackedFromSlots() {
  std::array<int8_t, 16> m{};
  for (size_t j = 0; j < 16; ++j) {
    const size_t e = j / kTs, k = j % kTs;
    m[j] = static_cast<int8_t>(e < 16 / kSlots<kTs> ? static_cast<int>(e * kSlots<kTs> + k) : -1);
  }
  return m;
}
PF_INLINE Vec LaneMask(const std::array<int8_t, 16>& m) {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(m.data())));
}

template <size_t kTs>
size_t ShuffleNarrow(const std::byte* src, std::byte* dst, size_t n) {
  constexpr size_t kSlot = kSlots<kTs>, kGroup = 16 / kSlot * kTs;  // packed bytes per group
  static constexpr std::array<int8_t, 16> kMask = SlotsFromPacked<kTs>();
  const Vec mask = LaneMask(kMask);
  const size_t end = PaddedEnd(kTs, n);
  for (size_t i = 0; i < end; i += kBatch) {
    const std::byte* s = src + i * kTs;
    Vec v[kSlot];
#pragma GCC unroll 8
    for (size_t c = 0; c < kSlot; ++c) {
      v[c] = _mm256_shuffle_epi8(LoadLanes(s + c * kGroup, s + kHalf * kTs + c * kGroup), mask);
    }
    Deinterleave<kSlot>(v);
#pragma GCC unroll 8
    for (size_t k = 0; k < kTs; ++k)
      Store(dst + k * n + i, v[k]);
  }
  return end;
}

template <size_t kTs>
size_t UnshuffleNarrow(const std::byte* src, std::byte* dst, size_t n) {
  constexpr size_t kSlot = kSlots<kTs>, kGroup = 16 / kSlot * kTs;
  static constexpr std::array<int8_t, 16> kMask = PackedFromSlots<kTs>();
  const Vec mask = LaneMask(kMask);
  const size_t end = PaddedEnd(kTs, n);
  for (size_t i = 0; i < end; i += kBatch) {
    Vec v[kSlot];
#pragma GCC unroll 8
    for (size_t k = 0; k < kSlot; ++k) {
      v[k] = k < kTs ? Load(src + k * n + i) : _mm256_setzero_si256();
    }
    Interleave<kSlot>(v);
    std::byte* d = dst + i * kTs;
#pragma GCC unroll 8
    for (size_t c = 0; c < kSlot; ++c)
      v[c] = _mm256_shuffle_epi8(v[c], mask);
#pragma GCC unroll 8
    for (size_t c = 0; c < kSlot; ++c)
      StoreLane0(d + c * kGroup, v[c]);
#pragma GCC unroll 8
    for (size_t c = 0; c < kSlot; ++c)
      StoreLane1(d + kHalf * kTs + c * kGroup, v[c]);
  }
  return end;
}

// ---- Type size 12 (three 4-byte words, e.g. xyz float32): 3 x 4 bytes. ----
// Each group of four planes is interleaved into 4-byte words like a 4-byte type; then per lane
// the words a, b, c of four elements are woven into their 48 bytes: a0 b0 c0 a1 | b1 c1 a2 b2 |
// c2 a3 b3 c3. One in-lane word permute per source puts every word at its position in its
// output vector, so blends (which need no shuffle unit) finish the job. That is 36 shuffles per
// batch where the 16-row transpose takes 64.
constexpr int kWordOrderA = 0x6c;  // a0 a3 a2 a1
constexpr int kWordOrderB = 0xb1;  // b1 b0 b3 b2
constexpr int kWordOrderC = 0xc6;  // c2 c1 c0 c3  (each order is its own inverse)

// Word 1 from y, word 2 from z, the others from x, in both lanes.
PF_INLINE Vec Blend3(Vec x, Vec y, Vec z) {
  return _mm256_blend_epi32(_mm256_blend_epi32(x, y, 0x22), z, 0x44);
}

size_t Shuffle12(const std::byte* src, std::byte* dst, size_t n) {
  size_t i = 0;
  for (; i + kBatch <= n; i += kBatch) {
    Vec w[3][4];  // w[g][q]: bytes 4g..4g+3 of the lane's elements 4q..4q+3
#pragma GCC unroll 4
    for (size_t q = 0; q < 4; ++q) {
      const std::byte* s = src + (i + 4 * q) * 12;
      const Vec o0 = LoadLanes(s, s + kHalf * 12);
      const Vec o1 = LoadLanes(s + 16, s + kHalf * 12 + 16);
      const Vec o2 = LoadLanes(s + 32, s + kHalf * 12 + 32);
      w[0][q] = _mm256_shuffle_epi32(Blend3(o0, o2, o1), kWordOrderA);
      w[1][q] = _mm256_shuffle_epi32(Blend3(o1, o0, o2), kWordOrderB);
      w[2][q] = _mm256_shuffle_epi32(Blend3(o2, o1, o0), kWordOrderC);
    }
#pragma GCC unroll 3
    for (size_t g = 0; g < 3; ++g) {
      Deinterleave<4>(w[g]);
#pragma GCC unroll 4
      for (size_t k = 0; k < 4; ++k)
        Store(dst + (4 * g + k) * n + i, w[g][k]);
    }
  }
  return i;
}

size_t Unshuffle12(const std::byte* src, std::byte* dst, size_t n) {
  size_t i = 0;
  for (; i + kBatch <= n; i += kBatch) {
    Vec w[3][4];
#pragma GCC unroll 3
    for (size_t g = 0; g < 3; ++g) {
#pragma GCC unroll 4
      for (size_t k = 0; k < 4; ++k)
        w[g][k] = Load(src + (4 * g + k) * n + i);
      Interleave<4>(w[g]);
    }
#pragma GCC unroll 4
    for (size_t q = 0; q < 4; ++q) {
      const Vec a = _mm256_shuffle_epi32(w[0][q], kWordOrderA);
      const Vec b = _mm256_shuffle_epi32(w[1][q], kWordOrderB);
      const Vec c = _mm256_shuffle_epi32(w[2][q], kWordOrderC);
      const Vec o[3] = {Blend3(a, b, c), Blend3(b, c, a), Blend3(c, a, b)};
      std::byte* d = dst + (i + 4 * q) * 12;
#pragma GCC unroll 3
      for (size_t j = 0; j < 3; ++j) {
        StoreLane0(d + 16 * j, o[j]);
        StoreLane1(d + kHalf * 12 + 16 * j, o[j]);
      }
    }
  }
  return i;
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

// Where row r of a tile comes from: plane first + r. Types under 16 bytes have rows past their
// end; those take the next element's leading bytes (plane r - ts, one element on), so that each
// 16-byte store of an element also writes correct bytes into the next one, and stores may go in
// any order. PaddedEnd keeps that one-element-on read inside the plane.
PF_INLINE const std::byte* TileRow(const std::byte* src, size_t n, size_t ts, size_t first,
                                   size_t r) {
  return first + r < ts ? src + (first + r) * n : src + (first + r - ts) * n + 1;
}

// Stores the 32 transposed elements of an unshuffle batch at d.
template <size_t kTs>
PF_INLINE void StoreElements(const Vec (&v)[16], std::byte* d, size_t ts) {
  if constexpr (kTs == 16) {
    // Contiguous elements: pairs make whole-vector stores. As fast as split stores on Intel and
    // faster on AMD, whose extract-to-memory also takes a shuffle slot.
#pragma GCC unroll 8
    for (size_t j = 0; j < 8; ++j) {
      Store(d + 32 * j, _mm256_permute2x128_si256(v[2 * j], v[2 * j + 1], 0x20));
      Store(d + 256 + 32 * j, _mm256_permute2x128_si256(v[2 * j], v[2 * j + 1], 0x31));
    }
  } else {
#pragma GCC unroll 16
    for (size_t e = 0; e < 16; ++e) {
      StoreLane0(d + e * ts, v[e]);
      StoreLane1(d + (kHalf + e) * ts, v[e]);
    }
  }
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
    if (ts >= 16) {
      // Base plus multiples of n: cheaper than the table, whose 16 entries GCC would turn into
      // as many induction variables.
      const std::byte* base = Opaque(src + first * n + i);
#pragma GCC unroll 16
      for (size_t r = 0; r < 16; ++r)
        v[r] = Load(base + r * n);
    } else {
#pragma GCC unroll 16
      for (size_t r = 0; r < 16; ++r)
        v[r] = Load(plane[r] + i);
    }
    Interleave<16>(v);
    StoreElements<kTs>(v, Opaque(dst + i * ts + first), ts);
  }
}

constexpr size_t kStageBatches = 16;  // an 8 KiB stage: longer runs per plane measured faster

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
      StoreElements<kTs>(v, Opaque(dst + (b + t * kBatch) * ts + first), ts);
    }
  }
}

PF_INLINE void LoadElements(const std::byte* s, size_t ts, Vec (&v)[16]) {
#pragma GCC unroll 16
  for (size_t e = 0; e < 16; ++e)
    v[e] = LoadLanes(s + e * ts, s + (kHalf + e) * ts);
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
  alignas(32) Vec stage[kStageBatches][16];
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

// The most of planes 0..15 that start at the same line position modulo 4 KiB (the span that
// maps onto all L1 sets). Past a limit a direct tile thrashes its sets and the staged one wins;
// the limits were measured on an 8-way L1 (Zen 4; Intel's is 12-way). Stores suffer sooner than
// loads, since a half-written line that leaves L1 has to come back to be completed.
int PlanesPerSet(size_t n) {
  uint8_t hits[64] = {};
  uint8_t most = 0;
  for (size_t r = 0; r < 16; ++r)
    most = std::max<uint8_t>(most, ++hits[r * n % 4096 / 64]);
  return most;
}
constexpr int kDirectUnshuffleLimit = 8;
constexpr int kDirectShuffleLimit = 6;
// Wider types than this shuffle staged regardless: their direct tiles reread each source line
// once per tile (measured).
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

// Common type sizes get their stride compiled in: the 32 strided addresses of a batch become
// constant offsets.
template <bool kUnshuffle>
size_t Tiles(const std::byte* src, std::byte* dst, size_t ts, size_t n) {
  switch (ts) {
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

size_t ShuffleAvx2(size_t typesize, const std::byte* src, std::byte* dst, size_t num_elements) {
  if (typesize < 2)
    return 0;
  if (typesize < 9)
    return kShuffles[typesize](src, dst, num_elements);
  if (typesize == 12)
    return Shuffle12(src, dst, num_elements);
  return Tiles<false>(src, dst, typesize, num_elements);
}

size_t UnshuffleAvx2(size_t typesize, const std::byte* src, std::byte* dst, size_t num_elements) {
  if (typesize < 2)
    return 0;
  if (typesize < 9)
    return kUnshuffles[typesize](src, dst, num_elements);
  if (typesize == 12)
    return Unshuffle12(src, dst, num_elements);
  return Tiles<true>(src, dst, typesize, num_elements);
}

}  // namespace patchfeed::internal_codec
