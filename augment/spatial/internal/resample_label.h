// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_SPATIAL_INTERNAL_RESAMPLE_LABEL_H_
#define PATCHFEED_AUGMENT_SPATIAL_INTERNAL_RESAMPLE_LABEL_H_

/// \file
/// ResampleAffine's label kernels: one label channel of one row segment, either
/// batchgeneratorsv2's one-hot x 1000 linear interpolation with a float16 argmax (in one pass
/// over the 2^D neighbours, see affine_resample.h) or the nearest label.
///
/// Stateless but for LowestLabel, which caches one channel's smallest label in a slot the
/// caller owns (one slot per piece and channel, so pieces never share one).

#include <array>
#include <cstdint>
#include <limits>

#include "augment/sample_view.h"
#include "augment/spatial/internal/resample_row.h"

namespace patchfeed::internal_augment {

/// The value of a LowestLabel slot that has not been scanned yet.
inline constexpr int32_t kUnknownLabel = std::numeric_limits<int32_t>::min();

/// Smallest label of one input channel, computed only when a voxel needs it (see
/// ArgmaxLabel in the .cc) and cached in the scratch slot `*cache` (kUnknownLabel until then).
class LowestLabel {
 public:
  LowestLabel(augment::SampleView<const int16_t> channel, int32_t* cache)
      : channel_(channel), cache_(cache) {}
  int16_t get() {
    if (*cache_ == kUnknownLabel) {
      *cache_ = Scan();
    }
    return static_cast<int16_t>(*cache_);
  }

 private:
  int16_t Scan() const;

  augment::SampleView<const int16_t> channel_;
  int32_t* cache_;
};

/// Writes the `row.size` labels of `row` from the label channel at `in` (spatial strides `st`;
/// `row.offset` formed for them) to `out`, `out_stride` elements apart: one-hot linear and the
/// float16 argmax. Voxels outside the input by batchgeneratorsv2's test get `padding` when it
/// is not 0.
template <int D>
void ResampleLinearLabelRow(const Row& row, const Geometry& geo, const int16_t* in,
                            const std::array<int64_t, 3>& st, int16_t* out, int64_t out_stride,
                            int16_t padding, LowestLabel& lowest);

/// As ResampleLinearLabelRow, with the nearest label (round half to even; 0 outside).
template <int D>
void ResampleNearestLabelRow(const Row& row, const Geometry& geo, const int16_t* in,
                             const std::array<int64_t, 3>& st, int16_t* out, int64_t out_stride,
                             int16_t padding);

}  // namespace patchfeed::internal_augment

#endif  // PATCHFEED_AUGMENT_SPATIAL_INTERNAL_RESAMPLE_LABEL_H_
