// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Known-answer tests of MaskImage, RemoveLabel, region conversion and deep-supervision
// downsampling.

#include "augment/intensity/label_transforms.h"

#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "augment/intensity/deep_supervision.h"

namespace patchfeed::augment {
namespace {

using ::testing::ElementsAre;

template <typename T>
SampleView<T> View(std::vector<T>& v, int64_t channels, std::vector<int64_t> spatial) {
  return SampleView<T>::Contiguous(v.data(), channels, spatial);
}

TEST(RemoveLabel, MinusOneBecomesZeroInAllChannels) {
  std::vector<int16_t> s = {-1, 0, 1, -1, 2, -1, -2, 3};
  ASSERT_TRUE(ApplyRemoveLabel(View(s, 2, {2, 2})).ok());
  EXPECT_THAT(s, ElementsAre(0, 0, 1, 0, 2, 0, -2, 3));
}

TEST(MaskImage, ZeroesListedChannelsWhereSegIsNegative) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<int16_t> s = {-1, 0, 2, -1};
  const std::vector<int64_t> channels = {1};
  ASSERT_TRUE(ApplyMaskImage(channels, View(s, 1, {2, 2}), View(x, 2, {2, 2})).ok());
  EXPECT_THAT(x, ElementsAre(1, 2, 3, 4, 0, 6, 7, 0));
  const std::vector<int64_t> bad = {2};
  EXPECT_EQ(ApplyMaskImage(bad, View(s, 1, {2, 2}), View(x, 2, {2, 2})).code(),
            StatusCode::kInvalidArgument);
}

TEST(Regions, OneChannelPerRegion) {
  std::vector<int16_t> s = {0, 1, 2, 3};
  const std::vector<std::vector<int64_t>> regions = {{1, 2, 3}, {2, 3}, {3}};
  Result<RegionTable> table = RegionTable::Create(regions);
  ASSERT_TRUE(table.ok());
  std::vector<uint8_t> out(12, 7);
  ASSERT_TRUE(ApplySegmentationToRegions(*table, View(s, 1, {2, 2}), View(out, 3, {2, 2})).ok());
  EXPECT_THAT(out, ElementsAre(0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1));
}

TEST(Regions, RejectsBadTables) {
  EXPECT_FALSE(RegionTable::Create(std::vector<std::vector<int64_t>>{}).ok());
  EXPECT_FALSE(RegionTable::Create(std::vector<std::vector<int64_t>>{{}}).ok());
  EXPECT_FALSE(RegionTable::Create(std::vector<std::vector<int64_t>>{{40000}}).ok());
}

TEST(DeepSupervision, ShapesForNnUnetScales) {
  const std::vector<int64_t> shape = {128, 128, 128};
  std::vector<int64_t> got;
  for (double s : {1.0, 0.5, 0.25, 0.125, 0.0625}) {
    DeepSupervisionScale scale;
    scale.factor[0] = scale.factor[1] = scale.factor[2] = s;
    int64_t out[3];
    ASSERT_TRUE(DeepSupervisionShape(scale, shape, out).ok());
    got.push_back(out[0]);
    EXPECT_EQ(IsIdentityScale(scale, 3), s == 1.0);
  }
  EXPECT_THAT(got, ElementsAre(128, 64, 32, 16, 8));
  DeepSupervisionScale anisotropic;
  anisotropic.factor[0] = 1.0;
  anisotropic.factor[1] = anisotropic.factor[2] = 0.5;
  int64_t out[3];
  ASSERT_TRUE(DeepSupervisionShape(anisotropic, std::vector<int64_t>{5, 7, 9}, out).ok());
  EXPECT_THAT(out, ElementsAre(5, 4, 4));  // 3.5 -> 4, 4.5 -> 4 (half to even)
}

TEST(DeepSupervision, NearestExactPicksOddIndicesAtHalfScale) {
  std::vector<int16_t> s(4 * 4);
  for (int i = 0; i < 16; ++i)
    s[i] = static_cast<int16_t>(i);
  std::vector<int16_t> out(4);
  AugmentScratch scratch;
  ASSERT_TRUE(
      DownsampleSegNearestExact<int16_t>(View(s, 1, {4, 4}), View(out, 1, {2, 2}), scratch).ok());
  EXPECT_THAT(out, ElementsAre(5, 7, 13, 15));  // rows 1, 3 x columns 1, 3
}

TEST(DeepSupervision, StridedInputAndMultipleChannels) {
  // Two channels of 3x6 viewed with a channel stride larger than the channel.
  std::vector<uint8_t> s(2 * 20);
  for (int i = 0; i < 40; ++i)
    s[i] = static_cast<uint8_t>(i);
  SampleView<uint8_t> v = View(s, 2, {3, 6});
  v.channel_stride = 20;
  std::vector<uint8_t> out(2 * 3);
  AugmentScratch scratch;
  ASSERT_TRUE(DownsampleSegNearestExact<uint8_t>(v, View(out, 2, {1, 3}), scratch).ok());
  // Axis 0: 3 -> 1 reads index floor(0.5 * 3) = 1; axis 1: 6 -> 3 reads 1, 3, 5.
  EXPECT_THAT(out, ElementsAre(7, 9, 11, 27, 29, 31));
}

}  // namespace
}  // namespace patchfeed::augment
