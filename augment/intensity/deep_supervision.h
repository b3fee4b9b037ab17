// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_INTENSITY_DEEP_SUPERVISION_H_
#define PATCHFEED_AUGMENT_INTENSITY_DEEP_SUPERVISION_H_

/// \file
/// DownsampleSegForDSTransform (transforms/utils/deep_supervision_downsampling.py): one
/// target per deep-supervision scale, finest first. A scale of all ones is the input itself;
/// any other gets shape `round(S_d * scale_d)` and nearest-exact resampling (bg2 goes through
/// float and back, which is exact for int16 and bool, so we copy the integers directly).

#include <cstdint>
#include <span>

#include "augment/intensity/channel_loops.h"
#include "augment/sample_view.h"
#include "common/status.h"

namespace patchfeed::augment {

/// One deep-supervision scale per spatial axis (nnU-Net: 1 / cumprod(pool kernel sizes)).
struct DeepSupervisionScale {
  double factor[kMaxSpatialDims] = {1.0, 1.0, 1.0};
};

/// True when every used factor is exactly 1: bg2 then returns the input tensor itself.
bool IsIdentityScale(const DeepSupervisionScale& scale, int spatial_dims);

/// Target spatial shape `round_half_even(S_d * factor_d)` (Python's round). InvalidArgument
/// if an extent rounds to 0.
Status DeepSupervisionShape(const DeepSupervisionScale& scale, std::span<const int64_t> shape,
                            int64_t* out);

/// Nearest-exact resize of every channel of `seg` into `out`, whose spatial shape is the
/// target (any shape; `out` must be C-contiguous per channel and have seg's channel count).
/// Instantiated for int16_t (labels) and uint8_t (regions as bool bytes). `scratch.index`
/// holds the index tables (grown once, then reused).
template <typename T>
Status DownsampleSegNearestExact(SampleView<const T> seg, SampleView<T> out,
                                 AugmentScratch& scratch);

/// As above with a scratch of its own (allocates the index tables on each call).
template <typename T>
Status DownsampleSegNearestExact(SampleView<const T> seg, SampleView<T> out) {
  AugmentScratch scratch;
  return DownsampleSegNearestExact<T>(seg, out, scratch);
}

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_INTENSITY_DEEP_SUPERVISION_H_
