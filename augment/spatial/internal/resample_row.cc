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

}  // namespace patchfeed::internal_augment
