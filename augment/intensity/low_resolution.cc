// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "augment/intensity/low_resolution.h"

#include <algorithm>

#include "augment/intensity/resize.h"

namespace patchfeed::augment {

LowResolutionParams DrawLowResolutionParams(CounterRng& rng, const LowResolutionConfig& config,
                                            int64_t channels, int spatial_dims) {
  LowResolutionParams p;
  if (!DrawGateAndChannels(rng, config.p_apply, config.p_per_channel, channels, &p.apply,
                           &p.channels))
    return p;
  const int64_t n = std::min<int64_t>(channels, kMaxChannels);
  // bg2 draws all axes even when some are ignored, then overwrites those with 1.
  auto draw_axes = [&](float* z) {
    for (int d = 0; d < spatial_dims; ++d) {
      z[d] = (config.synchronize_axes && d > 0)
                 ? z[0]
                 : static_cast<float>(SampleUniform(rng, config.zoom));
    }
    for (int d = 0; d < spatial_dims; ++d) {
      if (config.ignore_axis[d])
        z[d] = 1.0f;
    }
  };
  float shared[kMaxSpatialDims] = {1.0f, 1.0f, 1.0f};
  if (config.synchronize_channels && p.channels.count() > 0)
    draw_axes(shared);
  for (int64_t c = 0; c < n; ++c) {
    if (!p.channels.selected[c])
      continue;
    if (config.synchronize_channels)
      std::copy(shared, shared + kMaxSpatialDims, p.zoom[c]);
    else
      draw_axes(p.zoom[c]);
  }
  return p;
}

Status LowResolutionShape(const float* zoom, const SampleView<float>& image, int64_t* out) {
  for (int d = 0; d < image.spatial_dims; ++d) {
    // bg2: round(i * j.item()): the float32 zoom widened to double, product in double.
    out[d] = internal_augment::RoundHalfEven(static_cast<double>(image.shape[d]) *
                                             static_cast<double>(zoom[d]));
    if (out[d] < 1)
      return InvalidArgumentError("SimulateLowResolution: zoom makes an axis empty");
  }
  return Status();
}

Status ApplyLowResolution(const LowResolutionParams& params, SampleView<float> image,
                          AugmentScratch& scratch) {
  if (!params.apply)
    return Status();
  PATCHFEED_RETURN_IF_ERROR(internal_augment::ValidateView(image, "SimulateLowResolution"));
  if (params.channels.channels != image.channels)
    return InvalidArgumentError("SimulateLowResolution: params drawn for another channel count");
  const int dims = image.spatial_dims;
  const int64_t size = image.spatial_size();
  const bool dense = image.channel_is_contiguous();
  for (int64_t c = 0; c < image.channels; ++c) {
    if (!params.channels.selected[c])
      continue;
    int64_t small_shape[kMaxSpatialDims] = {1, 1, 1};
    PATCHFEED_RETURN_IF_ERROR(LowResolutionShape(params.zoom[c], image, small_shape));
    int64_t small_size = 1;
    for (int d = 0; d < dims; ++d)
      small_size *= small_shape[d];
    float* channel = image.data + c * image.channel_stride;
    // `lines` holds a dense copy of a strided channel; `small` the downsampled image. The
    // upsampling reads only `small`, so it may write the channel directly.
    const float* src = channel;
    if (!dense) {
      float* copy = internal_augment::Reserve(scratch.lines, size);
      internal_augment::GatherChannel(image, c, copy);
      src = copy;
    }
    float* small = internal_augment::Reserve(scratch.small, small_size, size);
    internal_augment::ResizeNearestExact(src, image.shape.data(), small, small_shape, dims,
                                         scratch.index);
    float* dst = dense ? channel : internal_augment::Reserve(scratch.lines, size);
    internal_augment::ResizeLinear(small, small_shape, dst, image.shape.data(), dims, scratch.work,
                                   scratch.index);
    if (!dense)
      internal_augment::ScatterChannel<float>(dst, image, c);
  }
  return Status();
}

}  // namespace patchfeed::augment
