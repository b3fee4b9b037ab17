// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Bindings of spatial augmentations (augment/spatial/) for Python: NumPy arrays in and out,
// the GIL released around the C++ work. Tests and benchmarks call these; the loader calls
// the C++ functions directly.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "augment/sample_view.h"
#include "augment/spatial/elastic.h"
#include "augment/spatial/mirror.h"
#include "augment/spatial/spatial_transform.h"
#include "bindings/status_to_exception.h"
#include "common/half_float.h"

namespace py = pybind11;

namespace patchfeed::internal_python {
namespace {

using augment::SampleView;

template <typename T>
using CArray = py::array_t<T, py::array::c_style | py::array::forcecast>;

// A (C, *spatial) C-contiguous array as a view; throws ValueError on other ranks.
template <typename T, typename A>
SampleView<T> ViewOf(A& array, const char* name) {
  if (array.ndim() != 3 && array.ndim() != 4) {
    throw py::value_error(std::string(name) + " must be (C, *spatial) with 2 or 3 spatial dims");
  }
  std::vector<int64_t> spatial;
  for (py::ssize_t d = 1; d < array.ndim(); ++d) {
    spatial.push_back(array.shape(d));
  }
  T* data;
  if constexpr (std::is_const_v<T>) {
    data = array.data();
  } else {
    data = array.mutable_data();
  }
  return SampleView<T>::Contiguous(data, array.shape(0), spatial);
}

std::vector<py::ssize_t> OutputShape(py::ssize_t channels, const std::vector<int64_t>& patch) {
  std::vector<py::ssize_t> shape{channels};
  shape.insert(shape.end(), patch.begin(), patch.end());
  return shape;
}

augment::SpatialConfig MakeConfig(const std::vector<int64_t>& patch, const std::string& seg_mode,
                                  int seg_padding) {
  if (patch.size() != 2 && patch.size() != 3) {
    throw py::value_error("patch_size must have 2 or 3 entries");
  }
  augment::SpatialConfig config = augment::NnUnetSpatialConfig(patch);
  if (seg_mode == "linear") {
    config.seg_mode = augment::SegInterpolation::kLinear;
  } else if (seg_mode == "nearest") {
    config.seg_mode = augment::SegInterpolation::kNearest;
  } else {
    throw py::value_error("seg_mode must be 'linear' or 'nearest'");
  }
  config.seg_padding_value = static_cast<int16_t>(seg_padding);
  return config;
}

augment::SpatialParams MakeParams(bool do_rotation, bool do_scale,
                                  const std::vector<double>& angles,
                                  const std::vector<double>& scales) {
  augment::SpatialParams params;
  params.do_rotation = do_rotation;
  params.do_scale = do_scale;
  for (size_t d = 0; d < angles.size() && d < 3; ++d) {
    params.angles[d] = angles[d];
  }
  for (size_t d = 0; d < scales.size() && d < 3; ++d) {
    params.scales[d] = scales[d];
  }
  return params;
}

py::tuple SpatialTransform(CArray<float> image, std::optional<CArray<int16_t>> seg,
                           std::vector<int64_t> patch_size, bool do_rotation, bool do_scale,
                           std::vector<double> angles, std::vector<double> scales,
                           std::string seg_mode, int seg_padding, std::vector<double> elastic_sigma,
                           std::vector<double> elastic_magnitude, uint64_t elastic_seed) {
  const augment::SpatialConfig config = MakeConfig(patch_size, seg_mode, seg_padding);
  augment::SpatialParams params = MakeParams(do_rotation, do_scale, angles, scales);
  if (!elastic_sigma.empty() || !elastic_magnitude.empty()) {
    if (elastic_sigma.size() != patch_size.size() ||
        elastic_magnitude.size() != patch_size.size()) {
      throw py::value_error("elastic_sigma and elastic_magnitude need one value per axis");
    }
    params.do_deform = true;
    for (size_t d = 0; d < patch_size.size(); ++d) {
      params.elastic.sigma[d] = elastic_sigma[d];
      params.elastic.magnitude[d] = elastic_magnitude[d];
    }
    params.elastic.field_seed = elastic_seed;
  }
  const SampleView<const float> image_in = ViewOf<const float>(image, "image");
  CArray<float> image_out(OutputShape(image.shape(0), patch_size));
  SampleView<float> image_out_view = ViewOf<float>(image_out, "image output");
  SampleView<const int16_t> seg_in;
  seg_in.channels = 0;
  seg_in.spatial_dims = image_in.spatial_dims;
  SampleView<int16_t> seg_out_view;
  seg_out_view.channels = 0;
  std::optional<CArray<int16_t>> seg_out;
  if (seg) {
    seg_in = ViewOf<const int16_t>(*seg, "seg");
    seg_out.emplace(OutputShape(seg->shape(0), patch_size));
    seg_out_view = ViewOf<int16_t>(*seg_out, "seg output");
  }
  Status status;
  {
    py::gil_scoped_release release;
    augment::SpatialScratch scratch;
    status = augment::ApplySpatialTransform(params, config, image_in, seg_in, image_out_view,
                                            seg_out_view, scratch);
  }
  ThrowIfError(status);
  return py::make_tuple(image_out, seg_out ? py::object(*seg_out) : py::object(py::none()));
}

py::dict DrawSpatial(uint64_t seed, uint32_t position, std::vector<int64_t> patch_size,
                     double max_angle, double p_rotation, double p_scaling) {
  if (patch_size.size() != 2 && patch_size.size() != 3) {
    throw py::value_error("patch_size must have 2 or 3 entries");
  }
  augment::SpatialConfig config = augment::NnUnetSpatialConfig(patch_size, max_angle);
  config.p_rotation = p_rotation;
  config.p_scaling = p_scaling;
  CounterRng rng(StreamId{.seed = seed, .position = position});
  const augment::SpatialParams p = augment::DrawSpatialParams(rng, config, config.spatial_dims);
  py::dict d;
  d["do_rotation"] = p.do_rotation;
  d["do_scale"] = p.do_scale;
  d["angles"] = std::vector<double>(p.angles.begin(), p.angles.begin() + config.spatial_dims);
  d["scales"] = std::vector<double>(p.scales.begin(), p.scales.begin() + config.spatial_dims);
  d["do_deform"] = p.do_deform;
  return d;
}

template <typename T>
void MirrorInPlace(CArray<T>& array, const std::array<bool, 3>& flip) {
  const SampleView<T> view = ViewOf<T>(array, "array");
  Status status;
  {
    py::gil_scoped_release release;
    status = augment::ApplyMirror<T>(augment::MirrorParams{flip}, view);
  }
  ThrowIfError(status);
}

}  // namespace

void RegisterAugmentSpatial(py::module_& m) {
  m.def("spatial_transform", &SpatialTransform, py::arg("image"), py::arg("seg"),
        py::arg("patch_size"), py::arg("do_rotation"), py::arg("do_scale"),
        py::arg("angles") = std::vector<double>{}, py::arg("scales") = std::vector<double>{},
        py::arg("seg_mode") = "linear", py::arg("seg_padding") = -1,
        py::arg("elastic_sigma") = std::vector<double>{},
        py::arg("elastic_magnitude") = std::vector<double>{}, py::arg("elastic_seed") = 0,
        "SpatialTransform of one sample with explicit params: image float32 (C, *S), seg int16 "
        "(Cs, *S) or None -> (image (C, *P), seg (Cs, *P) or None). Angles in radians; "
        "elastic deformation when elastic_sigma / elastic_magnitude (voxels, per axis) are "
        "given.");
  m.def("draw_spatial_params", &DrawSpatial, py::arg("seed"), py::arg("position"),
        py::arg("patch_size"), py::arg("max_angle"), py::arg("p_rotation") = 0.2,
        py::arg("p_scaling") = 0.2,
        "DrawSpatialParams from CounterRng(StreamId{seed, position}) with nnU-Net's config.");
  m.def(
      "mirror_",
      [](py::array array, std::array<bool, 3> flip) {
        // Checked before the cast: a cast of a strided array would flip a temporary copy.
        if (!(array.flags() & py::array::c_style) || !array.writeable()) {
          throw py::value_error("mirror_ needs a writeable C-contiguous array");
        }
        if (py::isinstance<py::array_t<float>>(array)) {
          auto a = array.cast<CArray<float>>();
          MirrorInPlace<float>(a, flip);
        } else if (py::isinstance<py::array_t<int16_t>>(array)) {
          auto a = array.cast<CArray<int16_t>>();
          MirrorInPlace<int16_t>(a, flip);
        } else {
          throw py::type_error("mirror_ takes float32 or int16 arrays");
        }
      },
      py::arg("array"), py::arg("flip"),
      "Flips a C-contiguous float32 or int16 (C, *spatial) array in place along the axes "
      "flagged in `flip` (3 booleans).");
  m.def(
      "elastic_offsets",
      [](std::vector<int64_t> patch_size, std::vector<double> sigma, std::vector<double> magnitude,
         uint64_t seed) {
        const int dims = static_cast<int>(patch_size.size());
        if ((dims != 2 && dims != 3) || sigma.size() != patch_size.size() ||
            magnitude.size() != patch_size.size()) {
          throw py::value_error("need 2 or 3 axes and one sigma and magnitude per axis");
        }
        augment::ElasticParams params;
        std::array<int64_t, 3> patch{1, 1, 1};
        for (int d = 0; d < dims; ++d) {
          params.sigma[d] = sigma[d];
          params.magnitude[d] = magnitude[d];
          patch[d] = patch_size[d];
        }
        params.field_seed = seed;
        CArray<float> field(OutputShape(dims, patch_size));
        std::vector<float> line;
        internal_augment::MakeElasticOffsets(
            params, dims, patch, std::span<float>(field.mutable_data(), field.size()), line);
        return field;
      },
      py::arg("patch_size"), py::arg("sigma"), py::arg("magnitude"), py::arg("seed"),
      "The elastic offset field (D, *patch) before centring and the affine map.");
  m.def(
      "round_to_half", [](float value) { return HalfBitsToFloat(FloatToHalfBits(value)); },
      py::arg("value"), "float32 -> float16 (nearest, ties to even) -> float32.");
}

}  // namespace patchfeed::internal_python
