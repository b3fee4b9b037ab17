// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "bindings/augment_options.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "augment/nnunet_pipeline.h"

namespace py = pybind11;

namespace patchfeed::internal_python {

namespace {

// py::cast with a TypeError that names the option instead of pybind11's generic message.
template <typename T>
T Option(const char* key, py::handle value) {
  try {
    return py::cast<T>(value);
  } catch (const py::cast_error&) {
    throw py::type_error(std::string("augmentation option '") + key + "' has the wrong type (" +
                         py::str(py::type::of(value)).cast<std::string>() + ")");
  }
}

}  // namespace

loader::AugmentOptions AugmentOptionsFromDict(const py::dict& d) {
  if (!d.contains("patch_size")) {
    throw py::value_error("augmentation needs 'patch_size' (the patch after augmentation)");
  }
  const auto patch = Option<std::vector<int64_t>>("patch_size", d["patch_size"]);
  if (patch.size() != 2 && patch.size() != 3) {
    throw py::value_error("augmentation patch_size must have 2 or 3 entries");
  }
  const double max_angle =
      d.contains("max_angle") ? Option<double>("max_angle", d["max_angle"]) : std::numbers::pi / 6;
  const bool dummy_2d = d.contains("dummy_2d") && Option<bool>("dummy_2d", d["dummy_2d"]);
  loader::AugmentOptions a;
  a.pipeline = augment::NnUNetAugmentConfig::Default(patch, max_angle, dummy_2d);
  augment::NnUNetAugmentConfig& p = a.pipeline;
  for (const auto& [key_obj, value] : d) {
    const std::string key = py::cast<std::string>(key_obj);
    if (key == "patch_size" || key == "max_angle" || key == "dummy_2d") {
      continue;
    } else if (key == "image_array") {
      a.image_array = Option<std::string>(key.c_str(), value);
    } else if (key == "seg_array") {
      a.seg_array = value.is_none() ? "" : Option<std::string>(key.c_str(), value);
    } else if (key == "p_rotation") {
      p.spatial.p_rotation = Option<double>(key.c_str(), value);
    } else if (key == "p_scaling") {
      p.spatial.p_scaling = Option<double>(key.c_str(), value);
    } else if (key == "p_noise") {
      p.noise.p_apply = Option<double>(key.c_str(), value);
    } else if (key == "p_blur") {
      p.blur.p_apply = Option<double>(key.c_str(), value);
    } else if (key == "p_brightness") {
      p.brightness.p_apply = Option<double>(key.c_str(), value);
    } else if (key == "p_contrast") {
      p.contrast.p_apply = Option<double>(key.c_str(), value);
    } else if (key == "p_low_resolution") {
      p.low_resolution.p_apply = Option<double>(key.c_str(), value);
    } else if (key == "p_gamma_inverted") {
      p.gamma_inverted.p_apply = Option<double>(key.c_str(), value);
    } else if (key == "p_gamma") {
      p.gamma.p_apply = Option<double>(key.c_str(), value);
    } else if (key == "mirror_axes") {
      p.mirror_axes = {false, false, false};
      for (const int64_t axis : Option<std::vector<int64_t>>(key.c_str(), value)) {
        if (axis < 0 || axis >= static_cast<int64_t>(patch.size())) {
          throw py::value_error("augmentation mirror_axes: axis " + std::to_string(axis) +
                                " is not a patch axis");
        }
        p.mirror_axes[static_cast<size_t>(axis)] = true;
      }
    } else if (key == "mask_channels") {
      p.mask_channels = Option<std::vector<int64_t>>(key.c_str(), value);
    } else if (key == "remove_label") {
      p.remove_label = Option<bool>(key.c_str(), value);
    } else if (key == "regions") {
      a.regions = Option<std::vector<std::vector<int64_t>>>(key.c_str(), value);
    } else if (key == "deep_supervision_scales") {
      for (const auto& scale : Option<std::vector<std::vector<double>>>(key.c_str(), value)) {
        if (scale.size() != patch.size()) {
          throw py::value_error("augmentation deep_supervision_scales: each scale needs " +
                                std::to_string(patch.size()) + " factors, one per patch axis");
        }
        std::array<double, 3> factors{1.0, 1.0, 1.0};
        std::copy(scale.begin(), scale.end(), factors.begin());
        a.deep_supervision_scales.push_back(factors);
      }
    } else {
      throw py::value_error("unknown augmentation option '" + key + "'");
    }
  }
  return a;
}

}  // namespace patchfeed::internal_python
