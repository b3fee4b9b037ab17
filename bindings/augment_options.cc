// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "bindings/augment_options.h"

#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "augment/nnunet_pipeline.h"

namespace py = pybind11;

namespace patchfeed::internal_python {

loader::AugmentOptions AugmentOptionsFromDict(const py::dict& d) {
  if (!d.contains("patch_size")) {
    throw py::value_error("augmentation needs 'patch_size' (the patch after augmentation)");
  }
  const auto patch = py::cast<std::vector<int64_t>>(d["patch_size"]);
  if (patch.size() != 2 && patch.size() != 3) {
    throw py::value_error("augmentation patch_size must have 2 or 3 entries");
  }
  const double max_angle =
      d.contains("max_angle") ? py::cast<double>(d["max_angle"]) : std::numbers::pi / 6;
  const bool dummy_2d = d.contains("dummy_2d") && py::cast<bool>(d["dummy_2d"]);
  loader::AugmentOptions a;
  a.pipeline = augment::NnUNetAugmentConfig::Default(patch, max_angle, dummy_2d);
  augment::NnUNetAugmentConfig& p = a.pipeline;
  for (const auto& [key_obj, value] : d) {
    const std::string key = py::cast<std::string>(key_obj);
    if (key == "patch_size" || key == "max_angle" || key == "dummy_2d") {
      continue;
    } else if (key == "image_array") {
      a.image_array = py::cast<std::string>(value);
    } else if (key == "seg_array") {
      a.seg_array = value.is_none() ? "" : py::cast<std::string>(value);
    } else if (key == "p_rotation") {
      p.spatial.p_rotation = py::cast<double>(value);
    } else if (key == "p_scaling") {
      p.spatial.p_scaling = py::cast<double>(value);
    } else if (key == "p_noise") {
      p.noise.p_apply = py::cast<double>(value);
    } else if (key == "p_blur") {
      p.blur.p_apply = py::cast<double>(value);
    } else if (key == "p_brightness") {
      p.brightness.p_apply = py::cast<double>(value);
    } else if (key == "p_contrast") {
      p.contrast.p_apply = py::cast<double>(value);
    } else if (key == "p_low_resolution") {
      p.low_resolution.p_apply = py::cast<double>(value);
    } else if (key == "p_gamma_inverted") {
      p.gamma_inverted.p_apply = py::cast<double>(value);
    } else if (key == "p_gamma") {
      p.gamma.p_apply = py::cast<double>(value);
    } else if (key == "mirror_axes") {
      p.mirror_axes = {false, false, false};
      for (const int64_t axis : py::cast<std::vector<int64_t>>(value)) {
        if (axis < 0 || axis >= static_cast<int64_t>(patch.size())) {
          throw py::value_error("augmentation mirror_axes: axis " + std::to_string(axis) +
                                " is not a patch axis");
        }
        p.mirror_axes[static_cast<size_t>(axis)] = true;
      }
    } else if (key == "mask_channels") {
      p.mask_channels = py::cast<std::vector<int64_t>>(value);
    } else if (key == "remove_label") {
      p.remove_label = py::cast<bool>(value);
    } else {
      throw py::value_error("unknown augmentation option '" + key + "'");
    }
  }
  return a;
}

}  // namespace patchfeed::internal_python
