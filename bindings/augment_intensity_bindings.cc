// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Bindings of intensity and label augmentations (augment/intensity/) for Python: NumPy arrays
// in (modified in place where the shape stays) and out, explicit parameters in bg2's layout
// (a list of selected channel indices plus one value per listed channel), the GIL released
// around the C++ work. Tests and benchmarks call these; the loader calls C++ directly.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "augment/intensity/brightness_contrast.h"
#include "augment/intensity/channel_loops.h"
#include "augment/intensity/deep_supervision.h"
#include "augment/intensity/gamma.h"
#include "augment/intensity/gaussian_blur.h"
#include "augment/intensity/gaussian_noise.h"
#include "augment/intensity/label_transforms.h"
#include "augment/intensity/low_resolution.h"
#include "augment/sample_view.h"
#include "bindings/augment_arrays.h"
#include "bindings/status_to_exception.h"
#include "common/random.h"

namespace py = pybind11;

namespace patchfeed::internal_python {
namespace {

using augment::ChannelMask;
using augment::SampleView;

ChannelMask MaskOf(int64_t channels, const std::vector<int64_t>& selected, size_t values) {
  if (selected.size() != values)
    throw py::value_error("need one parameter per selected channel");
  ChannelMask m;
  m.channels = channels;
  for (int64_t c : selected) {
    if (c < 0 || c >= channels || c >= augment::kMaxChannels)
      throw py::value_error("selected channel out of range");
    m.selected[c] = true;
  }
  return m;
}

augment::AugmentScratch& Scratch() {
  thread_local augment::AugmentScratch scratch;  // reused across calls, as a worker would
  return scratch;
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

void GaussianNoiseField(py::array image, const std::vector<int64_t>& selected,
                        const std::vector<double>& sigmas, py::array field) {
  auto img = ViewOf<float>(image, "image");
  auto f = ViewOf<const float>(field, "field");
  augment::GaussianNoiseParams p;
  p.apply = true;
  p.channels = MaskOf(img.channels, selected, sigmas.size());
  for (size_t i = 0; i < selected.size(); ++i)
    p.sigma[selected[i]] = sigmas[i];
  RunReleased([&] { return augment::AddScaledField(p, f, img); });
}

void GaussianNoise(py::array image, const std::vector<int64_t>& selected,
                   const std::vector<double>& sigmas, uint64_t seed, uint32_t stream) {
  auto img = ViewOf<float>(image, "image");
  augment::GaussianNoiseParams p;
  p.apply = true;
  p.channels = MaskOf(img.channels, selected, sigmas.size());
  for (size_t i = 0; i < selected.size(); ++i)
    p.sigma[selected[i]] = sigmas[i];
  CounterRng rng(StreamId{.seed = seed, .stream = stream});
  RunReleased([&] { return augment::ApplyGaussianNoise(p, rng, img); });
}

void GaussianBlur(py::array image, const std::vector<int64_t>& selected,
                  const std::vector<std::vector<double>>& sigmas) {
  auto img = ViewOf<float>(image, "image");
  augment::GaussianBlurParams p;
  p.apply = true;
  p.channels = MaskOf(img.channels, selected, sigmas.size());
  for (size_t i = 0; i < selected.size(); ++i) {
    if (static_cast<int>(sigmas[i].size()) != img.spatial_dims)
      throw py::value_error("need one sigma per spatial axis");
    for (int d = 0; d < img.spatial_dims; ++d)
      p.sigma[selected[i]][d] = sigmas[i][d];
  }
  RunReleased([&] { return augment::ApplyGaussianBlur(p, img, Scratch()); });
}

std::vector<float> BlurKernel(double sigma) {
  if (!(sigma > 0) || internal_augment::BlurKernelSize(sigma) > augment::kMaxBlurKernel)
    throw py::value_error("sigma out of range");
  std::vector<float> taps(augment::kMaxBlurKernel);
  taps.resize(static_cast<size_t>(internal_augment::BuildBlurKernel(sigma, taps.data())));
  return taps;
}

void Brightness(py::array image, const std::vector<int64_t>& selected,
                const std::vector<float>& multipliers) {
  auto img = ViewOf<float>(image, "image");
  augment::BrightnessParams p;
  p.apply = true;
  p.channels = MaskOf(img.channels, selected, multipliers.size());
  for (size_t i = 0; i < selected.size(); ++i)
    p.multiplier[selected[i]] = multipliers[i];
  RunReleased([&] { return augment::ApplyBrightness(p, img); });
}

void Contrast(py::array image, const std::vector<int64_t>& selected,
              const std::vector<float>& factors, bool preserve_range) {
  auto img = ViewOf<float>(image, "image");
  augment::ContrastParams p;
  p.apply = true;
  p.preserve_range = preserve_range;
  p.channels = MaskOf(img.channels, selected, factors.size());
  for (size_t i = 0; i < selected.size(); ++i)
    p.factor[selected[i]] = factors[i];
  RunReleased([&] { return augment::ApplyContrast(p, img); });
}

void Gamma(py::array image, const std::vector<int64_t>& selected, const std::vector<float>& gammas,
           const std::vector<bool>& invert, const std::vector<bool>& retain_stats) {
  auto img = ViewOf<float>(image, "image");
  augment::GammaParams p;
  p.apply = true;
  p.channels = MaskOf(img.channels, selected, gammas.size());
  if (invert.size() != selected.size() || retain_stats.size() != selected.size())
    throw py::value_error("need one invert and retain_stats flag per selected channel");
  for (size_t i = 0; i < selected.size(); ++i) {
    p.gamma[selected[i]] = gammas[i];
    p.invert[selected[i]] = invert[i];
    p.retain_stats[selected[i]] = retain_stats[i];
  }
  RunReleased([&] { return augment::ApplyGamma(p, img); });
}

void LowResolution(py::array image, const std::vector<int64_t>& selected,
                   const std::vector<std::vector<float>>& zooms) {
  auto img = ViewOf<float>(image, "image");
  augment::LowResolutionParams p;
  p.apply = true;
  p.channels = MaskOf(img.channels, selected, zooms.size());
  for (size_t i = 0; i < selected.size(); ++i) {
    if (static_cast<int>(zooms[i].size()) != img.spatial_dims)
      throw py::value_error("need one zoom per spatial axis");
    for (int d = 0; d < img.spatial_dims; ++d)
      p.zoom[selected[i]][d] = zooms[i][d];
  }
  RunReleased([&] { return augment::ApplyLowResolution(p, img, Scratch()); });
}

void MaskImage(py::array image, py::array seg, const std::vector<int64_t>& channels,
               int64_t seg_channel, float set_to) {
  auto img = ViewOf<float>(image, "image");
  auto s = ViewOf<const int16_t>(seg, "seg");
  RunReleased([&] { return augment::ApplyMaskImage(channels, s, img, seg_channel, set_to); });
}

void RemoveLabel(py::array seg, int16_t label, int16_t set_to) {
  auto s = ViewOf<int16_t>(seg, "seg");
  RunReleased([&] { return augment::ApplyRemoveLabel(s, label, set_to); });
}

py::array SegmentationToRegions(py::array seg, const std::vector<std::vector<int64_t>>& regions,
                                int64_t seg_channel) {
  auto s = ViewOf<const int16_t>(seg, "seg");
  Result<augment::RegionTable> table = augment::RegionTable::Create(regions);
  ThrowIfError(table.status());
  std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(regions.size())};
  for (int d = 0; d < s.spatial_dims; ++d)
    shape.push_back(s.shape[d]);
  py::array out = NewArray("bool", shape);
  auto o = SampleView<uint8_t>::Contiguous(
      static_cast<uint8_t*>(out.mutable_data()), static_cast<int64_t>(regions.size()),
      std::span<const int64_t>(s.shape.data(), s.spatial_dims));
  RunReleased([&] { return augment::ApplySegmentationToRegions(*table, s, o, seg_channel); });
  return out;
}

template <typename T>
py::list DownsampleTyped(py::array seg, const std::vector<std::vector<double>>& scales,
                         const char* dtype_name) {
  auto s = ViewOf<const T>(seg, "seg");
  py::list result;
  for (const auto& f : scales) {
    augment::DeepSupervisionScale scale;
    if (f.size() == 1) {
      for (int d = 0; d < s.spatial_dims; ++d)
        scale.factor[d] = f[0];
    } else if (static_cast<int>(f.size()) == s.spatial_dims) {
      for (int d = 0; d < s.spatial_dims; ++d)
        scale.factor[d] = f[d];
    } else {
      throw py::value_error("a scale is a number or one factor per spatial axis");
    }
    if (augment::IsIdentityScale(scale, s.spatial_dims)) {
      result.append(seg);  // bg2 returns the input itself
      continue;
    }
    std::vector<int64_t> target(static_cast<size_t>(s.spatial_dims));
    ThrowIfError(augment::DeepSupervisionShape(
        scale, std::span<const int64_t>(s.shape.data(), s.spatial_dims), target.data()));
    std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(s.channels)};
    shape.insert(shape.end(), target.begin(), target.end());
    py::array out = NewArray(dtype_name, shape);
    auto o = SampleView<T>::Contiguous(static_cast<T*>(out.mutable_data()), s.channels, target);
    RunReleased([&] { return augment::DownsampleSegNearestExact<T>(s, o, Scratch()); });
    result.append(out);
  }
  return result;
}

py::list DownsampleSegForDS(py::array seg, const std::vector<std::vector<double>>& scales) {
  if (py::isinstance<py::array_t<int16_t>>(seg))
    return DownsampleTyped<int16_t>(seg, scales, "int16");
  if (seg.dtype().kind() == 'b')
    return DownsampleTyped<uint8_t>(seg, scales, "bool");
  if (py::isinstance<py::array_t<uint8_t>>(seg))
    return DownsampleTyped<uint8_t>(seg, scales, "uint8");
  throw py::type_error("seg must be int16, uint8 or bool");
}

}  // namespace

void RegisterAugmentIntensity(py::module_& m) {
  m.def("gaussian_noise_field", &GaussianNoiseField, py::arg("image"), py::arg("channels"),
        py::arg("sigmas"), py::arg("field"),
        "image[c] += float32(sigma_i * field[i]) for the i-th listed channel c, in place.");
  m.def("gaussian_noise", &GaussianNoise, py::arg("image"), py::arg("channels"), py::arg("sigmas"),
        py::arg("seed"), py::arg("stream") = 0,
        "Adds sigma-scaled standard normals from CounterRng(seed, stream), in place.");
  m.def("gaussian_blur", &GaussianBlur, py::arg("image"), py::arg("channels"), py::arg("sigmas"),
        "Separable Gaussian blur, sigmas[i][axis] for the i-th listed channel, in place.");
  m.def("blur_kernel", &BlurKernel, py::arg("sigma"), "The normalised taps for sigma.");
  m.def("brightness", &Brightness, py::arg("image"), py::arg("channels"), py::arg("multipliers"),
        "image[c] *= m, in place.");
  m.def("contrast", &Contrast, py::arg("image"), py::arg("channels"), py::arg("factors"),
        py::arg("preserve_range") = true, "ContrastTransform with explicit factors, in place.");
  m.def("gamma", &Gamma, py::arg("image"), py::arg("channels"), py::arg("gammas"),
        py::arg("invert"), py::arg("retain_stats"),
        "GammaTransform with explicit parameters, in place.");
  m.def("low_resolution", &LowResolution, py::arg("image"), py::arg("channels"), py::arg("zooms"),
        "SimulateLowResolution with zooms[i][axis], in place.");
  m.def("mask_image", &MaskImage, py::arg("image"), py::arg("seg"), py::arg("channels"),
        py::arg("seg_channel") = 0, py::arg("set_to") = 0.0f,
        "Sets listed image channels to set_to where seg[seg_channel] < 0, in place.");
  m.def("remove_label", &RemoveLabel, py::arg("seg"), py::arg("label") = -1, py::arg("set_to") = 0,
        "seg[seg == label] = set_to, in place (int16).");
  m.def("segmentation_to_regions", &SegmentationToRegions, py::arg("seg"), py::arg("regions"),
        py::arg("seg_channel") = 0, "(R, *spatial) bool region masks from int16 labels.");
  m.def("downsample_seg_for_ds", &DownsampleSegForDS, py::arg("seg"), py::arg("scales"),
        "Deep-supervision targets; scales are [s] or [s0, s1(, s2)] lists.");
}

}  // namespace patchfeed::internal_python
