// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// A row segment's positions, floors, torch-form weights, border flags and neighbour offsets,
// in loops the compiler vectorises (see resample_row.h).

#include "augment/spatial/internal/resample_row.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace patchfeed::internal_augment {

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

}  // namespace patchfeed::internal_augment
