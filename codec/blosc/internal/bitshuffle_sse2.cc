// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
//
// SSE2 bit shuffle kernels (compiled with -msse2). Same scheme as bitshuffle_avx2.cc, which
// explains it; here a sub-block is 16 groups, one 16-byte vector per bit row, a vector holds
// two 8-byte pieces (no 128-bit lanes to track), and a block spans up to 8 sub-blocks.

#include <emmintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "codec/blosc/internal/bitshuffle_kernels.h"

namespace patchfeed::internal_codec {
namespace {

using V = __m128i;

constexpr size_t kGroups = 16;
constexpr size_t kLineGroups = 128;  // groups per block for long rows: 2 lines per bit row
constexpr size_t kLineBytes = 64;
constexpr size_t kScratchVectors = 512;  // 8 KiB

constexpr size_t SliceWidth(size_t t) { return t <= 8 ? t : (t >= 16 ? 16 : 8); }

inline V Load(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const V*>(p)); }
inline void Store(uint8_t* p, V v) { _mm_storeu_si128(reinterpret_cast<V*>(p), v); }
inline V Load64(const uint8_t* p) { return _mm_loadl_epi64(reinterpret_cast<const V*>(p)); }
inline void Store64(uint8_t* p, V v) { _mm_storel_epi64(reinterpret_cast<V*>(p), v); }

// One round of the per-byte-lane 8x8 bit transpose (see bitshuffle_avx2.cc).
template <int kD>
inline void SwapBitBlocks(V* x) {
  const V mask = _mm_set1_epi8(kD == 1 ? 0x55 : (kD == 2 ? 0x33 : 0x0F));
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    if ((i & kD) == 0) {
      const V d = _mm_and_si128(_mm_xor_si128(_mm_srli_epi16(x[i], kD), x[i + kD]), mask);
      x[i + kD] = _mm_xor_si128(x[i + kD], d);
      x[i] = _mm_xor_si128(x[i], _mm_slli_epi16(d, kD));
    }
  }
}

inline void TransposeBits(V* x) {
  SwapBitBlocks<1>(x);
  SwapBitBlocks<2>(x);
  SwapBitBlocks<4>(x);
}

// Byte address [b3 b2 b1 b0] -> [b2 b1 b0 q]; b3 becomes index bit kQ.
template <int kQ>
inline void InterleaveStep(V* x) {
  constexpr int kBit = 1 << kQ;
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    if ((i & kBit) == 0) {
      const V lo = _mm_unpacklo_epi8(x[i], x[i + kBit]);
      x[i + kBit] = _mm_unpackhi_epi8(x[i], x[i + kBit]);
      x[i] = lo;
    }
  }
}

// x[r] = row r -> half h of x[i] = piece of group 2i + h.
inline void RowsToPieces(V* x) {
  InterleaveStep<2>(x);
  InterleaveStep<1>(x);
  InterleaveStep<0>(x);
}

// Half h of x[i] = piece of group PieceBase(i) + h -> x[r] = row r.
constexpr size_t PieceBase(int i) {
  return static_cast<size_t>(8 * (i & 1) + 4 * ((i >> 2) & 1) + 2 * ((i >> 1) & 1));
}

inline void PiecesToRows(V* x) {
  InterleaveStep<0>(x);
  InterleaveStep<2>(x);
  InterleaveStep<1>(x);
  InterleaveStep<0>(x);
}

inline void LoadPieces(const uint8_t* base, size_t stride, V* x) {
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    const uint8_t* p = base + PieceBase(i) * stride;
    x[i] = _mm_unpacklo_epi64(Load64(p), Load64(p + stride));
  }
}

inline void LoadPiecePairs(const uint8_t* base, size_t stride, V* a, V* b) {
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    const uint8_t* p = base + PieceBase(i) * stride;
    const V even = Load(p);
    const V odd = Load(p + stride);
    a[i] = _mm_unpacklo_epi64(even, odd);
    b[i] = _mm_unpackhi_epi64(even, odd);
  }
}

inline void StorePieces(const V* x, uint8_t* base, size_t stride) {
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    uint8_t* p = base + static_cast<size_t>(2 * i) * stride;
    Store64(p, x[i]);
    Store64(p + stride, _mm_unpackhi_epi64(x[i], x[i]));
  }
}

inline void StorePiecePairs(const V* a, const V* b, uint8_t* base, size_t stride) {
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    uint8_t* p = base + static_cast<size_t>(2 * i) * stride;
    Store(p, _mm_unpacklo_epi64(a[i], b[i]));
    Store(p + stride, _mm_unpackhi_epi64(a[i], b[i]));
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

// Element bytes [k0, k0 + width) of the block's groups -> scratch rows e * width + (k - k0).
void ElementsToScratch(const uint8_t* in, size_t t, size_t k0, size_t width, V* scratch) {
  const size_t stride = 8 * t;
  V a[8];
  V b[8];
  const size_t stretches = width == t ? 1 : 8;  // whole groups, or one slice per element
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

void ScratchToElements(const V* scratch, size_t t, size_t k0, size_t width, uint8_t* out) {
  const size_t stride = 8 * t;
  V a[8];
  V b[8];
  const size_t stretches = width == t ? 1 : 8;  // whole groups, or one slice per element
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

// Blocks of `subs` sub-blocks covering the rows; see ForEachBlock in bitshuffle_avx2.cc.
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
  if (g < row_len) {  // as few sub-blocks as cover the rest, overlapping the previous block
    const size_t tail_subs = (row_len - g + kGroups - 1) / kGroups;
    fn(row_len - tail_subs * kGroups, tail_subs);
  }
}

// A block is `subs` sub-blocks from group g, each with its own scratch area; every bit row is
// visited for all of them before the next row.
void ShuffleBlock(const uint8_t* src, uint8_t* dst, size_t row_len, size_t t, size_t g, size_t subs,
                  V* scratch) {
  V x[8];
  if (t == 1) {  // pieces PieceBase(i) and PieceBase(i) + 1 are adjacent: no scratch needed
    for (size_t h = 0; h < subs; ++h) {
      const uint8_t* in = src + (g + h * kGroups) * 8;
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) {
        x[i] = Load(in + 8 * PieceBase(i));
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
        Store(out + 16 * i, x[i]);
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

void BitShuffleSse2(const uint8_t* src, uint8_t* dst, size_t n, size_t t) {
  const size_t row_len = n / 8;
  if (row_len < kGroups) {
    BitShuffleScalar(src, dst, n, t);
    return;
  }
  const size_t subs =
      std::min({row_len / kGroups, kLineGroups / kGroups, kScratchVectors / (8 * SliceWidth(t))});
  V scratch[kScratchVectors];
  ForEachBlock(dst, row_len, subs, [&](size_t g, size_t block_subs) {
    ShuffleBlock(src, dst, row_len, t, g, block_subs, scratch);
  });
}

void BitUnshuffleSse2(const uint8_t* src, uint8_t* dst, size_t n, size_t t) {
  const size_t row_len = n / 8;
  if (row_len < kGroups) {
    BitUnshuffleScalar(src, dst, n, t);
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
