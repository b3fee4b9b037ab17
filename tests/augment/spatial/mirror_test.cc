// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Tests of MirrorTransform: flips land where index arithmetic says, draws are fair.

#include "augment/spatial/mirror.h"

#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/testutil/status_matchers.h"

namespace patchfeed::augment {
namespace {

TEST(MirrorTest, FlipsEachAxisCombination3D) {
  const int64_t shape[3] = {3, 4, 5};
  const int64_t channels = 2;
  std::vector<float> src(channels * 60);
  std::iota(src.begin(), src.end(), 0.0f);
  for (int mask = 0; mask < 8; ++mask) {
    const MirrorParams p{{(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0}};
    std::vector<float> in_place = src;
    std::vector<float> copied(src.size(), -1.0f);
    const auto in = SampleView<const float>::Contiguous(src.data(), channels, shape);
    ASSERT_OK(ApplyMirror(p, SampleView<float>::Contiguous(in_place.data(), channels, shape)));
    ASSERT_OK(ApplyMirror(p, in, SampleView<float>::Contiguous(copied.data(), channels, shape)));
    const auto a = SampleView<float>::Contiguous(in_place.data(), channels, shape);
    const auto b = SampleView<float>::Contiguous(copied.data(), channels, shape);
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t i = 0; i < 3; ++i) {
        for (int64_t j = 0; j < 4; ++j) {
          for (int64_t k = 0; k < 5; ++k) {
            const float expected =
                in.at(c, p.flip[0] ? 2 - i : i, p.flip[1] ? 3 - j : j, p.flip[2] ? 4 - k : k);
            ASSERT_EQ(a.at(c, i, j, k), expected) << mask;
            ASSERT_EQ(b.at(c, i, j, k), expected) << mask;
          }
        }
      }
    }
  }
}

TEST(MirrorTest, FlipsInt16In2D) {
  const int64_t shape[2] = {3, 2};
  std::vector<int16_t> data = {0, 1, 2, 3, 4, 5};
  ASSERT_OK(ApplyMirror(MirrorParams{{true, true, false}},
                        SampleView<int16_t>::Contiguous(data.data(), 1, shape)));
  EXPECT_THAT(data, ::testing::ElementsAre(5, 4, 3, 2, 1, 0));
  ASSERT_OK(ApplyMirror(MirrorParams{{false, true, false}},
                        SampleView<int16_t>::Contiguous(data.data(), 1, shape)));
  EXPECT_THAT(data, ::testing::ElementsAre(4, 5, 2, 3, 0, 1));
}

TEST(MirrorTest, MappedEqualsMapThenMirror) {
  // Odd and even extents (a self-mapped row has a middle element or not), 3D and 2D, and a
  // strided view (the last axis not unit-stride).
  const int64_t shape3[3] = {3, 4, 5};
  const int64_t shape2[2] = {5, 4};
  const auto f = [](float x) { return 2.0f * x + 1.0f; };
  for (int dims : {2, 3}) {
    const int64_t* shape = dims == 3 ? shape3 : shape2;
    const int64_t n = dims == 3 ? 60 : 20;
    for (int mask = 0; mask < 8; ++mask) {
      const MirrorParams p{{(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0}};
      std::vector<float> src(2 * n);
      std::iota(src.begin(), src.end(), 0.0f);
      std::vector<float> expected = src;
      for (float& v : expected) {
        v = f(v);
      }
      ASSERT_OK(ApplyMirror(
          p, SampleView<float>::Contiguous(expected.data(), 2, std::span(shape, dims))));
      std::vector<float> fused = src;
      ASSERT_OK(ApplyMirrorMapped(
          p, SampleView<float>::Contiguous(fused.data(), 2, std::span(shape, dims)), f));
      EXPECT_EQ(fused, expected) << dims << "D, flips " << mask;
      // The same through a view with the last axis at stride 2 (every other element).
      std::vector<float> wide(4 * n, -7.0f), wide_expected(4 * n, -7.0f);
      for (int64_t i = 0; i < 2 * n; ++i) {
        wide[static_cast<size_t>(2 * i)] = src[static_cast<size_t>(i)];
        wide_expected[static_cast<size_t>(2 * i)] = expected[static_cast<size_t>(i)];
      }
      SampleView<float> strided =
          SampleView<float>::Contiguous(wide.data(), 2, std::span(shape, dims));
      strided.channel_stride *= 2;
      for (int d = 0; d < dims; ++d) {
        strided.strides[d] *= 2;
      }
      ASSERT_OK(ApplyMirrorMapped(p, strided, f));
      EXPECT_EQ(wide, wide_expected) << dims << "D strided, flips " << mask;
    }
  }
}

TEST(MirrorTest, RejectsMismatchedOutput) {
  const int64_t shape[3] = {2, 2, 2};
  const int64_t other[3] = {2, 2, 3};
  std::vector<float> a(8), b(12);
  EXPECT_THAT(ApplyMirror(MirrorParams{}, SampleView<const float>::Contiguous(a.data(), 1, shape),
                          SampleView<float>::Contiguous(b.data(), 1, other)),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("shape")));
}

TEST(MirrorTest, DrawsEachAxisWithProbabilityHalf) {
  constexpr int kDraws = 20000;
  int flips[3] = {0, 0, 0};
  for (int n = 0; n < kDraws; ++n) {
    CounterRng rng(StreamId{.seed = 7, .position = static_cast<uint32_t>(n), .stream = 9});
    const MirrorParams p = DrawMirrorParams(rng, 3);
    for (int d = 0; d < 3; ++d) {
      flips[d] += p.flip[d];
    }
  }
  // Binomial(20000, 0.5): sd ~ 71; allow 5 sd.
  for (int d = 0; d < 3; ++d) {
    EXPECT_NEAR(flips[d], kDraws / 2, 355) << d;
  }
  CounterRng rng(StreamId{.seed = 7});
  EXPECT_FALSE(DrawMirrorParams(rng, 2).flip[2]);
}

}  // namespace
}  // namespace patchfeed::augment
