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

#include <array>
#include <cmath>
#include <cstdint>

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

/// Fills `row` for `n` voxels of an output row starting at index vector `first`: positions,
/// floors (in window coordinates), weights, flags. `row.steps` must hold j * matrix[d][D-1].
/// `displacement`, when not null, points at the segment's first voxel of the displacement
/// field, whose axes are `displacement_stride` apart. Offsets are left to ComputeOffsets.
template <int D>
void ComputeRow(const AffineSamplingMap& map, const Geometry& geo,
                const std::array<int64_t, 3>& first, int n, const float* displacement,
                int64_t displacement_stride, Row& row);

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

/// Whether the offset of every interior voxel's neighbour 0 in an input of spatial shape
/// `geo.size` and strides `st` fits in int32 (0 <= index < size - 1 on each axis).
template <int D>
bool OffsetsFitInt32(const Geometry& geo, const std::array<int64_t, 3>& st);

/// row.offset[j] = offset of neighbour 0 of voxel j for strides `st` (per kernel: image and
/// labels may have different strides). Only interior voxels' offsets are meaningful.
template <int D>
void ComputeOffsets(Row& row, const std::array<int64_t, 3>& st, bool fits_int32);

}  // namespace patchfeed::internal_augment

#endif  // PATCHFEED_AUGMENT_SPATIAL_INTERNAL_RESAMPLE_ROW_H_
