// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Bindings of nnU-Net's cascade steps (augment/cascade/) for tests and benchmarks: NumPy arrays
// in (modified in place where the shape stays) and out, explicit parameters in bg2's layout,
// the GIL released around the C++ work. The loader calls C++ directly.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "augment/augment_config.h"
#include "augment/cascade/binary_morphology.h"
#include "augment/cascade/cascade_steps.h"
#include "augment/cascade/connected_components.h"
#include "augment/cascade/seg_to_onehot.h"
#include "bindings/augment_arrays.h"
#include "bindings/status_to_exception.h"
#include "common/random.h"

namespace py = pybind11;

namespace patchfeed::internal_python {
namespace {

using augment::BinaryOperator;
using augment::SampleView;

constexpr const char* kOperatorNames[] = {"dilation", "erosion", "closing", "opening"};

BinaryOperator OperatorOf(const std::string& name) {
  for (int k = 0; k < 4; ++k) {
    if (name == kOperatorNames[k])
      return static_cast<BinaryOperator>(k);
  }
  throw py::value_error("operator must be dilation, erosion, closing or opening, not " + name);
}

template <typename F>
void RunReleased(F&& f) {
  Status st;
  {
    py::gil_scoped_release release;
    st = f();
  }
  ThrowIfError(st);
}

augment::CascadeScratch& Scratch() {
  thread_local augment::CascadeScratch scratch;
  return scratch;
}

std::vector<py::ssize_t> SpatialShape(const py::array& a) {
  return std::vector<py::ssize_t>(a.shape() + 1, a.shape() + a.ndim());
}

py::array Footprint(double radius, int spatial_dims) {
  if (spatial_dims != 2 && spatial_dims != 3)
    throw py::value_error("spatial_dims must be 2 or 3");
  Result<augment::Footprint> fp = augment::NnUNetFootprint(radius, spatial_dims);
  ThrowIfError(fp.status());
  std::vector<py::ssize_t> shape(fp->size.begin() + (3 - spatial_dims), fp->size.end());
  py::array out = NewArray("uint8", shape);
  std::copy(fp->mask.begin(), fp->mask.end(), static_cast<uint8_t*>(out.mutable_data()));
  return out;
}

augment::MorphologyMethod MethodOf(const std::string& name) {
  if (name == "auto")
    return augment::MorphologyMethod::kAuto;
  if (name == "runs")
    return augment::MorphologyMethod::kRuns;
  if (name == "separable")
    return augment::MorphologyMethod::kSeparable;
  throw py::value_error("method must be auto, runs or separable, not " + name);
}

void BinaryMorphology(py::array mask, const std::string& op, double radius,
                      const std::string& method) {
  const augment::MorphologyMethod how = MethodOf(method);
  const SampleView<uint8_t> m = ViewOf<uint8_t>(mask, "mask");
  if (m.channels != 1)
    throw py::value_error("mask must have one channel");
  const BinaryOperator o = OperatorOf(op);
  RunReleased([&]() -> Status {
    PATCHFEED_ASSIGN_OR_RETURN(const augment::Footprint fp,
                               augment::NnUNetFootprint(radius, m.spatial_dims));
    return augment::ApplyBinaryMorphology(
        o, fp, augment::MaskShapeOf(m),
        std::span<uint8_t>(m.data, static_cast<size_t>(m.spatial_size())), Scratch().morphology,
        how);
  });
}

py::tuple LabelComponents(const py::array& mask) {
  const SampleView<const uint8_t> m = ViewOf<const uint8_t>(mask, "mask");
  if (m.channels != 1)
    throw py::value_error("mask must have one channel");
  augment::ComponentLabels& labels = Scratch().components;
  RunReleased([&] {
    return augment::LabelComponents(
        augment::MaskShapeOf(m),
        std::span<const uint8_t>(m.data, static_cast<size_t>(m.spatial_size())), labels);
  });
  py::array out = NewArray("int32", SpatialShape(mask));
  std::copy(labels.label.begin(), labels.label.end(), static_cast<int32_t*>(out.mutable_data()));
  return py::make_tuple(out, labels.sizes);
}

py::array SegToOneHot(const py::array& seg, const std::vector<int16_t>& labels,
                      int64_t seg_channel) {
  const SampleView<const int16_t> s = ViewOf<const int16_t>(seg, "seg");
  std::vector<py::ssize_t> shape = SpatialShape(seg);
  shape.insert(shape.begin(), static_cast<py::ssize_t>(labels.size()));
  py::array out = NewArray("float32", shape);
  const SampleView<float> o = ViewOf<float>(out, "one-hot output");
  RunReleased([&] { return augment::ApplySegToOneHot(labels, s, seg_channel, o); });
  return out;
}

// Checks one value list per channel list and returns the channel count.
int64_t CheckLists(const std::vector<int64_t>& channels, size_t values, int64_t labels) {
  if (channels.size() != values)
    throw py::value_error("need one parameter per listed channel");
  if (static_cast<int64_t>(channels.size()) > augment::kMaxChannels)
    throw py::value_error("too many channels");
  for (int64_t c : channels) {
    if (c < 0 || c >= labels)
      throw py::value_error("listed channel out of range");
  }
  return static_cast<int64_t>(channels.size());
}

void BinaryOperators(py::array onehot, const std::vector<int64_t>& channels,
                     const std::vector<std::string>& ops, const std::vector<double>& radii) {
  const SampleView<float> v = ViewOf<float>(onehot, "onehot");
  if (ops.size() != radii.size())
    throw py::value_error("need one radius per operator");
  augment::BinaryOperatorParams p;
  p.apply = true;
  p.labels = v.channels;
  p.count = CheckLists(channels, ops.size(), v.channels);
  for (size_t i = 0; i < channels.size(); ++i) {
    p.channel[i] = channels[i];
    p.op[i] = OperatorOf(ops[i]);
    p.radius[i] = radii[i];
  }
  RunReleased([&] { return augment::ApplyBinaryOperators(p, v, Scratch()); });
}

augment::RemoveComponentConfig RemoveConfig(double fill_with_other_class_p, double max_coverage) {
  augment::RemoveComponentConfig c;
  c.fill_with_other_class_p = fill_with_other_class_p;
  c.max_coverage = max_coverage;
  return c;
}

void RemoveComponent(py::array onehot, const std::vector<int64_t>& channels,
                     const std::vector<double>& picks, const std::vector<double>& fills,
                     const std::vector<double>& others, double fill_with_other_class_p,
                     double max_coverage) {
  const SampleView<float> v = ViewOf<float>(onehot, "onehot");
  if (fills.size() != picks.size() || others.size() != picks.size())
    throw py::value_error("picks, fills and others need equal lengths");
  augment::RemoveComponentParams p;
  p.apply = true;
  p.labels = v.channels;
  p.count = CheckLists(channels, picks.size(), v.channels);
  for (size_t i = 0; i < channels.size(); ++i) {
    p.channel[i] = channels[i];
    p.pick[i] = picks[i];
    p.fill[i] = fills[i];
    p.other[i] = others[i];
  }
  const augment::RemoveComponentConfig config = RemoveConfig(fill_with_other_class_p, max_coverage);
  RunReleased([&] { return augment::ApplyRemoveComponent(p, config, v, Scratch()); });
}

// Draws both steps' params for sample (seed, position) and applies them in nnU-Net's order;
// returns the draws.
py::dict CascadeRandom(py::array onehot, uint64_t seed, uint32_t position, double p_binary_operator,
                       std::pair<double, double> strel_size, double p_binary_operator_per_label,
                       double p_remove_component, double p_remove_component_per_label,
                       double fill_with_other_class_p, double max_coverage) {
  const SampleView<float> v = ViewOf<float>(onehot, "onehot");
  augment::CascadeConfig config;
  config.foreground_labels.assign(static_cast<size_t>(v.channels), 1);
  config.binary_operator.p_apply = p_binary_operator;
  config.binary_operator.strel_size = {strel_size.first, strel_size.second};
  config.binary_operator.p_per_label = p_binary_operator_per_label;
  config.remove_component = RemoveConfig(fill_with_other_class_p, max_coverage);
  config.remove_component.p_apply = p_remove_component;
  config.remove_component.p_per_label = p_remove_component_per_label;
  ThrowIfError(augment::ValidateCascadeConfig(config));
  CounterRng binary_rng(StreamId{.seed = seed, .position = position, .stream = 1});
  CounterRng remove_rng(StreamId{.seed = seed, .position = position, .stream = 2});
  const augment::BinaryOperatorParams b =
      augment::DrawBinaryOperatorParams(binary_rng, config.binary_operator, v.channels);
  const augment::RemoveComponentParams r =
      augment::DrawRemoveComponentParams(remove_rng, config.remove_component, v.channels);
  RunReleased([&]() -> Status {
    PATCHFEED_RETURN_IF_ERROR(augment::ApplyBinaryOperators(b, v, Scratch()));
    return augment::ApplyRemoveComponent(r, config.remove_component, v, Scratch());
  });
  py::dict d;
  d["binary_operator"] = b.apply;
  py::list ops;
  for (int64_t i = 0; i < b.count; ++i)
    ops.append(
        py::make_tuple(b.channel[i], kOperatorNames[static_cast<int>(b.op[i])], b.radius[i]));
  d["operators"] = ops;
  d["remove_component"] = r.apply;
  d["remove_channels"] = std::vector<int64_t>(r.channel.begin(), r.channel.begin() + r.count);
  return d;
}

}  // namespace

void RegisterAugmentCascade(py::module_& m) {
  m.def("footprint", &Footprint, py::arg("radius"), py::arg("spatial_dims"),
        "skimage's ball (3D) or disk (2D) of `radius` as uint8, as the binary operators use it.");
  m.def("binary_morphology_", &BinaryMorphology, py::arg("mask"), py::arg("op"), py::arg("radius"),
        py::arg("method") = "auto",
        "bg2's binary_{dilation,erosion,closing,opening}_torch on a (1, *spatial) uint8/bool "
        "mask, in place; method 'runs' or 'separable' forces a dilation algorithm.");
  m.def("label_components", &LabelComponents, py::arg("mask"),
        "skimage.measure.label (full connectivity) of a (1, *spatial) uint8/bool mask -> "
        "(labels int32 (*spatial), sizes).");
  m.def("seg_to_onehot", &SegToOneHot, py::arg("seg"), py::arg("labels"),
        py::arg("seg_channel") = 1,
        "MoveSegAsOneHotToDataTransform's channels: int16 (Cs, *S) -> float32 (len(labels), *S).");
  m.def("binary_operators_", &BinaryOperators, py::arg("onehot"), py::arg("channels"),
        py::arg("ops"), py::arg("radii"),
        "ApplyRandomBinaryOperatorTransform._apply_to_image on the one-hot channels, in place.");
  m.def("remove_component_", &RemoveComponent, py::arg("onehot"), py::arg("channels"),
        py::arg("picks"), py::arg("fills"), py::arg("others"),
        py::arg("fill_with_other_class_p") = 0.0, py::arg("max_coverage") = 0.15,
        "RemoveRandomConnectedComponentFromOneHotEncodingTransform._apply_to_image with the "
        "component choice as uniforms in [0, 1), in place.");
  m.def("cascade_random_", &CascadeRandom, py::arg("onehot"), py::arg("seed"), py::arg("position"),
        py::arg("p_binary_operator") = 0.4,
        py::arg("strel_size") = std::pair<double, double>{1.0, 8.0},
        py::arg("p_binary_operator_per_label") = 0.5, py::arg("p_remove_component") = 0.2,
        py::arg("p_remove_component_per_label") = 0.5, py::arg("fill_with_other_class_p") = 0.0,
        py::arg("max_coverage") = 0.15,
        "Both random cascade steps with draws from (seed, position), in place; returns the "
        "draws.");
}

}  // namespace patchfeed::internal_python
