// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "augment/intensity/gaussian_blur.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/str_cat.h"

namespace patchfeed::internal_augment {

int64_t RoundToNearestOdd(double n) {
  // std::nearbyint rounds half to even in the default rounding mode, as Python's round does.
  const double r = std::nearbyint(n);
  const auto rounded = static_cast<int64_t>(r);
  if (rounded % 2 != 0)  // odd, negative odd included (Python's % would give 1 there too)
    return rounded;
  return n - r >= 0 ? rounded + 1 : rounded - 1;
}

int64_t BlurKernelSize(double sigma, double truncate) {
  return RoundToNearestOdd(sigma * truncate + 0.5);
}

int64_t BuildBlurKernel(double sigma, float* taps) {
  const int64_t k = BlurKernelSize(sigma);
  const int64_t r = (k - 1) / 2;
  double w[augment::kMaxBlurKernel];
  double sum = 0;
  for (int64_t t = -r; t <= r; ++t) {
    const double x = static_cast<double>(t) / sigma;
    w[t + r] = std::exp(-0.5 * x * x);
    sum += w[t + r];
  }
  for (int64_t i = 0; i < k; ++i)
    taps[i] = static_cast<float>(w[i] / sum);
  return k;
}

namespace {

// out[i] = sum_t taps[t] * src[t][i] for i < len: one pass per tap keeps the loop over i
// unit-stride and vectorised. Compiled three times (baseline, AVX2, AVX-512) and picked at run
// time: the filter is compute-bound once its lines sit in cache.
template <int K>
[[gnu::always_inline]] inline void WeightedSumFixed(float* out, const float* const* src,
                                                    const float* taps, int64_t len) {
  // K known: the tap loop unrolls, each output is one store after K loads.
  float w[K];
  const float* s[K];
  for (int t = 0; t < K; ++t) {
    w[t] = taps[t];
    s[t] = src[t];
  }
  for (int64_t i = 0; i < len; ++i) {
    float acc = w[0] * s[0][i];
    for (int t = 1; t < K; ++t)
      acc += w[t] * s[t][i];
    out[i] = acc;
  }
}

[[gnu::always_inline]] inline void WeightedSumBody(float* out, const float* const* src,
                                                   const float* taps, int64_t k, int64_t len) {
  // nnU-Net's sigmas (0.5..1) give k = 3, 5 or 7.
  switch (k) {
    case 3:
      return WeightedSumFixed<3>(out, src, taps, len);
    case 5:
      return WeightedSumFixed<5>(out, src, taps, len);
    case 7:
      return WeightedSumFixed<7>(out, src, taps, len);
    default:
      break;
  }
  {
    const float w = taps[0];
    const float* s = src[0];
    for (int64_t i = 0; i < len; ++i)
      out[i] = w * s[i];
  }
  for (int64_t t = 1; t < k; ++t) {
    const float w = taps[t];
    const float* s = src[t];
    for (int64_t i = 0; i < len; ++i)
      out[i] += w * s[i];
  }
}

void WeightedSumBase(float* out, const float* const* src, const float* taps, int64_t k,
                     int64_t len) {
  WeightedSumBody(out, src, taps, k, len);
}

[[gnu::target("avx2,fma")]] void WeightedSumAvx2(float* out, const float* const* src,
                                                 const float* taps, int64_t k, int64_t len) {
  WeightedSumBody(out, src, taps, k, len);
}

[[gnu::target("avx512f,avx512vl,avx2,fma")]] void WeightedSumAvx512(float* out,
                                                                    const float* const* src,
                                                                    const float* taps, int64_t k,
                                                                    int64_t len) {
  WeightedSumBody(out, src, taps, k, len);
}

using WeightedSumFn = void (*)(float*, const float* const*, const float*, int64_t, int64_t);

WeightedSumFn SelectWeightedSum() {
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl"))
    return WeightedSumAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return WeightedSumAvx2;
  return WeightedSumBase;
}

inline void WeightedSum(float* out, const float* const* src, const float* taps, int64_t k,
                        int64_t len) {
  static const WeightedSumFn fn = SelectWeightedSum();
  fn(out, src, taps, k, len);
}

// Last axis: rows of length n, contiguous.
void BlurRows(float* data, int64_t rows, int64_t n, const float* taps, int64_t k,
              AugmentScratch& scratch) {
  const int64_t r = (k - 1) / 2;
  float* padded = Reserve(scratch.lines, n + 2 * r);
  const float* src[augment::kMaxBlurKernel];
  for (int64_t t = 0; t < k; ++t)
    src[t] = padded + t;
  for (int64_t row = 0; row < rows; ++row) {
    float* x = data + row * n;
    for (int64_t i = -r; i < n + r; ++i)
      padded[i + r] = x[ReflectIndex(i, n)];
    WeightedSum(x, src, taps, k, n);
  }
}

// A middle or first axis: `outer` blocks of `n` lines, each line `inner` contiguous floats.
// Line i is overwritten only after a copy of it enters the ring, which holds the original
// lines i-r..i; lines above i are still original in place. Reflected indices always land in
// one of the two (see ReflectIndex: a mirrored low index is <= r - i, a mirrored high one
// >= i - r).
void BlurLines(float* data, int64_t outer, int64_t n, int64_t inner, const float* taps, int64_t k,
               AugmentScratch& scratch) {
  const int64_t r = (k - 1) / 2;
  const int64_t slots = r + 1;
  float* ring = Reserve(scratch.lines, slots * inner);
  const float* src[augment::kMaxBlurKernel];
  for (int64_t o = 0; o < outer; ++o) {
    float* block = data + o * n * inner;
    for (int64_t i = 0; i < n; ++i) {
      float* line = block + i * inner;
      float* saved = ring + (i % slots) * inner;
      for (int64_t j = 0; j < inner; ++j)
        saved[j] = line[j];
      for (int64_t t = 0; t < k; ++t) {
        const int64_t s = ReflectIndex(i + t - r, n);
        src[t] = s <= i ? ring + (s % slots) * inner : block + s * inner;
      }
      WeightedSum(line, src, taps, k, inner);
    }
  }
}

}  // namespace

void BlurAxisInPlace(float* data, const int64_t* shape, int dims, int axis, const float* taps,
                     int64_t k, AugmentScratch& scratch) {
  int64_t outer = 1;
  int64_t inner = 1;
  for (int d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int d = axis + 1; d < dims; ++d)
    inner *= shape[d];
  if (axis == dims - 1)
    BlurRows(data, outer, shape[axis], taps, k, scratch);
  else
    BlurLines(data, outer, shape[axis], inner, taps, k, scratch);
}

}  // namespace patchfeed::internal_augment

namespace patchfeed::augment {

GaussianBlurParams DrawGaussianBlurParams(CounterRng& rng, const GaussianBlurConfig& config,
                                          int64_t channels, int spatial_dims) {
  GaussianBlurParams p;
  if (!DrawGateAndChannels(rng, config.p_apply, config.p_per_channel, channels, &p.apply,
                           &p.channels))
    return p;
  const int64_t n = std::min<int64_t>(channels, kMaxChannels);
  double shared[kMaxSpatialDims] = {};
  // bg2 draws channel-synchronised sigmas once per axis (or once, if axes are synchronised too).
  if (config.synchronize_channels) {
    for (int d = 0; d < spatial_dims; ++d)
      shared[d] = (config.synchronize_axes && d > 0) ? shared[0] : SampleUniform(rng, config.sigma);
  }
  for (int64_t c = 0; c < n; ++c) {
    if (!p.channels.selected[c])
      continue;
    for (int d = 0; d < spatial_dims; ++d) {
      if (config.synchronize_channels)
        p.sigma[c][d] = shared[d];
      else if (config.synchronize_axes && d > 0)
        p.sigma[c][d] = p.sigma[c][0];
      else
        p.sigma[c][d] = SampleUniform(rng, config.sigma);
    }
  }
  return p;
}

Status ApplyGaussianBlur(const GaussianBlurParams& params, SampleView<float> image,
                         AugmentScratch& scratch) {
  if (!params.apply)
    return Status();
  PATCHFEED_RETURN_IF_ERROR(internal_augment::ValidateView(image, "GaussianBlur"));
  if (params.channels.channels != image.channels)
    return InvalidArgumentError("GaussianBlur: params drawn for another channel count");
  const int dims = image.spatial_dims;
  for (int64_t c = 0; c < image.channels; ++c) {
    if (!params.channels.selected[c])
      continue;
    for (int d = 0; d < dims; ++d) {
      const double sigma = params.sigma[c][d];
      if (!(sigma > 0) || internal_augment::BlurKernelSize(sigma) > kMaxBlurKernel)
        return InvalidArgumentError("GaussianBlur: sigma must be in (0, ~10.6]");
      if ((internal_augment::BlurKernelSize(sigma) - 1) / 2 >= image.shape[d])
        return InvalidArgumentError(
            StrCat("GaussianBlur: axis ", d, " is too short for reflect padding"));
    }
  }
  const bool dense = image.channel_is_contiguous();
  const int64_t size = image.spatial_size();
  for (int64_t c = 0; c < image.channels; ++c) {
    if (!params.channels.selected[c])
      continue;
    // A strided channel is filtered in a dense copy: the line algorithms want unit stride.
    float* data = image.data + c * image.channel_stride;
    if (!dense) {
      data = internal_augment::Reserve(scratch.work, size);
      internal_augment::GatherChannel(image, c, data);
    }
    for (int d = 0; d < dims; ++d) {
      float taps[kMaxBlurKernel];
      const int64_t k = internal_augment::BuildBlurKernel(params.sigma[c][d], taps);
      internal_augment::BlurAxisInPlace(data, image.shape.data(), dims, d, taps, k, scratch);
    }
    if (!dense)
      internal_augment::ScatterChannel<float>(data, image, c);
  }
  return Status();
}

}  // namespace patchfeed::augment
