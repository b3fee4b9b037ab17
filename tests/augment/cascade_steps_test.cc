// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// augment/cascade's building blocks where Python cannot reach: which footprints take the
// separable dilation, the error paths, labelling and the draws' shapes. Equality with
// batchgeneratorsv2 and skimage is tested in tests/python/test_augment_cascade.py.

#include "augment/cascade/cascade_steps.h"

#include <cstdint>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "augment/cascade/binary_morphology.h"
#include "augment/cascade/connected_components.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::augment {
namespace {

TEST(BinaryMorphologyTest, NnUNetsBallsTakeTheSeparablePath) {
  // bg2 draws radii from U(1, 8): every ball there must have a ball core, or the separable
  // path would not run in training.
  for (double r = 1.0; r < 8.0; r += 0.01) {
    ASSERT_OK_AND_ASSIGN(const Footprint fp, BallFootprint(r));
    EXPECT_TRUE(SeparableApplies(fp)) << r;
  }
}

// The separable path (a ball core plus the shell voxels float rounding kept, often on one
// side only, e.g. radius 3.01) equals the runs over the whole footprint, for radii across
// nnU-Net's range and every operator.
TEST(BinaryMorphologyTest, MethodsAgree) {
  const MaskShape shape{12, 13, 14};
  std::vector<uint8_t> mask(12 * 13 * 14);
  for (size_t i = 0; i < mask.size(); ++i)
    mask[i] = (i * 2654435761u >> 7) % 7 == 0 ? 1 : 0;
  for (double r = 1.0; r < 8.0; r += 0.07) {
    ASSERT_OK_AND_ASSIGN(const Footprint fp, BallFootprint(r));
    for (const BinaryOperator op : {BinaryOperator::kDilation, BinaryOperator::kErosion,
                                    BinaryOperator::kClosing, BinaryOperator::kOpening}) {
      std::vector<uint8_t> runs = mask, separable = mask;
      MorphologyScratch scratch;
      ASSERT_OK(ApplyBinaryMorphology(op, fp, shape, runs, scratch, MorphologyMethod::kRuns));
      ASSERT_OK(
          ApplyBinaryMorphology(op, fp, shape, separable, scratch, MorphologyMethod::kSeparable));
      ASSERT_EQ(runs, separable) << "radius " << r << " operator " << static_cast<int>(op);
    }
  }
}

TEST(BinaryMorphologyTest, BadInputIsAnError) {
  EXPECT_THAT(BallFootprint(0.2).status(),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("ball radius")));
  EXPECT_THAT(DiskFootprint(1e9).status(),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("disk radius")));
  ASSERT_OK_AND_ASSIGN(const Footprint fp, BallFootprint(2));
  std::vector<uint8_t> mask(10);
  MorphologyScratch scratch;
  EXPECT_THAT(ApplyBinaryMorphology(BinaryOperator::kDilation, fp, {2, 2, 2}, mask, scratch),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("size")));
}

TEST(ConnectedComponentsTest, DiagonalNeighboursJoin) {
  // 2D as Z = 1: full connectivity joins the diagonal pair; the lone voxel is its own.
  const std::vector<uint8_t> mask = {1, 0, 0, 0,  //
                                     0, 1, 0, 1,  //
                                     0, 0, 0, 0};
  ComponentLabels labels;
  ASSERT_OK(LabelComponents({1, 3, 4}, mask, labels));
  EXPECT_EQ(labels.count(), 2);
  EXPECT_THAT(labels.sizes, ::testing::ElementsAre(2, 1));
  EXPECT_THAT(labels.label, ::testing::ElementsAre(1, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0));
  EXPECT_THAT(LabelComponents({2, 3, 4}, mask, labels),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("size")));
}

TEST(CascadeDrawsTest, ChannelsArePermutedAndGated) {
  BinaryOperatorConfig config;
  config.p_apply = 1.0;
  config.p_per_label = 1.0;
  int first_is_zero = 0;
  for (uint32_t j = 0; j < 200; ++j) {
    CounterRng rng(StreamId{.seed = 1, .position = j});
    const BinaryOperatorParams p = DrawBinaryOperatorParams(rng, config, 3);
    ASSERT_TRUE(p.apply);
    ASSERT_EQ(p.count, 3);
    EXPECT_THAT(std::vector<int64_t>(p.channel.begin(), p.channel.begin() + 3),
                ::testing::UnorderedElementsAre(0, 1, 2));
    for (int64_t i = 0; i < 3; ++i) {
      EXPECT_GE(p.radius[static_cast<size_t>(i)], 1.0);
      EXPECT_LT(p.radius[static_cast<size_t>(i)], 8.0);
    }
    first_is_zero += p.channel[0] == 0;
  }
  EXPECT_GT(first_is_zero, 40);  // ~1/3 of 200
  EXPECT_LT(first_is_zero, 95);
  RemoveComponentConfig off;
  off.p_apply = 0.0;
  CounterRng rng(StreamId{.seed = 2});
  EXPECT_FALSE(DrawRemoveComponentParams(rng, off, 3).apply);
}

TEST(CascadeStepsTest, WrongChannelCountIsAnError) {
  BinaryOperatorParams p;
  p.apply = true;
  p.labels = 2;
  std::vector<float> data(3 * 8);
  const std::vector<int64_t> spatial{2, 2, 2};
  CascadeScratch scratch;
  EXPECT_THAT(
      ApplyBinaryOperators(p, SampleView<float>::Contiguous(data.data(), 3, spatial), scratch),
      StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("drawn for 2")));
}

}  // namespace
}  // namespace patchfeed::augment
