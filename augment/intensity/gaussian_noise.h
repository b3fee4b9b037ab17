// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_INTENSITY_GAUSSIAN_NOISE_H_
#define PATCHFEED_AUGMENT_INTENSITY_GAUSSIAN_NOISE_H_

/// \file
/// GaussianNoiseTransform (batchgeneratorsv2 transforms/intensity/gaussian_noise.py):
/// `x <- x + sigma * n` with one sigma for all selected channels and an independent standard
/// normal `n` per voxel. The noise field is generated from CounterRng in blocks that stay in
/// L1 cache, fused with the addition, so the image is read and written once.

#include <cstdint>

#include "augment/augment_config.h"
#include "augment/intensity/channel_loops.h"
#include "augment/intensity/random_draws.h"
#include "augment/sample_view.h"
#include "common/random.h"
#include "common/status.h"

namespace patchfeed::augment {

struct GaussianNoiseParams {
  bool apply = false;
  ChannelMask channels;
  double sigma[kMaxChannels] = {};  ///< per channel (all equal when synchronized)
};

/// Draws the gate, the channel mask and sigma(s). The noise field itself is drawn by
/// ApplyGaussianNoise from `rng`, so a caller hands the same rng on after this call.
GaussianNoiseParams DrawGaussianNoiseParams(CounterRng& rng, const GaussianNoiseConfig& config,
                                            int64_t channels, int spatial_dims);

/// Adds `sigma_c * n` to each selected channel of `image` in place, with the normals drawn
/// from `rng` channel by channel in C order. No allocation. InvalidArgument if `image` is
/// unusable or its channel count differs from the params'.
Status ApplyGaussianNoise(const GaussianNoiseParams& params, CounterRng& rng,
                          SampleView<float> image);

/// ApplyGaussianNoise's work on channel `c` alone: the normals the whole call adds to that
/// channel, so channels may be done in any order, or at once. `rng` is in the state
/// ApplyGaussianNoise would start from (each channel starts from its own copy).
Status ApplyGaussianNoiseToChannel(const GaussianNoiseParams& params, CounterRng rng,
                                   SampleView<float> image, int64_t c);

/// Adds `sigma_c * field_c` to each selected channel, where `field` holds one dense C-order
/// channel per *selected* channel (bg2's layout `(n_selected, *spatial)`). The product is
/// rounded to float before the addition, as torch's `normal_(0, sigma)` then `add` does.
/// Used for differential tests against a field drawn by torch.
Status AddScaledField(const GaussianNoiseParams& params, SampleView<const float> field,
                      SampleView<float> image);

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_INTENSITY_GAUSSIAN_NOISE_H_
