// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Bindings of nnU-Net's whole augmentation pipeline (augment/nnunet_pipeline.h) for one
// sample: _core.augment.NnUNetAugmenter. The loader runs the same pipeline in C++; this is
// for users who augment outside the loader, and for the per-sample benchmark.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "augment/crop_size.h"
#include "augment/intensity/deep_supervision.h"
#include "augment/nnunet_pipeline.h"
#include "bindings/augment_options.h"
#include "bindings/status_to_exception.h"
#include "common/random.h"

namespace py = pybind11;

namespace patchfeed::internal_python {
namespace {

using augment::SampleView;

template <typename T, int kFlags>
SampleView<const T> InputView(const py::array_t<T, kFlags>& a, const char* name) {
  if (a.ndim() != 3 && a.ndim() != 4) {
    throw py::value_error(std::string(name) + " must be (C, *spatial) with 2 or 3 spatial dims");
  }
  std::vector<int64_t> spatial(a.shape() + 1, a.shape() + a.ndim());
  return SampleView<const T>::Contiguous(a.data(), a.shape(0), spatial);
}

class NnUNetAugmenter {
 public:
  NnUNetAugmenter(const py::dict& augmentation, uint64_t seed,
                  std::optional<std::vector<std::vector<double>>> deep_supervision_scales,
                  std::optional<std::vector<int16_t>> cascade_foreground_labels)
      : config_(AugmentOptionsFromDict(augmentation).pipeline), seed_(seed) {
    if (cascade_foreground_labels) {
      if (cascade_foreground_labels->empty()) {
        throw py::value_error("cascade_foreground_labels needs at least one label");
      }
      config_.cascade.foreground_labels = *cascade_foreground_labels;
    }
    ThrowIfError(augment::ValidateNnUNetAugmentConfig(config_));
    patch_.assign(config_.patch_size.begin(), config_.patch_size.begin() + config_.spatial_dims);
    for (const auto& s : deep_supervision_scales.value_or(std::vector<std::vector<double>>{})) {
      if (s.size() != patch_.size()) {
        throw py::value_error("each deep-supervision scale needs one factor per patch axis");
      }
      augment::DeepSupervisionScale scale;
      for (size_t d = 0; d < s.size(); ++d) {
        scale.factor[d] = s[d];
      }
      scales_.push_back(scale);
    }
  }

  // image (C, *crop) float32, seg (Cs, *crop) int16 -> {"image": (C, *patch), "segmentation":
  // (Cs, *patch) or, with deep-supervision scales, a list of one array per scale}. With the
  // cascade, seg is (2, *crop) (the previous stage's second), the image gains one channel per
  // foreground label and the segmentation keeps channel 0, as nnU-Net's transforms return them.
  py::dict Call(const py::array_t<float, py::array::c_style | py::array::forcecast>& image,
                const py::array_t<int16_t, py::array::c_style | py::array::forcecast>& seg,
                int64_t index, int64_t epoch, int64_t batch) {
    const SampleView<const float> image_in = InputView(image, "image");
    const SampleView<const int16_t> seg_in = InputView(seg, "seg");
    const bool cascade = config_.cascade.enabled();
    const auto onehot = static_cast<py::ssize_t>(config_.cascade.foreground_labels.size());
    // The pipeline's segmentation has the input's channels; the output drops the cascade's.
    const py::ssize_t seg_channels = cascade ? 1 : seg.shape(0);
    std::vector<py::ssize_t> image_shape = {image.shape(0) + (cascade ? onehot : 0)},
                             seg_shape = {seg_channels};
    for (const int64_t p : patch_) {
      image_shape.push_back(p);
      seg_shape.push_back(p);
    }
    py::array_t<float> image_out(image_shape);
    py::array_t<int16_t> seg_out(seg_shape);
    const SampleView<float> image_view =
        SampleView<float>::Contiguous(image_out.mutable_data(), image_shape[0], patch_);
    int64_t patch_voxels = 1;
    for (const int64_t p : patch_) {
      patch_voxels *= p;
    }
    std::vector<int16_t> seg_work;  // both channels, when the output keeps only the first
    if (cascade) {
      seg_work.resize(static_cast<size_t>(seg.shape(0) * patch_voxels));
    }
    const SampleView<int16_t> seg_view = SampleView<int16_t>::Contiguous(
        cascade ? seg_work.data() : seg_out.mutable_data(), seg.shape(0), patch_);
    const SampleView<int16_t> seg_kept = cascade ? seg_view.channel(0) : seg_view;
    std::vector<py::array_t<int16_t>> targets;
    std::vector<SampleView<int16_t>> target_views;
    for (const augment::DeepSupervisionScale& scale : scales_) {
      std::vector<int64_t> shape(patch_.size());
      ThrowIfError(augment::DeepSupervisionShape(scale, patch_, shape.data()));
      std::vector<py::ssize_t> full = {seg_channels};
      full.insert(full.end(), shape.begin(), shape.end());
      targets.emplace_back(full);
      target_views.push_back(
          SampleView<int16_t>::Contiguous(targets.back().mutable_data(), seg_channels, shape));
    }
    Status st;
    {
      py::gil_scoped_release release;
      const StreamId id{
          .seed = seed_, .epoch = epoch, .batch = batch, .position = static_cast<uint32_t>(index)};
      const augment::NnUNetAugmentParams params =
          augment::DrawNnUNetAugmentParams(config_, id, image_in.channels);
      st = augment::ApplyNnUNetAugment(params, config_, id, image_in, seg_in, image_view, seg_view,
                                       scratch_);
      for (size_t k = 0; st.ok() && k < scales_.size(); ++k) {
        st = augment::DownsampleSegNearestExact<int16_t>(seg_kept, target_views[k]);
      }
      if (st.ok() && cascade) {
        std::copy(seg_work.begin(), seg_work.begin() + patch_voxels, seg_out.mutable_data());
      }
    }
    ThrowIfError(st);
    py::dict out;
    out["image"] = image_out;
    if (scales_.empty()) {
      out["segmentation"] = seg_out;
    } else {
      py::list segs;
      for (auto& t : targets) {
        segs.append(t);
      }
      out["segmentation"] = segs;
    }
    return out;
  }

 private:
  augment::NnUNetAugmentConfig config_;
  std::vector<int64_t> patch_;
  uint64_t seed_;
  std::vector<augment::DeepSupervisionScale> scales_;
  augment::NnUNetAugmentScratch scratch_;
};

}  // namespace

void RegisterAugmentPipeline(py::module_& m) {
  py::class_<NnUNetAugmenter>(m, "NnUNetAugmenter",
                              "nnU-Net's default training augmentation for one sample at a time "
                              "(not thread-safe: one per thread).")
      .def(py::init<const py::dict&, uint64_t, std::optional<std::vector<std::vector<double>>>,
                    std::optional<std::vector<int16_t>>>(),
           py::arg("augmentation"), py::arg("seed") = 0,
           py::arg("deep_supervision_scales") = std::nullopt,
           py::arg("cascade_foreground_labels") = std::nullopt)
      .def("__call__", &NnUNetAugmenter::Call, py::arg("image"), py::arg("seg"), py::arg("index"),
           py::arg("epoch") = 0, py::arg("batch") = 0,
           "Augments one sample; the draws depend only on (seed, epoch, batch, index), so the "
           "loader's sample `index` of batch `batch` in `epoch` gets the same ones.");
  m.def(
      "crop_for",
      [](const std::vector<int64_t>& patch, double max_angle, double min_scale, bool dummy_2d) {
        return ValueOrThrow(augment::CropForAugmentation(patch, max_angle, min_scale, dummy_2d));
      },
      py::arg("patch_size"), py::arg("max_angle"), py::arg("min_scale"), py::arg("dummy_2d"),
      "nnU-Net's initial patch size (augment/crop_size.h); patchfeed.augment.crop_for wraps it.");
}

}  // namespace patchfeed::internal_python
