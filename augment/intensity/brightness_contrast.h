// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_INTENSITY_BRIGHTNESS_CONTRAST_H_
#define PATCHFEED_AUGMENT_INTENSITY_BRIGHTNESS_CONTRAST_H_

/// \file
/// MultiplicativeBrightnessTransform (transforms/intensity/brightness.py) and
/// ContrastTransform (transforms/intensity/contrast.py), both with per-channel BGContrast
/// factors in nnU-Net. Contrast gathers mean, min and max in one pass and applies in a second.

#include <cstdint>

#include "augment/augment_config.h"
#include "augment/intensity/channel_loops.h"
#include "augment/intensity/random_draws.h"
#include "augment/sample_view.h"
#include "common/random.h"
#include "common/status.h"

namespace patchfeed::augment {

struct BrightnessParams {
  bool apply = false;
  ChannelMask channels;
  float multiplier[kMaxChannels] = {};  ///< float32 as bg2 stores them (torch.Tensor)
};

BrightnessParams DrawBrightnessParams(CounterRng& rng, const BrightnessConfig& config,
                                      int64_t channels, int spatial_dims);

/// `x_c <- m_c * x_c` in float32 for selected channels, in place.
Status ApplyBrightness(const BrightnessParams& params, SampleView<float> image);

struct ContrastParams {
  bool apply = false;
  bool preserve_range = true;
  ChannelMask channels;
  float factor[kMaxChannels] = {};  ///< float32 as bg2 stores them
};

ContrastParams DrawContrastParams(CounterRng& rng, const ContrastConfig& config, int64_t channels,
                                  int spatial_dims);

/// Per selected channel over the whole patch: `mu = mean(x)` (accumulated in double, then
/// rounded to float; torch reduces in float with cascaded sums, which differs by ~1 ulp of
/// mu), `lo, hi = min, max`; then `x <- ((x - mu) * m + mu)` in float32, clamped to
/// `[lo, hi]` when preserve_range. In place.
Status ApplyContrast(const ContrastParams& params, SampleView<float> image);

}  // namespace patchfeed::augment

namespace patchfeed::internal_augment {

/// Mean (double accumulation), minimum and maximum of one channel in one pass.
struct ChannelStats {
  double mean = 0;
  float min = 0;
  float max = 0;
};
ChannelStats MeanMinMax(const augment::SampleView<float>& view, int64_t c);

}  // namespace patchfeed::internal_augment

#endif  // PATCHFEED_AUGMENT_INTENSITY_BRIGHTNESS_CONTRAST_H_
