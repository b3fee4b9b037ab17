// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Tests of SpatialTransform: exact crops and right-angle maps, the label tie rules, shape
// errors and the random draws. Agreement with batchgeneratorsv2 itself is tested in
// tests/python/test_augment_spatial.py.

#include "augment/spatial/spatial_transform.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "augment/spatial/elastic.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::augment {
namespace {

using ::testing::HasSubstr;

// A sample of C-contiguous image and label buffers with their views.
struct Sample {
  Sample(int64_t channels, std::vector<int64_t> spatial, int64_t seg_channels = 1)
      : shape(std::move(spatial)) {
    int64_t n = 1;
    for (int64_t s : shape) {
      n *= s;
    }
    image.resize(channels * n);
    seg.resize(seg_channels * n);
    for (size_t i = 0; i < image.size(); ++i) {
      image[i] = static_cast<float>(i) * 0.5f - 3.0f;
    }
    for (size_t i = 0; i < seg.size(); ++i) {
      seg[i] = static_cast<int16_t>((i * 7919) % 5) - 1;  // -1..3
    }
    image_view = SampleView<float>::Contiguous(image.data(), channels, shape);
    seg_view = SampleView<int16_t>::Contiguous(seg.data(), seg_channels, shape);
  }
  std::vector<int64_t> shape;
  std::vector<float> image;
  std::vector<int16_t> seg;
  SampleView<float> image_view;
  SampleView<int16_t> seg_view;
};

SpatialParams RotationParams(double a0, double a1, double a2) {
  SpatialParams p;
  p.do_rotation = true;
  p.angles = {a0, a1, a2};
  return p;
}

Status RunTransform(const SpatialParams& p, const SpatialConfig& config, Sample& in, Sample& out) {
  SpatialScratch scratch;
  return ApplySpatialTransform(p, config, in.image_view, in.seg_view, out.image_view, out.seg_view,
                               scratch);
}

TEST(SpatialTransformTest, NoTransformIsAFloorCentredCrop) {
  Sample in(2, {10, 11, 13});
  Sample out(2, {6, 7, 8});
  const SpatialConfig config = NnUnetSpatialConfig(out.shape);
  ASSERT_OK(RunTransform(SpatialParams{}, config, in, out));
  // start = floor(S/2) - floor(P/2) = (2, 2, 2)
  for (int64_t c = 0; c < 2; ++c) {
    for (int64_t i = 0; i < 6; ++i) {
      for (int64_t j = 0; j < 7; ++j) {
        for (int64_t k = 0; k < 8; ++k) {
          ASSERT_EQ(out.image_view.at(c, i, j, k), in.image_view.at(c, i + 2, j + 2, k + 2));
          if (c == 0) {
            ASSERT_EQ(out.seg_view.at(0, i, j, k), in.seg_view.at(0, i + 2, j + 2, k + 2));
          }
        }
      }
    }
  }
}

TEST(SpatialTransformTest, CropPadsWithZeroAndSegPadding) {
  Sample in(1, {3, 4});
  Sample out(1, {5, 4});
  const SpatialConfig config = NnUnetSpatialConfig(out.shape);
  ASSERT_OK(RunTransform(SpatialParams{}, config, in, out));
  // start = (1 - 2, 2 - 2) = (-1, 0): first and last output rows are padding.
  for (int64_t j = 0; j < 4; ++j) {
    EXPECT_EQ(out.image_view.at(0, 0, j), 0.0f);
    EXPECT_EQ(out.image_view.at(0, 4, j), 0.0f);
    EXPECT_EQ(out.seg_view.at(0, 0, j), -1);
    EXPECT_EQ(out.seg_view.at(0, 4, j), -1);
    for (int64_t i = 1; i < 4; ++i) {
      EXPECT_EQ(out.image_view.at(0, i, j), in.image_view.at(0, i - 1, j));
      EXPECT_EQ(out.seg_view.at(0, i, j), in.seg_view.at(0, i - 1, j));
    }
  }
}

TEST(SpatialTransformTest, ZeroRotationWithIntegralOffsetReproducesCrop) {
  // S - P even: x(i) = i + (S - P)/2 lands on voxel centres, so interpolation is exact.
  Sample in(1, {12, 10, 14});
  Sample out(1, {8, 6, 10});
  for (SegInterpolation mode : {SegInterpolation::kLinear, SegInterpolation::kNearest}) {
    SpatialConfig config = NnUnetSpatialConfig(out.shape);
    config.seg_mode = mode;
    ASSERT_OK(RunTransform(RotationParams(0, 0, 0), config, in, out));
    for (int64_t i = 0; i < 8; ++i) {
      for (int64_t j = 0; j < 6; ++j) {
        for (int64_t k = 0; k < 10; ++k) {
          ASSERT_EQ(out.image_view.at(0, i, j, k), in.image_view.at(0, i + 2, j + 2, k + 2));
          ASSERT_EQ(out.seg_view.at(0, i, j, k), in.seg_view.at(0, i + 2, j + 2, k + 2));
        }
      }
    }
  }
}

TEST(SpatialTransformTest, QuarterTurnsMapVoxelsExactly3D) {
  // Cubic S = P + 2 keeps every position inside; x(i) = A (i - c_P) + c_P + 1.
  const int64_t n = 6;
  Sample in(1, {n + 2, n + 2, n + 2});
  Sample out(1, {n, n, n});
  const SpatialConfig config = NnUnetSpatialConfig(out.shape);
  const double q = std::numbers::pi / 2;
  struct Case {
    SpatialParams params;
    // input index for output (i, j, k)
    std::array<int64_t, 3> (*source)(int64_t, int64_t, int64_t);
  };
  const Case cases[] = {
      // Rx(90) rotates (a1, a2): x1 = -(k - c) + c + 1, x2 = (j - c) + c + 1
      {RotationParams(q, 0, 0),
       [](int64_t i, int64_t j, int64_t k) {
         return std::array<int64_t, 3>{i + 1, n - k, j + 1};
       }},
      // Ry(90) rotates (a0, a2): x0 = (k - c) + c + 1, x2 = -(i - c) + c + 1
      {RotationParams(0, q, 0),
       [](int64_t i, int64_t j, int64_t k) {
         return std::array<int64_t, 3>{k + 1, j + 1, n - i};
       }},
      // Rz(90) rotates (a0, a1): x0 = -(j - c) + c + 1, x1 = (i - c) + c + 1
      {RotationParams(0, 0, q),
       [](int64_t i, int64_t j, int64_t k) {
         return std::array<int64_t, 3>{n - j, i + 1, k + 1};
       }},
  };
  for (const Case& tc : cases) {
    ASSERT_OK(RunTransform(tc.params, config, in, out));
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t k = 0; k < n; ++k) {
          const auto s = tc.source(i, j, k);
          ASSERT_EQ(out.image_view.at(0, i, j, k), in.image_view.at(0, s[0], s[1], s[2]));
          ASSERT_EQ(out.seg_view.at(0, i, j, k), in.seg_view.at(0, s[0], s[1], s[2]));
        }
      }
    }
  }
}

TEST(SpatialTransformTest, QuarterTurnIn2DUsesOnlyTheLastAngle) {
  const int64_t n = 5;
  Sample in(1, {n + 2, n + 2});
  Sample out(1, {n, n});
  const SpatialConfig config = NnUnetSpatialConfig(out.shape);
  // angles[0] is drawn but ignored in 2D, as in batchgeneratorsv2.
  ASSERT_OK(RunTransform(RotationParams(0.7, std::numbers::pi / 2, 0), config, in, out));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      // x0 = -(j - c) + c + 1 = n - j, x1 = i + 1
      ASSERT_EQ(out.image_view.at(0, i, j), in.image_view.at(0, n - j, i + 1));
      ASSERT_EQ(out.seg_view.at(0, i, j), in.seg_view.at(0, n - j, i + 1));
    }
  }
}

TEST(SpatialTransformTest, EqualLabelScoresGoToTheLowerLabel) {
  // S - P = 1: x1 = j + 0.5, halfway between columns, so two labels score 500 each.
  Sample in(1, {4, 4});
  Sample out(1, {3, 3});
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      in.seg_view.at(0, i, j) = static_cast<int16_t>(j < 2 ? 3 : 1);
    }
  }
  const SpatialConfig config = NnUnetSpatialConfig(out.shape);
  ASSERT_OK(RunTransform(RotationParams(0, 0, 0), config, in, out));
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(out.seg_view.at(0, i, 0), 3);  // 1000 vs 0
    EXPECT_EQ(out.seg_view.at(0, i, 1), 1);  // 500 vs 500: the lower label
    EXPECT_EQ(out.seg_view.at(0, i, 2), 1);
  }
}

TEST(SpatialTransformTest, FarOutsideVoxelsGetPaddingOrTheLowestLabel) {
  // Scale 4 maps most of the output far outside the 4x4 input.
  Sample in(1, {4, 4});
  Sample out(1, {12, 12});
  for (auto& v : in.seg) {
    v = 3;
  }
  in.seg[5] = 2;  // an interior voxel: the channel's lowest label is 2
  SpatialParams p;
  p.do_scale = true;
  p.scales = {4, 4, 4};
  SpatialConfig config = NnUnetSpatialConfig(out.shape);
  ASSERT_OK(RunTransform(p, config, in, out));
  EXPECT_EQ(out.seg_view.at(0, 0, 0), -1);  // outside: the padding value
  EXPECT_EQ(out.image_view.at(0, 0, 0), 0.0f);
  config.seg_padding_value = 0;  // zero padding: no fix-up, all-zero scores -> lowest label
  ASSERT_OK(RunTransform(p, config, in, out));
  EXPECT_EQ(out.seg_view.at(0, 0, 0), 2);
  EXPECT_EQ(out.seg_view.at(0, 11, 11), 2);
}

TEST(SpatialTransformTest, RejectsBadShapes) {
  Sample in(1, {8, 8, 8});
  Sample out(1, {4, 4, 4});
  Sample wrong(1, {4, 4, 5});
  Sample two_channels(2, {4, 4, 4});
  Sample flat(1, {4, 4});
  const SpatialConfig config = NnUnetSpatialConfig(out.shape);
  const SpatialParams rot = RotationParams(0.1, 0.2, 0.3);
  EXPECT_THAT(RunTransform(rot, config, in, wrong),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("patch size")));
  EXPECT_THAT(RunTransform(rot, config, in, two_channels),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("channels")));
  EXPECT_THAT(RunTransform(rot, config, flat, out),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("spatial dims")));
  Sample other_seg(1, {8, 8, 9});
  in.seg_view = other_seg.seg_view;
  EXPECT_THAT(RunTransform(rot, config, in, out),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("segmentation shape")));
  SpatialParams nan = rot;
  nan.angles[1] = std::nan("");
  Sample fresh(1, {8, 8, 8});
  EXPECT_THAT(RunTransform(nan, config, fresh, out),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("finite")));
  SpatialConfig bad = config;
  bad.spatial_dims = 4;
  EXPECT_THAT(RunTransform(rot, bad, in, out),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("2 or 3")));
}

TEST(SpatialTransformTest, StridedViewsGiveTheSameResult) {
  // The image is a window of a larger buffer and the outputs are slots of padded batch
  // buffers, so image, label and output strides all differ from a dense layout (and from
  // each other: the kernels then compute neighbour offsets per array).
  Sample dense_in(2, {9, 10, 11});
  Sample dense_out(2, {7, 6, 12});
  const SpatialConfig config = NnUnetSpatialConfig(dense_out.shape);
  SpatialParams p = RotationParams(0.4, -0.3, 0.2);
  p.do_scale = true;
  p.scales = {0.9, 0.9, 0.9};
  ASSERT_OK(RunTransform(p, config, dense_in, dense_out));

  const int64_t big[3] = {12, 13, 15};
  std::vector<float> image_buffer(2 * 12 * 13 * 15, 99.0f);
  SampleView<float> image = SampleView<float>::Contiguous(image_buffer.data(), 2, big);
  image.data += 1 * image.strides[0] + 2 * image.strides[1] + 3 * image.strides[2];
  image.shape = {9, 10, 11};
  for (int64_t c = 0; c < 2; ++c) {
    for (int64_t i = 0; i < 9; ++i) {
      for (int64_t j = 0; j < 10; ++j) {
        for (int64_t k = 0; k < 11; ++k) {
          image.at(c, i, j, k) = dense_in.image_view.at(c, i, j, k);
        }
      }
    }
  }
  const int64_t out_shape[3] = {7, 6, 12};
  std::vector<float> image_out_buffer(3 * 7 * 6 * 12);
  std::vector<int16_t> seg_out_buffer(3 * 7 * 6 * 12);
  SampleView<float> image_out =
      SampleView<float>::Contiguous(image_out_buffer.data(), 2, out_shape);
  image_out.channel_stride += 7 * 6 * 12 / 2;  // channels spaced apart, as in a batch slot
  SampleView<int16_t> seg_out =
      SampleView<int16_t>::Contiguous(seg_out_buffer.data(), 1, out_shape);
  seg_out.data += 5;
  SpatialScratch scratch;
  ASSERT_OK(
      ApplySpatialTransform(p, config, image, dense_in.seg_view, image_out, seg_out, scratch));
  for (int64_t c = 0; c < 2; ++c) {
    for (int64_t i = 0; i < 7; ++i) {
      for (int64_t j = 0; j < 6; ++j) {
        for (int64_t k = 0; k < 12; ++k) {
          ASSERT_EQ(image_out.at(c, i, j, k), dense_out.image_view.at(c, i, j, k));
          ASSERT_EQ(seg_out.at(0, i, j, k), dense_out.seg_view.at(0, i, j, k));
        }
      }
    }
  }
}

// The resampling's pieces (columns of 16 x 16 tiles) handed to a PieceRunner that runs them at
// once on their own threads, started last piece first, give the bytes of the serial run: in 3D
// (37 x 20 rows: 3 x 2 pieces, edge tiles cut) and 2D (37 rows: 3), with a zoom that puts voxels
// far outside (the lowest-label fallback, cached per piece).
TEST(SpatialTransformTest, TileColumnsRunAsConcurrentPiecesGiveTheSerialResult) {
  int64_t pieces_seen = 0;
  const PieceRunner concurrent([&](int64_t count, const PieceRunner::Body& body) {
    pieces_seen = count;
    std::vector<std::thread> threads;
    for (int64_t i = count - 1; i >= 0; --i) {
      threads.emplace_back([&body, i] { body(i); });
    }
    for (std::thread& t : threads) {
      t.join();
    }
  });
  for (const std::vector<int64_t>& out_shape :
       {std::vector<int64_t>{37, 20, 35}, std::vector<int64_t>{37, 41}}) {
    const bool three_d = out_shape.size() == 3;
    Sample in(2, three_d ? std::vector<int64_t>{30, 26, 33} : std::vector<int64_t>{30, 33});
    Sample serial(2, out_shape), pieces(2, out_shape);
    SpatialConfig config = NnUnetSpatialConfig(out_shape);
    config.seg_padding_value = 0;
    SpatialParams p = RotationParams(0.4, -0.3, 0.7);
    p.do_scale = true;
    p.scales = {1.6, 1.4, 1.5};  // the patch reaches well outside the input
    SpatialScratch scratch;
    ASSERT_OK(ApplySpatialTransform(p, config, in.image_view, in.seg_view, serial.image_view,
                                    serial.seg_view, scratch));
    ASSERT_OK(ApplySpatialTransform(p, config, in.image_view, in.seg_view, pieces.image_view,
                                    pieces.seg_view, scratch, concurrent));
    EXPECT_EQ(pieces_seen, three_d ? 6 : 3);
    EXPECT_EQ(serial.seg, pieces.seg);
    ASSERT_EQ(serial.image.size(), pieces.image.size());
    EXPECT_EQ(
        std::memcmp(serial.image.data(), pieces.image.data(), serial.image.size() * sizeof(float)),
        0);
  }
}

TEST(SpatialTransformTest, SegmentationMayBeAbsent) {
  Sample in(1, {8, 8, 8}, 0);
  Sample out(1, {4, 4, 4}, 0);
  const SpatialConfig config = NnUnetSpatialConfig(out.shape);
  EXPECT_OK(RunTransform(RotationParams(0.1, 0.2, 0.3), config, in, out));
  EXPECT_OK(RunTransform(SpatialParams{}, config, in, out));
}

TEST(SpatialTransformTest, DrawsFollowNnUnetDistributions) {
  const int64_t patch[3] = {64, 64, 64};
  const SpatialConfig config = NnUnetSpatialConfig(patch, std::numbers::pi / 6);
  constexpr int kDraws = 20000;
  int rotations = 0, scalings = 0;
  int angle_bins[10] = {};
  for (int n = 0; n < kDraws; ++n) {
    CounterRng rng(StreamId{.seed = 3, .position = static_cast<uint32_t>(n), .stream = 1});
    const SpatialParams p = DrawSpatialParams(rng, config, 3);
    EXPECT_FALSE(p.do_deform);
    if (p.do_rotation) {
      ++rotations;
      for (double a : p.angles) {
        ASSERT_GE(a, -std::numbers::pi / 6);
        ASSERT_LT(a, std::numbers::pi / 6);
        ++angle_bins[static_cast<int>((a / (std::numbers::pi / 6) + 1) * 5)];
      }
    } else {
      EXPECT_THAT(p.angles, ::testing::Each(0.0));
    }
    if (p.do_scale) {
      ++scalings;
      ASSERT_GE(p.scales[0], 0.7);
      ASSERT_LT(p.scales[0], 1.4);
      EXPECT_EQ(p.scales[0], p.scales[1]);  // synchronised
      EXPECT_EQ(p.scales[0], p.scales[2]);
    } else {
      EXPECT_THAT(p.scales, ::testing::Each(1.0));
    }
  }
  // Binomial(20000, 0.2): sd ~ 57; allow 5 sd.
  EXPECT_NEAR(rotations, 0.2 * kDraws, 283);
  EXPECT_NEAR(scalings, 0.2 * kDraws, 283);
  // Angles uniform: each of 10 bins holds ~ 3 * rotations / 10.
  for (int b = 0; b < 10; ++b) {
    const double expected = 0.3 * rotations;
    EXPECT_NEAR(angle_bins[b], expected, 5 * std::sqrt(expected)) << b;
  }
}

TEST(SpatialTransformTest, ElasticDrawsFollowTheirRanges) {
  const int64_t patch[3] = {40, 50, 60};
  SpatialConfig config = NnUnetSpatialConfig(patch);
  config.p_elastic = 1;
  std::vector<uint64_t> seeds;
  for (uint32_t n = 0; n < 200; ++n) {
    CounterRng rng(StreamId{.seed = 5, .position = n});
    const SpatialParams p = DrawSpatialParams(rng, config, 3);
    ASSERT_TRUE(p.do_deform);
    for (int d = 0; d < 3; ++d) {
      EXPECT_GE(p.elastic.sigma[d], 0.0);
      EXPECT_LT(p.elastic.sigma[d], 0.2 * static_cast<double>(patch[d]));
      EXPECT_GE(p.elastic.magnitude[d], 0.0);
      EXPECT_LT(p.elastic.magnitude[d], 0.2);
    }
    seeds.push_back(p.elastic.field_seed);
  }
  std::sort(seeds.begin(), seeds.end());
  EXPECT_EQ(std::unique(seeds.begin(), seeds.end()), seeds.end());
}

TEST(SpatialTransformTest, ElasticFieldIsSmoothAndScaledToItsMagnitude) {
  const std::array<int64_t, 3> patch{24, 28, 32};
  const int64_t voxels = 24 * 28 * 32;
  ElasticParams params;
  params.sigma = {3.0, 0.0, 6.0};
  params.magnitude = {2.5, 1.0, 0.5};
  params.field_seed = 42;
  std::vector<float> field(3 * voxels), again(3 * voxels), line;
  internal_augment::MakeElasticOffsets(params, 3, patch, field, line);
  internal_augment::MakeElasticOffsets(params, 3, patch, again, line);
  EXPECT_EQ(field, again);  // a function of the seed only
  for (int c = 0; c < 3; ++c) {
    const float* f = field.data() + c * voxels;
    float largest = 0;
    double step = 0;  // mean |difference| of neighbours along the last axis
    for (int64_t k = 0; k < voxels; ++k) {
      largest = std::max(largest, std::fabs(f[k]));
      if (k % 32 != 31) {
        step += std::fabs(f[k + 1] - f[k]);
      }
    }
    step /= static_cast<double>(voxels);
    EXPECT_NEAR(largest, params.magnitude[c], 1e-5 * params.magnitude[c]) << c;
    // White noise (sigma 0) scaled to max m has mean |step| ~ 0.25 m; a blur of sigma s
    // shrinks it by ~s^-1 relative to the (also shrunk) maximum.
    if (params.sigma[c] == 0) {
      EXPECT_GT(step, 0.15 * params.magnitude[c]) << c;
    } else {
      EXPECT_LT(step, 0.1 * params.magnitude[c]) << c;
    }
  }
}

TEST(SpatialTransformTest, TinyElasticOffsetsLeaveTheResampleUnchanged) {
  Sample in(1, {14, 12, 16});
  Sample reference(1, {10, 8, 12});
  Sample deformed(1, {10, 8, 12});
  const SpatialConfig config = NnUnetSpatialConfig(reference.shape);
  SpatialParams p = RotationParams(0.3, 0.2, -0.4);
  ASSERT_OK(RunTransform(p, config, in, reference));
  p.do_deform = true;
  p.elastic.sigma = {2, 2, 2};
  p.elastic.magnitude = {1e-4, 1e-4, 1e-4};
  p.elastic.field_seed = 7;
  ASSERT_OK(RunTransform(p, config, in, deformed));
  int label_changes = 0;
  for (size_t k = 0; k < reference.image.size(); ++k) {
    // |offset| <= 1e-4 voxel per axis, <= 2e-4 after the mean is removed, <= 3.5e-4 in
    // length after the rotation. The test image steps by 96 per voxel along axis 0, and at
    // the border the value itself fades to the zero padding within one voxel, so a value v
    // moves by at most (96 + |v|) * 3.5e-4.
    const float bound = 3.6e-4f * (96.0f + std::fabs(reference.image[k]));
    ASSERT_NEAR(deformed.image[k], reference.image[k], bound) << k;
    label_changes += deformed.seg[k] != reference.seg[k];
  }
  EXPECT_LE(label_changes, 2);
  p.elastic.magnitude = {3, 3, 3};
  ASSERT_OK(RunTransform(p, config, in, deformed));
  EXPECT_NE(deformed.image, reference.image);
}

TEST(SpatialTransformTest, DrawsAreDeterministicPerStream) {
  const int64_t patch[2] = {32, 32};
  SpatialConfig config = NnUnetSpatialConfig(patch, 3.0);
  config.p_rotation = 1;
  config.p_scaling = 1;
  const StreamId id{.seed = 11, .epoch = 2, .batch = 5, .position = 1, .stream = 4};
  CounterRng a(id), b(id);
  const SpatialParams pa = DrawSpatialParams(a, config, 2);
  const SpatialParams pb = DrawSpatialParams(b, config, 2);
  EXPECT_EQ(pa.angles, pb.angles);
  EXPECT_EQ(pa.scales, pb.scales);
  EXPECT_NE(pa.angles[0], 0.0);  // 2D draws two angles (only the last acts)
  EXPECT_NE(pa.angles[1], 0.0);
  EXPECT_EQ(pa.angles[2], 0.0);
  CounterRng c(StreamId{.seed = 12});
  EXPECT_NE(DrawSpatialParams(c, config, 2).angles, pa.angles);
}

}  // namespace
}  // namespace patchfeed::augment
