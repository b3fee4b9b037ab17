// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// SpatialTransform: draws, the affine matrix, shape checks and the crop path; the resampling
// kernels live in affine_resample.cc.

#include "augment/spatial/spatial_transform.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "common/str_cat.h"

namespace patchfeed::augment {
namespace {

using Matrix3 = std::array<std::array<double, 3>, 3>;

Matrix3 Multiply(const Matrix3& a, const Matrix3& b) {
  Matrix3 c{};
  for (int r = 0; r < 3; ++r) {
    for (int k = 0; k < 3; ++k) {
      for (int col = 0; col < 3; ++col) {
        c[r][col] += a[r][k] * b[k][col];
      }
    }
  }
  return c;
}

// batchgeneratorsv2's sample_scalar for a pair: the constant when lo == hi (no draw).
double SampleRange(CounterRng& rng, const ScalarRange& r) {
  if (r.lo == r.hi) {
    return r.lo;
  }
  return r.lo + (r.hi - r.lo) * rng.UniformDouble();
}

std::string ShapeString(const std::array<int64_t, 3>& shape, int dims) {
  std::string s = "(";
  for (int d = 0; d < dims; ++d) {
    s += StrCat(d ? ", " : "", shape[d]);
  }
  return s + ")";
}

template <typename T>
Status CheckView(const SampleView<T>& v, int dims, const char* name) {
  if (v.spatial_dims != dims) {
    return InvalidArgumentError(
        StrCat(name, " has ", v.spatial_dims, " spatial dims, the transform ", dims));
  }
  if (v.channels < 0 || (v.channels > 0 && v.data == nullptr)) {
    return InvalidArgumentError(StrCat(name, " has no data"));
  }
  for (int d = 0; d < dims; ++d) {
    if (v.shape[d] <= 0 || v.shape[d] > internal_augment::kMaxInputExtent) {
      return InvalidArgumentError(StrCat(name, " has unusable shape ", ShapeString(v.shape, dims)));
    }
  }
  return Status::Ok();
}

bool SameShape(const std::array<int64_t, 3>& a, const std::array<int64_t, 3>& b, int dims) {
  for (int d = 0; d < dims; ++d) {
    if (a[d] != b[d]) {
      return false;
    }
  }
  return true;
}

// The no-transform path: crop_tensor with centre floor(S/2), start centre - floor(P/2),
// `padding` where the box leaves the input.
template <typename T>
void CropWithPadding(SampleView<const T> in, SampleView<T> out, T padding) {
  const int dims = in.spatial_dims;
  std::array<int64_t, 3> start{0, 0, 0};
  for (int d = 0; d < dims; ++d) {
    start[d] = in.shape[d] / 2 - out.shape[d] / 2;
  }
  const int last = dims - 1;
  // Output range along the last axis that reads inside the input.
  const int64_t lo = std::clamp<int64_t>(-start[last], 0, out.shape[last]);
  const int64_t hi = std::clamp<int64_t>(in.shape[last] - start[last], lo, out.shape[last]);
  const int64_t rows0 = out.shape[0];
  const int64_t rows1 = dims == 3 ? out.shape[1] : 1;
  for (int64_t c = 0; c < out.channels; ++c) {
    for (int64_t a = 0; a < rows0; ++a) {
      for (int64_t b = 0; b < rows1; ++b) {
        T* o = dims == 3 ? &out.at(c, a, b, 0) : &out.at(c, a, 0);
        const int64_t os = out.strides[last];
        const int64_t ia = a + start[0];
        const int64_t ib = b + start[1];
        const bool row_inside =
            ia >= 0 && ia < in.shape[0] && (dims == 2 || (ib >= 0 && ib < in.shape[1]));
        if (!row_inside) {
          for (int64_t j = 0; j < out.shape[last]; ++j) {
            o[j * os] = padding;
          }
          continue;
        }
        const T* i = dims == 3 ? &in.at(c, ia, ib, 0) : &in.at(c, ia, 0);
        const int64_t is = in.strides[last];
        for (int64_t j = 0; j < lo; ++j) {
          o[j * os] = padding;
        }
        for (int64_t j = lo; j < hi; ++j) {
          o[j * os] = i[(j + start[last]) * is];
        }
        for (int64_t j = hi; j < out.shape[last]; ++j) {
          o[j * os] = padding;
        }
      }
    }
  }
}

// batchgeneratorsv2 deforms the centred grid first, then applies A, then subtracts the mean
// of the result (center_deformation); the centred identity grid has mean 0, so the voxel's
// shift is A (offset(i) - mean(offset)). Returns the field, (D, *P), in scratch.
const float* MakeDisplacement(const SpatialParams& params, const SpatialConfig& config,
                              const Matrix3& a, SpatialScratch& scratch) {
  const int dims = config.spatial_dims;
  int64_t voxels = 1;
  for (int d = 0; d < dims; ++d) {
    voxels *= config.patch_size[d];
  }
  scratch.displacement.resize(static_cast<size_t>(dims * voxels));
  internal_augment::MakeElasticOffsets(params.elastic, dims, config.patch_size,
                                       scratch.displacement, scratch.line);
  float* f = scratch.displacement.data();
  std::array<double, 3> mean{};
  for (int d = 0; d < dims; ++d) {
    double sum = 0;
    for (int64_t k = 0; k < voxels; ++k) {
      sum += f[d * voxels + k];
    }
    mean[d] = sum / static_cast<double>(voxels);
  }
  for (int64_t k = 0; k < voxels; ++k) {
    double v[3] = {0, 0, 0};
    for (int d = 0; d < dims; ++d) {
      v[d] = f[d * voxels + k] - mean[d];
    }
    for (int d = 0; d < dims; ++d) {
      double out = 0;
      for (int e = 0; e < dims; ++e) {
        out += a[d][e] * v[e];
      }
      f[d * voxels + k] = static_cast<float>(out);
    }
  }
  return f;
}

}  // namespace

SpatialConfig NnUnetSpatialConfig(std::span<const int64_t> patch, double max_angle) {
  SpatialConfig config;
  config.spatial_dims = static_cast<int>(patch.size());
  config.patch_size = {1, 1, 1};
  for (size_t d = 0; d < patch.size() && d < 3; ++d) {
    config.patch_size[d] = patch[d];
  }
  for (auto& r : config.rotation) {
    r = {-max_angle, max_angle};
  }
  return config;
}

SpatialParams DrawSpatialParams(CounterRng& rng, const SpatialConfig& config, int spatial_dims) {
  SpatialParams p;
  p.do_rotation = rng.UniformDouble() < config.p_rotation;
  p.do_scale = rng.UniformDouble() < config.p_scaling;
  p.do_deform = rng.UniformDouble() < config.p_elastic;
  if (p.do_rotation) {
    for (int d = 0; d < spatial_dims; ++d) {
      p.angles[d] = SampleRange(rng, config.rotation[d]);
    }
    if (config.p_rotation_per_axis < 1) {
      for (int d = 0; d < spatial_dims; ++d) {
        if (rng.UniformDouble() > config.p_rotation_per_axis) {
          p.angles[d] = 0;
        }
      }
    }
  }
  if (p.do_scale) {
    if (rng.UniformDouble() <= config.p_synchronize_scaling) {
      const double s = SampleRange(rng, config.scaling);
      p.scales = {s, s, s};
    } else {
      for (int d = 0; d < spatial_dims; ++d) {
        p.scales[d] = SampleRange(rng, config.scaling);
      }
    }
  }
  if (p.do_deform) {
    std::array<double, 3> fraction{};
    if (rng.UniformDouble() <= config.p_synchronize_elastic_scale) {
      const double f = SampleRange(rng, config.elastic_scale);
      fraction = {f, f, f};
    } else {
      for (int d = 0; d < spatial_dims; ++d) {
        fraction[d] = SampleRange(rng, config.elastic_scale);
      }
    }
    for (int d = 0; d < spatial_dims; ++d) {
      p.elastic.sigma[d] = fraction[d] * static_cast<double>(config.patch_size[d]);
    }
    for (int d = 0; d < spatial_dims; ++d) {
      p.elastic.magnitude[d] = SampleRange(rng, config.elastic_magnitude);
    }
    p.elastic.field_seed = rng.NextU64();
  }
  return p;
}

Matrix3 SpatialAffineMatrix(const SpatialParams& params, int spatial_dims) {
  const double s0 = params.do_scale ? params.scales[0] : 1.0;
  const double s1 = params.do_scale ? params.scales[1] : 1.0;
  const double s2 = params.do_scale ? params.scales[2] : 1.0;
  const auto& a = params.angles;
  if (spatial_dims == 2) {
    // Only the last of the two drawn angles is used, as in batchgeneratorsv2.
    const double t = params.do_rotation ? a[1] : 0.0;
    return {{{std::cos(t) * s0, -std::sin(t) * s1, 0},
             {std::sin(t) * s0, std::cos(t) * s1, 0},
             {0, 0, 1}}};
  }
  const double t0 = params.do_rotation ? a[0] : 0.0;
  const double t1 = params.do_rotation ? a[1] : 0.0;
  const double t2 = params.do_rotation ? a[2] : 0.0;
  const Matrix3 rx{{{1, 0, 0}, {0, std::cos(t0), -std::sin(t0)}, {0, std::sin(t0), std::cos(t0)}}};
  const Matrix3 ry{{{std::cos(t1), 0, std::sin(t1)}, {0, 1, 0}, {-std::sin(t1), 0, std::cos(t1)}}};
  const Matrix3 rz{{{std::cos(t2), -std::sin(t2), 0}, {std::sin(t2), std::cos(t2), 0}, {0, 0, 1}}};
  const Matrix3 scale{{{s0, 0, 0}, {0, s1, 0}, {0, 0, s2}}};
  return Multiply(Multiply(Multiply(rz, ry), rx), scale);
}

namespace {

// ApplySpatialTransform, on the whole crop (`crop` null) or on a window of it whose first voxel
// is `window_origin` in the crop.
Status ApplyOnCropOrWindow(const SpatialParams& params, const SpatialConfig& config,
                           const std::array<int64_t, 3>* crop,
                           const std::array<int64_t, 3>& window_origin,
                           SampleView<const float> image_in, SampleView<const int16_t> seg_in,
                           SampleView<float> image_out, SampleView<int16_t> seg_out,
                           SpatialScratch& scratch, const PieceRunner& pieces) {
  const int dims = config.spatial_dims;
  if (dims != 2 && dims != 3) {
    return InvalidArgumentError(StrCat("spatial transform needs 2 or 3 spatial dims, got ", dims));
  }
  for (int d = 0; d < dims; ++d) {
    if (config.patch_size[d] <= 0) {
      return InvalidArgumentError(
          StrCat("patch size ", ShapeString(config.patch_size, dims), " is not positive"));
    }
  }
  PATCHFEED_RETURN_IF_ERROR(CheckView(image_in, dims, "image input"));
  PATCHFEED_RETURN_IF_ERROR(CheckView(image_out, dims, "image output"));
  if (image_out.channels != image_in.channels) {
    return InvalidArgumentError(
        StrCat("image output has ", image_out.channels, " channels, input ", image_in.channels));
  }
  if (!SameShape(image_out.shape, config.patch_size, dims)) {
    return InvalidArgumentError(StrCat("image output shape ", ShapeString(image_out.shape, dims),
                                       " differs from patch size ",
                                       ShapeString(config.patch_size, dims)));
  }
  const bool has_seg = seg_in.channels > 0;
  if (has_seg) {
    PATCHFEED_RETURN_IF_ERROR(CheckView(seg_in, dims, "segmentation input"));
    PATCHFEED_RETURN_IF_ERROR(CheckView(seg_out, dims, "segmentation output"));
    if (!SameShape(seg_in.shape, image_in.shape, dims)) {
      return InvalidArgumentError(StrCat("segmentation shape ", ShapeString(seg_in.shape, dims),
                                         " differs from image shape ",
                                         ShapeString(image_in.shape, dims)));
    }
    if (!SameShape(seg_out.shape, config.patch_size, dims)) {
      return InvalidArgumentError(
          StrCat("segmentation output shape ", ShapeString(seg_out.shape, dims),
                 " differs from patch size ", ShapeString(config.patch_size, dims)));
    }
  }
  if (seg_out.channels != (has_seg ? seg_in.channels : 0)) {
    return InvalidArgumentError(
        StrCat("segmentation output has ", seg_out.channels, " channels, input ", seg_in.channels));
  }
  for (int d = 0; d < dims; ++d) {
    if (!std::isfinite(params.angles[d]) || !std::isfinite(params.scales[d]) ||
        (params.do_deform &&
         !(std::isfinite(params.elastic.sigma[d]) && std::isfinite(params.elastic.magnitude[d]) &&
           params.elastic.sigma[d] >= 0 && params.elastic.sigma[d] < 1e6))) {
      return InvalidArgumentError("spatial parameters must be finite");
    }
  }

  if (crop != nullptr && (!params.transforms() || params.do_deform)) {
    return InvalidArgumentError(
        "a window of the crop is resampled only for rotation or scaling without deformation "
        "(the crop path reads the patch itself)");
  }
  if (!params.transforms()) {
    CropWithPadding<float>(image_in, image_out, 0.0f);
    if (has_seg) {
      CropWithPadding<int16_t>(seg_in, seg_out, config.seg_padding_value);
    }
    return Status::Ok();
  }

  // x(i) = A (i - (P - 1)/2) + (S - 1)/2 = A i + origin.
  internal_augment::AffineSamplingMap map;
  map.spatial_dims = dims;
  if (params.do_rotation || params.do_scale) {
    map.matrix = SpatialAffineMatrix(params, dims);
  } else {
    map.matrix = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
  }
  for (int d = 0; d < dims; ++d) {
    const int64_t s_d = crop != nullptr ? (*crop)[d] : image_in.shape[d];
    double o = (static_cast<double>(s_d) - 1.0) / 2.0;
    for (int k = 0; k < dims; ++k) {
      o -= map.matrix[d][k] * (static_cast<double>(config.patch_size[k]) - 1.0) / 2.0;
    }
    map.origin[d] = o;
  }
  SampleView<int16_t> seg_target = seg_out;
  if (!has_seg) {
    seg_target.channels = 0;
  }
  const auto mode = config.seg_mode == SegInterpolation::kLinear
                        ? internal_augment::LabelInterpolation::kLinear
                        : internal_augment::LabelInterpolation::kNearest;
  const float* displacement = nullptr;
  if (params.do_deform) {
    displacement = MakeDisplacement(params, config, map.matrix, scratch);
  }
  if (crop != nullptr) {
    map.crop_shape = *crop;
    for (int d = 0; d < dims; ++d) {
      map.window_origin[d] = static_cast<int32_t>(window_origin[d]);
    }
  }
  internal_augment::ResampleAffine(map, image_in, image_out, seg_in, seg_target, mode,
                                   config.seg_padding_value, displacement, scratch.resample,
                                   pieces);
  return Status::Ok();
}

}  // namespace

Status ApplySpatialTransform(const SpatialParams& params, const SpatialConfig& config,
                             SampleView<const float> image_in, SampleView<const int16_t> seg_in,
                             SampleView<float> image_out, SampleView<int16_t> seg_out,
                             SpatialScratch& scratch, const PieceRunner& pieces) {
  return ApplyOnCropOrWindow(params, config, nullptr, {}, image_in, seg_in, image_out, seg_out,
                             scratch, pieces);
}

Status ApplySpatialTransformWindow(const SpatialParams& params, const SpatialConfig& config,
                                   std::span<const int64_t> crop_shape,
                                   std::span<const int64_t> window_origin,
                                   SampleView<const float> image_window,
                                   SampleView<const int16_t> seg_window,
                                   SampleView<float> image_out, SampleView<int16_t> seg_out,
                                   SpatialScratch& scratch, const PieceRunner& pieces) {
  const int dims = config.spatial_dims;
  if (crop_shape.size() != static_cast<size_t>(dims) ||
      window_origin.size() != static_cast<size_t>(dims)) {
    return InvalidArgumentError("crop shape and window origin need one entry per spatial axis");
  }
  std::array<int64_t, 3> crop{1, 1, 1}, origin{};
  for (int d = 0; d < dims; ++d) {
    const auto i = static_cast<size_t>(d);
    crop[i] = crop_shape[i];
    origin[i] = window_origin[i];
    if (origin[i] < 0 || image_window.shape[i] < 1 || origin[i] + image_window.shape[i] > crop[i] ||
        crop[i] > internal_augment::kMaxInputExtent) {
      return InvalidArgumentError("the window does not lie inside the crop");
    }
  }
  return ApplyOnCropOrWindow(params, config, &crop, origin, image_window, seg_window, image_out,
                             seg_out, scratch, pieces);
}

}  // namespace patchfeed::augment
