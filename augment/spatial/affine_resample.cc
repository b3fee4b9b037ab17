// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Affine resampling of images (linear, zero padding) and label maps (one-hot linear + float16
// argmax, or nearest), matching torch.grid_sample as batchgeneratorsv2 0.3.5 calls it.

#include "augment/spatial/affine_resample.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "common/check.h"
#include "common/half_float.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace patchfeed::internal_augment {
namespace {

using augment::SampleView;

constexpr uint8_t kInterior = 1;      // all 2^D neighbours lie inside the input
constexpr uint8_t kLabelOutside = 2;  // batchgeneratorsv2's out-of-bounds test fires

// batchgeneratorsv2 one-hot encodes each label as 1000 before interpolating.
constexpr float kOneHotScale = 1000.0f;

// Rows are processed in segments of at most kSegment voxels (see ResampleAll). Fixed-size
// buffers let the kernels address every per-voxel array from one base register.
constexpr int kSegment = 32;

// Per-voxel data of one row segment, shared by every image and label channel.
struct Row {
  alignas(64) float x[3][kSegment];       // input position per axis
  alignas(64) int32_t i[3][kSegment];     // floor(x)
  alignas(64) float weight[8][kSegment];  // per neighbour k, see ComputeRow
  alignas(64) int64_t offset[kSegment];   // element offset of neighbour 0 (per kernel)
  alignas(64) uint8_t flags[kSegment];    // kInterior / kLabelOutside
  bool all_interior = false;              // every flag is kInterior (see ComputeRow)
  alignas(64) double steps[3][kSegment];  // j * (last matrix column), per axis, per call
  int size = 0;
};

// Input geometry shared by all kernels of one call.
struct Geometry {
  int dims = 3;
  std::array<int32_t, 3> size{1, 1, 1};
  // Label out-of-bounds bounds in index units, as float like batchgeneratorsv2's float grid.
  std::array<float, 3> label_lo{};
  std::array<float, 3> label_hi{};
  std::array<int32_t, 3> window_origin{};  // of the input in the crop (AffineSamplingMap)
};

// batchgeneratorsv2 compares the normalised grid g (stored in reversed axis order x, y, z)
// with -1 + 1/size and 1 - 1/size where `size` is the shape in array order, so array axis d
// is tested against the size of axis D-1-d. With x = ((g + 1) * S_d - 1) / 2 this becomes
// x_d < (S_d / S' - 1) / 2 or x_d > S_d - 1/2 - S_d / (2 S'), S' = S_{D-1-d}. For a cubic
// input it is the intended "outside [0, S_d - 1]" test.
// `shape`: the input view's (the neighbours that exist); `crop`: the crop's, for the label
// border (equal unless the input is a window of the crop).
Geometry MakeGeometry(int dims, const std::array<int64_t, 3>& shape,
                      const std::array<int64_t, 3>& crop) {
  Geometry g;
  g.dims = dims;
  for (int d = 0; d < dims; ++d) {
    g.size[d] = static_cast<int32_t>(shape[d]);
    const double s = static_cast<double>(crop[d]);
    const double other = static_cast<double>(crop[dims - 1 - d]);
    g.label_lo[d] = static_cast<float>((s / other - 1.0) / 2.0);
    g.label_hi[d] = static_cast<float>(s - 0.5 - s / (2.0 * other));
  }
  return g;
}

// Positions this far out are outside any input we accept (sizes <= kMaxInputExtent = 2^22);
// clamping them keeps the int32 conversions below defined.
constexpr float kFarAway = 0x1.0p24f;

// nearbyint(x) (half to even, the default rounding mode) without a libm call: adding
// 1.5 * 2^23 leaves no fraction bits, so the FPU rounds to an integer (exact for |x| < 2^22;
// GCC keeps the two roundings unless -ffast-math, which we never use). Larger |x| lie
// outside every input, where any integer of the same sign will do.
inline int32_t RoundHalfEvenToInt(float x) {
  if (std::fabs(x) < 0x1.0p22f) {
    return static_cast<int32_t>((x + 0x1.8p23f) - 0x1.8p23f);
  }
  return static_cast<int32_t>(x);
}

// x[j] = start + j * step (`steps[j]` = j * step, tabulated once per call) in double,
// rounded once to float (no drift along the row), and its floor. The loops always run over
// kSegment voxels (a tail segment computes a few unused ones): a constant trip count lets
// GCC vectorise them without prologue or epilogue.
void ComputeAxisPositions(double start, const double* __restrict steps,
                          const float* __restrict displacement, int n, float* __restrict x,
                          int32_t* __restrict fl) {
  bool clamp;
  if (displacement == nullptr) {
    for (int j = 0; j < kSegment; ++j) {
      x[j] = static_cast<float>(start + steps[j]);
    }
    // x is linear in j, so the ends bound it; clamping is needed only for absurd maps.
    const double last = start + steps[kSegment - 1];
    clamp = !(std::fabs(start) < kFarAway && std::fabs(last) < kFarAway);
  } else {
    // Elastic offsets: only the segment's n voxels have one; the rest are never read.
    for (int j = 0; j < n; ++j) {
      x[j] = static_cast<float>(start + steps[j] + static_cast<double>(displacement[j]));
    }
    for (int j = n; j < kSegment; ++j) {
      x[j] = 0.0f;
    }
    clamp = true;
  }
  if (clamp) {
    for (int j = 0; j < kSegment; ++j) {
      const float v = x[j];
      x[j] = v > -kFarAway ? (v < kFarAway ? v : kFarAway) : -kFarAway;  // NaN -> -kFarAway
    }
  }
  for (int j = 0; j < kSegment; ++j) {
    const float v = x[j];
    const int32_t t = static_cast<int32_t>(v);  // truncates toward zero
    fl[j] = t - static_cast<int32_t>(static_cast<float>(t) > v);
  }
}

// The 3D weights (see ComputeRow) of n voxels.
void ComputeWeights3(int n, const float* __restrict x0, const float* __restrict x1,
                     const float* __restrict x2, const int32_t* __restrict i0,
                     const int32_t* __restrict i1, const int32_t* __restrict i2,
                     float* __restrict w0, float* __restrict w1, float* __restrict w2,
                     float* __restrict w3, float* __restrict w4, float* __restrict w5,
                     float* __restrict w6, float* __restrict w7) {
  for (int j = 0; j < n; ++j) {
    const float fz = static_cast<float>(i0[j]);
    const float fy = static_cast<float>(i1[j]);
    const float fx = static_cast<float>(i2[j]);
    const float z1 = x0[j] - fz, z0 = (fz + 1.0f) - x0[j];
    const float y1 = x1[j] - fy, y0 = (fy + 1.0f) - x1[j];
    const float xw1 = x2[j] - fx, xw0 = (fx + 1.0f) - x2[j];
    const float a00 = xw0 * y0, a01 = xw1 * y0, a10 = xw0 * y1, a11 = xw1 * y1;
    w0[j] = a00 * z0;
    w1[j] = a01 * z0;
    w2[j] = a10 * z0;
    w3[j] = a11 * z0;
    w4[j] = a00 * z1;
    w5[j] = a01 * z1;
    w6[j] = a10 * z1;
    w7[j] = a11 * z1;
  }
}

// The 2D weights (see ComputeRow) of n voxels.
void ComputeWeights2(int n, const float* __restrict x0, const float* __restrict x1,
                     const int32_t* __restrict i0, const int32_t* __restrict i1,
                     float* __restrict w0, float* __restrict w1, float* __restrict w2,
                     float* __restrict w3) {
  for (int j = 0; j < n; ++j) {
    const float y1 = x0[j] - static_cast<float>(i0[j]), y0 = 1.0f - y1;
    const float xw1 = x1[j] - static_cast<float>(i1[j]), xw0 = 1.0f - xw1;
    w0[j] = y0 * xw0;
    w1[j] = y0 * xw1;
    w2[j] = y1 * xw0;
    w3[j] = y1 * xw1;
  }
}

// The flags of voxel j of `row`. Non-short-circuit on purpose: branch-free, so the loop over
// a segment vectorises.
template <int D>
inline uint8_t FlagsAt(const Row& row, const Geometry& geo, int j) {
  bool interior = true;
  bool outside = false;
  for (int d = 0; d < D; ++d) {
    const int32_t i = row.i[d][j];
    interior &= static_cast<int>(i >= 0) & static_cast<int>(i < geo.size[d] - 1);
    const float x = row.x[d][j];
    outside |= static_cast<int>(x < geo.label_lo[d]) | static_cast<int>(x > geo.label_hi[d]);
  }
  return static_cast<uint8_t>((interior ? kInterior : 0) | (outside ? kLabelOutside : 0));
}

// Positions, floors, neighbour weights and flags for `n` voxels of an output row starting at
// index vector `first`. Every loop here is a plain elementwise loop the compiler vectorises; the
// gathers that follow then only load, multiply and add.
//
// Neighbour k of a voxel is the corner whose bit D-1-d selects the upper neighbour on axis d,
// which is torch's order (tnw, tne, tsw, tse, bnw, ...: x fastest). Weights are formed as
// torch forms them so sums round alike: its 3D CPU kernel uses (floor + 1) - x and x - floor
// per axis and the product (x * y) * z; its 2D (vectorised) kernel 1 - f and f, y * x.
template <int D>
void ComputeRow(const AffineSamplingMap& map, const Geometry& geo,
                const std::array<int64_t, 3>& first, int n, const float* displacement,
                int64_t displacement_stride, Row& row) {
  row.size = n;
  for (int d = 0; d < D; ++d) {
    double start = map.origin[d];
    for (int k = 0; k < D; ++k) {
      start += map.matrix[d][k] * static_cast<double>(first[k]);
    }
    ComputeAxisPositions(start, row.steps[d],
                         displacement ? displacement + d * displacement_stride : nullptr, n,
                         row.x[d], row.i[d]);
  }
  auto& w = row.weight;
  if constexpr (D == 3) {
    ComputeWeights3(kSegment, row.x[0], row.x[1], row.x[2], row.i[0], row.i[1], row.i[2], w[0],
                    w[1], w[2], w[3], w[4], w[5], w[6], w[7]);
  } else {
    ComputeWeights2(kSegment, row.x[0], row.x[1], row.i[0], row.i[1], w[0], w[1], w[2], w[3]);
  }
  // A window of the crop: weights came from crop coordinates; neighbours are addressed in the
  // window.
  for (int d = 0; d < D; ++d) {
    if (const int32_t o = map.window_origin[d]; o != 0) {
      for (int j = 0; j < kSegment; ++j) {
        row.i[d][j] -= o;
      }
    }
  }
  // Without displacements x is monotone along the row (j * step, the sum and the float
  // rounding all are), and so is its floor; each flag's condition then holds on an interval
  // of j, and if the two ends of the segment are interior and not outside, every voxel
  // between them is. That is the common case, worth skipping the per-voxel flag loop for.
  row.all_interior = displacement == nullptr && FlagsAt<D>(row, geo, 0) == kInterior &&
                     FlagsAt<D>(row, geo, kSegment - 1) == kInterior;
  if (row.all_interior) {
    std::memset(row.flags, kInterior, sizeof(row.flags));
    return;
  }
  for (int j = 0; j < kSegment; ++j) {
    row.flags[j] = FlagsAt<D>(row, geo, j);
  }
}

template <int D>
inline bool NeighbourInside(int k, const int32_t (&idx)[3], const Geometry& geo) {
  for (int d = 0; d < D; ++d) {
    const int32_t i = idx[d] + ((k >> (D - 1 - d)) & 1);
    if (i < 0 || i >= geo.size[d]) {
      return false;
    }
  }
  return true;
}

template <int D>
inline int64_t NeighbourOffset(int k, const int32_t (&idx)[3], const std::array<int64_t, 3>& st) {
  int64_t off = 0;
  for (int d = 0; d < D; ++d) {
    off += static_cast<int64_t>(idx[d] + ((k >> (D - 1 - d)) & 1)) * st[d];
  }
  return off;
}

// Whether the offset of every interior voxel's neighbour 0 in an input of spatial shape
// `size` and strides `st` fits in int32 (0 <= index < size - 1 on each axis).
template <int D>
bool OffsetsFitInt32(const Geometry& geo, const std::array<int64_t, 3>& st) {
  int64_t reach = 0;
  for (int d = 0; d < D; ++d) {
    reach += static_cast<int64_t>(std::max(geo.size[d] - 2, 0)) * (st[d] < 0 ? -st[d] : st[d]);
  }
  return reach <= std::numeric_limits<int32_t>::max();
}

// row.offset[j] = offset of neighbour 0 of voxel j for strides `st` (per kernel: image and
// labels may have different strides). Only interior voxels' offsets are read. When those fit
// in int32 (`fits_int32`, see OffsetsFitInt32) they are formed in wrapping uint32 arithmetic
// over all kSegment voxels, which GCC vectorises (the int64 products it does one by one, ~14
// instructions per voxel); the other voxels' values are then meaningless but never used.
template <int D>
void ComputeOffsets(Row& row, const std::array<int64_t, 3>& st, bool fits_int32) {
  if (fits_int32) {
    const auto s0 = static_cast<uint32_t>(st[0]);
    const auto s1 = static_cast<uint32_t>(st[1]);
    const auto s2 = static_cast<uint32_t>(st[2]);
    const int32_t* __restrict i0 = row.i[0];
    const int32_t* __restrict i1 = row.i[1];
    const int32_t* __restrict i2 = row.i[2];
    int64_t* __restrict offset = row.offset;
    for (int j = 0; j < kSegment; ++j) {
      uint32_t off = static_cast<uint32_t>(i0[j]) * s0 + static_cast<uint32_t>(i1[j]) * s1;
      if constexpr (D == 3) {
        off += static_cast<uint32_t>(i2[j]) * s2;
      }
      offset[j] = static_cast<int32_t>(off);
    }
    return;
  }
  for (int j = 0; j < row.size; ++j) {
    int64_t off = 0;
    for (int d = 0; d < D; ++d) {
      off += static_cast<int64_t>(row.i[d][j]) * st[d];
    }
    row.offset[j] = off;
  }
}

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

// Smallest label of one input channel, computed only when a voxel needs it (see
// ArgmaxLabel) and cached in the scratch slot `*cache` (kUnknownLabel until then).
constexpr int32_t kUnknownLabel = std::numeric_limits<int32_t>::min();

class LowestLabel {
 public:
  LowestLabel(SampleView<const int16_t> channel, int32_t* cache)
      : channel_(channel), cache_(cache) {}
  int16_t get() {
    if (*cache_ == kUnknownLabel) {
      *cache_ = Scan();
    }
    return static_cast<int16_t>(*cache_);
  }

 private:
  int16_t Scan() const {
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

  SampleView<const int16_t> channel_;
  int32_t* cache_;
};

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

// Not inlined: inside ResampleAll's piece loop its hot loop ran out of registers.
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

template <int D>
void ResampleAll(const AffineSamplingMap& map, SampleView<const float> image_in,
                 SampleView<float> image_out, SampleView<const int16_t> seg_in,
                 SampleView<int16_t> seg_out, LabelInterpolation label_mode, int16_t seg_padding,
                 const float* displacement, ResampleScratch& scratch,
                 const augment::PieceRunner& pieces) {
  const bool has_image = image_out.channels > 0;
  const auto& in_shape = has_image ? image_in.shape : seg_in.shape;
  const auto& out_shape = has_image ? image_out.shape : seg_out.shape;
  const bool window = map.crop_shape[0] > 0;
  Geometry geo = MakeGeometry(D, in_shape, window ? map.crop_shape : in_shape);
  geo.window_origin = map.window_origin;
  const int64_t n = out_shape[D - 1];
  const int64_t rows0 = out_shape[0];
  const int64_t rows1 = D == 3 ? out_shape[1] : 1;
  const int64_t seg_stride = seg_out.strides[D - 1];
  int64_t out_voxels = 1;
  for (int d = 0; d < D; ++d) {
    out_voxels *= out_shape[d];
  }
  const int64_t image_stride = image_out.strides[D - 1];
  // The output is walked in tiles of kTileA x kTileB x kSegment voxels. Under a rotation an
  // output row, and more so an output plane, maps to a tilted input region touching many
  // cache lines; neighbouring rows and planes reuse those lines only while they are still
  // cached. Plane by plane (128^2 voxels, ~1 MiB of input lines) they fall out of L2; with
  // 16 x 16 x 32 tiles a cachegrind run with a 1 MiB L2 counts a third fewer L2 read misses
  // (611k -> 411k for 205^3 -> 128^3 with rotation; the instruction count is unchanged).
  // A column of tiles (kTileA x kTileB rows, all of their segments) is one piece: pieces
  // share nothing they write, and at ~1/64 of a 128^3 patch they are small enough that a
  // thread waiting for the last of them waits briefly.
  constexpr int64_t kTileA = 16;
  constexpr int64_t kTileB = 16;
  const int64_t tiles_a = (rows0 + kTileA - 1) / kTileA;
  const int64_t tiles_b = (rows1 + kTileB - 1) / kTileB;
  const bool image_fits_int32 = OffsetsFitInt32<D>(geo, image_in.strides);
  const bool seg_fits_int32 = OffsetsFitInt32<D>(geo, seg_in.strides);
  const auto seg_channels = static_cast<size_t>(seg_out.channels);
  scratch.lowest_label.assign(static_cast<size_t>(tiles_a * tiles_b) * seg_channels, kUnknownLabel);
  int32_t* const lowest_cache = scratch.lowest_label.data();

  pieces.ForEach(tiles_a * tiles_b, [&](int64_t piece) {
    Row row;
    for (int d = 0; d < D; ++d) {
      for (int j = 0; j < kSegment; ++j) {
        row.steps[d][j] = static_cast<double>(j) * map.matrix[d][D - 1];
      }
    }
    int32_t* const piece_lowest = lowest_cache + static_cast<size_t>(piece) * seg_channels;
    auto resample_segment = [&](int64_t a, int64_t b, int64_t j0, int len) {
      const std::array<int64_t, 3> first =
          D == 3 ? std::array<int64_t, 3>{a, b, j0} : std::array<int64_t, 3>{a, j0, 0};
      const float* disp = nullptr;
      if (displacement != nullptr) {
        const int64_t voxel = D == 3 ? (a * out_shape[1] + b) * out_shape[2] + j0 : a * n + j0;
        disp = displacement + voxel;
      }
      ComputeRow<D>(map, geo, first, len, disp, out_voxels, row);
      if (image_out.channels > 0) {
        ComputeOffsets<D>(row, image_in.strides, image_fits_int32);
      }
      for (int64_t c = 0; c < image_out.channels; ++c) {
        float* out = D == 3 ? &image_out.at(c, a, b, j0) : &image_out.at(c, a, j0);
        ResampleImageRow<D>(row, geo, image_in.data + c * image_in.channel_stride, image_in.strides,
                            out, image_stride);
      }
      for (int64_t c = 0; c < seg_out.channels; ++c) {
        int16_t* out = D == 3 ? &seg_out.at(c, a, b, j0) : &seg_out.at(c, a, j0);
        const int16_t* in = seg_in.data + c * seg_in.channel_stride;
        if (c == 0 && (image_out.channels == 0 || seg_in.strides != image_in.strides)) {
          ComputeOffsets<D>(row, seg_in.strides, seg_fits_int32);
        }
        if (label_mode == LabelInterpolation::kLinear) {
          LowestLabel lowest(seg_in.channel(c), piece_lowest + c);
          ResampleLinearLabelRow<D>(row, geo, in, seg_in.strides, out, seg_stride, seg_padding,
                                    lowest);
        } else {
          ResampleNearestLabelRow<D>(row, geo, in, seg_in.strides, out, seg_stride, seg_padding);
        }
      }
    };
    const int64_t a0 = piece / tiles_b * kTileA;
    const int64_t a1 = std::min(rows0, a0 + kTileA);
    const int64_t b0 = piece % tiles_b * kTileB;
    const int64_t b1 = std::min(rows1, b0 + kTileB);
    for (int64_t j0 = 0; j0 < n; j0 += kSegment) {
      const int len = static_cast<int>(std::min<int64_t>(kSegment, n - j0));
      for (int64_t a = a0; a < a1; ++a) {
        for (int64_t b = b0; b < b1; ++b) {
          resample_segment(a, b, j0, len);
        }
      }
    }
  });
}

}  // namespace

void ResampleAffine(const AffineSamplingMap& map, SampleView<const float> image_in,
                    SampleView<float> image_out, SampleView<const int16_t> seg_in,
                    SampleView<int16_t> seg_out, LabelInterpolation label_mode, int16_t seg_padding,
                    const float* displacement, ResampleScratch& scratch,
                    const augment::PieceRunner& pieces) {
  PATCHFEED_DCHECK(map.spatial_dims == 2 || map.spatial_dims == 3);
  if (map.spatial_dims == 3) {
    ResampleAll<3>(map, image_in, image_out, seg_in, seg_out, label_mode, seg_padding, displacement,
                   scratch, pieces);
  } else {
    ResampleAll<2>(map, image_in, image_out, seg_in, seg_out, label_mode, seg_padding, displacement,
                   scratch, pieces);
  }
}

}  // namespace patchfeed::internal_augment
