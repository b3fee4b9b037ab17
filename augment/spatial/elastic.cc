// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Elastic offsets: counter-based Gaussian noise, periodic box-filter Gaussian, max scaling.

#include "augment/spatial/elastic.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "common/random.h"

namespace patchfeed::internal_augment {
namespace {

// Box radii whose three passes give variance sigma^2 (each box of width w adds (w^2 - 1)/12).
int BoxRadius(double sigma) {
  const double width = std::sqrt(4.0 * sigma * sigma + 1.0);  // 3 (w^2 - 1) / 12 = sigma^2
  return std::max(0, static_cast<int>(std::lround((width - 1.0) / 2.0)));
}

// One periodic box filter of radius r along an axis of n values, applied at once to the
// `inner` lines that are interleaved in one contiguous block (n x inner, the axis outer):
// the running sums are a vector over those lines, so every access is contiguous. `ext`
// receives the block with r wrapped rows on each side (no index wrapping in the sum).
void BoxBlock(float* v, int64_t n, int64_t inner, int r, std::vector<float>& ext) {
  if (r == 0 || n <= 1) {
    return;
  }
  ext.resize(static_cast<size_t>((n + 2 * r + 1) * inner));
  float* e = ext.data();
  for (int64_t k = -r; k < n + r; ++k) {
    const float* src = v + (((k % n) + n) % n) * inner;
    std::copy(src, src + inner, e + (k + r) * inner);
  }
  float* sum = e + (n + 2 * r) * inner;  // the last row of ext holds the running sums
  std::fill(sum, sum + inner, 0.0f);
  for (int k = 0; k <= 2 * r; ++k) {
    for (int64_t i = 0; i < inner; ++i) {
      sum[i] += e[k * inner + i];
    }
  }
  const float inv = 1.0f / static_cast<float>(2 * r + 1);
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t i = 0; i < inner; ++i) {
      v[k * inner + i] = sum[i] * inv;
    }
    if (k + 1 < n) {
      const float* add = e + (k + 2 * r + 1) * inner;
      const float* drop = e + k * inner;
      for (int64_t i = 0; i < inner; ++i) {
        sum[i] += add[i] - drop[i];
      }
    }
  }
}

}  // namespace

void MakeElasticOffsets(const augment::ElasticParams& params, int spatial_dims,
                        const std::array<int64_t, 3>& patch, std::span<float> field,
                        std::vector<float>& line) {
  int64_t voxels = 1;
  std::array<int64_t, 3> strides{0, 0, 0};
  for (int d = spatial_dims - 1; d >= 0; --d) {
    strides[d] = voxels;
    voxels *= patch[d];
  }
  for (int c = 0; c < spatial_dims; ++c) {
    float* f = field.data() + c * voxels;
    // Standard normals by Box-Muller, one stream per component.
    CounterRng rng(StreamId{.seed = params.field_seed, .stream = static_cast<uint32_t>(c)});
    for (int64_t k = 0; k < voxels; k += 2) {
      const double u1 = 1.0 - rng.UniformDouble();  // (0, 1]
      const double u2 = rng.UniformDouble();
      const double radius = std::sqrt(-2.0 * std::log(u1));
      f[k] = static_cast<float>(radius * std::cos(2 * std::numbers::pi * u2));
      if (k + 1 < voxels) {
        f[k + 1] = static_cast<float>(radius * std::sin(2 * std::numbers::pi * u2));
      }
    }
    const int r = BoxRadius(params.sigma[c]);
    for (int pass = 0; pass < 3; ++pass) {
      for (int axis = 0; axis < spatial_dims; ++axis) {
        // Every line along `axis`: `outer` blocks of the axes before it, `inner` voxels after.
        const int64_t inner = strides[axis];
        const int64_t outer = voxels / (inner * patch[axis]);
        for (int64_t o = 0; o < outer; ++o) {
          BoxBlock(f + o * inner * patch[axis], patch[axis], inner, r, line);
        }
      }
    }
    float largest = 0;
    for (int64_t k = 0; k < voxels; ++k) {
      largest = std::max(largest, std::fabs(f[k]));
    }
    // batchgeneratorsv2: offsets /= max|offsets| / clip(magnitude, 1e-8, inf).
    const double scale = std::max(params.magnitude[c], 1e-8) / std::max(largest, 1e-30f);
    for (int64_t k = 0; k < voxels; ++k) {
      f[k] = static_cast<float>(f[k] * scale);
    }
  }
}

}  // namespace patchfeed::internal_augment
