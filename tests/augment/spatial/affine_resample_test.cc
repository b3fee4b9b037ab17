// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// ResampleAffine against a per-voxel reference without its fast paths (segments known to be
// interior, neighbours that agree, int32 offsets, four voxels per vector, the bitmask of slow
// label voxels): random maps and windows, tiles cut at the output's edges, samples outside the
// input, label maps of one label, of blocks and of noise. The reference forms each float with
// the kernel's operations in the kernel's order (positions in double from the segment start,
// torch's weights and neighbour order), so results must agree bit for bit; labels it scores as
// batchgeneratorsv2 does, one label at a time over every label of the channel.

#include "augment/spatial/affine_resample.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "common/half_float.h"

namespace patchfeed::internal_augment {
namespace {

using augment::SampleView;

constexpr int kSegment = 32;  // the kernel's row segment: positions restart from its first voxel

// The kernel's input position of output voxel `out` (index vector, D entries) on axis d.
float Position(const AffineSamplingMap& map, int d, const std::array<int64_t, 3>& out,
               const float* displacement, int64_t voxel, int64_t out_voxels) {
  const int dims = map.spatial_dims;
  std::array<int64_t, 3> first = out;
  const int64_t j = out[dims - 1] % kSegment;
  first[dims - 1] -= j;
  double start = map.origin[d];
  for (int k = 0; k < dims; ++k) {
    start += map.matrix[d][k] * static_cast<double>(first[k]);
  }
  double x = start + static_cast<double>(j) * map.matrix[d][dims - 1];
  if (displacement != nullptr) {
    x += static_cast<double>(displacement[d * out_voxels + voxel]);
  }
  const float far = 0x1.0p24f;
  const float v = static_cast<float>(x);
  return v > -far ? (v < far ? v : far) : -far;
}

struct Reference {
  const AffineSamplingMap& map;
  SampleView<const float> image_in;
  SampleView<const int16_t> seg_in;
  LabelInterpolation mode;
  int16_t padding;
  const float* displacement;

  int dims() const { return map.spatial_dims; }
  const std::array<int64_t, 3>& in_shape() const { return seg_in.shape; }
  std::array<int64_t, 3> crop() const {
    return map.crop_shape[0] > 0 ? map.crop_shape : in_shape();
  }

  // batchgeneratorsv2's out-of-bounds test (see affine_resample.h), axis d against D-1-d.
  bool LabelOutside(const std::array<float, 3>& x) const {
    bool outside = false;
    for (int d = 0; d < dims(); ++d) {
      const double s = static_cast<double>(crop()[d]);
      const double other = static_cast<double>(crop()[dims() - 1 - d]);
      const auto lo = static_cast<float>((s / other - 1.0) / 2.0);
      const auto hi = static_cast<float>(s - 0.5 - s / (2.0 * other));
      outside = outside || x[d] < lo || x[d] > hi;
    }
    return outside;
  }

  // Neighbour k's index in the input view (bit D-1-d of k: upper on axis d), its weight in
  // torch's form, and whether it exists.
  bool Neighbour(const std::array<float, 3>& x, int k, std::array<int64_t, 3>& idx,
                 float& weight) const {
    std::array<float, 3> lower{}, upper{};
    bool inside = true;
    for (int d = 0; d < dims(); ++d) {
      const auto f = static_cast<int32_t>(std::floor(x[d]));
      const auto fl = static_cast<float>(f);
      if (dims() == 3) {
        upper[d] = x[d] - fl;
        lower[d] = (fl + 1.0f) - x[d];
      } else {
        upper[d] = x[d] - fl;
        lower[d] = 1.0f - upper[d];
      }
      idx[d] = f + ((k >> (dims() - 1 - d)) & 1) - map.window_origin[d];
      inside = inside && idx[d] >= 0 && idx[d] < in_shape()[d];
    }
    auto w = [&](int d) { return ((k >> (dims() - 1 - d)) & 1) ? upper[d] : lower[d]; };
    weight = dims() == 3 ? (w(2) * w(1)) * w(0) : w(0) * w(1);
    return inside;
  }

  float Image(int64_t c, const std::array<float, 3>& x) const {
    float acc = 0.0f;
    for (int k = 0; k < (1 << dims()); ++k) {
      std::array<int64_t, 3> idx{};
      float w = 0.0f;
      if (Neighbour(x, k, idx, w)) {
        acc += image_in.at(c, idx[0], idx[1], idx[2]) * w;
      }
    }
    return acc;
  }

  int16_t Label(int64_t c, const std::array<float, 3>& x,
                const std::vector<int16_t>& labels) const {
    if (padding != 0 && LabelOutside(x)) {
      return padding;
    }
    if (mode == LabelInterpolation::kNearest) {
      std::array<int64_t, 3> idx{};
      for (int d = 0; d < dims(); ++d) {
        idx[d] = static_cast<int64_t>(std::nearbyint(x[d])) - map.window_origin[d];
        if (idx[d] < 0 || idx[d] >= in_shape()[d]) {
          return 0;
        }
      }
      return seg_in.at(c, idx[0], idx[1], idx[2]);
    }
    // One-hot x 1000 per label, interpolated, rounded to float16; first maximum wins.
    float best = -1.0f;
    int16_t best_label = 0;
    for (int16_t label : labels) {
      float sum = 0.0f;
      for (int k = 0; k < (1 << dims()); ++k) {
        std::array<int64_t, 3> idx{};
        float w = 0.0f;
        if (Neighbour(x, k, idx, w)) {
          sum += (seg_in.at(c, idx[0], idx[1], idx[2]) == label ? 1000.0f : 0.0f) * w;
        }
      }
      const float h = HalfBitsToFloat(FloatToHalfBits(sum));
      if (h > best) {
        best = h;
        best_label = label;
      }
    }
    return best_label;
  }
};

// One random case: shapes, map, window, label pattern, padding, strides.
struct Case {
  int dims = 3;
  std::array<int64_t, 3> in_shape{1, 1, 1};
  std::array<int64_t, 3> out_shape{1, 1, 1};
  std::array<int64_t, 3> crop_shape{};  // 0: no window
  std::array<int32_t, 3> window_origin{};
  int image_channels = 1;
  int seg_channels = 1;
  enum Pattern { kUniform, kBlocks, kNoise } pattern = kBlocks;
  int16_t padding = -1;
  LabelInterpolation mode = LabelInterpolation::kLinear;
  bool strided_seg = false;  // labels at every other element along the last axis
  bool elastic = false;
};

void RunCase(const Case& cs, std::mt19937& rng) {
  const int D = cs.dims;
  auto spatial = [&](const std::array<int64_t, 3>& s) {
    return std::vector<int64_t>(s.begin(), s.begin() + D);
  };
  int64_t in_voxels = 1, out_voxels = 1;
  for (int d = 0; d < D; ++d) {
    in_voxels *= cs.in_shape[d];
    out_voxels *= cs.out_shape[d];
  }
  std::uniform_real_distribution<float> value(-5.0f, 5.0f);
  std::vector<float> image(cs.image_channels * in_voxels);
  for (float& v : image) {
    v = value(rng);
  }
  const int64_t seg_step = cs.strided_seg ? 2 : 1;
  std::vector<int16_t> seg(cs.seg_channels * in_voxels * seg_step, 99);
  const std::array<int16_t, 5> palette = {-1, 0, 1, 2, 5};
  std::uniform_int_distribution<int> pick(0, 4);
  const int16_t uniform = palette[pick(rng)];
  const std::array<int64_t, 3> block = {1 + pick(rng), 1 + pick(rng), 1 + pick(rng)};
  std::vector<int16_t> block_label(4096);
  for (int16_t& l : block_label) {
    l = palette[pick(rng)];
  }
  std::vector<int16_t> dense(cs.seg_channels * in_voxels);
  for (int64_t i = 0; i < static_cast<int64_t>(dense.size()); ++i) {
    std::array<int64_t, 3> idx{};
    int64_t rest = i % in_voxels;
    for (int d = D - 1; d >= 0; --d) {
      idx[d] = rest % cs.in_shape[d];
      rest /= cs.in_shape[d];
    }
    if (cs.pattern == Case::kUniform) {
      dense[i] = uniform;
    } else if (cs.pattern == Case::kNoise) {
      dense[i] = palette[pick(rng)];
    } else {
      const int64_t cell =
          (idx[0] / block[0]) * 256 + (idx[1] / block[1]) * 16 + idx[2] / block[2] + i / in_voxels;
      dense[i] = block_label[cell % 4096];
    }
    seg[i * seg_step] = dense[i];
  }
  auto image_view =
      SampleView<const float>::Contiguous(image.data(), cs.image_channels, spatial(cs.in_shape));
  auto seg_view =
      SampleView<const int16_t>::Contiguous(seg.data(), cs.seg_channels, spatial(cs.in_shape));
  if (cs.strided_seg) {
    for (int d = 0; d < D; ++d) {
      seg_view.strides[d] *= 2;
    }
    seg_view.channel_stride *= 2;
  }

  // A rotation and anisotropic scale about the output's centre, placed near the input's (crop's)
  // centre with a shift that takes some voxels outside.
  AffineSamplingMap map;
  map.spatial_dims = D;
  std::uniform_real_distribution<double> angle(-3.2, 3.2), scale(0.6, 1.5), shift(-4.0, 4.0);
  const double a = angle(rng), b = angle(rng), g = angle(rng);
  const std::array<std::array<double, 3>, 3> rz = {
      {{std::cos(a), -std::sin(a), 0}, {std::sin(a), std::cos(a), 0}, {0, 0, 1}}};
  const std::array<std::array<double, 3>, 3> ry = {
      {{std::cos(b), 0, std::sin(b)}, {0, 1, 0}, {-std::sin(b), 0, std::cos(b)}}};
  const std::array<std::array<double, 3>, 3> rx = {
      {{1, 0, 0}, {0, std::cos(g), -std::sin(g)}, {0, std::sin(g), std::cos(g)}}};
  std::array<std::array<double, 3>, 3> rot{};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 3; ++k) {
        for (int l = 0; l < 3; ++l) {
          rot[i][j] += rz[i][k] * ry[k][l] * rx[l][j];
        }
      }
    }
  }
  const std::array<int64_t, 3> crop = cs.crop_shape[0] > 0 ? cs.crop_shape : cs.in_shape;
  for (int d = 0; d < D; ++d) {
    const double s = scale(rng);
    double origin = (static_cast<double>(crop[d]) - 1.0) / 2.0 + shift(rng);
    for (int k = 0; k < D; ++k) {
      map.matrix[d][k] = (D == 3 ? rot[d][k] : rz[d][k]) * s;
      origin -= map.matrix[d][k] * (static_cast<double>(cs.out_shape[k]) - 1.0) / 2.0;
    }
    map.origin[d] = origin;
  }
  map.window_origin = cs.window_origin;
  map.crop_shape = cs.crop_shape;

  std::vector<float> displacement;
  if (cs.elastic) {
    std::uniform_real_distribution<float> offset(-2.0f, 2.0f);
    displacement.resize(D * out_voxels);
    for (float& v : displacement) {
      v = offset(rng);
    }
  }
  const float* disp = cs.elastic ? displacement.data() : nullptr;

  std::vector<float> image_out(cs.image_channels * out_voxels);
  std::vector<int16_t> seg_out(cs.seg_channels * out_voxels);
  ResampleScratch scratch;
  ResampleAffine(
      map, image_view,
      SampleView<float>::Contiguous(image_out.data(), cs.image_channels, spatial(cs.out_shape)),
      seg_view,
      SampleView<int16_t>::Contiguous(seg_out.data(), cs.seg_channels, spatial(cs.out_shape)),
      cs.mode, cs.padding, disp, scratch);

  const Reference ref{map, image_view, seg_view, cs.mode, cs.padding, disp};
  std::vector<std::vector<int16_t>> labels(cs.seg_channels);
  for (int c = 0; c < cs.seg_channels; ++c) {
    const std::set<int16_t> present(dense.begin() + c * in_voxels,
                                    dense.begin() + (c + 1) * in_voxels);
    labels[c].assign(present.begin(), present.end());
  }
  int64_t image_mismatches = 0, label_mismatches = 0;
  for (int64_t v = 0; v < out_voxels; ++v) {
    std::array<int64_t, 3> out{};
    int64_t rest = v;
    for (int d = D - 1; d >= 0; --d) {
      out[d] = rest % cs.out_shape[d];
      rest /= cs.out_shape[d];
    }
    std::array<float, 3> x{};
    for (int d = 0; d < D; ++d) {
      x[d] = Position(map, d, out, disp, v, out_voxels);
    }
    for (int c = 0; c < cs.image_channels; ++c) {
      const float want = ref.Image(c, x);
      const float got = image_out[c * out_voxels + v];
      if (std::memcmp(&want, &got, sizeof(float)) != 0 && ++image_mismatches <= 3) {
        ADD_FAILURE() << "image channel " << c << " voxel " << v << ": " << got << " != " << want;
      }
    }
    for (int c = 0; c < cs.seg_channels; ++c) {
      const int16_t want = ref.Label(c, x, labels[c]);
      const int16_t got = seg_out[c * out_voxels + v];
      if (want != got && ++label_mismatches <= 3) {
        ADD_FAILURE() << "label channel " << c << " voxel " << v << ": " << got << " != " << want;
      }
    }
  }
  EXPECT_EQ(image_mismatches, 0);
  EXPECT_EQ(label_mismatches, 0);
}

Case RandomCase(std::mt19937& rng, int dims) {
  Case cs;
  cs.dims = dims;
  std::uniform_int_distribution<int64_t> in_extent(4, 24), out_extent(1, 40);
  for (int d = 0; d < dims; ++d) {
    cs.in_shape[d] = in_extent(rng);
    cs.out_shape[d] = out_extent(rng);
  }
  std::uniform_int_distribution<int> coin(0, 1), three(0, 2), four(0, 3);
  // Last axis past one segment (32) and rows past one tile (16) now and then.
  cs.out_shape[dims - 1] += 20 * coin(rng);
  cs.out_shape[0] += 10 * coin(rng);
  if (coin(rng)) {  // the input is a window of a larger crop
    for (int d = 0; d < dims; ++d) {
      std::uniform_int_distribution<int32_t> origin(0, 6);
      cs.window_origin[d] = origin(rng);
      cs.crop_shape[d] = cs.in_shape[d] + cs.window_origin[d] + origin(rng);
    }
  }
  cs.image_channels = 1 + coin(rng);
  cs.seg_channels = 1 + coin(rng);
  cs.pattern = static_cast<Case::Pattern>(three(rng));
  cs.padding = coin(rng) ? int16_t{-1} : int16_t{0};
  cs.mode = four(rng) == 0 ? LabelInterpolation::kNearest : LabelInterpolation::kLinear;
  cs.strided_seg = four(rng) == 0;
  cs.elastic = four(rng) == 0;
  return cs;
}

TEST(AffineResampleTest, RandomWindowsMatchTheReference3D) {
  std::mt19937 rng(13);
  for (int i = 0; i < 60; ++i) {
    SCOPED_TRACE(i);
    RunCase(RandomCase(rng, 3), rng);
  }
}

TEST(AffineResampleTest, RandomWindowsMatchTheReference2D) {
  std::mt19937 rng(1313);
  for (int i = 0; i < 60; ++i) {
    SCOPED_TRACE(i);
    RunCase(RandomCase(rng, 2), rng);
  }
}

// Each fast path in isolation: uniform labels with the patch inside (every segment interior,
// every voxel's neighbours agreeing), then the same map over blocks and noise.
TEST(AffineResampleTest, InteriorSegmentsMatchTheReference) {
  std::mt19937 rng(7);
  for (Case::Pattern pattern : {Case::kUniform, Case::kBlocks, Case::kNoise}) {
    for (int16_t padding : {int16_t{-1}, int16_t{0}}) {
      Case cs;
      cs.in_shape = {40, 40, 40};
      cs.out_shape = {18, 17, 45};
      cs.pattern = pattern;
      cs.padding = padding;
      cs.image_channels = 2;
      RunCase(cs, rng);
    }
  }
}

}  // namespace
}  // namespace patchfeed::internal_augment
