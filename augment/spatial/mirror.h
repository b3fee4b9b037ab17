// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_SPATIAL_MIRROR_H_
#define PATCHFEED_AUGMENT_SPATIAL_MIRROR_H_

/// \file
/// nnU-Net's MirrorTransform (batchgeneratorsv2 `transforms/spatial/mirroring.py`): each
/// allowed spatial axis is flipped independently with probability 0.5, the same flips for
/// image and segmentation. Stateless functions; safe to call concurrently on distinct views.

#include <array>
#include <cstdint>

#include "augment/sample_view.h"
#include "common/random.h"
#include "common/status.h"

namespace patchfeed::augment {

struct MirrorParams {
  std::array<bool, 3> flip{};  ///< per spatial axis
};

/// One uniform per axis 0..spatial_dims-1 in order (nnU-Net: (0, 1, 2) in 3D, (0, 1) in 2D);
/// the axis flips if the draw is below 0.5.
MirrorParams DrawMirrorParams(CounterRng& rng, int spatial_dims);

/// Flips `data` in place along the axes `params` selects.
/// \error kInvalidArgument when the view does not have 2 or 3 spatial dims.
template <typename T>
Status ApplyMirror(const MirrorParams& params, SampleView<T> data);

/// Writes `in` flipped into `out` (same channel count and shape; must not overlap `in`).
/// \error kInvalidArgument on mismatched shapes or channel counts.
template <typename T>
Status ApplyMirror(const MirrorParams& params, SampleView<const T> in, SampleView<T> out);

extern template Status ApplyMirror<float>(const MirrorParams&, SampleView<float>);
extern template Status ApplyMirror<int16_t>(const MirrorParams&, SampleView<int16_t>);
extern template Status ApplyMirror<float>(const MirrorParams&, SampleView<const float>,
                                          SampleView<float>);
extern template Status ApplyMirror<int16_t>(const MirrorParams&, SampleView<const int16_t>,
                                            SampleView<int16_t>);

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_SPATIAL_MIRROR_H_
