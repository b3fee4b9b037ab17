// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_INTENSITY_GAMMA_H_
#define PATCHFEED_AUGMENT_INTENSITY_GAMMA_H_

/// \file
/// GammaTransform (batchgeneratorsv2 transforms/intensity/gamma.py). nnU-Net runs two
/// instances: p 0.1 with inversion, p 0.3 without; both retain the channel's mean and
/// (unbiased) standard deviation.
///
/// Three passes per channel: (1) negate if inverting, and gather sum, sum of squares, min and
/// max; (2) the gamma curve, gathering the new sum and sum of squares; (3) the affine that
/// restores the statistics, and the negation back. Statistics are accumulated in double.

#include <cstdint>

#include "augment/augment_config.h"
#include "augment/intensity/channel_loops.h"
#include "augment/intensity/random_draws.h"
#include "augment/sample_view.h"
#include "common/random.h"
#include "common/status.h"

namespace patchfeed::augment {

struct GammaParams {
  bool apply = false;
  ChannelMask channels;
  bool invert[kMaxChannels] = {};
  bool retain_stats[kMaxChannels] = {};
  float gamma[kMaxChannels] = {};  ///< float32 as bg2 stores them
};

GammaParams DrawGammaParams(CounterRng& rng, const GammaConfig& config, int64_t channels,
                            int spatial_dims);

/// For each selected channel `x`, in place: negate if inverting; remember mean and unbiased
/// std if retaining; `x <- ((x - lo) / max(r, 1e-7))^g * r + lo` with `lo, r` the min and
/// range; then `x <- (x - mean(x)) * (std0 / max(std(x), 1e-7)) + mean0`; negate back.
/// Each step rounds to float as torch's in-place ops do; the statistics differ from torch's
/// float reductions by about 1e-7 relative.
Status ApplyGamma(const GammaParams& params, SampleView<float> image);

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_INTENSITY_GAMMA_H_
