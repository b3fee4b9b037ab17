// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_INTENSITY_GAUSSIAN_BLUR_H_
#define PATCHFEED_AUGMENT_INTENSITY_GAUSSIAN_BLUR_H_

/// \file
/// GaussianBlurTransform (batchgeneratorsv2 transforms/noise/gaussian_blur.py): separable
/// Gaussian smoothing of each selected channel, axis 0 first, with its own sigma per channel
/// and axis, reflect padding and bg2's kernel length rule (truncate 6).
///
/// The filter runs in place. The last axis is filtered row by row through a padded copy of
/// the row; the other axes keep a ring of the last r+1 original lines (planes for axis 0 in
/// 3D, rows for axis 1), so the working set is k lines instead of a copy of the volume.

#include <cstdint>

#include "augment/augment_config.h"
#include "augment/intensity/channel_loops.h"
#include "augment/intensity/random_draws.h"
#include "augment/sample_view.h"
#include "common/random.h"
#include "common/status.h"

namespace patchfeed::augment {

struct GaussianBlurParams {
  bool apply = false;
  ChannelMask channels;
  double sigma[kMaxChannels][kMaxSpatialDims] = {};  ///< [channel][axis], selected channels
};

GaussianBlurParams DrawGaussianBlurParams(CounterRng& rng, const GaussianBlurConfig& config,
                                          int64_t channels, int spatial_dims);

/// Blurs the selected channels in place. InvalidArgument if the view is unusable, a sigma is
/// not positive, or an axis is not longer than the kernel's half width (reflect padding needs
/// it; torch fails there too).
Status ApplyGaussianBlur(const GaussianBlurParams& params, SampleView<float> image,
                         AugmentScratch& scratch);

/// Longest kernel ApplyGaussianBlur accepts (sigma up to ~10.6).
inline constexpr int kMaxBlurKernel = 65;

}  // namespace patchfeed::augment

namespace patchfeed::internal_augment {

/// bg2's `_round_to_nearest_odd`: Python `round` (half to even); an even result moves one step
/// towards `n` (up when `n >= round(n)`).
int64_t RoundToNearestOdd(double n);

/// Kernel length for `sigma`: `RoundToNearestOdd(sigma * truncate + 0.5)`, truncate 6 as
/// `blur_dimension` uses it.
int64_t BlurKernelSize(double sigma, double truncate = 6.0);

/// Writes the normalised taps `exp(-t^2 / (2 sigma^2))` for `t = -(k-1)/2 .. (k-1)/2` into
/// `taps` (k = BlurKernelSize(sigma) entries, at most kMaxBlurKernel) and returns k.
/// Computed in double and rounded once, so the taps sum to 1 within float rounding.
int64_t BuildBlurKernel(double sigma, float* taps);

/// Reflect-pads an index in [-(n-1), 2n-2] into [0, n): mirror without repeating the edge.
inline int64_t ReflectIndex(int64_t i, int64_t n) {
  if (i < 0)
    return -i;
  if (i >= n)
    return 2 * (n - 1) - i;
  return i;
}

/// Filters one dense C-order channel of shape `shape[0..dims)` along `axis` in place.
/// `axis_len > (k-1)/2` is the caller's check.
void BlurAxisInPlace(float* data, const int64_t* shape, int dims, int axis, const float* taps,
                     int64_t k, AugmentScratch& scratch);

}  // namespace patchfeed::internal_augment

#endif  // PATCHFEED_AUGMENT_INTENSITY_GAUSSIAN_BLUR_H_
