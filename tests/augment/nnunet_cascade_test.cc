// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// The nnU-Net pipeline with the cascade on: the one-hot channels appended to the image come
// from the transformed previous-stage segmentation, the random steps use their own draws (and
// leave the other transforms' draws alone), and wrong channel counts are errors. The steps'
// equality with batchgeneratorsv2 is tested in tests/python/test_augment_cascade.py.

#include <cstdint>
#include <cstring>
#include <numbers>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "augment/cascade/cascade_steps.h"
#include "augment/cascade/seg_to_onehot.h"
#include "augment/nnunet_pipeline.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::augment {
namespace {

constexpr int64_t kCrop = 20;
const std::vector<int64_t> kPatch{14, 15, 16};
const std::vector<int64_t> kCropShape{kCrop, kCrop, kCrop};
constexpr int64_t kVoxels = kCrop * kCrop * kCrop;
constexpr int64_t kPatchVoxels = 14 * 15 * 16;

// An image channel and two segmentation channels: the case's labels and, as the previous
// stage's, boxes of labels 1 and 2 with some -1 at one border.
struct CascadeCrop {
  std::vector<float> image = std::vector<float>(kVoxels);
  std::vector<int16_t> seg = std::vector<int16_t>(2 * kVoxels);
};

CascadeCrop MakeCascadeCrop() {
  CascadeCrop c;
  for (int64_t z = 0; z < kCrop; ++z) {
    for (int64_t y = 0; y < kCrop; ++y) {
      for (int64_t x = 0; x < kCrop; ++x) {
        const int64_t i = (z * kCrop + y) * kCrop + x;
        c.image[static_cast<size_t>(i)] = static_cast<float>((x * 7 + y * 3 + z) % 11) / 11.0f;
        c.seg[static_cast<size_t>(i)] = static_cast<int16_t>((x + y) / 9 % 3);
        int16_t prev = 0;
        if (z > 3 && z < 12 && y > 2 && y < 9 && x > 4 && x < 14)
          prev = 1;
        if (z > 9 && y > 11 && x > 1 && x < 6)
          prev = 2;
        if (x == 0)
          prev = -1;
        c.seg[static_cast<size_t>(kVoxels + i)] = prev;
      }
    }
  }
  return c;
}

NnUNetAugmentConfig CascadeConfigFor(double p_binary, double p_remove) {
  NnUNetAugmentConfig c = NnUNetAugmentConfig::Default(kPatch);
  c.spatial.p_rotation = 1.0;  // the interpolating path, both segmentation channels
  c.cascade.foreground_labels = {1, 2};
  c.cascade.binary_operator.p_apply = p_binary;
  c.cascade.remove_component.p_apply = p_remove;
  return c;
}

struct Output {
  std::vector<float> image = std::vector<float>(3 * kPatchVoxels);
  std::vector<int16_t> seg = std::vector<int16_t>(2 * kPatchVoxels);
  SampleView<float> image_view() { return SampleView<float>::Contiguous(image.data(), 3, kPatch); }
  SampleView<int16_t> seg_view() { return SampleView<int16_t>::Contiguous(seg.data(), 2, kPatch); }
};

Status RunCascade(const NnUNetAugmentConfig& config, const StreamId& id, CascadeCrop& crop,
                  Output& out) {
  const NnUNetAugmentParams params = DrawNnUNetAugmentParams(config, id, 1);
  NnUNetAugmentScratch scratch;
  return ApplyNnUNetAugment(params, config, id,
                            SampleView<const float>::Contiguous(crop.image.data(), 1, kCropShape),
                            SampleView<const int16_t>::Contiguous(crop.seg.data(), 2, kCropShape),
                            out.image_view(), out.seg_view(), scratch);
}

TEST(NnUNetCascadeTest, OneHotChannelsComeFromTheTransformedPreviousStage) {
  CascadeCrop crop = MakeCascadeCrop();
  const NnUNetAugmentConfig cascade = CascadeConfigFor(0.0, 0.0);
  NnUNetAugmentConfig plain = NnUNetAugmentConfig::Default(kPatch);
  plain.spatial.p_rotation = 1.0;
  int foreground = 0;
  for (uint32_t j = 0; j < 8; ++j) {
    SCOPED_TRACE(j);
    const StreamId id{.seed = 5, .position = j};
    Output out;
    ASSERT_OK(RunCascade(cascade, id, crop, out));
    // The crop's channel and segmentation are what the pipeline without the cascade gives.
    std::vector<float> image(kPatchVoxels);
    std::vector<int16_t> seg(kPatchVoxels);
    NnUNetAugmentScratch scratch;
    ASSERT_OK(
        ApplyNnUNetAugment(DrawNnUNetAugmentParams(plain, id, 1), plain, id,
                           SampleView<const float>::Contiguous(crop.image.data(), 1, kCropShape),
                           SampleView<const int16_t>::Contiguous(crop.seg.data(), 1, kCropShape),
                           SampleView<float>::Contiguous(image.data(), 1, kPatch),
                           SampleView<int16_t>::Contiguous(seg.data(), 1, kPatch), scratch));
    ASSERT_EQ(std::memcmp(out.image.data(), image.data(), image.size() * sizeof(float)), 0);
    ASSERT_TRUE(std::equal(seg.begin(), seg.end(), out.seg.begin()));
    // One-hot channel k is (previous stage == label k), after label removal (no -1 left).
    for (int64_t i = 0; i < kPatchVoxels; ++i) {
      const int16_t prev = out.seg[static_cast<size_t>(kPatchVoxels + i)];
      ASSERT_GE(prev, 0);
      for (int64_t k = 0; k < 2; ++k) {
        const float v = out.image[static_cast<size_t>((1 + k) * kPatchVoxels + i)];
        ASSERT_EQ(v, prev == k + 1 ? 1.0f : 0.0f);
        foreground += v == 1.0f;
      }
    }
  }
  EXPECT_GT(foreground, 0);
}

TEST(NnUNetCascadeTest, RandomStepsApplyTheirDraws) {
  CascadeCrop crop = MakeCascadeCrop();
  const NnUNetAugmentConfig config = CascadeConfigFor(1.0, 1.0);
  int changed = 0;
  for (uint32_t j = 0; j < 12; ++j) {
    SCOPED_TRACE(j);
    const StreamId id{.seed = 9, .position = j};
    const NnUNetAugmentParams params = DrawNnUNetAugmentParams(config, id, 1);
    ASSERT_TRUE(params.binary_operator.apply && params.remove_component.apply);
    Output out;
    ASSERT_OK(RunCascade(config, id, crop, out));
    // The same steps by hand on the one-hot of the output's previous-stage channel.
    std::vector<float> want(2 * kPatchVoxels);
    const SampleView<float> onehot = SampleView<float>::Contiguous(want.data(), 2, kPatch);
    const std::vector<int16_t> labels{1, 2};
    ASSERT_OK(ApplySegToOneHot(labels, out.seg_view(), 1, onehot));
    const std::vector<float> plain = want;
    CascadeScratch scratch;
    ASSERT_OK(ApplyBinaryOperators(params.binary_operator, onehot, scratch));
    ASSERT_OK(ApplyRemoveComponent(params.remove_component, config.cascade.remove_component, onehot,
                                   scratch));
    ASSERT_TRUE(std::equal(want.begin(), want.end(), out.image.begin() + kPatchVoxels));
    changed += want != plain;
  }
  EXPECT_GT(changed, 3);
}

TEST(NnUNetCascadeTest, CascadeDrawsLeaveTheOtherDrawsAlone) {
  const NnUNetAugmentConfig cascade = CascadeConfigFor(0.4, 0.2);
  NnUNetAugmentConfig plain = cascade;
  plain.cascade = CascadeConfig();
  for (uint32_t j = 0; j < 20; ++j) {
    const StreamId id{.seed = 2, .position = j};
    const NnUNetAugmentParams a = DrawNnUNetAugmentParams(cascade, id, 1);
    const NnUNetAugmentParams b = DrawNnUNetAugmentParams(plain, id, 1);
    EXPECT_EQ(std::memcmp(&a.spatial, &b.spatial, sizeof(a.spatial)), 0);
    EXPECT_EQ(a.mirror.flip, b.mirror.flip);
    EXPECT_FALSE(b.binary_operator.apply || b.remove_component.apply);
  }
}

TEST(NnUNetCascadeTest, WrongChannelCountsAreErrors) {
  CascadeCrop crop = MakeCascadeCrop();
  const NnUNetAugmentConfig config = CascadeConfigFor(0.4, 0.2);
  const StreamId id{.seed = 1};
  const NnUNetAugmentParams params = DrawNnUNetAugmentParams(config, id, 1);
  NnUNetAugmentScratch scratch;
  Output out;
  EXPECT_THAT(
      ApplyNnUNetAugment(
          params, config, id, SampleView<const float>::Contiguous(crop.image.data(), 1, kCropShape),
          SampleView<const int16_t>::Contiguous(crop.seg.data(), 1, kCropShape), out.image_view(),
          SampleView<int16_t>::Contiguous(out.seg.data(), 1, kPatch), scratch),
      StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("needs 2 channels")));
  EXPECT_THAT(
      ApplyNnUNetAugment(
          params, config, id, SampleView<const float>::Contiguous(crop.image.data(), 1, kCropShape),
          SampleView<const int16_t>::Contiguous(crop.seg.data(), 2, kCropShape),
          SampleView<float>::Contiguous(out.image.data(), 2, kPatch), out.seg_view(), scratch),
      StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("one-hot channels")));
}

TEST(NnUNetCascadeTest, ValidationNamesTheBadSetting) {
  NnUNetAugmentConfig c = CascadeConfigFor(0.4, 0.2);
  EXPECT_OK(ValidateNnUNetAugmentConfig(c));
  c.cascade.binary_operator.strel_size = {3, 2};
  EXPECT_THAT(ValidateNnUNetAugmentConfig(c),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("strel size")));
  c = CascadeConfigFor(0.4, 1.5);
  EXPECT_THAT(ValidateNnUNetAugmentConfig(c),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("p_remove_component")));
  c = CascadeConfigFor(0.4, 0.2);
  c.cascade.binary_operator.operators = {false, false, false, false};
  EXPECT_THAT(ValidateNnUNetAugmentConfig(c),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("no binary operator")));
  c = CascadeConfigFor(0.4, 0.2);
  c.cascade.foreground_labels.assign(kMaxChannels + 1, 1);
  EXPECT_THAT(ValidateNnUNetAugmentConfig(c),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("foreground labels")));
}

}  // namespace
}  // namespace patchfeed::augment
