// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Distribution checks of the parameter draws: gate frequencies, BGContrast's half-below rule,
// ranges, per-channel masks, normals, and determinism for a fixed stream.

#include "augment/intensity/random_draws.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "augment/intensity/brightness_contrast.h"
#include "augment/intensity/gamma.h"
#include "augment/intensity/gaussian_blur.h"
#include "augment/intensity/gaussian_noise.h"
#include "augment/intensity/low_resolution.h"

namespace patchfeed::augment {
namespace {

CounterRng Rng(uint32_t stream) { return CounterRng(StreamId{.seed = 42, .stream = stream}); }

// |observed - n p| within 5 binomial standard deviations (false failure rate ~6e-7).
void ExpectBinomial(int64_t observed, int64_t n, double p) {
  const double sd = std::sqrt(n * p * (1 - p));
  EXPECT_NEAR(static_cast<double>(observed), n * p, 5 * sd + 1e-9) << "p=" << p;
}

TEST(RandomDraws, GateFrequenciesMatchNnUnetProbabilities) {
  constexpr int64_t kN = 100000;
  struct Case {
    double p;
    int64_t hits = 0;
  };
  std::vector<Case> cases = {{0.1}, {0.2}, {0.15}, {0.25}, {0.3}};
  CounterRng rng = Rng(1);
  for (auto& c : cases) {
    for (int64_t i = 0; i < kN; ++i)
      c.hits += DrawGate(rng, c.p) ? 1 : 0;
    ExpectBinomial(c.hits, kN, c.p);
  }
}

TEST(RandomDraws, TransformGatesUseTheirDefaults) {
  constexpr int64_t kN = 50000;
  CounterRng rng = Rng(2);
  int64_t noise = 0, blur = 0, bright = 0, lowres = 0, gamma_inv = 0, gamma = 0;
  for (int64_t i = 0; i < kN; ++i) {
    noise += DrawGaussianNoiseParams(rng, {}, 1, 3).apply;
    blur += DrawGaussianBlurParams(rng, {}, 1, 3).apply;
    bright += DrawBrightnessParams(rng, {}, 1, 3).apply;
    lowres += DrawLowResolutionParams(rng, {}, 1, 3).apply;
    gamma_inv += DrawGammaParams(rng, GammaConfig::Inverted(), 1, 3).apply;
    gamma += DrawGammaParams(rng, {}, 1, 3).apply;
  }
  ExpectBinomial(noise, kN, 0.1);
  ExpectBinomial(blur, kN, 0.2);
  ExpectBinomial(bright, kN, 0.15);
  ExpectBinomial(lowres, kN, 0.25);
  ExpectBinomial(gamma_inv, kN, 0.1);
  ExpectBinomial(gamma, kN, 0.3);
}

TEST(RandomDraws, BGContrastIsHalfBelowOneAndInRange) {
  constexpr int64_t kN = 100000;
  CounterRng rng = Rng(3);
  int64_t below = 0;
  for (int64_t i = 0; i < kN; ++i) {
    const double f = SampleBGContrast(rng, {0.7, 1.5});
    ASSERT_GE(f, 0.7);
    ASSERT_LT(f, 1.5);
    below += f < 1 ? 1 : 0;
  }
  // Half below 1 although only 3/8 of the range lies there.
  ExpectBinomial(below, kN, 0.5);
}

TEST(RandomDraws, BGContrastWithRangeAboveOneNeverGoesBelow) {
  CounterRng rng = Rng(4);
  for (int i = 0; i < 10000; ++i) {
    const double f = SampleBGContrast(rng, {1.2, 1.3});
    ASSERT_GE(f, 1.2);
    ASSERT_LT(f, 1.3);
  }
}

TEST(RandomDraws, SampleUniformConstantRangeConsumesNothing) {
  CounterRng a = Rng(5), b = Rng(5);
  EXPECT_EQ(SampleUniform(a, {0.3, 0.3}), 0.3);
  EXPECT_EQ(a.NextU32(), b.NextU32());
}

TEST(RandomDraws, ChannelMaskFrequency) {
  constexpr int64_t kN = 20000;
  CounterRng rng = Rng(6);
  int64_t selected[4] = {};
  for (int64_t i = 0; i < kN; ++i) {
    const ChannelMask m = DrawChannelMask(rng, 4, 0.5);
    EXPECT_EQ(m.channels, 4);
    for (int c = 0; c < 4; ++c)
      selected[c] += m.selected[c];
  }
  for (int c = 0; c < 4; ++c)
    ExpectBinomial(selected[c], kN, 0.5);
}

TEST(RandomDraws, BlurSigmasPerChannelAndAxisInRange) {
  CounterRng rng = Rng(7);
  GaussianBlurConfig config;
  config.p_apply = 1;
  int64_t selected = 0, draws = 0;
  for (int i = 0; i < 5000; ++i) {
    const GaussianBlurParams p = DrawGaussianBlurParams(rng, config, 3, 3);
    for (int c = 0; c < 3; ++c) {
      if (!p.channels.selected[c])
        continue;
      ++selected;
      for (int d = 0; d < 3; ++d) {
        ASSERT_GE(p.sigma[c][d], 0.5);
        ASSERT_LT(p.sigma[c][d], 1.0);
        ++draws;
      }
      EXPECT_NE(p.sigma[c][0], p.sigma[c][1]);  // not synchronised across axes
    }
  }
  ExpectBinomial(selected, 15000, 0.5);
  EXPECT_EQ(draws, 3 * selected);
}

TEST(RandomDraws, NoiseSigmaIsSharedAcrossChannels) {
  CounterRng rng = Rng(8);
  GaussianNoiseConfig config;
  config.p_apply = 1;
  for (int i = 0; i < 1000; ++i) {
    const GaussianNoiseParams p = DrawGaussianNoiseParams(rng, config, 3, 3);
    EXPECT_EQ(p.channels.count(), 3);
    EXPECT_EQ(p.sigma[0], p.sigma[2]);
    ASSERT_GE(p.sigma[0], 0.0);
    ASSERT_LT(p.sigma[0], 0.1);
  }
}

TEST(RandomDraws, LowResolutionZoomSharedAcrossAxesAndIgnoredAxis) {
  CounterRng rng = Rng(9);
  LowResolutionConfig config;
  config.p_apply = 1;
  config.ignore_axis[0] = true;  // dummy 2D
  for (int i = 0; i < 2000; ++i) {
    const LowResolutionParams p = DrawLowResolutionParams(rng, config, 2, 3);
    for (int c = 0; c < 2; ++c) {
      if (!p.channels.selected[c])
        continue;
      EXPECT_EQ(p.zoom[c][0], 1.0f);
      EXPECT_EQ(p.zoom[c][1], p.zoom[c][2]);
      ASSERT_GE(p.zoom[c][1], 0.5f);
      ASSERT_LE(p.zoom[c][1], 1.0f);
    }
  }
}

TEST(RandomDraws, GammaInvertedInstanceFlags) {
  CounterRng rng = Rng(10);
  for (int i = 0; i < 500; ++i) {
    const GammaParams inv = DrawGammaParams(rng, GammaConfig::Inverted(), 2, 3);
    if (inv.apply) {
      EXPECT_TRUE(inv.invert[0] && inv.invert[1] && inv.retain_stats[0]);
    }
    GammaConfig plain;
    plain.p_apply = 1;
    const GammaParams p = DrawGammaParams(rng, plain, 2, 3);
    EXPECT_FALSE(p.invert[0] || p.invert[1]);
    EXPECT_TRUE(p.retain_stats[0] && p.retain_stats[1]);
    ASSERT_GE(p.gamma[0], 0.7f);
    ASSERT_LE(p.gamma[0], 1.5f);
  }
}

TEST(RandomDraws, SameStreamSameParameters) {
  CounterRng a = Rng(11), b = Rng(11);
  for (int i = 0; i < 100; ++i) {
    const ContrastParams x = DrawContrastParams(a, {}, 2, 3);
    const ContrastParams y = DrawContrastParams(b, {}, 2, 3);
    ASSERT_EQ(x.apply, y.apply);
    EXPECT_EQ(x.factor[0], y.factor[0]);
    EXPECT_EQ(x.factor[1], y.factor[1]);
  }
}

TEST(RandomDraws, StandardNormalMoments) {
  constexpr int64_t kN = 1 << 20;
  std::vector<float> v(kN + 3);  // odd length exercises the tail
  CounterRng rng = Rng(12);
  FillStandardNormal(rng, v);
  double s1 = 0, s2 = 0, s4 = 0;
  int64_t beyond2 = 0;
  for (float x : v) {
    ASSERT_TRUE(std::isfinite(x));
    s1 += x;
    s2 += double{x} * x;
    s4 += double{x} * x * x * x;
    beyond2 += std::abs(x) > 2 ? 1 : 0;
  }
  const double n = static_cast<double>(v.size());
  EXPECT_NEAR(s1 / n, 0.0, 5 / std::sqrt(n));
  EXPECT_NEAR(s2 / n, 1.0, 5 * std::sqrt(2 / n));
  EXPECT_NEAR(s4 / n, 3.0, 5 * std::sqrt(96 / n));
  ExpectBinomial(beyond2, static_cast<int64_t>(n), 0.04550026);
  std::vector<float> w(kN + 3);
  CounterRng again = Rng(12);
  FillStandardNormal(again, w);
  EXPECT_EQ(v, w);
}

}  // namespace
}  // namespace patchfeed::augment
