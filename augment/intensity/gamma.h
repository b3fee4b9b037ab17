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

/// The last pass of ApplyGamma on one channel, where it has one (statistics retained or the
/// image inverted), as a pointwise map: `x <- ((x - mean_here) * scale + mean_target) * sign`,
/// or `x <- x * sign` without retained statistics.
struct GammaFinish {
  bool retain = false;
  float mean_here = 0;
  float scale = 1;
  float mean_target = 0;
  float sign = 1;

  /// The map with retained statistics, and without (loops pick one outside, so they vectorise).
  float Retained(float x) const { return ((x - mean_here) * scale + mean_target) * sign; }
  float Plain(float x) const { return x * sign; }
  float operator()(float x) const { return retain ? Retained(x) : Plain(x); }
};

/// Which channels ApplyGammaDeferringFinish left a last pass to, and that pass.
struct GammaFinishes {
  bool pending[kMaxChannels] = {};
  GammaFinish finish[kMaxChannels];
};

/// ApplyGamma without the last pass of each channel: that pass is returned in `finishes` for
/// the caller to fold into a pass of its own over the channel (the pipeline folds it into
/// mirroring, one pass over memory instead of two). Applying `finishes->finish[c]` to every
/// voxel of each channel with `finishes->pending[c]` gives exactly ApplyGamma's values.
Status ApplyGammaDeferringFinish(const GammaParams& params, SampleView<float> image,
                                 GammaFinishes* finishes);

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_INTENSITY_GAMMA_H_
