// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "augment/intensity/brightness_contrast.h"

#include <algorithm>
#include <limits>

#include "common/str_cat.h"

namespace patchfeed::augment {
namespace {

// Per-channel factors with bg2's draw structure: one draw shared by all selected channels
// when synchronised, else one per selected channel in channel order.
void DrawFactors(CounterRng& rng, const ScalarRange& range, bool bg_contrast, bool synchronize,
                 const ChannelMask& mask, float* out) {
  auto draw = [&] {
    return static_cast<float>(bg_contrast ? SampleBGContrast(rng, range)
                                          : SampleUniform(rng, range));
  };
  const int64_t n = std::min<int64_t>(mask.channels, kMaxChannels);
  const float shared = (synchronize && mask.count() > 0) ? draw() : 0.0f;
  for (int64_t c = 0; c < n; ++c) {
    if (mask.selected[c])
      out[c] = synchronize ? shared : draw();
  }
}

Status CheckMask(const ChannelMask& mask, const SampleView<float>& image, const char* what) {
  PATCHFEED_RETURN_IF_ERROR(internal_augment::ValidateView(image, what));
  if (mask.channels != image.channels)
    return InvalidArgumentError(StrCat(what, ": params drawn for another channel count"));
  return Status();
}

}  // namespace

BrightnessParams DrawBrightnessParams(CounterRng& rng, const BrightnessConfig& config,
                                      int64_t channels, int /*spatial_dims*/) {
  BrightnessParams p;
  if (!DrawGateAndChannels(rng, config.p_apply, config.p_per_channel, channels, &p.apply,
                           &p.channels))
    return p;
  DrawFactors(rng, config.multiplier, config.bg_contrast, config.synchronize_channels, p.channels,
              p.multiplier);
  return p;
}

Status ApplyBrightness(const BrightnessParams& params, SampleView<float> image) {
  if (!params.apply)
    return Status();
  PATCHFEED_RETURN_IF_ERROR(CheckMask(params.channels, image, "Brightness"));
  for (int64_t c = 0; c < image.channels; ++c) {
    if (!params.channels.selected[c])
      continue;
    const float m = params.multiplier[c];
    internal_augment::ForEachRow(image, c, [m](float* x, int64_t n, int64_t stride) {
      for (int64_t i = 0; i < n; ++i)
        x[i * stride] *= m;
    });
  }
  return Status();
}

ContrastParams DrawContrastParams(CounterRng& rng, const ContrastConfig& config, int64_t channels,
                                  int /*spatial_dims*/) {
  ContrastParams p;
  p.channels.channels = channels;
  p.preserve_range = config.preserve_range;
  p.apply = DrawGate(rng, config.p_apply);
  if (!p.apply)
    return p;
  p.channels = DrawChannelMask(rng, channels, config.p_per_channel);
  DrawFactors(rng, config.factor, config.bg_contrast, config.synchronize_channels, p.channels,
              p.factor);
  return p;
}

Status ApplyContrast(const ContrastParams& params, SampleView<float> image) {
  if (!params.apply)
    return Status();
  PATCHFEED_RETURN_IF_ERROR(CheckMask(params.channels, image, "Contrast"));
  for (int64_t c = 0; c < image.channels; ++c) {
    if (!params.channels.selected[c])
      continue;
    const internal_augment::ChannelStats s = internal_augment::MeanMinMax(image, c);
    const float mu = static_cast<float>(s.mean);
    const float m = params.factor[c];
    // Keep torch's float order: sub, mul, add, clamp (each op rounds to float).
    const float lo = params.preserve_range ? s.min : -std::numeric_limits<float>::infinity();
    const float hi = params.preserve_range ? s.max : std::numeric_limits<float>::infinity();
    internal_augment::ForEachRow(image, c, [&](float* x, int64_t n, int64_t stride) {
      for (int64_t i = 0; i < n; ++i) {
        const float v = (x[i * stride] - mu) * m + mu;
        x[i * stride] = std::min(std::max(v, lo), hi);
      }
    });
  }
  return Status();
}

}  // namespace patchfeed::augment

namespace patchfeed::internal_augment {

ChannelStats MeanMinMax(const augment::SampleView<float>& view, int64_t c) {
  // Blocks of 512 values are summed in 16 float lanes (vectorised, independent chains), and
  // each block total is added in double: float rounding only within a block, like torch's
  // cascaded float sum, at float speed.
  constexpr int64_t kLanes = 16, kBlock = 512;
  double total = 0;
  float lo = std::numeric_limits<float>::infinity();
  float hi = -std::numeric_limits<float>::infinity();
  ForEachRow(view, c, [&](const float* x, int64_t n, int64_t stride) {
    int64_t i = 0;
    if (stride == 1) {
      float vlo[kLanes], vhi[kLanes];
      for (int j = 0; j < kLanes; ++j)
        vlo[j] = vhi[j] = x[0];
      for (; i + kBlock <= n; i += kBlock) {
        float acc[kLanes] = {};
        for (int64_t b = 0; b < kBlock; b += kLanes) {
          for (int j = 0; j < kLanes; ++j) {
            const float v = x[i + b + j];
            acc[j] += v;
            vlo[j] = std::min(vlo[j], v);
            vhi[j] = std::max(vhi[j], v);
          }
        }
        double block = 0;
        for (int j = 0; j < kLanes; ++j)
          block += acc[j];
        total += block;
      }
      for (int j = 0; j < kLanes; ++j) {
        lo = std::min(lo, vlo[j]);
        hi = std::max(hi, vhi[j]);
      }
    }
    for (; i < n; ++i) {
      const float v = x[i * stride];
      total += v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  });
  return {total / static_cast<double>(view.spatial_size()), lo, hi};
}

}  // namespace patchfeed::internal_augment
