// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// The nnU-Net pipeline: nnU-Net's defaults, draws keyed by the sample alone, the crop window
// (resampling only the window equals resampling the whole crop, 3D and dummy 2D), and dummy
// 2D as per-slice 2D transforms.

#include "augment/nnunet_pipeline.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <random>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/testutil/status_matchers.h"

namespace patchfeed::augment {
namespace {

struct Crop {
  std::vector<int64_t> shape;  // spatial
  std::vector<float> image;
  std::vector<int16_t> seg;
};

Crop MakeCrop(std::vector<int64_t> shape, uint32_t seed) {
  Crop c{std::move(shape), {}, {}};
  int64_t n = 1;
  for (const int64_t s : c.shape)
    n *= s;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  c.image.resize(static_cast<size_t>(n));
  c.seg.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    c.image[static_cast<size_t>(i)] = std::sin(0.1f * static_cast<float>(i % 97)) + 0.1f * u(rng);
    c.seg[static_cast<size_t>(i)] = static_cast<int16_t>((i / 7) % 4 - 1);  // labels -1..2
  }
  return c;
}

TEST(NnUNetPipelineTest, DefaultsAreNnUNets) {
  const NnUNetAugmentConfig c3 = NnUNetAugmentConfig::Default(std::vector<int64_t>{128, 96, 64});
  EXPECT_EQ(c3.spatial_dims, 3);
  EXPECT_EQ(c3.patch_size, (std::array<int64_t, 3>{128, 96, 64}));
  EXPECT_DOUBLE_EQ(c3.spatial.p_rotation, 0.2);
  EXPECT_DOUBLE_EQ(c3.spatial.p_scaling, 0.2);
  EXPECT_DOUBLE_EQ(c3.noise.p_apply, 0.1);
  EXPECT_DOUBLE_EQ(c3.blur.p_apply, 0.2);
  EXPECT_DOUBLE_EQ(c3.brightness.p_apply, 0.15);
  EXPECT_DOUBLE_EQ(c3.contrast.p_apply, 0.15);
  EXPECT_DOUBLE_EQ(c3.low_resolution.p_apply, 0.25);
  EXPECT_DOUBLE_EQ(c3.gamma_inverted.p_apply, 0.1);
  EXPECT_DOUBLE_EQ(c3.gamma_inverted.p_invert, 1.0);
  EXPECT_DOUBLE_EQ(c3.gamma.p_apply, 0.3);
  EXPECT_DOUBLE_EQ(c3.gamma.p_invert, 0.0);
  EXPECT_EQ(c3.mirror_axes, (std::array<bool, 3>{true, true, true}));
  EXPECT_TRUE(c3.remove_label);
  const NnUNetAugmentConfig c2 = NnUNetAugmentConfig::Default(std::vector<int64_t>{256, 224});
  EXPECT_EQ(c2.spatial_dims, 2);
  EXPECT_EQ(c2.mirror_axes, (std::array<bool, 3>{true, true, false}));
  const NnUNetAugmentConfig d2 = NnUNetAugmentConfig::Default(std::vector<int64_t>{20, 128, 128},
                                                              std::numbers::pi, /*dummy_2d=*/true);
  EXPECT_TRUE(d2.dummy_2d);
  EXPECT_EQ(d2.spatial.spatial_dims, 2);
  EXPECT_TRUE(d2.low_resolution.ignore_axis[0]);
}

TEST(NnUNetPipelineTest, ValidationNamesTheBadSetting) {
  const NnUNetAugmentConfig good = NnUNetAugmentConfig::Default(std::vector<int64_t>{32, 32, 32});
  EXPECT_OK(ValidateNnUNetAugmentConfig(good));
  NnUNetAugmentConfig c = good;
  c.gamma.p_apply = 1.5;
  EXPECT_THAT(ValidateNnUNetAugmentConfig(c),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("p_gamma")));
  c = good;
  c.spatial.rotation[1] = {std::nan(""), 0.5};
  EXPECT_THAT(ValidateNnUNetAugmentConfig(c),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("rotation range")));
  c = good;
  c.spatial.scaling = {1.4, 0.7};
  EXPECT_THAT(ValidateNnUNetAugmentConfig(c),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("scaling range")));
  c = good;
  c.patch_size[2] = 0;
  EXPECT_THAT(ValidateNnUNetAugmentConfig(c),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("patch size")));
}

TEST(NnUNetPipelineTest, DrawsDependOnlyOnTheSample) {
  const NnUNetAugmentConfig c = NnUNetAugmentConfig::Default(std::vector<int64_t>{32, 32, 32});
  int differ = 0;
  for (uint32_t j = 0; j < 50; ++j) {
    const StreamId id{.seed = 3, .epoch = 1, .batch = 7, .position = j};
    const NnUNetAugmentParams a = DrawNnUNetAugmentParams(c, id, 2);
    const NnUNetAugmentParams b = DrawNnUNetAugmentParams(c, id, 2);
    EXPECT_EQ(std::memcmp(&a.spatial, &b.spatial, sizeof(a.spatial)), 0);
    EXPECT_EQ(a.mirror.flip, b.mirror.flip);
    StreamId other = id;
    ++other.batch;
    differ += DrawNnUNetAugmentParams(c, other, 2).mirror.flip != a.mirror.flip;
  }
  EXPECT_GT(differ, 25);  // 7/8 of flips differ between independent draws
}

// Resampling only NnUNetSpatialWindow's window of a crop equals resampling the whole crop,
// bit for bit, for many random rotations and scales, 3D and dummy 2D.
TEST(NnUNetPipelineTest, WindowEqualsWholeCrop) {
  for (const bool dummy_2d : {false, true}) {
    const std::vector<int64_t> crop_shape =
        dummy_2d ? std::vector<int64_t>{6, 41, 37} : std::vector<int64_t>{33, 41, 37};
    const std::vector<int64_t> patch =
        dummy_2d ? std::vector<int64_t>{6, 16, 18} : std::vector<int64_t>{16, 14, 18};
    NnUNetAugmentConfig config =
        NnUNetAugmentConfig::Default(patch, std::numbers::pi / 6, dummy_2d);
    config.spatial.p_rotation = 0.7;
    config.spatial.p_scaling = 0.7;
    const Crop crop = MakeCrop(crop_shape, dummy_2d ? 2 : 1);
    int64_t np = 1;
    for (const int64_t p : patch)
      np *= p;
    int windowed = 0;
    for (uint32_t j = 0; j < 40; ++j) {
      SCOPED_TRACE(std::string(dummy_2d ? "dummy 2D" : "3D") + " sample " + std::to_string(j));
      const StreamId id{.seed = 9, .position = j};
      const NnUNetAugmentParams params = DrawNnUNetAugmentParams(config, id, 1);
      if (!params.spatial.transforms())
        continue;
      NnUNetAugmentScratch scratch;
      std::vector<float> want_image(static_cast<size_t>(np)), got_image(want_image.size());
      std::vector<int16_t> want_seg(static_cast<size_t>(np)), got_seg(want_seg.size());
      ASSERT_OK(ApplyNnUNetSpatial(
          params, config, SampleView<const float>::Contiguous(crop.image.data(), 1, crop_shape),
          SampleView<const int16_t>::Contiguous(crop.seg.data(), 1, crop_shape),
          SampleView<float>::Contiguous(want_image.data(), 1, patch),
          SampleView<int16_t>::Contiguous(want_seg.data(), 1, patch), scratch));
      // Copy the window out of the crop, then resample from it alone.
      const CropWindow w = NnUNetSpatialWindow(params, config, crop_shape);
      windowed +=
          w.shape[0] * w.shape[1] * w.shape[2] < crop_shape[0] * crop_shape[1] * crop_shape[2];
      std::vector<float> wimage;
      std::vector<int16_t> wseg;
      for (int64_t a = 0; a < w.shape[0]; ++a)
        for (int64_t b = 0; b < w.shape[1]; ++b)
          for (int64_t c = 0; c < w.shape[2]; ++c) {
            const int64_t i =
                ((w.origin[0] + a) * crop_shape[1] + w.origin[1] + b) * crop_shape[2] +
                w.origin[2] + c;
            wimage.push_back(crop.image[static_cast<size_t>(i)]);
            wseg.push_back(crop.seg[static_cast<size_t>(i)]);
          }
      const std::vector<int64_t> wshape(w.shape.begin(), w.shape.end());
      ASSERT_OK(ApplyNnUNetSpatialWindow(
          params, config, crop_shape, w,
          SampleView<const float>::Contiguous(wimage.data(), 1, wshape),
          SampleView<const int16_t>::Contiguous(wseg.data(), 1, wshape),
          SampleView<float>::Contiguous(got_image.data(), 1, patch),
          SampleView<int16_t>::Contiguous(got_seg.data(), 1, patch), scratch));
      ASSERT_EQ(std::memcmp(got_image.data(), want_image.data(), want_image.size() * 4), 0);
      ASSERT_EQ(got_seg, want_seg);
    }
    EXPECT_GT(windowed, 5);
  }
}

// The steps after the spatial one equal the transforms applied one by one in nnU-Net's order,
// bit for bit: folding a gamma's last pass into the mirroring changes no value. Gammas are
// drawn often, with and without inversion and retained statistics, on 3 channels.
TEST(NnUNetPipelineTest, AfterSpatialEqualsTransformsOneByOne) {
  const std::vector<int64_t> patch{9, 10, 11};
  NnUNetAugmentConfig config = NnUNetAugmentConfig::Default(patch, std::numbers::pi / 6, false);
  config.noise.p_apply = 0;  // its field comes from the pipeline's own stream
  config.gamma.p_apply = 0.7;
  config.gamma.p_per_channel = 0.7;
  config.gamma.p_retain_stats = 0.5;
  config.gamma_inverted.p_apply = 0.5;
  config.gamma_inverted.p_retain_stats = 0.5;
  const int64_t channels = 3;
  const Crop crop = MakeCrop({channels * patch[0], patch[1], patch[2]}, 3);
  int fused = 0;
  for (uint32_t j = 0; j < 60; ++j) {
    SCOPED_TRACE("sample " + std::to_string(j));
    const StreamId id{.seed = 4, .position = j};
    const NnUNetAugmentParams params = DrawNnUNetAugmentParams(config, id, channels);
    const MirrorParams& m = params.mirror;
    fused += (params.gamma.apply || params.gamma_inverted.apply) &&
             (m.flip[0] || m.flip[1] || m.flip[2]);
    std::vector<float> want = crop.image, got = crop.image;
    std::vector<int16_t> want_seg(crop.seg.begin(), crop.seg.begin() + 990), got_seg = want_seg;
    const auto image = [&](std::vector<float>& v) {
      return SampleView<float>::Contiguous(v.data(), channels, patch);
    };
    const auto seg = [&](std::vector<int16_t>& v) {
      return SampleView<int16_t>::Contiguous(v.data(), 1, patch);
    };
    NnUNetAugmentScratch scratch;
    ASSERT_OK(ApplyNnUNetAfterSpatial(params, config, id, image(got), seg(got_seg), scratch));
    ASSERT_OK(ApplyGaussianBlur(params.blur, image(want), scratch.intensity));
    ASSERT_OK(ApplyBrightness(params.brightness, image(want)));
    ASSERT_OK(ApplyContrast(params.contrast, image(want)));
    ASSERT_OK(ApplyLowResolution(params.low_resolution, image(want), scratch.intensity));
    ASSERT_OK(ApplyGamma(params.gamma_inverted, image(want)));
    ASSERT_OK(ApplyGamma(params.gamma, image(want)));
    ASSERT_OK(ApplyMirror(m, image(want)));
    ASSERT_OK(ApplyMirror(m, seg(want_seg)));
    ASSERT_OK(ApplyRemoveLabel(seg(want_seg)));
    ASSERT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0);
    ASSERT_EQ(got_seg, want_seg);
  }
  EXPECT_GT(fused, 15);
}

// The pieces of ApplyNnUNetAfterSpatial (each image channel's transforms, the segmentation's
// mirroring) run at once on their own threads, started last first, give the serial bytes: noise
// on some channels (each piece skips to its own normals), every other transform often.
TEST(NnUNetPipelineTest, AfterSpatialPiecesAtOnceGiveTheSerialResult) {
  const std::vector<int64_t> patch{9, 10, 11};
  NnUNetAugmentConfig config = NnUNetAugmentConfig::Default(patch, std::numbers::pi / 6, false);
  config.noise.p_apply = 0.8;
  config.noise.p_per_channel = 0.6;
  config.blur.p_apply = config.brightness.p_apply = config.contrast.p_apply = 0.6;
  config.low_resolution.p_apply = 0.5;
  config.gamma.p_apply = config.gamma_inverted.p_apply = 0.5;
  const PieceRunner at_once([](int64_t count, const PieceRunner::Body& body) {
    std::vector<std::thread> threads;
    for (int64_t i = count - 1; i >= 0; --i) {
      threads.emplace_back([&body, i] { body(i); });
    }
    for (std::thread& t : threads) {
      t.join();
    }
  });
  const int64_t channels = 3;
  const Crop crop = MakeCrop({channels * patch[0], patch[1], patch[2]}, 3);
  int noisy = 0;
  for (uint32_t j = 0; j < 40; ++j) {
    SCOPED_TRACE("sample " + std::to_string(j));
    const StreamId id{.seed = 5, .position = j};
    const NnUNetAugmentParams params = DrawNnUNetAugmentParams(config, id, channels);
    noisy += params.noise.apply && params.noise.channels.count() < channels;
    std::vector<float> serial = crop.image, pieces = crop.image;
    std::vector<int16_t> serial_seg(crop.seg.begin(), crop.seg.begin() + 990),
        pieces_seg = serial_seg;
    NnUNetAugmentScratch scratch;
    ASSERT_OK(ApplyNnUNetAfterSpatial(
        params, config, id, SampleView<float>::Contiguous(serial.data(), channels, patch),
        SampleView<int16_t>::Contiguous(serial_seg.data(), 1, patch), scratch));
    ASSERT_OK(ApplyNnUNetAfterSpatial(
        params, config, id, SampleView<float>::Contiguous(pieces.data(), channels, patch),
        SampleView<int16_t>::Contiguous(pieces_seg.data(), 1, patch), scratch, at_once));
    ASSERT_EQ(std::memcmp(serial.data(), pieces.data(), serial.size() * sizeof(float)), 0);
    ASSERT_EQ(serial_seg, pieces_seg);
  }
  EXPECT_GT(noisy, 3) << "too few samples with noise on some channels only";
}

// Dummy 2D: every slice of axis 0 is transformed like a channel of a 2D sample.
TEST(NnUNetPipelineTest, Dummy2DTransformsEverySliceIn2D) {
  const std::vector<int64_t> crop_shape{4, 30, 26}, patch{4, 20, 16};
  NnUNetAugmentConfig config =
      NnUNetAugmentConfig::Default(patch, std::numbers::pi, /*dummy_2d=*/true);
  config.spatial.p_rotation = 1;
  const Crop crop = MakeCrop(crop_shape, 5);
  const NnUNetAugmentParams params = DrawNnUNetAugmentParams(config, StreamId{.seed = 1}, 1);
  ASSERT_TRUE(params.spatial.do_rotation);
  NnUNetAugmentScratch scratch;
  std::vector<float> image(4 * 20 * 16);
  std::vector<int16_t> seg(image.size());
  ASSERT_OK(ApplyNnUNetSpatial(
      params, config, SampleView<const float>::Contiguous(crop.image.data(), 1, crop_shape),
      SampleView<const int16_t>::Contiguous(crop.seg.data(), 1, crop_shape),
      SampleView<float>::Contiguous(image.data(), 1, patch),
      SampleView<int16_t>::Contiguous(seg.data(), 1, patch), scratch));
  const std::vector<int64_t> slice_in{30, 26}, slice_out{20, 16};
  for (int z = 0; z < 4; ++z) {
    std::vector<float> want_image(20 * 16);
    std::vector<int16_t> want_seg(want_image.size());
    ASSERT_OK(ApplySpatialTransform(
        params.spatial, config.spatial,
        SampleView<const float>::Contiguous(crop.image.data() + z * 30 * 26, 1, slice_in),
        SampleView<const int16_t>::Contiguous(crop.seg.data() + z * 30 * 26, 1, slice_in),
        SampleView<float>::Contiguous(want_image.data(), 1, slice_out),
        SampleView<int16_t>::Contiguous(want_seg.data(), 1, slice_out), scratch.spatial));
    EXPECT_EQ(std::memcmp(image.data() + z * 320, want_image.data(), 320 * 4), 0) << "slice " << z;
    EXPECT_EQ(std::memcmp(seg.data() + z * 320, want_seg.data(), 320 * 2), 0) << "slice " << z;
  }
}

}  // namespace
}  // namespace patchfeed::augment
