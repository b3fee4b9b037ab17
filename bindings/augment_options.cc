// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "bindings/augment_options.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
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

// A [lo, hi] pair (or one number, the constant) as a ScalarRange.
augment::ScalarRange Range(const std::string& key, py::handle value) {
  if (py::isinstance<py::float_>(value) || py::isinstance<py::int_>(value)) {
    const double v = Option<double>(key.c_str(), value);
    return {v, v};
  }
  const auto pair = Option<std::vector<double>>(key.c_str(), value);
  if (pair.size() != 2) {
    throw py::value_error("augmentation option '" + key + "' needs [low, high] or one number");
  }
  return {pair[0], pair[1]};
}

// One transform's settings: a dict whose keys are the fields of that transform's config
// (augment_config.h), each set by `fields[key]`. Unknown keys are errors naming the transform.
using FieldSetter = std::function<void(const std::string& key, py::handle value)>;

void SetFields(const std::string& transform, py::handle settings,
               const std::map<std::string, FieldSetter>& fields) {
  if (!py::isinstance<py::dict>(settings)) {
    throw py::type_error("augmentation option '" + transform + "' must be a dict of its settings");
  }
  for (const auto& [key_obj, value] : py::reinterpret_borrow<py::dict>(settings)) {
    const std::string key = py::cast<std::string>(key_obj);
    const auto field = fields.find(key);
    if (field == fields.end()) {
      std::string known;
      for (const auto& [name, setter] : fields)
        known += (known.empty() ? "" : ", ") + name;
      throw py::value_error("unknown setting '" + key + "' of augmentation '" + transform +
                            "' (known: " + known + ")");
    }
    field->second(transform + "." + key, value);
  }
}

template <typename T>
FieldSetter Set(T& field) {
  return
      [&field](const std::string& key, py::handle value) { field = Option<T>(key.c_str(), value); };
}

FieldSetter SetRange(augment::ScalarRange& field) {
  return [&field](const std::string& key, py::handle value) { field = Range(key, value); };
}

void SetSpatial(augment::SpatialConfig& c, py::handle settings) {
  SetFields("spatial", settings,
            {{"p_rotation", Set(c.p_rotation)},
             {"rotation",
              [&c](const std::string& key, py::handle value) {
                c.rotation.fill(Range(key, value));  // bgv2 draws every axis from the one range
              }},
             {"p_rotation_per_axis", Set(c.p_rotation_per_axis)},
             {"p_scaling", Set(c.p_scaling)},
             {"scaling", SetRange(c.scaling)},
             {"p_synchronize_scaling", Set(c.p_synchronize_scaling)},
             {"p_elastic", Set(c.p_elastic)},
             {"elastic_scale", SetRange(c.elastic_scale)},
             {"elastic_magnitude", SetRange(c.elastic_magnitude)},
             {"p_synchronize_elastic_scale", Set(c.p_synchronize_elastic_scale)},
             {"seg_mode",
              [&c](const std::string& key, py::handle value) {
                const auto mode = Option<std::string>(key.c_str(), value);
                if (mode != "linear" && mode != "nearest") {
                  throw py::value_error("augmentation option '" + key +
                                        "' is 'linear' or 'nearest', not '" + mode + "'");
                }
                c.seg_mode = mode == "linear" ? augment::SegInterpolation::kLinear
                                              : augment::SegInterpolation::kNearest;
              }},
             {"seg_padding_value", Set(c.seg_padding_value)}});
}

void SetGamma(const std::string& name, augment::GammaConfig& c, py::handle settings) {
  SetFields(name, settings,
            {{"p_apply", Set(c.p_apply)},
             {"gamma", SetRange(c.gamma)},
             {"bg_contrast", Set(c.bg_contrast)},
             {"p_invert", Set(c.p_invert)},
             {"p_retain_stats", Set(c.p_retain_stats)},
             {"p_per_channel", Set(c.p_per_channel)},
             {"synchronize_channels", Set(c.synchronize_channels)}});
}

// The per-transform dicts ("spatial", "noise", ...); false when `key` names none.
bool SetTransform(const std::string& key, py::handle value, augment::NnUNetAugmentConfig& p) {
  if (key == "spatial") {
    SetSpatial(p.spatial, value);
  } else if (key == "noise") {
    SetFields(key, value,
              {{"p_apply", Set(p.noise.p_apply)},
               {"sigma", SetRange(p.noise.sigma)},
               {"p_per_channel", Set(p.noise.p_per_channel)},
               {"synchronize_channels", Set(p.noise.synchronize_channels)}});
  } else if (key == "blur") {
    SetFields(key, value,
              {{"p_apply", Set(p.blur.p_apply)},
               {"sigma", SetRange(p.blur.sigma)},
               {"p_per_channel", Set(p.blur.p_per_channel)},
               {"synchronize_channels", Set(p.blur.synchronize_channels)},
               {"synchronize_axes", Set(p.blur.synchronize_axes)}});
  } else if (key == "brightness") {
    SetFields(key, value,
              {{"p_apply", Set(p.brightness.p_apply)},
               {"multiplier", SetRange(p.brightness.multiplier)},
               {"bg_contrast", Set(p.brightness.bg_contrast)},
               {"p_per_channel", Set(p.brightness.p_per_channel)},
               {"synchronize_channels", Set(p.brightness.synchronize_channels)}});
  } else if (key == "contrast") {
    SetFields(key, value,
              {{"p_apply", Set(p.contrast.p_apply)},
               {"factor", SetRange(p.contrast.factor)},
               {"bg_contrast", Set(p.contrast.bg_contrast)},
               {"preserve_range", Set(p.contrast.preserve_range)},
               {"p_per_channel", Set(p.contrast.p_per_channel)},
               {"synchronize_channels", Set(p.contrast.synchronize_channels)}});
  } else if (key == "low_resolution") {
    augment::LowResolutionConfig& c = p.low_resolution;
    SetFields(key, value,
              {{"p_apply", Set(c.p_apply)},
               {"zoom", SetRange(c.zoom)},
               {"synchronize_channels", Set(c.synchronize_channels)},
               {"synchronize_axes", Set(c.synchronize_axes)},
               {"p_per_channel", Set(c.p_per_channel)},
               {"ignore_axes", [&c, &p](const std::string& name, py::handle axes) {
                  std::fill(std::begin(c.ignore_axis), std::end(c.ignore_axis), false);
                  for (const int64_t axis : Option<std::vector<int64_t>>(name.c_str(), axes)) {
                    if (axis < 0 || axis >= p.spatial_dims) {
                      throw py::value_error("augmentation option '" + name + "': axis " +
                                            std::to_string(axis) + " is not a patch axis");
                    }
                    c.ignore_axis[axis] = true;
                  }
                }}});
  } else if (key == "binary_operator") {
    augment::BinaryOperatorConfig& c = p.cascade.binary_operator;
    SetFields(key, value,
              {{"p_apply", Set(c.p_apply)},
               {"strel_size", SetRange(c.strel_size)},
               {"p_per_label", Set(c.p_per_label)},
               {"operators", [&c](const std::string& name, py::handle ops) {
                  // Indexed by augment::BinaryOperator.
                  static const std::array<std::string, 4> kNames = {"dilation", "erosion",
                                                                    "closing", "opening"};
                  c.operators = {false, false, false, false};
                  for (const auto& op : Option<std::vector<std::string>>(name.c_str(), ops)) {
                    const auto* it = std::find(kNames.begin(), kNames.end(), op);
                    if (it == kNames.end()) {
                      throw py::value_error("augmentation option '" + name + "': '" + op +
                                            "' is none of dilation, erosion, closing, opening");
                    }
                    c.operators[static_cast<size_t>(it - kNames.begin())] = true;
                  }
                }}});
  } else if (key == "remove_component") {
    augment::RemoveComponentConfig& c = p.cascade.remove_component;
    SetFields(key, value,
              {{"p_apply", Set(c.p_apply)},
               {"p_per_label", Set(c.p_per_label)},
               {"fill_with_other_class_p", Set(c.fill_with_other_class_p)},
               {"max_coverage", Set(c.max_coverage)}});
  } else if (key == "gamma_inverted") {
    SetGamma(key, p.gamma_inverted, value);
  } else if (key == "gamma") {
    SetGamma(key, p.gamma, value);
  } else {
    return false;
  }
  return true;
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
  // The flat keys are shorthands for one field of a transform's dict: giving both is ambiguous.
  static const std::map<std::string, std::pair<const char*, const char*>> kShorthands = {
      {"max_angle", {"spatial", "rotation"}},
      {"p_rotation", {"spatial", "p_rotation"}},
      {"p_scaling", {"spatial", "p_scaling"}},
      {"p_noise", {"noise", "p_apply"}},
      {"p_blur", {"blur", "p_apply"}},
      {"p_brightness", {"brightness", "p_apply"}},
      {"p_contrast", {"contrast", "p_apply"}},
      {"p_low_resolution", {"low_resolution", "p_apply"}},
      {"p_gamma_inverted", {"gamma_inverted", "p_apply"}},
      {"p_gamma", {"gamma", "p_apply"}}};
  for (const auto& [flat, nested] : kShorthands) {
    const auto& [transform, field] = nested;
    if (d.contains(flat) && d.contains(transform) && py::isinstance<py::dict>(d[transform]) &&
        d[transform].cast<py::dict>().contains(field)) {
      throw py::value_error(std::string("augmentation options '") + flat + "' and '" + transform +
                            "[\"" + field + "\"]' set the same thing: give one");
    }
  }
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
    } else if (key == "cascade_foreground_labels") {
      p.cascade.foreground_labels = Option<std::vector<int16_t>>(key.c_str(), value);
      if (p.cascade.foreground_labels.empty()) {
        throw py::value_error(
            "augmentation option 'cascade_foreground_labels' needs at least "
            "one label (nnU-Net's label_manager.foreground_labels)");
      }
    } else if (key == "previous_seg_array") {
      a.previous_seg_array = Option<std::string>(key.c_str(), value);
    } else if (SetTransform(key, value, p)) {
      continue;
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
