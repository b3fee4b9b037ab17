// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "augment/intensity/gamma.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "augment/intensity/fast_log.h"

namespace patchfeed::augment {
namespace {

// Sum and sum of squares around a shift (the channel's first value): without the shift,
// sum(x^2) - n mean^2 cancels catastrophically for data far from 0, even in double.
struct Moments {
  double shift = 0;
  double sum = 0;
  double sum_sq = 0;
  int64_t n = 0;

  double mean() const { return shift + sum / static_cast<double>(n); }
  double std_unbiased() const {
    if (n < 2)
      return std::numeric_limits<double>::quiet_NaN();  // torch: std of one element is nan
    const double var = (sum_sq - sum * sum / static_cast<double>(n)) / static_cast<double>(n - 1);
    return std::sqrt(std::max(var, 0.0));
  }
};

struct Pass1 {
  Moments m;
  float lo = std::numeric_limits<float>::infinity();
  float hi = -std::numeric_limits<float>::infinity();
};

float FirstValue(const SampleView<float>& image, int64_t c) {
  return image.data[c * image.channel_stride];
}

// x^g for x in [0, 1] and g > 0 as exp2(g * log2(x)) with branch-free float polynomials, so
// the curve loop vectorises; libm's powf is a call per voxel and was the whole cost of this
// transform. Relative error of a few float ulp for x^g >= 2^-100; below that (and for x = 0)
// the result is 0, which is below any ulp of the range that multiplies it.
[[gnu::always_inline]] inline float PowUnit(float x, float g) {
  // log2(x): x = 2^e (1 + f), ln(1 + f) by the Cephes polynomial.
  const auto bits = std::bit_cast<uint32_t>(x);  // for the zero/denormal mask below
  const auto [e, f] = internal_augment::SplitForLog(x);
  const float z = f * f;
  const float ln_m = f + (internal_augment::LogTail(f, z) - 0.5f * z);  // ln(1 + f)
  // y = g * log2(x) = g * (e + ln_m / ln 2), in [-inf, 0]; clamp before the exponent trick.
  float y = g * (static_cast<float>(e) + ln_m * 1.44269504089f);
  // 2^y = 2^n * 2^r with n = trunc(y - 1/2) (y <= 0: the nearest integer) and r = y - n in
  // [-1/2, 1/2]. y >= -126 g is finite; below -125 the exponent would underflow, and the
  // mask below returns 0 there (no clamp: a float max here stopped GCC vectorising).
  const auto n = static_cast<int32_t>(y - 0.5f);
  const float r = y - static_cast<float>(n);
  float q = 1.535336188319500e-4f;
  q = q * r + 1.339887440266574e-3f;
  q = q * r + 9.618437357674640e-3f;
  q = q * r + 5.550332471162809e-2f;
  q = q * r + 2.402264791363012e-1f;
  q = q * r + 6.931472028550421e-1f;
  q = q * r + 1.0f;
  const float scale = std::bit_cast<float>(static_cast<uint32_t>(n + 127) << 23);
  // 0 and denormal inputs (and -0) give 0: mask the bits instead of branching.
  const uint32_t keep = 0u - static_cast<uint32_t>((bits >= 0x00800000u) & (y > -125.0f));
  return std::bit_cast<float>(std::bit_cast<uint32_t>(q * scale) & keep);
}

// Sums of (v - shift) and its square over a dense run, 16 float lanes per block of 512, block
// totals in double: float rounding only within a block, vectorised (a double running sum
// cannot be, the compiler must keep its order).
constexpr int64_t kLanes = 16;
constexpr int64_t kBlock = 512;

// Pass 1 on a dense run: optional negation in place, moments, min and max.
[[gnu::always_inline]] inline void InvertMomentsBody(float* x, int64_t n, bool inv, float shift,
                                                     double& sum, double& sum_sq, float& lo,
                                                     float& hi) {
  const float sign = inv ? -1.0f : 1.0f;
  float vlo[kLanes], vhi[kLanes];
  for (int64_t j = 0; j < kLanes; ++j) {
    vlo[j] = lo;
    vhi[j] = hi;
  }
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    float a1[kLanes] = {}, a2[kLanes] = {};
    for (int64_t b = 0; b < kBlock; b += kLanes) {
      for (int64_t j = 0; j < kLanes; ++j) {
        const float v = x[i + b + j] * sign;
        x[i + b + j] = v;
        const float d = v - shift;
        a1[j] += d;
        a2[j] += d * d;
        vlo[j] = std::min(vlo[j], v);
        vhi[j] = std::max(vhi[j], v);
      }
    }
    double s1 = 0, s2 = 0;
    for (int64_t j = 0; j < kLanes; ++j) {
      s1 += a1[j];
      s2 += a2[j];
    }
    sum += s1;
    sum_sq += s2;
  }
  for (int64_t j = 0; j < kLanes; ++j) {
    lo = std::min(lo, vlo[j]);
    hi = std::max(hi, vhi[j]);
  }
  for (; i < n; ++i) {
    const float v = x[i] * sign;
    x[i] = v;
    const double d = static_cast<double>(v) - shift;
    sum += d;
    sum_sq += d * d;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
}

// Pass 2 on a dense run: x <- ((x - lo) / denom)^g * range + lo, and the new moments.
[[gnu::always_inline]] inline void CurveMomentsBody(float* x, int64_t n, float lo, float denom,
                                                    float g, float range, float shift, double& sum,
                                                    double& sum_sq) {
  auto curve = [=](float v) { return PowUnit((v - lo) / denom, g) * range + lo; };
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    // One fused loop with 16 float lanes: the curve is branch-free, so the whole body
    // vectorises (half the time of a map loop followed by a sum loop).
    float a1[kLanes] = {}, a2[kLanes] = {};
    for (int64_t b = 0; b < kBlock; b += kLanes) {
      for (int64_t j = 0; j < kLanes; ++j) {
        const float v = curve(x[i + b + j]);
        x[i + b + j] = v;
        const float d = v - shift;
        a1[j] += d;
        a2[j] += d * d;
      }
    }
    double s1 = 0, s2 = 0;
    for (int64_t j = 0; j < kLanes; ++j) {
      s1 += a1[j];
      s2 += a2[j];
    }
    sum += s1;
    sum_sq += s2;
  }
  for (; i < n; ++i) {
    const float v = curve(x[i]);
    x[i] = v;
    const double d = static_cast<double>(v) - shift;
    sum += d;
    sum_sq += d * d;
  }
}

[[gnu::target("avx2,fma")]] void InvertMomentsAvx2(float* x, int64_t n, bool inv, float shift,
                                                   double& sum, double& sum_sq, float& lo,
                                                   float& hi) {
  InvertMomentsBody(x, n, inv, shift, sum, sum_sq, lo, hi);
}
void InvertMomentsBase(float* x, int64_t n, bool inv, float shift, double& sum, double& sum_sq,
                       float& lo, float& hi) {
  InvertMomentsBody(x, n, inv, shift, sum, sum_sq, lo, hi);
}
[[gnu::target("avx2,fma")]] void CurveMomentsAvx2(float* x, int64_t n, float lo, float denom,
                                                  float g, float range, float shift, double& sum,
                                                  double& sum_sq) {
  CurveMomentsBody(x, n, lo, denom, g, range, shift, sum, sum_sq);
}
[[gnu::target("avx512f,avx512vl,avx512dq,avx2,fma")]] void CurveMomentsAvx512(
    float* x, int64_t n, float lo, float denom, float g, float range, float shift, double& sum,
    double& sum_sq) {
  CurveMomentsBody(x, n, lo, denom, g, range, shift, sum, sum_sq);
}
void CurveMomentsBase(float* x, int64_t n, float lo, float denom, float g, float range, float shift,
                      double& sum, double& sum_sq) {
  CurveMomentsBody(x, n, lo, denom, g, range, shift, sum, sum_sq);
}

using CurveMomentsFn = void (*)(float*, int64_t, float, float, float, float, float, double&,
                                double&);

// The curve is compute-bound (two polynomials per voxel): worth AVX-512 where there is one.
CurveMomentsFn SelectCurveMoments() {
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq"))
    return CurveMomentsAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return CurveMomentsAvx2;
  return CurveMomentsBase;
}

bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

}  // namespace

GammaParams DrawGammaParams(CounterRng& rng, const GammaConfig& config, int64_t channels,
                            int /*spatial_dims*/) {
  GammaParams p;
  if (!DrawGateAndChannels(rng, config.p_apply, config.p_per_channel, channels, &p.apply,
                           &p.channels))
    return p;
  const int64_t n = std::min<int64_t>(channels, kMaxChannels);
  // bg2 order: retain mask, then invert mask (each over the selected channels), then gammas.
  for (int64_t c = 0; c < n; ++c) {
    if (p.channels.selected[c])
      p.retain_stats[c] = rng.UniformDouble() < config.p_retain_stats;
  }
  for (int64_t c = 0; c < n; ++c) {
    if (p.channels.selected[c])
      p.invert[c] = rng.UniformDouble() < config.p_invert;
  }
  auto draw = [&] {
    return static_cast<float>(config.bg_contrast ? SampleBGContrast(rng, config.gamma)
                                                 : SampleUniform(rng, config.gamma));
  };
  const float shared = (config.synchronize_channels && p.channels.count() > 0) ? draw() : 0.0f;
  for (int64_t c = 0; c < n; ++c) {
    if (p.channels.selected[c])
      p.gamma[c] = config.synchronize_channels ? shared : draw();
  }
  return p;
}

namespace {

// ApplyGamma; with `finishes`, each channel's last pass is returned there instead of applied.
Status ApplyGammaImpl(const GammaParams& params, SampleView<float> image, GammaFinishes* finishes) {
  if (!params.apply)
    return Status();
  PATCHFEED_RETURN_IF_ERROR(internal_augment::ValidateView(image, "Gamma"));
  if (params.channels.channels != image.channels)
    return InvalidArgumentError("Gamma: params drawn for another channel count");
  constexpr float kEps = 1e-7f;
  for (int64_t c = 0; c < image.channels; ++c) {
    if (!params.channels.selected[c])
      continue;
    const bool inv = params.invert[c];
    const bool retain = params.retain_stats[c];
    const float g = params.gamma[c];

    // Pass 1: invert, moments, range. A strided channel runs row by row through the same
    // kernels (rows are contiguous along the last axis only when its stride is 1).
    const bool dense = image.channel_is_contiguous();
    const auto invert_moments = HasAvx2() ? InvertMomentsAvx2 : InvertMomentsBase;
    static const CurveMomentsFn curve_moments = SelectCurveMoments();
    Pass1 s;
    s.m.shift = inv ? -FirstValue(image, c) : FirstValue(image, c);
    internal_augment::ForEachRow(image, c, [&](float* x, int64_t n, int64_t stride) {
      if (stride == 1 || dense) {
        invert_moments(x, n, inv, static_cast<float>(s.m.shift), s.m.sum, s.m.sum_sq, s.lo, s.hi);
      } else {
        for (int64_t i = 0; i < n; ++i)
          invert_moments(x + i * stride, 1, inv, static_cast<float>(s.m.shift), s.m.sum, s.m.sum_sq,
                         s.lo, s.hi);
      }
      s.m.n += n;
    });
    const double mean0 = s.m.mean();
    const double std0 = s.m.std_unbiased();

    // Pass 2: the curve, in torch's op order: sub, div, pow, mul, add.
    const float lo = s.lo;
    const float range = s.hi - s.lo;
    const float denom = std::max(range, kEps);
    Moments after;
    after.shift = static_cast<float>(lo + 0.5f * range);  // any shift works; mid-range is tight
    internal_augment::ForEachRow(image, c, [&](float* x, int64_t n, int64_t stride) {
      const auto shift = static_cast<float>(after.shift);
      if (stride == 1 || dense) {
        curve_moments(x, n, lo, denom, g, range, shift, after.sum, after.sum_sq);
      } else {
        for (int64_t i = 0; i < n; ++i)
          curve_moments(x + i * stride, 1, lo, denom, g, range, shift, after.sum, after.sum_sq);
      }
      after.n += n;
    });

    if (!retain && !inv)
      continue;
    // Pass 3: restore statistics (torch: sub mean, mul (std0 / clamp(std)), add mean0, all in
    // float with float-rounded statistics), then undo the inversion. The negation is a multiply
    // by +-1 (exact), so one branch-free loop covers all cases.
    GammaFinish finish;
    finish.retain = retain;
    if (retain) {
      finish.mean_here = static_cast<float>(after.mean());
      const float std_here = static_cast<float>(after.std_unbiased());
      finish.scale = static_cast<float>(std0) / std::max(std_here, kEps);
      finish.mean_target = static_cast<float>(mean0);
    }
    finish.sign = inv ? -1.0f : 1.0f;
    if (finishes != nullptr) {
      finishes->pending[c] = true;
      finishes->finish[c] = finish;
      continue;
    }
    internal_augment::ForEachRow(image, c, [&](float* x, int64_t n, int64_t stride) {
      if (retain) {
        for (int64_t i = 0; i < n; ++i)
          x[i * stride] = finish.Retained(x[i * stride]);
      } else {
        for (int64_t i = 0; i < n; ++i)
          x[i * stride] = finish.Plain(x[i * stride]);
      }
    });
  }
  return Status();
}

}  // namespace

Status ApplyGamma(const GammaParams& params, SampleView<float> image) {
  return ApplyGammaImpl(params, image, nullptr);
}

Status ApplyGammaDeferringFinish(const GammaParams& params, SampleView<float> image,
                                 GammaFinishes* finishes) {
  *finishes = GammaFinishes();
  return ApplyGammaImpl(params, image, finishes);
}

}  // namespace patchfeed::augment
