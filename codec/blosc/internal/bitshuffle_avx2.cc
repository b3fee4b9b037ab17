// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
//
// AVX2 bit shuffle kernels (compiled with -mavx2; called only when the CPU has AVX2).
//
// The unit of work is a sub-block of 32 consecutive 8-element groups: every bit row contributes
// one 32-byte vector to it, byte lane j of which belongs to group j. Two building blocks:
//
//  * TransposeBits: in each byte lane independently, the 8x8 bit matrix spread over 8 vectors
//    (vector i = matrix row i) is transposed with three rounds of masked shift/xor swaps. This
//    turns "byte k of elements 8j..8j+7" into "bit rows 8k..8k+7 at column j" and back; a
//    transpose is its own inverse, so both directions use it.
//  * byte transposes between those vectors and "pieces", the 8 consecutive bytes that a group
//    spans in element order (group j, offset o: bytes o..o+7 of its 8t bytes). Unpacking two
//    vectors bytewise moves one bit of the byte address into the vector index and back, so
//    8 vectors of 32 row bytes become 8 pieces per 16-byte lane in three unpack rounds (four for
//    the other direction, whose first round must also move the piece half bit).
//
// The element side goes through a stack scratch 8 bytes of every group at a time: all 8t bytes
// of a group for t <= 8, else slices of 16 (or 8) bytes of each element, the last slice
// overlapping the previous one so that every piece is whole.
//
// Memory order matters as much as instruction count: with a power-of-two row length all 8t bit
// rows share one L1 set. A block therefore spans up to 4 sub-blocks (two cache lines of every
// row) and visits each row for all of them at once, and ForEachBlock aligns blocks to lines.
// The last block may overlap the previous one; overlaps recompute and rewrite identical bytes,
// which is cheaper than a scalar tail.

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "codec/blosc/internal/bitshuffle_kernels.h"

namespace patchfeed::internal_codec {
namespace {

using V = __m256i;

constexpr size_t kGroups = 32;
// Groups per block when the rows are long enough: two 64-byte lines of every bit row.
constexpr size_t kLineGroups = 128;
constexpr size_t kLineBytes = 64;  // cache line
// Stack scratch (8 KiB): 8 * SliceWidth(t) vectors per sub-block of a block.
constexpr size_t kScratchVectors = 256;

// Element bytes handled per pass: all of them for t <= 8, else 16 (8 when t < 16) so that the
// pieces are written as 16-byte pairs where possible.
constexpr size_t SliceWidth(size_t t) { return t <= 8 ? t : (t >= 16 ? 16 : 8); }

inline V Load(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const V*>(p)); }
inline void Store(uint8_t* p, V v) { _mm256_storeu_si256(reinterpret_cast<V*>(p), v); }
inline __m128i Load128(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
inline __m128i Load64(const uint8_t* p) {
  return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
}
inline void Store128(uint8_t* p, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
inline void Store64(uint8_t* p, __m128i v) { _mm_storel_epi64(reinterpret_cast<__m128i*>(p), v); }
inline V Join(__m128i lo, __m128i hi) {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}
inline __m128i Lo(V v) { return _mm256_castsi256_si128(v); }
inline __m128i Hi(V v) { return _mm256_extracti128_si256(v, 1); }

// Swaps bit b+kD of x[i] with bit b of x[i+kD] for every i, b without bit kD: one round of the
// block transpose. The 16-bit shifts leak bits across byte lanes only where the mask drops them.
template <int kD>
inline void SwapBitBlocks(V* x) {
  const V mask = _mm256_set1_epi8(kD == 1 ? 0x55 : (kD == 2 ? 0x33 : 0x0F));
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    if ((i & kD) == 0) {
      const V d = _mm256_and_si256(_mm256_xor_si256(_mm256_srli_epi16(x[i], kD), x[i + kD]), mask);
      x[i + kD] = _mm256_xor_si256(x[i + kD], d);
      x[i] = _mm256_xor_si256(x[i], _mm256_slli_epi16(d, kD));
    }
  }
}

inline void TransposeBits(V* x) {
  SwapBitBlocks<1>(x);
  SwapBitBlocks<2>(x);
  SwapBitBlocks<4>(x);
}

// Interleaves the bytes of the vector pairs that differ in index bit kQ. Within a 16-byte lane
// the byte address [b3 b2 b1 b0] becomes [b2 b1 b0 q], and b3 becomes index bit kQ.
template <int kQ>
inline void InterleaveStep(V* x) {
  constexpr int kBit = 1 << kQ;
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    if ((i & kBit) == 0) {
      const V lo = _mm256_unpacklo_epi8(x[i], x[i + kBit]);
      x[i + kBit] = _mm256_unpackhi_epi8(x[i], x[i + kBit]);
      x[i] = lo;
    }
  }
}

// x[r] = row r (lane byte j = group j) -> x[i] 64-bit half h of lane L = piece of group
// 16L + 2i + h (byte r = row r).
inline void RowsToPieces(V* x) {
  InterleaveStep<2>(x);
  InterleaveStep<1>(x);
  InterleaveStep<0>(x);
}

// Where PiecesToRows wants the pieces: group 16L + PieceBase(i) + h in half h of lane L of x[i].
// The order of the index bits makes the four unpack rounds end with x[r] = row r.
constexpr size_t PieceBase(int i) {
  return static_cast<size_t>(8 * (i & 1) + 4 * ((i >> 2) & 1) + 2 * ((i >> 1) & 1));
}

inline void PiecesToRows(V* x) {
  InterleaveStep<0>(x);
  InterleaveStep<2>(x);
  InterleaveStep<1>(x);
  InterleaveStep<0>(x);
}

// Pieces of group j start at base + j * stride.
inline void LoadPieces(const uint8_t* base, size_t stride, V* x) {
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    const uint8_t* p = base + PieceBase(i) * stride;
    const uint8_t* q = p + 16 * stride;
    x[i] = Join(_mm_unpacklo_epi64(Load64(p), Load64(p + stride)),
                _mm_unpacklo_epi64(Load64(q), Load64(q + stride)));
  }
}

// Two adjacent pieces per group: base + j * stride holds group j's piece for `a`, then for `b`.
inline void LoadPiecePairs(const uint8_t* base, size_t stride, V* a, V* b) {
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    const uint8_t* p = base + PieceBase(i) * stride;
    const uint8_t* q = p + 16 * stride;
    const V even = Join(Load128(p), Load128(q));
    const V odd = Join(Load128(p + stride), Load128(q + stride));
    a[i] = _mm256_unpacklo_epi64(even, odd);
    b[i] = _mm256_unpackhi_epi64(even, odd);
  }
}

inline void StorePieces(const V* x, uint8_t* base, size_t stride) {
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    uint8_t* p = base + static_cast<size_t>(2 * i) * stride;
    uint8_t* q = p + 16 * stride;
    Store64(p, Lo(x[i]));
    Store64(p + stride, _mm_unpackhi_epi64(Lo(x[i]), Lo(x[i])));
    Store64(q, Hi(x[i]));
    Store64(q + stride, _mm_unpackhi_epi64(Hi(x[i]), Hi(x[i])));
  }
}

inline void StorePiecePairs(const V* a, const V* b, uint8_t* base, size_t stride) {
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    const V even = _mm256_unpacklo_epi64(a[i], b[i]);
    const V odd = _mm256_unpackhi_epi64(a[i], b[i]);
    uint8_t* p = base + static_cast<size_t>(2 * i) * stride;
    uint8_t* q = p + 16 * stride;
    Store128(p, Lo(even));
    Store128(p + stride, Lo(odd));
    Store128(q, Hi(even));
    Store128(q + stride, Hi(odd));
  }
}

inline void LoadRows(const uint8_t* p, size_t row_len, V* x) {
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    x[i] = Load(p + static_cast<size_t>(i) * row_len);
  }
}

inline void StoreRows(const V* x, uint8_t* p, size_t row_len) {
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    Store(p + static_cast<size_t>(i) * row_len, x[i]);
  }
}

inline void Copy8(const V* from, V* to) {
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    to[i] = from[i];
  }
}

// The element bytes [k0, k0 + width) of all 8 elements of every group of the block as scratch
// rows e * width + (k - k0). For t <= 8 the caller passes k0 = 0 and width = t, so the rows are
// simply the element bytes in group order.
void ElementsToScratch(const uint8_t* in, size_t t, size_t k0, size_t width, V* scratch) {
  const size_t stride = 8 * t;
  V a[8];
  V b[8];
  // Whole groups (width == t) are one stretch of 8t bytes; slices are 8, one per element.
  const size_t stretches = width == t ? 1 : 8;
  const size_t bytes = width == t ? 8 * t : width;
  for (size_t e = 0; e < stretches; ++e) {
    const uint8_t* p = in + e * t + k0;
    V* rows = scratch + e * width;
    size_t s = 0;
    for (; s + 16 <= bytes; s += 16) {
      LoadPiecePairs(p + s, stride, a, b);
      PiecesToRows(a);
      PiecesToRows(b);
      Copy8(a, rows + s);
      Copy8(b, rows + s + 8);
    }
    if (s < bytes) {
      LoadPieces(p + s, stride, a);
      PiecesToRows(a);
      Copy8(a, rows + s);
    }
  }
}

// Inverse of ElementsToScratch.
void ScratchToElements(const V* scratch, size_t t, size_t k0, size_t width, uint8_t* out) {
  const size_t stride = 8 * t;
  V a[8];
  V b[8];
  const size_t stretches = width == t ? 1 : 8;
  const size_t bytes = width == t ? 8 * t : width;
  for (size_t e = 0; e < stretches; ++e) {
    uint8_t* p = out + e * t + k0;
    const V* rows = scratch + e * width;
    size_t s = 0;
    for (; s + 16 <= bytes; s += 16) {
      Copy8(rows + s, a);
      Copy8(rows + s + 8, b);
      RowsToPieces(a);
      RowsToPieces(b);
      StorePiecePairs(a, b, p + s, stride);
    }
    if (s < bytes) {
      Copy8(rows + s, a);
      RowsToPieces(a);
      StorePieces(a, p + s, stride);
    }
  }
}

// Calls fn(g, subs) for blocks of `subs` sub-blocks from group g that cover groups
// [0, row_len); `subs` * kGroups <= row_len. A bit row is read or written a cache line at a
// time, and with power-of-two rows a line shared by two blocks has usually been evicted by the
// other same-set rows before the second block reaches it, so for long rows the blocks after the
// first are aligned to the lines of `rows` (the extra block costs at most 1/16). The remainder
// gets as few sub-blocks as cover it, overlapping the previous block.
template <typename Fn>
void ForEachBlock(const uint8_t* rows, size_t row_len, size_t subs, Fn fn) {
  const size_t block = subs * kGroups;  // <= row_len
  size_t g = 0;
  if (row_len >= 16 * block) {
    const size_t head = (kLineBytes - reinterpret_cast<uintptr_t>(rows) % kLineBytes) % kLineBytes;
    if (head != 0) {
      fn(0, subs);
      g = head;
    }
  }
  for (; g + block <= row_len; g += block) {
    fn(g, subs);
  }
  if (g < row_len) {
    const size_t tail_subs = (row_len - g + kGroups - 1) / kGroups;
    fn(row_len - tail_subs * kGroups, tail_subs);
  }
}

// A block is `subs` sub-blocks from group g, each with its own scratch area; every bit row is
// visited for all of them before the next row, so each row line is used in one go.
void ShuffleBlock(const uint8_t* src, uint8_t* dst, size_t row_len, size_t t, size_t g, size_t subs,
                  V* scratch) {
  V x[8];
  if (t == 1) {  // a sub-block is 256 contiguous bytes: no scratch needed
    for (size_t h = 0; h < subs; ++h) {
      const uint8_t* in = src + (g + h * kGroups) * 8;
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) {
        x[i] = Join(Load128(in + 8 * PieceBase(i)), Load128(in + 8 * (PieceBase(i) + 16)));
      }
      PiecesToRows(x);
      TransposeBits(x);
      StoreRows(x, dst + g + h * kGroups, row_len);
    }
    return;
  }
  const size_t width = SliceWidth(t);
  for (size_t k0 = 0;; k0 += width) {
    k0 = std::min(k0, t - width);  // the last slice may overlap the previous one
    for (size_t h = 0; h < subs; ++h) {
      ElementsToScratch(src + (g + h * kGroups) * 8 * t, t, k0, width, scratch + h * 8 * width);
    }
    for (size_t kk = 0; kk < width; ++kk) {
      for (size_t h = 0; h < subs; ++h) {
        const V* rows = scratch + h * 8 * width + kk;
#pragma GCC unroll 8
        for (size_t e = 0; e < 8; ++e) {
          x[e] = rows[e * width];
        }
        TransposeBits(x);
        StoreRows(x, dst + g + h * kGroups + 8 * (k0 + kk) * row_len, row_len);
      }
    }
    if (k0 + width == t) {
      break;
    }
  }
}

void UnshuffleBlock(const uint8_t* src, uint8_t* dst, size_t row_len, size_t t, size_t g,
                    size_t subs, V* scratch) {
  V x[8];
  if (t == 1) {
    for (size_t h = 0; h < subs; ++h) {
      uint8_t* out = dst + (g + h * kGroups) * 8;
      LoadRows(src + g + h * kGroups, row_len, x);
      TransposeBits(x);
      RowsToPieces(x);
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) {
        Store128(out + 16 * i, Lo(x[i]));
        Store128(out + 16 * i + 128, Hi(x[i]));
      }
    }
    return;
  }
  const size_t width = SliceWidth(t);
  for (size_t k0 = 0;; k0 += width) {
    k0 = std::min(k0, t - width);
    for (size_t kk = 0; kk < width; ++kk) {
      for (size_t h = 0; h < subs; ++h) {
        LoadRows(src + g + h * kGroups + 8 * (k0 + kk) * row_len, row_len, x);
        TransposeBits(x);
        V* rows = scratch + h * 8 * width + kk;
#pragma GCC unroll 8
        for (size_t e = 0; e < 8; ++e) {
          rows[e * width] = x[e];
        }
      }
    }
    for (size_t h = 0; h < subs; ++h) {
      ScratchToElements(scratch + h * 8 * width, t, k0, width, dst + (g + h * kGroups) * 8 * t);
    }
    if (k0 + width == t) {
      break;
    }
  }
}

}  // namespace

void BitShuffleAvx2(const uint8_t* src, uint8_t* dst, size_t n, size_t t) {
  const size_t row_len = n / 8;
  if (row_len < kGroups) {
    BitShuffleSse2(src, dst, n, t);
    return;
  }
  const size_t subs =
      std::min({row_len / kGroups, kLineGroups / kGroups, kScratchVectors / (8 * SliceWidth(t))});
  V scratch[kScratchVectors];
  ForEachBlock(dst, row_len, subs, [&](size_t g, size_t block_subs) {
    ShuffleBlock(src, dst, row_len, t, g, block_subs, scratch);
  });
}

void BitUnshuffleAvx2(const uint8_t* src, uint8_t* dst, size_t n, size_t t) {
  const size_t row_len = n / 8;
  if (row_len < kGroups) {
    BitUnshuffleSse2(src, dst, n, t);
    return;
  }
  const size_t subs =
      std::min({row_len / kGroups, kLineGroups / kGroups, kScratchVectors / (8 * SliceWidth(t))});
  V scratch[kScratchVectors];
  ForEachBlock(src, row_len, subs, [&](size_t g, size_t block_subs) {
    UnshuffleBlock(src, dst, row_len, t, g, block_subs, scratch);
  });
}

}  // namespace patchfeed::internal_codec
