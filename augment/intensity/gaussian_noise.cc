// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "augment/intensity/gaussian_noise.h"

#include <algorithm>

namespace patchfeed::augment {
namespace {

Status CheckParams(const GaussianNoiseParams& params, const SampleView<float>& image) {
  PATCHFEED_RETURN_IF_ERROR(internal_augment::ValidateView(image, "GaussianNoise"));
  if (params.channels.channels != image.channels)
    return InvalidArgumentError("GaussianNoise: params drawn for another channel count");
  return Status();
}

// Adds sigma x the next normals of `normals` to channel `c` of `image`, one chunk of normals
// (4 KiB) at a time: generated and consumed while in L1, no heap buffer. A chunk's unused tail
// is dropped at the end of each row, so rows of any length and stride work; for a contiguous
// channel (one row) that happens once.
void AddNoise(NormalStream& normals, float sigma, const SampleView<float>& image, int64_t c) {
  constexpr int64_t kBlock = NormalStream::kChunk;
  alignas(64) float noise[kBlock];
  internal_augment::ForEachRow(image, c, [&](float* row, int64_t n, int64_t stride) {
    for (int64_t start = 0; start < n; start += kBlock) {
      const int64_t len = std::min(kBlock, n - start);
      normals.NextChunk(noise);
      float* x = row + start * stride;
      if (stride == 1) {
        for (int64_t i = 0; i < len; ++i)
          x[i] += sigma * noise[i];
      } else {
        for (int64_t i = 0; i < len; ++i)
          x[i * stride] += sigma * noise[i];
      }
    }
  });
}

// The chunks AddNoise takes from the stream for one channel of `image`.
int64_t ChunksPerChannel(const SampleView<float>& image) {
  int64_t chunks = 0;
  internal_augment::ForEachRow(image, 0, [&](float*, int64_t n, int64_t) {
    chunks += (n + NormalStream::kChunk - 1) / NormalStream::kChunk;
  });
  return chunks;
}

}  // namespace

GaussianNoiseParams DrawGaussianNoiseParams(CounterRng& rng, const GaussianNoiseConfig& config,
                                            int64_t channels, int /*spatial_dims*/) {
  GaussianNoiseParams p;
  if (!DrawGateAndChannels(rng, config.p_apply, config.p_per_channel, channels, &p.apply,
                           &p.channels))
    return p;
  const int64_t n = std::min<int64_t>(channels, kMaxChannels);
  if (config.synchronize_channels) {
    const double s = p.channels.count() > 0 ? SampleUniform(rng, config.sigma) : 0.0;
    std::fill(p.sigma, p.sigma + n, s);
  } else {
    for (int64_t c = 0; c < n; ++c)
      p.sigma[c] = p.channels.selected[c] ? SampleUniform(rng, config.sigma) : 0.0;
  }
  return p;
}

Status ApplyGaussianNoise(const GaussianNoiseParams& params, CounterRng& rng,
                          SampleView<float> image) {
  if (!params.apply)
    return Status();
  PATCHFEED_RETURN_IF_ERROR(CheckParams(params, image));
  NormalStream normals(rng);
  for (int64_t c = 0; c < image.channels && c < kMaxChannels; ++c) {
    if (params.channels.selected[c])
      AddNoise(normals, static_cast<float>(params.sigma[c]), image, c);
  }
  return Status();
}

Status ApplyGaussianNoiseToChannel(const GaussianNoiseParams& params, CounterRng rng,
                                   SampleView<float> image, int64_t c) {
  if (!params.apply)
    return Status();
  PATCHFEED_RETURN_IF_ERROR(CheckParams(params, image));
  if (c < 0 || c >= image.channels)
    return InvalidArgumentError("GaussianNoise: no such channel");
  if (c >= kMaxChannels || !params.channels.selected[c])
    return Status();
  NormalStream normals(rng);
  int64_t before = 0;
  for (int64_t k = 0; k < c; ++k)
    before += params.channels.selected[k] ? 1 : 0;
  normals.Skip(before * ChunksPerChannel(image));
  AddNoise(normals, static_cast<float>(params.sigma[c]), image, c);
  return Status();
}

Status AddScaledField(const GaussianNoiseParams& params, SampleView<const float> field,
                      SampleView<float> image) {
  if (!params.apply)
    return Status();
  PATCHFEED_RETURN_IF_ERROR(CheckParams(params, image));
  if (!field.channel_is_contiguous() || field.channels != params.channels.count() ||
      field.spatial_size() != image.spatial_size())
    return InvalidArgumentError("GaussianNoise: field must be (n_selected, *spatial), dense");
  int64_t k = 0;
  for (int64_t c = 0; c < image.channels; ++c) {
    if (!params.channels.selected[c])
      continue;
    const float sigma = static_cast<float>(params.sigma[c]);
    const float* f = field.data + k++ * field.channel_stride;
    internal_augment::ForEachRow(image, c, [&](float* row, int64_t n, int64_t stride) {
      for (int64_t i = 0; i < n; ++i)
        row[i * stride] += sigma * *f++;
    });
  }
  return Status();
}

}  // namespace patchfeed::augment
