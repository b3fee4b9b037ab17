// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// The label kernels: neighbours that agree take their label directly (four voxels at a time in
// all-interior segments), the rest go through the float16 argmax out of line.

#include "augment/spatial/internal/resample_label.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>

#include "common/half_float.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace patchfeed::internal_augment {

int16_t LowestLabel::Scan() const {
  int16_t lowest = std::numeric_limits<int16_t>::max();
  const auto& c = channel_;
  if (c.channel_is_contiguous()) {
    const int64_t n = c.spatial_size();
    for (int64_t k = 0; k < n; ++k) {
      lowest = std::min(lowest, c.data[k]);
    }
    return lowest;
  }
  for (int64_t a = 0; a < c.shape[0]; ++a) {
    for (int64_t b = 0; b < c.shape[1]; ++b) {
      for (int64_t e = 0; e < c.shape[2]; ++e) {
        lowest = std::min(lowest, c.at(0, a, b, e));
      }
    }
  }
  return lowest;
}

namespace {

// batchgeneratorsv2 one-hot encodes each label as 1000 before interpolating.
constexpr float kOneHotScale = 1000.0f;

// The float16 argmax over the labels of one output voxel. batchgeneratorsv2 interpolates
// every label's one-hot map (x1000) separately, rounds each to float16 and keeps the first
// maximum in ascending label order. Labels absent from the 2^D neighbours score exactly 0,
// so only neighbour labels can win unless every score rounds to 0 (voxel far outside, or a
// neighbour weight below 2^-25), when the lowest label of the whole channel wins. Sums are
// formed term by term in torch's neighbour order so they round exactly like torch's.
// `labels` and `terms` (kOneHotScale x weight) are the `n` neighbours inside the input, in
// that order.
inline int16_t ArgmaxLabel(const int16_t* labels, const float* terms, int n, LowestLabel& lowest) {
  int16_t distinct[8];
  float sums[8];
  int count = 0;
  for (int k = 0; k < n; ++k) {
    const int16_t label = labels[k];
    int m = 0;
    while (m < count && distinct[m] != label) {
      ++m;
    }
    if (m == count) {
      distinct[count] = label;
      sums[count] = terms[k];
      ++count;
    } else {
      sums[m] += terms[k];
    }
  }
  float best = 0.0f;
  int16_t best_label = 0;
  for (int m = 0; m < count; ++m) {
    const float h = RoundToHalfPrecision(sums[m]);
    if (h > best || (h == best && h > 0.0f && distinct[m] < best_label)) {
      best = h;
      best_label = distinct[m];
    }
  }
  return best > 0.0f ? best_label : lowest.get();
}

inline uint32_t LoadPair(const int16_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Whether the 2^D labels of an interior voxel's neighbours (neighbour 0 at `p`; the two of a
// pair are adjacent along the unit-stride last axis; `row1..row3` lead to the other pairs)
// are all equal. Scalar: for one voxel, four 32-bit loads and a few xors cost as much as
// assembling its eight labels in an SSE register; NeighboursAgreeFour shares compares instead.
template <int D>
inline bool NeighboursAgree(const int16_t* p, int64_t row1, int64_t row2, int64_t row3) {
  const uint32_t pair = LoadPair(p);
  uint32_t differ = (pair ^ std::rotl(pair, 16)) | (LoadPair(p + row1) ^ pair);
  if constexpr (D == 3) {
    differ |= (LoadPair(p + row2) ^ pair) | (LoadPair(p + row3) ^ pair);
  }
  return differ == 0;
}

#if defined(__SSE2__)
// NeighboursAgree for the four interior voxels j..j+3 of a row, one per 32-bit lane: lane l of
// pairs(r) is the pair at offset r from voxel l's neighbour 0. Returns a 4-bit mask of the
// voxels whose neighbours agree and sets `labels` to those voxels' labels (lanes whose bit is
// clear hold junk). Per voxel this is about half the scalar test's instructions: the 16 pair
// loads remain, the compares are shared.
template <int D>
inline int NeighboursAgreeFour(const int16_t* in, const int64_t* offset, int64_t row1, int64_t row2,
                               int64_t row3, __m128i& labels) {
  const int16_t* p0 = in + offset[0];
  const int16_t* p1 = in + offset[1];
  const int16_t* p2 = in + offset[2];
  const int16_t* p3 = in + offset[3];
  auto pairs = [&](int64_t r) {
    const __m128i a = _mm_cvtsi32_si128(static_cast<int>(LoadPair(p0 + r)));
    const __m128i b = _mm_cvtsi32_si128(static_cast<int>(LoadPair(p1 + r)));
    const __m128i c = _mm_cvtsi32_si128(static_cast<int>(LoadPair(p2 + r)));
    const __m128i d = _mm_cvtsi32_si128(static_cast<int>(LoadPair(p3 + r)));
    return _mm_unpacklo_epi64(_mm_unpacklo_epi32(a, b), _mm_unpacklo_epi32(c, d));
  };
  const __m128i first = pairs(0);
  // Each lane with its two labels swapped: equal to the lane iff the pair agrees.
  const __m128i swapped = _mm_shufflehi_epi16(_mm_shufflelo_epi16(first, 0xB1), 0xB1);
  __m128i agree =
      _mm_and_si128(_mm_cmpeq_epi32(first, swapped), _mm_cmpeq_epi32(first, pairs(row1)));
  if constexpr (D == 3) {
    agree = _mm_and_si128(agree, _mm_and_si128(_mm_cmpeq_epi32(first, pairs(row2)),
                                               _mm_cmpeq_epi32(first, pairs(row3))));
  }
  // Where a pair agrees its upper label, sign-extended, is the label as an int32.
  labels = _mm_srai_epi32(first, 16);
  return _mm_movemask_ps(_mm_castsi128_ps(agree));
}
#endif

// Every case of a label voxel but the common one (see ResampleLinearLabelRow), out of line.
// `rel[k]`: offset of neighbour k from neighbour 0 (used for interior voxels).
template <int D>
[[gnu::noinline]] int16_t LinearLabelSlow(const Row& row, const Geometry& geo, const int16_t* in,
                                          const std::array<int64_t, 3>& st,
                                          const int64_t (&rel)[1 << D], int j, int16_t padding,
                                          LowestLabel& lowest) {
  constexpr int kNeighbours = 1 << D;
  const uint8_t flags = row.flags[j];
  if (padding != 0 && (flags & kLabelOutside)) {
    return padding;
  }
  int16_t labels[kNeighbours];
  float terms[kNeighbours];
  int n = 0;
  if (flags & kInterior) {
    const int16_t* p = in + row.offset[j];
    for (int k = 0; k < kNeighbours; ++k) {
      labels[k] = p[rel[k]];
      terms[k] = kOneHotScale * row.weight[k][j];
    }
    n = kNeighbours;
  } else {
    int32_t idx[3];
    for (int d = 0; d < D; ++d) {
      idx[d] = row.i[d][j];
    }
    for (int k = 0; k < kNeighbours; ++k) {
      if (NeighbourInside<D>(k, idx, geo)) {
        labels[n] = in[NeighbourOffset<D>(k, idx, st)];
        terms[n] = kOneHotScale * row.weight[k][j];
        ++n;
      }
    }
  }
  return ArgmaxLabel(labels, terms, n, lowest);
}

}  // namespace

// Not inlined (also under LTO): inside ResampleAll's piece loop its hot loop ran out of
// registers.
template <int D>
[[gnu::noinline]] void ResampleLinearLabelRow(const Row& row, const Geometry& geo,
                                              const int16_t* in, const std::array<int64_t, 3>& st,
                                              int16_t* out, int64_t out_stride, int16_t padding,
                                              LowestLabel& lowest) {
  constexpr int kNeighbours = 1 << D;
  int64_t rel[kNeighbours];
  for (int k = 0; k < kNeighbours; ++k) {
    const int32_t zero[3] = {0, 0, 0};
    rel[k] = NeighbourOffset<D>(k, zero, st);
  }
  // Voxels left for LinearLabelSlow, done after the loop below: with no call inside, that
  // loop keeps its values in registers (with the call it reloaded four per voxel from the
  // stack).
  uint8_t slow[kSegment];
  int slow_count = 0;
  if (st[D - 1] == 1) {
    // Most voxels of a label map sit inside one region: all neighbours agree, and that label
    // scores ~1000 while every other scores 0. Such a voxel is interior and, when padding
    // applies, not outside: its flags under `mask` are kInterior. In an all-interior segment
    // they are, and four voxels at a time share the test's compares.
    const uint8_t mask = kInterior | (padding != 0 ? kLabelOutside : 0);
    const int64_t row1 = st[D - 2];
    const int64_t row2 = D == 3 ? st[0] : 0;
    const int64_t row3 = D == 3 ? st[0] + st[1] : 0;
    int j = 0;
#if defined(__SSE2__)
    if (row.all_interior) {
      for (; j + 4 <= row.size; j += 4) {
        __m128i labels;
        const int agree = NeighboursAgreeFour<D>(in, row.offset + j, row1, row2, row3, labels);
        if (agree == 0xF && out_stride == 1) {
          // Exact: every lane holds an int16 value.
          _mm_storel_epi64(reinterpret_cast<__m128i*>(out + j), _mm_packs_epi32(labels, labels));
          continue;
        }
        for (int l = 0; l < 4; ++l) {
          if (agree & (1 << l)) {
            out[(j + l) * out_stride] = in[row.offset[j + l]];
          } else {
            slow[slow_count++] = static_cast<uint8_t>(j + l);
          }
        }
      }
    }
#endif
    for (; j < row.size; ++j) {
      if ((row.flags[j] & mask) == kInterior) {
        const int16_t* p = in + row.offset[j];
        if (NeighboursAgree<D>(p, row1, row2, row3)) {
          out[j * out_stride] = p[0];
          continue;
        }
      }
      slow[slow_count++] = static_cast<uint8_t>(j);
    }
  } else {
    for (int j = 0; j < row.size; ++j) {
      slow[slow_count++] = static_cast<uint8_t>(j);
    }
  }
  for (int m = 0; m < slow_count; ++m) {
    const int j = slow[m];
    out[j * out_stride] = LinearLabelSlow<D>(row, geo, in, st, rel, j, padding, lowest);
  }
}

template <int D>
void ResampleNearestLabelRow(const Row& row, const Geometry& geo, const int16_t* in,
                             const std::array<int64_t, 3>& st, int16_t* out, int64_t out_stride,
                             int16_t padding) {
  for (int j = 0; j < row.size; ++j) {
    if (padding != 0 && (row.flags[j] & kLabelOutside)) {
      out[j * out_stride] = padding;
      continue;
    }
    // torch rounds with nearbyint (half to even) and reads 0 outside the input.
    int64_t off = 0;
    bool inside = true;
    for (int d = 0; d < D; ++d) {
      const int32_t i = RoundHalfEvenToInt(row.x[d][j]) - geo.window_origin[d];
      inside &= (i >= 0) & (i < geo.size[d]);
      off += static_cast<int64_t>(i) * st[d];
    }
    out[j * out_stride] = inside ? in[off] : int16_t{0};
  }
}

template void ResampleLinearLabelRow<2>(const Row&, const Geometry&, const int16_t*,
                                        const std::array<int64_t, 3>&, int16_t*, int64_t, int16_t,
                                        LowestLabel&);
template void ResampleLinearLabelRow<3>(const Row&, const Geometry&, const int16_t*,
                                        const std::array<int64_t, 3>&, int16_t*, int64_t, int16_t,
                                        LowestLabel&);
template void ResampleNearestLabelRow<2>(const Row&, const Geometry&, const int16_t*,
                                         const std::array<int64_t, 3>&, int16_t*, int64_t, int16_t);
template void ResampleNearestLabelRow<3>(const Row&, const Geometry&, const int16_t*,
                                         const std::array<int64_t, 3>&, int16_t*, int64_t, int16_t);

}  // namespace patchfeed::internal_augment
