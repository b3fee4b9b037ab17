// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Known-answer tests of the intensity transforms on tiny arrays computed by hand, the blur
// kernel rules, and the resize index rules. Differential tests against batchgeneratorsv2
// live in tests/python/test_augment_intensity.py.

#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "augment/intensity/brightness_contrast.h"
#include "augment/intensity/gamma.h"
#include "augment/intensity/gaussian_blur.h"
#include "augment/intensity/gaussian_noise.h"
#include "augment/intensity/low_resolution.h"
#include "augment/intensity/resize.h"

namespace patchfeed::augment {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::Pointwise;

SampleView<float> View(std::vector<float>& v, int64_t channels, std::vector<int64_t> spatial) {
  return SampleView<float>::Contiguous(v.data(), channels, spatial);
}

ChannelMask All(int64_t channels) {
  ChannelMask m;
  m.channels = channels;
  for (int64_t c = 0; c < channels; ++c)
    m.selected[c] = true;
  return m;
}

std::vector<float> Random(size_t n, uint32_t stream) {
  std::vector<float> v(n);
  CounterRng rng(StreamId{.seed = 7, .stream = stream});
  for (float& x : v)
    x = static_cast<float>(rng.UniformDouble() * 10 - 3);
  return v;
}

// --- blur kernel rules ---------------------------------------------------------------------

TEST(GaussianBlur, RoundToNearestOddFollowsBg2) {
  // Python: round() half to even, then an even result moves towards n.
  EXPECT_EQ(internal_augment::RoundToNearestOdd(1.5), 1);  // round -> 2, n < 2
  EXPECT_EQ(internal_augment::RoundToNearestOdd(2.5), 3);  // round -> 2, n > 2
  EXPECT_EQ(internal_augment::RoundToNearestOdd(3.0), 3);
  EXPECT_EQ(internal_augment::RoundToNearestOdd(3.5), 3);  // round -> 4, n < 4
  EXPECT_EQ(internal_augment::RoundToNearestOdd(4.0), 5);  // even exactly: n >= round -> up
  EXPECT_EQ(internal_augment::RoundToNearestOdd(4.4), 5);
  EXPECT_EQ(internal_augment::RoundToNearestOdd(3.6), 3);
  EXPECT_EQ(internal_augment::RoundToNearestOdd(5.5), 5);  // round -> 6
  EXPECT_EQ(internal_augment::RoundToNearestOdd(6.5), 7);  // round -> 6
}

TEST(GaussianBlur, KernelSizeAtTheBoundaries) {
  // 6 sigma + 0.5 crosses 4 at sigma = 7/12 = 0.58333 and 6 at 11/12 = 0.91667.
  EXPECT_EQ(internal_augment::BlurKernelSize(0.5), 3);
  EXPECT_EQ(internal_augment::BlurKernelSize(0.5833), 3);
  EXPECT_EQ(internal_augment::BlurKernelSize(0.58334), 5);
  EXPECT_EQ(internal_augment::BlurKernelSize(0.75), 5);
  EXPECT_EQ(internal_augment::BlurKernelSize(0.9166), 5);
  EXPECT_EQ(internal_augment::BlurKernelSize(0.91667), 7);
  EXPECT_EQ(internal_augment::BlurKernelSize(1.0), 7);
}

TEST(GaussianBlur, KernelIsNormalisedAndSymmetric) {
  for (double sigma : {0.5, 0.6, 0.75, 0.95, 1.0, 3.0}) {
    float taps[kMaxBlurKernel];
    const int64_t k = internal_augment::BuildBlurKernel(sigma, taps);
    EXPECT_EQ(k % 2, 1);
    double sum = 0;
    for (int64_t i = 0; i < k; ++i) {
      sum += taps[i];
      EXPECT_EQ(taps[i], taps[k - 1 - i]);
    }
    EXPECT_NEAR(sum, 1.0, 1e-6) << sigma;
    EXPECT_NEAR(taps[(k - 1) / 2] / taps[(k - 1) / 2 + 1], std::exp(0.5 / (sigma * sigma)), 1e-4);
  }
}

TEST(GaussianBlur, ReflectIndexMirrorsWithoutRepeatingTheEdge) {
  // [a b c d] padded by 2: c b | a b c d | c b
  std::vector<int64_t> got;
  for (int64_t i = -2; i < 6; ++i)
    got.push_back(internal_augment::ReflectIndex(i, 4));
  EXPECT_THAT(got, ElementsAre(2, 1, 0, 1, 2, 3, 2, 1));
}

// Naive reference: pad with reflection, convolve, one axis at a time, in double.
std::vector<float> NaiveBlur(std::vector<float> x, const std::vector<int64_t>& shape,
                             const double* sigma) {
  const int dims = static_cast<int>(shape.size());
  for (int axis = 0; axis < dims; ++axis) {
    float taps[kMaxBlurKernel];
    const int64_t k = internal_augment::BuildBlurKernel(sigma[axis], taps);
    const int64_t r = (k - 1) / 2;
    int64_t inner = 1;
    for (int d = axis + 1; d < dims; ++d)
      inner *= shape[d];
    const int64_t n = shape[axis];
    const int64_t outer = static_cast<int64_t>(x.size()) / (n * inner);
    std::vector<float> y(x.size());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < inner; ++j) {
          double s = 0;
          for (int64_t t = 0; t < k; ++t)
            s += taps[t] * x[(o * n + internal_augment::ReflectIndex(i + t - r, n)) * inner + j];
          y[(o * n + i) * inner + j] = static_cast<float>(s);
        }
      }
    }
    x = y;
  }
  return x;
}

TEST(GaussianBlur, MatchesNaiveReflectConvolution3D) {
  const std::vector<int64_t> shape = {5, 6, 9};
  std::vector<float> x = Random(2 * 5 * 6 * 9, 1);
  GaussianBlurParams p;
  p.apply = true;
  p.channels.channels = 2;
  p.channels.selected[1] = true;  // channel 0 stays untouched
  p.sigma[1][0] = 1.0;            // k = 7 on an axis of 5: reflect reaches index 3
  p.sigma[1][1] = 0.55;           // k = 3
  p.sigma[1][2] = 0.8;            // k = 5
  std::vector<float> original = x;
  AugmentScratch scratch;
  ASSERT_TRUE(ApplyGaussianBlur(p, View(x, 2, shape), scratch).ok());
  std::vector<float> c1(original.begin() + 270, original.end());
  const std::vector<float> want = NaiveBlur(c1, shape, p.sigma[1]);
  EXPECT_TRUE(std::equal(x.begin(), x.begin() + 270, original.begin()));
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(x[270 + i], want[i], 2e-6) << i;
}

TEST(GaussianBlur, MatchesNaiveReflectConvolution2D) {
  const std::vector<int64_t> shape = {8, 4};
  std::vector<float> x = Random(8 * 4, 2);
  GaussianBlurParams p;
  p.apply = true;
  p.channels = All(1);
  p.sigma[0][0] = 0.95;
  p.sigma[0][1] = 0.7;
  const std::vector<float> want = NaiveBlur(x, shape, p.sigma[0]);
  AugmentScratch scratch;
  ASSERT_TRUE(ApplyGaussianBlur(p, View(x, 1, shape), scratch).ok());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(x[i], want[i], 2e-6) << i;
}

TEST(GaussianBlur, StridedViewEqualsContiguous) {
  // A (1, 4, 5, 6) channel embedded with padding along the last axis.
  std::vector<float> dense = Random(4 * 5 * 6, 3);
  std::vector<float> padded(4 * 5 * 8, -100.0f);
  for (int64_t i = 0; i < 20; ++i)
    std::copy_n(dense.begin() + i * 6, 6, padded.begin() + i * 8);
  SampleView<float> strided = View(padded, 1, {4, 5, 8});
  strided.shape[2] = 6;
  GaussianBlurParams p;
  p.apply = true;
  p.channels = All(1);
  p.sigma[0][0] = p.sigma[0][1] = p.sigma[0][2] = 0.9;
  AugmentScratch scratch;
  ASSERT_TRUE(ApplyGaussianBlur(p, View(dense, 1, {4, 5, 6}), scratch).ok());
  ASSERT_TRUE(ApplyGaussianBlur(p, strided, scratch).ok());
  for (int64_t i = 0; i < 20; ++i) {
    for (int64_t j = 0; j < 6; ++j)
      EXPECT_EQ(padded[i * 8 + j], dense[i * 6 + j]);
    EXPECT_EQ(padded[i * 8 + 6], -100.0f);  // the gap is never written
  }
}

TEST(GaussianBlur, RejectsAxisTooShortForReflectPadding) {
  std::vector<float> x(2 * 8, 1.0f);
  GaussianBlurParams p;
  p.apply = true;
  p.channels = All(1);
  p.sigma[0][0] = 0.9;  // k = 5 needs an axis of at least 3
  p.sigma[0][1] = 0.9;
  AugmentScratch scratch;
  EXPECT_EQ(ApplyGaussianBlur(p, View(x, 1, {2, 8}), scratch).code(), StatusCode::kInvalidArgument);
}

// --- noise, brightness, contrast, gamma ----------------------------------------------------

TEST(GaussianNoise, AddScaledFieldOnSelectedChannels) {
  std::vector<float> x = {1, 2, 3, 4, 10, 20, 30, 40};
  std::vector<float> field = {1, -1, 2, 0};
  GaussianNoiseParams p;
  p.apply = true;
  p.channels.channels = 2;
  p.channels.selected[1] = true;
  p.sigma[1] = 0.5;
  ASSERT_TRUE(AddScaledField(p, View(field, 1, {2, 2}), View(x, 2, {2, 2})).ok());
  EXPECT_THAT(x, ElementsAre(1, 2, 3, 4, 10.5, 19.5, 31, 40));
}

TEST(GaussianNoise, GeneratedFieldIsDeterministicAndScaled) {
  std::vector<float> a(2 * 3000, 0.0f), b(2 * 3000, 0.0f);
  GaussianNoiseParams p;
  p.apply = true;
  p.channels = All(2);
  p.sigma[0] = p.sigma[1] = 0.1;
  CounterRng ra(StreamId{.seed = 1}), rb(StreamId{.seed = 1});
  ASSERT_TRUE(ApplyGaussianNoise(p, ra, View(a, 2, {30, 100})).ok());
  ASSERT_TRUE(ApplyGaussianNoise(p, rb, View(b, 2, {30, 100})).ok());
  EXPECT_EQ(a, b);
  double s2 = 0;
  for (float v : a)
    s2 += double{v} * v;
  EXPECT_NEAR(std::sqrt(s2 / a.size()), 0.1, 0.005);
}

// Each channel alone, in any order, gets the normals the whole call gives it: on a dense view
// (one row per channel) and on padded rows of 1500 (two chunks each, the second cut short),
// with an unselected channel between selected ones.
TEST(GaussianNoise, ChannelByChannelEqualsTheWholeCall) {
  GaussianNoiseParams p;
  p.apply = true;
  p.channels.channels = 4;
  p.channels.selected[0] = p.channels.selected[2] = p.channels.selected[3] = true;
  p.sigma[0] = 0.1;
  p.sigma[2] = 0.2;
  p.sigma[3] = 0.3;
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{3, 1000}, std::vector<int64_t>{2, 1500}}) {
    const bool padded = shape[1] == 1500;
    const int64_t row = padded ? 1600 : shape[1];  // padded: a noise chunk per row is cut
    const int64_t n = shape[0] * row;
    std::vector<float> whole(static_cast<size_t>(4 * n), 1.0f), alone = whole;
    SampleView<float> whole_view = View(whole, 4, {shape[0], row});
    whole_view.shape[1] = shape[1];
    SampleView<float> alone_view = whole_view;
    alone_view.data = alone.data();
    CounterRng rng(StreamId{.seed = 3});
    CounterRng whole_rng = rng;
    ASSERT_TRUE(ApplyGaussianNoise(p, whole_rng, whole_view).ok());
    for (int64_t c : {3, 1, 0, 2}) {
      ASSERT_TRUE(ApplyGaussianNoiseToChannel(p, rng, alone_view, c).ok());
    }
    EXPECT_EQ(whole, alone);
    EXPECT_EQ(alone[static_cast<size_t>(n)], 1.0f) << "channel 1 is not selected";
  }
}

TEST(Brightness, MultipliesSelectedChannels) {
  std::vector<float> x = {1, 2, 3, 4, 1, 2, 3, 4};
  BrightnessParams p;
  p.apply = true;
  p.channels.channels = 2;
  p.channels.selected[0] = true;
  p.multiplier[0] = 0.5f;
  ASSERT_TRUE(ApplyBrightness(p, View(x, 2, {2, 2})).ok());
  EXPECT_THAT(x, ElementsAre(0.5, 1, 1.5, 2, 1, 2, 3, 4));
}

TEST(Contrast, PreserveRangeClampsToOriginalMinMax) {
  std::vector<float> x = {0, 1, 2, 3};
  ContrastParams p;
  p.apply = true;
  p.channels = All(1);
  p.factor[0] = 2.0f;
  ASSERT_TRUE(ApplyContrast(p, View(x, 1, {2, 2})).ok());
  // mean 1.5: (x - 1.5) * 2 + 1.5 = -1.5, 0.5, 2.5, 4.5, clamped to [0, 3].
  EXPECT_THAT(x, ElementsAre(0, 0.5, 2.5, 3));
  std::vector<float> y = {0, 1, 2, 3};
  p.preserve_range = false;
  ASSERT_TRUE(ApplyContrast(p, View(y, 1, {2, 2})).ok());
  EXPECT_THAT(y, ElementsAre(-1.5, 0.5, 2.5, 4.5));
}

TEST(Gamma, CurveOnRange) {
  std::vector<float> x = {0, 1, 2, 4};
  GammaParams p;
  p.apply = true;
  p.channels = All(1);
  p.gamma[0] = 2.0f;
  ASSERT_TRUE(ApplyGamma(p, View(x, 1, {2, 2})).ok());
  // lo 0, range 4: (x / 4)^2 * 4.
  EXPECT_THAT(x, Pointwise(FloatEq(), std::vector<float>{0, 0.25, 1, 4}));
}

TEST(Gamma, InvertedCurve) {
  std::vector<float> x = {0, 1, 2, 4};
  GammaParams p;
  p.apply = true;
  p.channels = All(1);
  p.gamma[0] = 2.0f;
  p.invert[0] = true;
  ASSERT_TRUE(ApplyGamma(p, View(x, 1, {2, 2})).ok());
  // -x = 0,-1,-2,-4; lo -4, range 4: ((v + 4) / 4)^2 * 4 - 4 = 0, -1.75, -3, -4; negated.
  EXPECT_THAT(x, Pointwise(FloatEq(), std::vector<float>{0, 1.75, 3, 4}));
}

TEST(Gamma, RetainStatsKeepsMeanAndUnbiasedStd) {
  std::vector<float> x = Random(1000, 4);
  auto moments = [](const std::vector<float>& v) {
    const double m = std::accumulate(v.begin(), v.end(), 0.0) / v.size();
    double s = 0;
    for (float e : v)
      s += (e - m) * (e - m);
    return std::pair{m, std::sqrt(s / (v.size() - 1))};
  };
  const auto before = moments(x);
  GammaParams p;
  p.apply = true;
  p.channels = All(1);
  p.gamma[0] = 1.4f;
  p.retain_stats[0] = true;
  ASSERT_TRUE(ApplyGamma(p, View(x, 1, {10, 100})).ok());
  const auto after = moments(x);
  EXPECT_NEAR(after.first, before.first, 1e-5);
  EXPECT_NEAR(after.second, before.second, 1e-5);
}

TEST(Gamma, DeferredFinishGivesApplyGammasValues) {
  // Four channels: plain, retained statistics, inverted, both; one not selected.
  const std::vector<float> src = Random(4 * 600, 11);
  GammaParams p;
  p.apply = true;
  p.channels = All(4);
  p.channels.selected[3] = false;
  p.gamma[0] = 1.3f;
  p.gamma[1] = 0.8f;
  p.gamma[2] = 1.1f;
  p.retain_stats[1] = p.retain_stats[2] = true;
  p.invert[2] = true;
  std::vector<float> expected = src;
  ASSERT_TRUE(ApplyGamma(p, View(expected, 4, {20, 30})).ok());
  std::vector<float> deferred = src;
  GammaFinishes finishes;
  ASSERT_TRUE(ApplyGammaDeferringFinish(p, View(deferred, 4, {20, 30}), &finishes).ok());
  EXPECT_THAT(finishes.pending, ::testing::ElementsAreArray({false, true, true, false, false, false,
                                                             false, false, false, false, false,
                                                             false, false, false, false, false}));
  for (int64_t c = 0; c < 4; ++c) {
    if (!finishes.pending[c])
      continue;
    for (int64_t i = 0; i < 600; ++i) {
      float& v = deferred[static_cast<size_t>(c * 600 + i)];
      v = finishes.finish[c](v);
    }
  }
  for (size_t i = 0; i < src.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint32_t>(deferred[i]), std::bit_cast<uint32_t>(expected[i])) << i;
}

TEST(Gamma, ConstantChannelStaysFinite) {
  std::vector<float> x(16, 3.0f);
  GammaParams p;
  p.apply = true;
  p.channels = All(1);
  p.gamma[0] = 0.8f;
  p.retain_stats[0] = true;
  ASSERT_TRUE(ApplyGamma(p, View(x, 1, {4, 4})).ok());
  for (float v : x)
    EXPECT_FLOAT_EQ(v, 3.0f);
}

TEST(IntensityTransforms, RejectParamsForAnotherChannelCount) {
  std::vector<float> x(8, 1.0f);
  BrightnessParams p;
  p.apply = true;
  p.channels = All(1);
  EXPECT_EQ(ApplyBrightness(p, View(x, 2, {2, 2})).code(), StatusCode::kInvalidArgument);
  p.apply = false;  // not applied: nothing to check, nothing touched
  EXPECT_TRUE(ApplyBrightness(p, View(x, 2, {2, 2})).ok());
}

// --- resize rules and low resolution -------------------------------------------------------

TEST(Resize, NearestExactIndexRule) {
  for (int64_t j = 0; j < 64; ++j)
    EXPECT_EQ(internal_augment::NearestExactIndex(j, 128, 64), 2 * j + 1);
  // 5 -> 3: scale 5/3: floor(0.833) = 0, floor(2.5) = 2, floor(4.17) = 4.
  EXPECT_EQ(internal_augment::NearestExactIndex(0, 5, 3), 0);
  EXPECT_EQ(internal_augment::NearestExactIndex(1, 5, 3), 2);
  EXPECT_EQ(internal_augment::NearestExactIndex(2, 5, 3), 4);
  // Upsampling 2 -> 5: scale 0.4: 0, 0, 1, 1, 1.
  std::vector<int64_t> up;
  for (int64_t j = 0; j < 5; ++j)
    up.push_back(internal_augment::NearestExactIndex(j, 2, 5));
  EXPECT_THAT(up, ElementsAre(0, 0, 1, 1, 1));
}

TEST(Resize, RoundHalfEvenLikePython) {
  EXPECT_EQ(internal_augment::RoundHalfEven(0.5), 0);
  EXPECT_EQ(internal_augment::RoundHalfEven(1.5), 2);
  EXPECT_EQ(internal_augment::RoundHalfEven(2.5), 2);
  EXPECT_EQ(internal_augment::RoundHalfEven(31.5), 32);
}

TEST(LowResolution, HalfZoomOnOneAxisByHand) {
  // Row [0 1 2 3] at zoom 0.5: nearest-exact keeps indices 1 and 3 (values 1, 3); linear
  // back to 4 samples at positions 0 (clamped), 0.25, 0.75, 1.25 (upper neighbour clamped).
  std::vector<float> x = {0, 1, 2, 3, 10, 11, 12, 13};
  LowResolutionParams p;
  p.apply = true;
  p.channels = All(1);
  p.zoom[0][0] = 1.0f;
  p.zoom[0][1] = 0.5f;
  AugmentScratch scratch;
  ASSERT_TRUE(ApplyLowResolution(p, View(x, 1, {2, 4}), scratch).ok());
  EXPECT_THAT(x, Pointwise(FloatEq(), std::vector<float>{1, 1.5, 2.5, 3, 11, 11.5, 12.5, 13}));
}

TEST(LowResolution, ShapeRoundsHalfToEvenThroughFloatZoom) {
  std::vector<float> x(1 * 5 * 7 * 9);
  const SampleView<float> v = View(x, 1, {5, 7, 9});
  const float zoom[3] = {0.5f, 0.5f, 0.5f};
  int64_t out[3];
  ASSERT_TRUE(LowResolutionShape(zoom, v, out).ok());
  EXPECT_THAT(out, ElementsAre(2, 4, 4));  // 2.5 -> 2, 3.5 -> 4, 4.5 -> 4
  const float tiny[3] = {0.05f, 0.5f, 0.5f};
  EXPECT_EQ(LowResolutionShape(tiny, v, out).code(), StatusCode::kInvalidArgument);
}

TEST(LowResolution, ZoomOneIsIdentity) {
  std::vector<float> x = Random(3 * 4 * 5, 5);
  const std::vector<float> original = x;
  LowResolutionParams p;
  p.apply = true;
  p.channels = All(1);
  p.zoom[0][0] = p.zoom[0][1] = p.zoom[0][2] = 1.0f;
  AugmentScratch scratch;
  ASSERT_TRUE(ApplyLowResolution(p, View(x, 1, {3, 4, 5}), scratch).ok());
  EXPECT_EQ(x, original);
}

// --- strided views ----------------------------------------------------------------------

// Channel 1 of a (2, 4, 5, 6) sample stored inside a larger buffer: the last axis padded to
// 9 and the channel stride padded too, so every walk takes the strided path. Each transform
// must give the contiguous result and leave the gaps untouched.
class StridedViews : public ::testing::Test {
 protected:
  static constexpr int64_t kRow = 9;
  static constexpr int64_t kChannel = 4 * 5 * kRow + 11;

  void SetUp() override {
    dense_ = Random(2 * 4 * 5 * 6, 9);
    padded_.assign(2 * kChannel, -777.0f);
    for (int64_t c = 0; c < 2; ++c) {
      for (int64_t r = 0; r < 20; ++r)
        std::copy_n(dense_.begin() + (c * 20 + r) * 6, 6,
                    padded_.begin() + c * kChannel + r * kRow);
    }
  }

  SampleView<float> Strided() {
    SampleView<float> v = View(padded_, 2, {4, 5, kRow});
    v.shape[2] = 6;
    v.channel_stride = kChannel;
    return v;
  }

  void ExpectSame(float tolerance = 0) {
    for (int64_t c = 0; c < 2; ++c) {
      for (int64_t r = 0; r < 20; ++r) {
        for (int64_t j = 0; j < kRow; ++j) {
          const float got = padded_[c * kChannel + r * kRow + j];
          if (j < 6)
            ASSERT_NEAR(got, dense_[(c * 20 + r) * 6 + j], tolerance) << c << " " << r << " " << j;
          else
            ASSERT_EQ(got, -777.0f);
        }
      }
    }
  }

  std::vector<float> dense_, padded_;
};

TEST_F(StridedViews, Gamma) {
  GammaParams p;
  p.apply = true;
  p.channels = All(2);
  p.gamma[0] = 0.8f;
  p.gamma[1] = 1.3f;
  p.invert[1] = p.retain_stats[0] = p.retain_stats[1] = true;
  ASSERT_TRUE(ApplyGamma(p, View(dense_, 2, {4, 5, 6})).ok());
  ASSERT_TRUE(ApplyGamma(p, Strided()).ok());
  ExpectSame(1e-5f);  // statistics are summed in another order
}

TEST_F(StridedViews, ContrastBrightnessNoise) {
  ContrastParams c;
  c.apply = true;
  c.channels = All(2);
  c.factor[0] = 1.2f;
  c.factor[1] = 0.8f;
  BrightnessParams b;
  b.apply = true;
  b.channels = All(2);
  b.multiplier[1] = 1.1f;
  b.multiplier[0] = 0.9f;
  GaussianNoiseParams n;
  n.apply = true;
  n.channels = All(2);
  n.sigma[0] = n.sigma[1] = 0.1;
  std::vector<float> field = Random(2 * 120, 10);
  for (SampleView<float> v : {View(dense_, 2, {4, 5, 6}), Strided()}) {
    ASSERT_TRUE(ApplyContrast(c, v).ok());
    ASSERT_TRUE(ApplyBrightness(b, v).ok());
    ASSERT_TRUE(AddScaledField(n, View(field, 2, {4, 5, 6}), v).ok());
  }
  ExpectSame(1e-5f);
}

TEST_F(StridedViews, LowResolutionAndBlur) {
  LowResolutionParams l;
  l.apply = true;
  l.channels.channels = 2;
  l.channels.selected[1] = true;
  l.zoom[1][0] = l.zoom[1][1] = l.zoom[1][2] = 0.6f;
  GaussianBlurParams g;
  g.apply = true;
  g.channels = All(2);
  for (int d = 0; d < 3; ++d)
    g.sigma[0][d] = g.sigma[1][d] = 0.7;
  AugmentScratch scratch;
  for (SampleView<float> v : {View(dense_, 2, {4, 5, 6}), Strided()}) {
    ASSERT_TRUE(ApplyLowResolution(l, v, scratch).ok());
    ASSERT_TRUE(ApplyGaussianBlur(g, v, scratch).ok());
  }
  ExpectSame();
}

}  // namespace
}  // namespace patchfeed::augment
