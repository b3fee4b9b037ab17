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

// Voxels j..j+3 of a 3D row, all interior, input with unit stride along the last axis, for
// every channel: the four voxels' neighbour addresses and weights are loaded once and serve
// each channel in turn (ResampleImageChannels). Lanes are voxels; each lane forms the same
// products and sums in the same order as InterpolateFourInterior3D and the scalar loop. A
// vector holds two voxels' pairs (a movq and a movhps), and one shufps per half sorts the
// lower and upper neighbours into lanes: fewer instructions per channel than four pair loads
// and two unpacks.
inline void InterpolateFourInteriorChannels3D(const float* in, const Row& row, int j, int64_t s0,
                                              int64_t s1, int64_t channels, int64_t in_cstride,
                                              float* out, int64_t out_cstride) {
  const __m128 w0 = _mm_load_ps(&row.weight[0][j]);
  const __m128 w1 = _mm_load_ps(&row.weight[1][j]);
  const __m128 w2 = _mm_load_ps(&row.weight[2][j]);
  const __m128 w3 = _mm_load_ps(&row.weight[3][j]);
  const __m128 w4 = _mm_load_ps(&row.weight[4][j]);
  const __m128 w5 = _mm_load_ps(&row.weight[5][j]);
  const __m128 w6 = _mm_load_ps(&row.weight[6][j]);
  const __m128 w7 = _mm_load_ps(&row.weight[7][j]);
  const float* p0 = in + row.offset[j];
  const float* p1 = in + row.offset[j + 1];
  const float* p2 = in + row.offset[j + 2];
  const float* p3 = in + row.offset[j + 3];
  const int64_t s01 = s0 + s1;
  for (int64_t c = 0; c < channels; ++c) {
    auto pairs = [&](int64_t r, __m128& lower, __m128& upper) {
      const __m128 ab = _mm_loadh_pi(LoadFloatPair(p0 + r), reinterpret_cast<const __m64*>(p1 + r));
      const __m128 cd = _mm_loadh_pi(LoadFloatPair(p2 + r), reinterpret_cast<const __m64*>(p3 + r));
      lower = _mm_shuffle_ps(ab, cd, _MM_SHUFFLE(2, 0, 2, 0));  // a0 b0 c0 d0
      upper = _mm_shuffle_ps(ab, cd, _MM_SHUFFLE(3, 1, 3, 1));  // a1 b1 c1 d1
    };
    __m128 lower, upper;
    pairs(0, lower, upper);
    __m128 acc = _mm_add_ps(_mm_setzero_ps(), _mm_mul_ps(lower, w0));
    acc = _mm_add_ps(acc, _mm_mul_ps(upper, w1));
    pairs(s1, lower, upper);
    acc = _mm_add_ps(acc, _mm_mul_ps(lower, w2));
    acc = _mm_add_ps(acc, _mm_mul_ps(upper, w3));
    pairs(s0, lower, upper);
    acc = _mm_add_ps(acc, _mm_mul_ps(lower, w4));
    acc = _mm_add_ps(acc, _mm_mul_ps(upper, w5));
    pairs(s01, lower, upper);
    acc = _mm_add_ps(acc, _mm_mul_ps(lower, w6));
    acc = _mm_add_ps(acc, _mm_mul_ps(upper, w7));
    _mm_storeu_ps(out + j, acc);
    p0 += in_cstride;
    p1 += in_cstride;
    p2 += in_cstride;
    p3 += in_cstride;
    out += out_cstride;
  }
}
#endif

// Voxels j0.. of the row one by one: interior ones from their 2^D neighbours, the others from
// those inside the input (zeros padding).
template <int D>
void ResampleImageVoxels(const Row& row, const Geometry& geo, const float* in,
                         const std::array<int64_t, 3>& st, float* out, int64_t out_stride, int j0) {
  constexpr int kNeighbours = 1 << D;
  int64_t rel[kNeighbours];
  for (int k = 0; k < kNeighbours; ++k) {
    const int32_t zero[3] = {0, 0, 0};
    rel[k] = NeighbourOffset<D>(k, zero, st);
  }
  for (int j = j0; j < row.size; ++j) {
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

// Whether voxels j..j+3 are all interior.
inline bool FourInterior(const Row& row, int j) {
  uint32_t flags4;
  std::memcpy(&flags4, &row.flags[j], sizeof(flags4));
  return (flags4 & 0x01010101u) == 0x01010101u;
}

}  // namespace

template <int D>
void ResampleImageRow(const Row& row, const Geometry& geo, const float* in,
                      const std::array<int64_t, 3>& st, float* out, int64_t out_stride) {
  int j = 0;
#if defined(__SSE2__)
  if constexpr (D == 3) {
    if (st[2] == 1) {
      for (; j + 4 <= row.size && FourInterior(row, j); j += 4) {
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
  if (j < row.size) {
    ResampleImageVoxels<D>(row, geo, in, st, out, out_stride, j);
  }
}

template <int D>
void ResampleImageChannels(const Row& row, const Geometry& geo, const float* in,
                           int64_t in_channel_stride, const std::array<int64_t, 3>& st,
                           int64_t channels, float* out, int64_t out_channel_stride,
                           int64_t out_stride) {
#if defined(__SSE2__)
  if constexpr (D == 3) {
    if (st[2] == 1 && out_stride == 1) {
      int j = 0;
      for (; j + 4 <= row.size && FourInterior(row, j); j += 4) {
        InterpolateFourInteriorChannels3D(in, row, j, st[0], st[1], channels, in_channel_stride,
                                          out, out_channel_stride);
      }
      if (j < row.size) {  // a segment near the border: the rest one by one
        for (int64_t c = 0; c < channels; ++c) {
          ResampleImageVoxels<D>(row, geo, in + c * in_channel_stride, st,
                                 out + c * out_channel_stride, out_stride, j);
        }
      }
      return;
    }
  }
#endif
  for (int64_t c = 0; c < channels; ++c) {
    ResampleImageRow<D>(row, geo, in + c * in_channel_stride, st, out + c * out_channel_stride,
                        out_stride);
  }
}

template void ResampleImageRow<2>(const Row&, const Geometry&, const float*,
                                  const std::array<int64_t, 3>&, float*, int64_t);
template void ResampleImageRow<3>(const Row&, const Geometry&, const float*,
                                  const std::array<int64_t, 3>&, float*, int64_t);
template void ResampleImageChannels<2>(const Row&, const Geometry&, const float*, int64_t,
                                       const std::array<int64_t, 3>&, int64_t, float*, int64_t,
                                       int64_t);
template void ResampleImageChannels<3>(const Row&, const Geometry&, const float*, int64_t,
                                       const std::array<int64_t, 3>&, int64_t, float*, int64_t,
                                       int64_t);

}  // namespace patchfeed::internal_augment
