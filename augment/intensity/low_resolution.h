// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_INTENSITY_LOW_RESOLUTION_H_
#define PATCHFEED_AUGMENT_INTENSITY_LOW_RESOLUTION_H_

/// \file
/// SimulateLowResolutionTransform (batchgeneratorsv2 transforms/spatial/low_resolution.py):
/// each selected channel is downsampled by its zoom with nearest-exact and upsampled back with
/// (bi|tri)linear interpolation, align_corners=False, exactly as torch's interpolate does it.

#include <cstdint>

#include "augment/augment_config.h"
#include "augment/intensity/channel_loops.h"
#include "augment/intensity/random_draws.h"
#include "augment/sample_view.h"
#include "common/random.h"
#include "common/status.h"

namespace patchfeed::augment {

struct LowResolutionParams {
  bool apply = false;
  ChannelMask channels;
  /// [channel][axis] zoom, already rounded to float32 as bg2 stores it in a torch.Tensor.
  float zoom[kMaxChannels][kMaxSpatialDims] = {};
};

LowResolutionParams DrawLowResolutionParams(CounterRng& rng, const LowResolutionConfig& config,
                                            int64_t channels, int spatial_dims);

/// The downsampled shape for one channel: `round_half_even(S_d * double(zoom_d))`.
/// InvalidArgument if an extent rounds to 0 (torch's interpolate refuses it as well).
Status LowResolutionShape(const float* zoom, const SampleView<float>& image, int64_t* out);

/// Replaces each selected channel by its down-then-up resampled version, in place.
Status ApplyLowResolution(const LowResolutionParams& params, SampleView<float> image,
                          AugmentScratch& scratch);

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_INTENSITY_LOW_RESOLUTION_H_
