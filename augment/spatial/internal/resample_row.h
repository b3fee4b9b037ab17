// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_SPATIAL_INTERNAL_RESAMPLE_ROW_H_
#define PATCHFEED_AUGMENT_SPATIAL_INTERNAL_RESAMPLE_ROW_H_

/// \file
/// What ResampleAffine's kernels share: one output row segment's input positions, floors,
/// neighbour weights, border flags and neighbour offsets (a `Row`), computed once per segment
/// and read by every image and label channel; and the input geometry of a call (`Geometry`).
///
/// A Row is plain data of a few KiB, owned by the piece that fills it (on its stack); the
/// functions here are stateless and safe to call concurrently on distinct Rows.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "augment/spatial/affine_resample.h"

namespace patchfeed::internal_augment {

inline constexpr uint8_t kInterior = 1;      ///< all 2^D neighbours lie inside the input
inline constexpr uint8_t kLabelOutside = 2;  ///< batchgeneratorsv2's out-of-bounds test fires

/// Rows are processed in segments of at most kSegment voxels (see ResampleAll). Fixed-size
/// buffers let the kernels address every per-voxel array from one base register.
inline constexpr int kSegment = 32;

/// Per-voxel data of one row segment, shared by every image and label channel.
struct Row {
  alignas(64) float x[3][kSegment];       ///< input position per axis
  alignas(64) int32_t i[3][kSegment];     ///< floor(x)
  alignas(64) float weight[8][kSegment];  ///< per neighbour k, see ComputeRow
  alignas(64) int64_t offset[kSegment];   ///< element offset of neighbour 0 (per kernel)
  alignas(64) uint8_t flags[kSegment];    ///< kInterior / kLabelOutside
  bool all_interior = false;              ///< every flag is kInterior (see ComputeRow)
  alignas(64) double steps[3][kSegment];  ///< j * (last matrix column), per axis, per call
  int size = 0;
};

/// Input geometry shared by all kernels of one call.
struct Geometry {
  int dims = 3;
  std::array<int32_t, 3> size{1, 1, 1};
  /// Label out-of-bounds bounds in index units, as float like batchgeneratorsv2's float grid.
  std::array<float, 3> label_lo{};
  std::array<float, 3> label_hi{};
  std::array<int32_t, 3> window_origin{};  ///< of the input in the crop (AffineSamplingMap)
};

/// The geometry of an input view of spatial shape `shape` inside a crop of shape `crop`
/// (equal unless the input is a window of the crop; the label border is the crop's).
Geometry MakeGeometry(int dims, const std::array<int64_t, 3>& shape,
                      const std::array<int64_t, 3>& crop);

/// nearbyint(x) (half to even, the default rounding mode) without a libm call: adding
/// 1.5 * 2^23 leaves no fraction bits, so the FPU rounds to an integer (exact for |x| < 2^22;
/// GCC keeps the two roundings unless -ffast-math, which we never use). Larger |x| lie
/// outside every input, where any integer of the same sign will do.
inline int32_t RoundHalfEvenToInt(float x) {
  if (std::fabs(x) < 0x1.0p22f) {
    return static_cast<int32_t>((x + 0x1.8p23f) - 0x1.8p23f);
  }
  return static_cast<int32_t>(x);
}

/// Whether neighbour k (bit D-1-d: upper on axis d) of the voxel with floors `idx` exists.
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

/// The element offset of neighbour k of the voxel with floors `idx` for strides `st`.
template <int D>
inline int64_t NeighbourOffset(int k, const int32_t (&idx)[3], const std::array<int64_t, 3>& st) {
  int64_t off = 0;
  for (int d = 0; d < D; ++d) {
    off += static_cast<int64_t>(idx[d] + ((k >> (D - 1 - d)) & 1)) * st[d];
  }
  return off;
}

// Positions this far out are outside any input we accept (sizes <= kMaxInputExtent = 2^22);
// clamping them keeps the int32 conversions below defined.
inline constexpr float kFarAway = 0x1.0p24f;

// x[j] = start + j * step (`steps[j]` = j * step, tabulated once per call) in double,
// rounded once to float (no drift along the row), and its floor. The loops always run over
// kSegment voxels (a tail segment computes a few unused ones): a constant trip count lets
// GCC vectorise them without prologue or epilogue.
[[gnu::always_inline]] inline void ComputeAxisPositions(double start,
                                                        const double* __restrict steps,
                                                        const float* __restrict displacement, int n,
                                                        float* __restrict x,
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
[[gnu::always_inline]] inline void ComputeWeights3(
    int n, const float* __restrict x0, const float* __restrict x1, const float* __restrict x2,
    const int32_t* __restrict i0, const int32_t* __restrict i1, const int32_t* __restrict i2,
    float* __restrict w0, float* __restrict w1, float* __restrict w2, float* __restrict w3,
    float* __restrict w4, float* __restrict w5, float* __restrict w6, float* __restrict w7) {
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
[[gnu::always_inline]] inline void ComputeWeights2(int n, const float* __restrict x0,
                                                   const float* __restrict x1,
                                                   const int32_t* __restrict i0,
                                                   const int32_t* __restrict i1,
                                                   float* __restrict w0, float* __restrict w1,
                                                   float* __restrict w2, float* __restrict w3) {
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
[[gnu::always_inline]] inline uint8_t FlagsAt(const Row& row, const Geometry& geo, int j) {
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
[[gnu::always_inline]] inline void ComputeRow(const AffineSamplingMap& map, const Geometry& geo,
                                              const std::array<int64_t, 3>& first, int n,
                                              const float* displacement,
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

// Whether the offset of every interior voxel's neighbour 0 in an input of spatial shape
// `size` and strides `st` fits in int32 (0 <= index < size - 1 on each axis).
template <int D>
inline bool OffsetsFitInt32(const Geometry& geo, const std::array<int64_t, 3>& st) {
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
[[gnu::always_inline]] inline void ComputeOffsets(Row& row, const std::array<int64_t, 3>& st,
                                                  bool fits_int32) {
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

}  // namespace patchfeed::internal_augment

#endif  // PATCHFEED_AUGMENT_SPATIAL_INTERNAL_RESAMPLE_ROW_H_
