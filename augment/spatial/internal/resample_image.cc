// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// The image kernel: interior voxels four at a time (SSE2), the rest one by one.

#include "augment/spatial/internal/resample_image.h"

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace patchfeed::internal_augment {
namespace {

#if defined(__SSE2__)
// Two adjacent floats into the low half of a vector (__m64 may alias anything).
inline __m128 LoadFloatPair(const float* p) {
  return _mm_loadl_pi(_mm_setzero_ps(), reinterpret_cast<const __m64*>(p));
}

// Voxels j..j+3 of a 3D row, all interior, input with unit stride along the last axis. The
// two neighbours along that axis are adjacent, so each voxel needs 4 pair loads instead of 8
// loads; lanes are voxels and the sum runs over neighbours in torch's order, so every lane
// rounds exactly like the scalar loop.
inline __m128 InterpolateFourInterior3D(const float* in, const Row& row, int j, int64_t s0,
                                        int64_t s1) {
  const float* p0 = in + row.offset[j];
  const float* p1 = in + row.offset[j + 1];
  const float* p2 = in + row.offset[j + 2];
  const float* p3 = in + row.offset[j + 3];
  const int64_t rel[4] = {0, s1, s0, s0 + s1};
  __m128 acc = _mm_setzero_ps();
  for (int q = 0; q < 4; ++q) {
    const __m128 a = LoadFloatPair(p0 + rel[q]);
    const __m128 b = LoadFloatPair(p1 + rel[q]);
    const __m128 c = LoadFloatPair(p2 + rel[q]);
    const __m128 d = LoadFloatPair(p3 + rel[q]);
    const __m128 ab = _mm_unpacklo_ps(a, b);     // a0 b0 a1 b1
    const __m128 cd = _mm_unpacklo_ps(c, d);     // c0 d0 c1 d1
    const __m128 lower = _mm_movelh_ps(ab, cd);  // a0 b0 c0 d0
    const __m128 upper = _mm_movehl_ps(cd, ab);  // a1 b1 c1 d1
    acc = _mm_add_ps(acc, _mm_mul_ps(lower, _mm_loadu_ps(&row.weight[2 * q][j])));
    acc = _mm_add_ps(acc, _mm_mul_ps(upper, _mm_loadu_ps(&row.weight[2 * q + 1][j])));
  }
  return acc;
}
#endif

}  // namespace

template <int D>
void ResampleImageRow(const Row& row, const Geometry& geo, const float* in,
                      const std::array<int64_t, 3>& st, float* out, int64_t out_stride) {
  constexpr int kNeighbours = 1 << D;
  int64_t rel[kNeighbours];
  for (int k = 0; k < kNeighbours; ++k) {
    const int32_t zero[3] = {0, 0, 0};
    rel[k] = NeighbourOffset<D>(k, zero, st);
  }
  int j = 0;
#if defined(__SSE2__)
  if constexpr (D == 3) {
    if (st[2] == 1) {
      for (; j + 4 <= row.size; j += 4) {
        uint32_t flags4;
        std::memcpy(&flags4, &row.flags[j], sizeof(flags4));
        if ((flags4 & 0x01010101u) != 0x01010101u) {  // kInterior in all four
          break;
        }
        const __m128 v = InterpolateFourInterior3D(in, row, j, st[0], st[1]);
        if (out_stride == 1) {
          _mm_storeu_ps(out + j, v);
        } else {
          alignas(16) float lanes[4];
          _mm_store_ps(lanes, v);
          for (int l = 0; l < 4; ++l) {
            out[(j + l) * out_stride] = lanes[l];
          }
        }
      }
    }
  }
#endif
  for (; j < row.size; ++j) {
    float acc = 0.0f;
    if (row.flags[j] & kInterior) [[likely]] {
      const float* p = in + row.offset[j];
      for (int k = 0; k < kNeighbours; ++k) {
        acc += p[rel[k]] * row.weight[k][j];
      }
    } else {
      int32_t idx[3];
      for (int d = 0; d < D; ++d) {
        idx[d] = row.i[d][j];
      }
      for (int k = 0; k < kNeighbours; ++k) {
        if (NeighbourInside<D>(k, idx, geo)) {
          acc += in[NeighbourOffset<D>(k, idx, st)] * row.weight[k][j];
        }
      }
    }
    out[j * out_stride] = acc;
  }
}

template void ResampleImageRow<2>(const Row&, const Geometry&, const float*,
                                  const std::array<int64_t, 3>&, float*, int64_t);
template void ResampleImageRow<3>(const Row&, const Geometry&, const float*,
                                  const std::array<int64_t, 3>&, float*, int64_t);

}  // namespace patchfeed::internal_augment
