// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "augment/nnunet_pipeline.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <utility>

#include "augment/cascade/seg_to_onehot.h"
#include "common/str_cat.h"

namespace patchfeed::augment {
namespace {

// One stream per transform (StreamId::stream = kAugmentStreamBase + this).
enum class Stream : uint32_t {
  kSpatial,
  kNoise,
  kNoiseField,
  kBlur,
  kBrightness,
  kContrast,
  kLowResolution,
  kGammaInverted,
  kGamma,
  kMirror,
  kCascadeBinaryOperator,
  kCascadeRemoveComponent,
};

CounterRng StreamFor(StreamId id, Stream s) {
  id.stream = kAugmentStreamBase + static_cast<uint32_t>(s);
  return CounterRng(id);
}

// Dummy 2D: (C, Z, Y, X) seen as (C*Z, Y, X), every slice a channel of a 2D sample. Needs the
// channels to follow each other at Z slices' distance (true for C == 1 or a dense layout).
template <typename T>
Result<SampleView<T>> As2D(const SampleView<T>& v, const char* what) {
  if (v.spatial_dims != 3) {
    return InvalidArgumentError(
        StrCat("nnU-Net augmentation, dummy 2D: the ", what, " must have 3 spatial dims"));
  }
  if (v.channels > 1 && v.channel_stride != v.shape[0] * v.strides[0]) {
    return InvalidArgumentError(StrCat("nnU-Net augmentation, dummy 2D: the ", what,
                                       "'s channels must lie Z slices apart"));
  }
  SampleView<T> r;
  r.data = v.data;
  r.spatial_dims = 2;
  r.channels = v.channels * v.shape[0];
  r.channel_stride = v.strides[0];
  r.shape = {v.shape[1], v.shape[2], 1};
  r.strides = {v.strides[1], v.strides[2], 0};
  return r;
}

// A double as Python prints a float ("5.0", "0.25", "inf"): these values come from Python
// users, and StrCat alone would print 5.0 as "5".
std::string PythonFloat(double v) {
  std::string s = StrCat(v);
  if (s.find_first_not_of("-0123456789") == std::string::npos)
    s += ".0";
  return s;
}

// With the cascade on, the image channels the spatial and intensity steps see: all but the
// one-hot channels at the end. Checks the channel counts the cascade needs.
Result<SampleView<float>> CropChannels(const NnUNetAugmentConfig& config, SampleView<float> image,
                                       int64_t seg_channels) {
  if (!config.cascade.enabled()) {
    return image;
  }
  const auto labels = static_cast<int64_t>(config.cascade.foreground_labels.size());
  if (seg_channels != 2) {
    return InvalidArgumentError(StrCat(
        "nnU-Net cascade augmentation: the segmentation needs 2 channels (the case's and the "
        "previous stage's), not ",
        seg_channels));
  }
  if (image.channels <= labels) {
    return InvalidArgumentError(StrCat("nnU-Net cascade augmentation: the image output has ",
                                       image.channels, " channels; it needs the crop's and ",
                                       labels, " one-hot channels"));
  }
  image.channels -= labels;
  return image;
}

// The draws of channel `c` alone, for a view of that channel (index 0). Channels past
// kMaxChannels have no draws: unselected.
ChannelMask OneChannel(const ChannelMask& m, int64_t c) {
  ChannelMask one;
  one.channels = 1;
  one.selected[0] = c < kMaxChannels && m.selected[c];
  return one;
}

template <typename Params, typename MoveChannel>
Params OneChannel(const Params& p, int64_t c, MoveChannel move) {
  Params one = p;
  one.channels = OneChannel(p.channels, c);
  if (c < kMaxChannels) {
    move(one, p, static_cast<size_t>(c));
  }
  return one;
}

GaussianBlurParams OneChannel(const GaussianBlurParams& p, int64_t c) {
  return OneChannel(p, c, [](auto& one, const auto& all, size_t k) {
    std::copy(std::begin(all.sigma[k]), std::end(all.sigma[k]), one.sigma[0]);
  });
}
BrightnessParams OneChannel(const BrightnessParams& p, int64_t c) {
  return OneChannel(
      p, c, [](auto& one, const auto& all, size_t k) { one.multiplier[0] = all.multiplier[k]; });
}
ContrastParams OneChannel(const ContrastParams& p, int64_t c) {
  return OneChannel(p, c,
                    [](auto& one, const auto& all, size_t k) { one.factor[0] = all.factor[k]; });
}
LowResolutionParams OneChannel(const LowResolutionParams& p, int64_t c) {
  return OneChannel(p, c, [](auto& one, const auto& all, size_t k) {
    std::copy(std::begin(all.zoom[k]), std::end(all.zoom[k]), one.zoom[0]);
  });
}
GammaParams OneChannel(const GammaParams& p, int64_t c) {
  return OneChannel(p, c, [](auto& one, const auto& all, size_t k) {
    one.invert[0] = all.invert[k];
    one.retain_stats[0] = all.retain_stats[k];
    one.gamma[0] = all.gamma[k];
  });
}

// nnU-Net's transforms after the spatial one, up to and including the mirroring, on image
// channel `c`. When a gamma is the last intensity transform and mirroring follows, the gamma's
// last pass (pointwise) runs inside the mirroring: one pass over the channel instead of two.
Status AugmentImageChannel(const NnUNetAugmentParams& params, const StreamId& sample,
                           SampleView<float> image, int64_t c, AugmentScratch& scratch) {
  const SampleView<float> channel = image.channel(c);
  if (params.noise.apply) {
    PATCHFEED_RETURN_IF_ERROR(ApplyGaussianNoiseToChannel(
        params.noise, StreamFor(sample, Stream::kNoiseField), image, c));
  }
  if (params.blur.apply) {
    PATCHFEED_RETURN_IF_ERROR(ApplyGaussianBlur(OneChannel(params.blur, c), channel, scratch));
  }
  if (params.brightness.apply) {
    PATCHFEED_RETURN_IF_ERROR(ApplyBrightness(OneChannel(params.brightness, c), channel));
  }
  if (params.contrast.apply) {
    PATCHFEED_RETURN_IF_ERROR(ApplyContrast(OneChannel(params.contrast, c), channel));
  }
  if (params.low_resolution.apply) {
    PATCHFEED_RETURN_IF_ERROR(
        ApplyLowResolution(OneChannel(params.low_resolution, c), channel, scratch));
  }
  const MirrorParams& m = params.mirror;
  const bool flips = m.flip[0] || m.flip[1] || m.flip[2];
  const GammaParams* last_gamma = params.gamma.apply            ? &params.gamma
                                  : params.gamma_inverted.apply ? &params.gamma_inverted
                                                                : nullptr;
  GammaFinishes finishes;
  for (const GammaParams* g : {&params.gamma_inverted, &params.gamma}) {
    if (!g->apply) {
      continue;
    }
    if (flips && g == last_gamma) {
      PATCHFEED_RETURN_IF_ERROR(ApplyGammaDeferringFinish(OneChannel(*g, c), channel, &finishes));
    } else {
      PATCHFEED_RETURN_IF_ERROR(ApplyGamma(OneChannel(*g, c), channel));
    }
  }
  if (!flips) {
    return Status::Ok();
  }
  if (!finishes.pending[0]) {
    return ApplyMirror(m, channel);
  }
  const GammaFinish f = finishes.finish[0];
  if (f.retain) {
    return ApplyMirrorMapped(m, channel, [f](float x) { return f.Retained(x); });
  }
  return ApplyMirrorMapped(m, channel, [f](float x) { return f.Plain(x); });
}

}  // namespace

NnUNetAugmentConfig NnUNetAugmentConfig::Default(std::span<const int64_t> patch, double max_angle,
                                                 bool dummy_2d) {
  NnUNetAugmentConfig c;
  c.spatial_dims = static_cast<int>(patch.size());
  c.dummy_2d = dummy_2d && patch.size() == 3;
  for (size_t d = 0; d < patch.size() && d < 3; ++d) {
    c.patch_size[d] = patch[d];
  }
  c.spatial = c.dummy_2d ? NnUnetSpatialConfig(patch.subspan(1), max_angle)
                         : NnUnetSpatialConfig(patch, max_angle);
  if (c.dummy_2d) {
    c.low_resolution.ignore_axis[0] = true;
  }
  c.mirror_axes = {true, true, patch.size() == 3};
  return c;
}

Status ValidateNnUNetAugmentConfig(const NnUNetAugmentConfig& c) {
  if (c.spatial_dims != 2 && c.spatial_dims != 3) {
    return InvalidArgumentError("augmentation: the patch needs 2 or 3 axes");
  }
  for (int d = 0; d < c.spatial_dims; ++d) {
    if (c.patch_size[static_cast<size_t>(d)] < 1) {
      return InvalidArgumentError("augmentation: patch size entries must be positive");
    }
  }
  const std::pair<const char*, double> probabilities[] = {
      {"p_rotation", c.spatial.p_rotation},
      {"p_scaling", c.spatial.p_scaling},
      {"p_elastic", c.spatial.p_elastic},
      {"p_noise", c.noise.p_apply},
      {"p_blur", c.blur.p_apply},
      {"p_brightness", c.brightness.p_apply},
      {"p_contrast", c.contrast.p_apply},
      {"p_low_resolution", c.low_resolution.p_apply},
      {"p_gamma_inverted", c.gamma_inverted.p_apply},
      {"p_gamma", c.gamma.p_apply},
      {"spatial.p_rotation_per_axis", c.spatial.p_rotation_per_axis},
      {"spatial.p_synchronize_scaling", c.spatial.p_synchronize_scaling},
      {"spatial.p_synchronize_elastic_scale", c.spatial.p_synchronize_elastic_scale},
      {"noise.p_per_channel", c.noise.p_per_channel},
      {"blur.p_per_channel", c.blur.p_per_channel},
      {"brightness.p_per_channel", c.brightness.p_per_channel},
      {"contrast.p_per_channel", c.contrast.p_per_channel},
      {"low_resolution.p_per_channel", c.low_resolution.p_per_channel},
      {"gamma_inverted.p_invert", c.gamma_inverted.p_invert},
      {"gamma_inverted.p_retain_stats", c.gamma_inverted.p_retain_stats},
      {"gamma_inverted.p_per_channel", c.gamma_inverted.p_per_channel},
      {"gamma.p_invert", c.gamma.p_invert},
      {"gamma.p_retain_stats", c.gamma.p_retain_stats},
      {"gamma.p_per_channel", c.gamma.p_per_channel}};
  for (const auto& [name, value] : probabilities) {
    if (!(value >= 0 && value <= 1)) {
      return InvalidArgumentError(StrCat("augmentation: ", name, " = ", PythonFloat(value),
                                         " is not a probability in [0, 1]"));
    }
  }
  const auto check_range = [](const char* name, const ScalarRange& r) -> Status {
    if (!std::isfinite(r.lo) || !std::isfinite(r.hi) || r.lo > r.hi) {
      return InvalidArgumentError(StrCat("augmentation: the ", name, " range [", PythonFloat(r.lo),
                                         ", ", PythonFloat(r.hi), "] must be finite and ordered"));
    }
    return Status::Ok();
  };
  for (const ScalarRange& r : c.spatial.rotation) {
    PATCHFEED_RETURN_IF_ERROR(check_range("rotation", r));
  }
  PATCHFEED_RETURN_IF_ERROR(check_range("scaling", c.spatial.scaling));
  if (c.spatial.scaling.lo <= 0) {
    return InvalidArgumentError("augmentation: scales must be positive");
  }
  // The other ranges: finite, ordered, and where a transform needs it, positive (a zoom, a
  // gamma or a factor of 0 has no meaning) or non-negative (a sigma, a magnitude).
  const struct {
    const char* name;
    const ScalarRange& range;
    double lowest;
    bool open;  // lowest itself excluded
  } ranges[] = {{"spatial.elastic_scale", c.spatial.elastic_scale, 0, false},
                {"spatial.elastic_magnitude", c.spatial.elastic_magnitude, 0, false},
                {"noise.sigma", c.noise.sigma, 0, false},
                {"blur.sigma", c.blur.sigma, 0, false},
                {"brightness.multiplier", c.brightness.multiplier, 0, false},
                {"contrast.factor", c.contrast.factor, 0, false},
                {"low_resolution.zoom", c.low_resolution.zoom, 0, true},
                {"gamma_inverted.gamma", c.gamma_inverted.gamma, 0, true},
                {"gamma.gamma", c.gamma.gamma, 0, true}};
  for (const auto& r : ranges) {
    PATCHFEED_RETURN_IF_ERROR(check_range(r.name, r.range));
    if (r.range.lo < r.lowest || (r.open && r.range.lo == r.lowest)) {
      return InvalidArgumentError(StrCat("augmentation: the ", r.name, " range must be ",
                                         r.open ? "positive" : "non-negative"));
    }
  }
  return ValidateCascadeConfig(c.cascade);
}

NnUNetAugmentParams DrawNnUNetAugmentParams(const NnUNetAugmentConfig& config,
                                            const StreamId& sample, int64_t channels) {
  const int dims = config.spatial_dims;
  NnUNetAugmentParams p;
  {
    CounterRng rng = StreamFor(sample, Stream::kSpatial);
    p.spatial = DrawSpatialParams(rng, config.spatial, config.spatial.spatial_dims);
  }
  {
    CounterRng rng = StreamFor(sample, Stream::kNoise);
    p.noise = DrawGaussianNoiseParams(rng, config.noise, channels, dims);
  }
  {
    CounterRng rng = StreamFor(sample, Stream::kBlur);
    p.blur = DrawGaussianBlurParams(rng, config.blur, channels, dims);
  }
  {
    CounterRng rng = StreamFor(sample, Stream::kBrightness);
    p.brightness = DrawBrightnessParams(rng, config.brightness, channels, dims);
  }
  {
    CounterRng rng = StreamFor(sample, Stream::kContrast);
    p.contrast = DrawContrastParams(rng, config.contrast, channels, dims);
  }
  {
    CounterRng rng = StreamFor(sample, Stream::kLowResolution);
    p.low_resolution = DrawLowResolutionParams(rng, config.low_resolution, channels, dims);
  }
  {
    CounterRng rng = StreamFor(sample, Stream::kGammaInverted);
    p.gamma_inverted = DrawGammaParams(rng, config.gamma_inverted, channels, dims);
  }
  {
    CounterRng rng = StreamFor(sample, Stream::kGamma);
    p.gamma = DrawGammaParams(rng, config.gamma, channels, dims);
  }
  {
    CounterRng rng = StreamFor(sample, Stream::kMirror);
    p.mirror = DrawMirrorParams(rng, dims);
    for (int d = 0; d < 3; ++d) {
      p.mirror.flip[static_cast<size_t>(d)] =
          p.mirror.flip[static_cast<size_t>(d)] && config.mirror_axes[static_cast<size_t>(d)];
    }
  }
  if (config.cascade.enabled()) {
    const auto labels = static_cast<int64_t>(config.cascade.foreground_labels.size());
    CounterRng binary = StreamFor(sample, Stream::kCascadeBinaryOperator);
    p.binary_operator = DrawBinaryOperatorParams(binary, config.cascade.binary_operator, labels);
    CounterRng remove = StreamFor(sample, Stream::kCascadeRemoveComponent);
    p.remove_component = DrawRemoveComponentParams(remove, config.cascade.remove_component, labels);
  }
  return p;
}

namespace {

// ApplyNnUNetSpatial once the cascade's one-hot channels are split off `image_out`.
Status SpatialOnCropChannels(const NnUNetAugmentParams& params, const NnUNetAugmentConfig& config,
                             SampleView<const float> image_crop, SampleView<const int16_t> seg_crop,
                             SampleView<float> image_out, SampleView<int16_t> seg_out,
                             NnUNetAugmentScratch& scratch, const PieceRunner& pieces) {
  if (!config.dummy_2d) {
    return ApplySpatialTransform(params.spatial, config.spatial, image_crop, seg_crop, image_out,
                                 seg_out, scratch.spatial, pieces);
  }
  PATCHFEED_ASSIGN_OR_RETURN(auto image_in2, As2D(image_crop, "image crop"));
  PATCHFEED_ASSIGN_OR_RETURN(auto image_out2, As2D(image_out, "image output"));
  if (image_crop.shape[0] != image_out.shape[0]) {
    return InvalidArgumentError(StrCat("nnU-Net augmentation, dummy 2D: the crop's axis 0 (",
                                       image_crop.shape[0], ") must equal the patch's (",
                                       image_out.shape[0], ")"));
  }
  SampleView<const int16_t> seg_in2 = seg_crop;
  SampleView<int16_t> seg_out2 = seg_out;
  if (seg_crop.channels > 0) {
    PATCHFEED_ASSIGN_OR_RETURN(seg_in2, As2D(seg_crop, "segmentation crop"));
    PATCHFEED_ASSIGN_OR_RETURN(seg_out2, As2D(seg_out, "segmentation output"));
  }
  return ApplySpatialTransform(params.spatial, config.spatial, image_in2, seg_in2, image_out2,
                               seg_out2, scratch.spatial, pieces);
}

}  // namespace

Status ApplyNnUNetSpatial(const NnUNetAugmentParams& params, const NnUNetAugmentConfig& config,
                          SampleView<const float> image_crop, SampleView<const int16_t> seg_crop,
                          SampleView<float> image_out, SampleView<int16_t> seg_out,
                          NnUNetAugmentScratch& scratch, const PieceRunner& pieces) {
  PATCHFEED_ASSIGN_OR_RETURN(image_out, CropChannels(config, image_out, seg_crop.channels));
  return SpatialOnCropChannels(params, config, image_crop, seg_crop, image_out, seg_out, scratch,
                               pieces);
}

CropWindow NnUNetSpatialWindow(const NnUNetAugmentParams& params, const NnUNetAugmentConfig& config,
                               std::span<const int64_t> crop_shape) {
  CropWindow w;
  const int dims = config.spatial_dims;
  for (int d = 0; d < dims; ++d) {
    w.shape[static_cast<size_t>(d)] = crop_shape[static_cast<size_t>(d)];
  }
  // Dummy 2D keeps axis 0 whole and transforms axes 1 and 2.
  const int first = config.dummy_2d ? 1 : 0;
  const int tdims = dims - first;
  if (params.spatial.do_deform) {
    return w;  // elastic offsets are not bounded by the affine corners: the whole crop
  }
  if (!params.spatial.transforms()) {
    // The crop path: a patch centred at floor(S/2).
    for (int d = first; d < dims; ++d) {
      const auto i = static_cast<size_t>(d);
      w.origin[i] = crop_shape[i] / 2 - config.patch_size[i] / 2;
      w.shape[i] = config.patch_size[i];
    }
    return w;
  }
  // The sampling map is affine, so its extremes over the output are at the patch's corners.
  const auto a = SpatialAffineMatrix(params.spatial, tdims);
  std::array<double, 3> lo{}, hi{};
  lo.fill(1e300);
  hi.fill(-1e300);
  for (int corner = 0; corner < (1 << tdims); ++corner) {
    for (int r = 0; r < tdims; ++r) {
      const auto ri = static_cast<size_t>(r);
      double x = (static_cast<double>(crop_shape[static_cast<size_t>(first + r)]) - 1) / 2;
      for (int k = 0; k < tdims; ++k) {
        const auto p = static_cast<double>(config.patch_size[static_cast<size_t>(first + k)]);
        const double i = (corner >> k) & 1 ? p - 1 : 0;
        x += a[ri][static_cast<size_t>(k)] * (i - (p - 1) / 2);
      }
      lo[ri] = std::min(lo[ri], x);
      hi[ri] = std::max(hi[ri], x);
    }
  }
  for (int r = 0; r < tdims; ++r) {
    const auto i = static_cast<size_t>(first + r);
    const auto ri = static_cast<size_t>(r);
    if (!std::isfinite(lo[ri]) || !std::isfinite(hi[ri])) {
      return w;  // the whole crop; the spatial step reports the bad parameters
    }
    // Neighbours floor(x) and floor(x) + 1, and one voxel either side for float32 positions.
    const int64_t start =
        std::clamp<int64_t>(static_cast<int64_t>(std::floor(lo[ri])) - 1, 0, crop_shape[i] - 1);
    const int64_t stop =
        std::clamp<int64_t>(static_cast<int64_t>(std::floor(hi[ri])) + 3, start + 1, crop_shape[i]);
    w.origin[i] = start;
    w.shape[i] = stop - start;
  }
  return w;
}

Status ApplyNnUNetSpatialWindow(const NnUNetAugmentParams& params,
                                const NnUNetAugmentConfig& config,
                                std::span<const int64_t> crop_shape, const CropWindow& window,
                                SampleView<const float> image_window,
                                SampleView<const int16_t> seg_window, SampleView<float> image_out,
                                SampleView<int16_t> seg_out, NnUNetAugmentScratch& scratch,
                                const PieceRunner& pieces) {
  PATCHFEED_ASSIGN_OR_RETURN(image_out, CropChannels(config, image_out, seg_window.channels));
  bool whole = true;
  for (int d = 0; d < config.spatial_dims; ++d) {
    const auto i = static_cast<size_t>(d);
    whole &= window.origin[i] == 0 && window.shape[i] == crop_shape[i];
  }
  if (whole) {
    return SpatialOnCropChannels(params, config, image_window, seg_window, image_out, seg_out,
                                 scratch, pieces);
  }
  if (!params.spatial.transforms()) {
    // The crop path's window is the patch itself.
    PATCHFEED_RETURN_IF_ERROR(
        CopySample(image_window, image_out, "nnU-Net augmentation: the window and the patch"));
    if (seg_window.channels > 0) {
      PATCHFEED_RETURN_IF_ERROR(
          CopySample(seg_window, seg_out, "nnU-Net augmentation: the window and the patch"));
    }
    return Status::Ok();
  }
  const int first = config.dummy_2d ? 1 : 0;
  const int tdims = config.spatial_dims - first;
  const std::span<const int64_t> crop2 = crop_shape.subspan(static_cast<size_t>(first));
  const std::span<const int64_t> origin2(window.origin.data() + first, static_cast<size_t>(tdims));
  if (!config.dummy_2d) {
    return ApplySpatialTransformWindow(params.spatial, config.spatial, crop2, origin2, image_window,
                                       seg_window, image_out, seg_out, scratch.spatial, pieces);
  }
  PATCHFEED_ASSIGN_OR_RETURN(auto image_in2, As2D(image_window, "image window"));
  PATCHFEED_ASSIGN_OR_RETURN(auto image_out2, As2D(image_out, "image output"));
  SampleView<const int16_t> seg_in2 = seg_window;
  SampleView<int16_t> seg_out2 = seg_out;
  if (seg_window.channels > 0) {
    PATCHFEED_ASSIGN_OR_RETURN(seg_in2, As2D(seg_window, "segmentation window"));
    PATCHFEED_ASSIGN_OR_RETURN(seg_out2, As2D(seg_out, "segmentation output"));
  }
  return ApplySpatialTransformWindow(params.spatial, config.spatial, crop2, origin2, image_in2,
                                     seg_in2, image_out2, seg_out2, scratch.spatial, pieces);
}

Status ApplyNnUNetAfterSpatial(const NnUNetAugmentParams& params, const NnUNetAugmentConfig& config,
                               const StreamId& sample, SampleView<float> image,
                               SampleView<int16_t> seg, NnUNetAugmentScratch& scratch,
                               const PieceRunner& pieces) {
  // The cascade's one-hot channels are made last, from segmentation channel 1.
  const SampleView<float> full_image = image;
  PATCHFEED_ASSIGN_OR_RETURN(image, CropChannels(config, image, seg.channels));
  // Every transform up to the mirroring works on each image channel alone, with that channel's
  // draws: a channel is one piece, the segmentation's mirroring another. Masking reads both, so
  // it follows them.
  const MirrorParams& m = params.mirror;
  const bool flips = m.flip[0] || m.flip[1] || m.flip[2];
  // Label removal (-1 -> 0, pointwise) runs inside the segmentation's mirroring unless masking,
  // which reads the -1s, comes between them.
  const bool fold_removal = flips && config.remove_label && config.mask_channels.empty();
  const int64_t channels = image.channels;
  const bool seg_piece = flips && seg.channels > 0;
  const int64_t count = channels + (seg_piece ? 1 : 0);
  if (scratch.channel.size() < static_cast<size_t>(channels)) {
    scratch.channel.resize(static_cast<size_t>(channels));
  }
  scratch.piece_status.assign(static_cast<size_t>(count), Status::Ok());
  pieces.ForEach(count, [&](int64_t i) {
    Status& st = scratch.piece_status[static_cast<size_t>(i)];
    if (i < channels) {
      st = AugmentImageChannel(params, sample, image, i, scratch.channel[static_cast<size_t>(i)]);
    } else if (fold_removal) {
      st = ApplyMirrorMapped(m, seg, [](int16_t v) { return v == int16_t{-1} ? int16_t{0} : v; });
    } else {
      st = ApplyMirror(m, seg);
    }
  });
  for (const Status& st : scratch.piece_status) {
    PATCHFEED_RETURN_IF_ERROR(st);
  }
  if (seg.channels > 0) {
    if (!config.mask_channels.empty()) {
      PATCHFEED_RETURN_IF_ERROR(ApplyMaskImage(config.mask_channels, seg, image));
    }
    if (config.remove_label && !fold_removal) {
      PATCHFEED_RETURN_IF_ERROR(ApplyRemoveLabel(seg));
    }
  }
  if (config.cascade.enabled()) {
    SampleView<float> onehot = full_image;
    onehot.data += image.channels * full_image.channel_stride;
    onehot.channels = full_image.channels - image.channels;
    PATCHFEED_RETURN_IF_ERROR(
        ApplySegToOneHot(config.cascade.foreground_labels, seg, /*seg_channel=*/1, onehot));
    PATCHFEED_RETURN_IF_ERROR(
        ApplyBinaryOperators(params.binary_operator, onehot, scratch.cascade));
    PATCHFEED_RETURN_IF_ERROR(ApplyRemoveComponent(
        params.remove_component, config.cascade.remove_component, onehot, scratch.cascade));
  }
  return Status::Ok();
}

Status ApplyNnUNetAugment(const NnUNetAugmentParams& params, const NnUNetAugmentConfig& config,
                          const StreamId& sample, SampleView<const float> image_crop,
                          SampleView<const int16_t> seg_crop, SampleView<float> image_out,
                          SampleView<int16_t> seg_out, NnUNetAugmentScratch& scratch,
                          const PieceRunner& pieces) {
  PATCHFEED_RETURN_IF_ERROR(ApplyNnUNetSpatial(params, config, image_crop, seg_crop, image_out,
                                               seg_out, scratch, pieces));
  return ApplyNnUNetAfterSpatial(params, config, sample, image_out, seg_out, scratch, pieces);
}

}  // namespace patchfeed::augment
