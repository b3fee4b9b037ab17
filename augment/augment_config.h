// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_AUGMENT_CONFIG_H_
#define PATCHFEED_AUGMENT_AUGMENT_CONFIG_H_

/// \file
/// The settings of nnU-Net's training augmentation: one plain struct per transform and
/// NnUNetAugmentConfig, which holds them all. What a user configures lives here, apart from the
/// transforms (spatial/, intensity/, nnunet_pipeline.h), so that a header that only carries a
/// configuration (loader/loader.h) includes this one file. Values, no behaviour but defaults.

#include <array>
#include <cstdint>
#include <numbers>
#include <span>
#include <vector>

#include "augment/sample_view.h"
#include "augment/scalar_range.h"
#include "common/status.h"

namespace patchfeed::augment {

/// How segmentations are resampled on the interpolating path.
enum class SegInterpolation {
  kLinear,   ///< nnU-Net's default (mode_seg='bilinear', bg_style_seg_sampling=False)
  kNearest,  ///< mode_seg='nearest' (nnUNetTrainer_DASegOrd0 and friends)
};

/// SpatialTransform settings; the defaults are nnU-Net's except the patch size and the
/// rotation range, which the caller sets (NnUnetSpatialConfig). Angles are in radians.
struct SpatialConfig {
  int spatial_dims = 3;                 ///< 2 or 3
  std::array<int64_t, 3> patch_size{};  ///< P; entries past spatial_dims unused
  double p_rotation = 0.2;
  std::array<ScalarRange, 3> rotation{};  ///< per axis; nnU-Net: (-a, a) for every axis
  double p_rotation_per_axis = 1.0;
  double p_scaling = 0.2;
  ScalarRange scaling{0.7, 1.4};
  double p_synchronize_scaling = 1.0;     ///< one scale for all axes with this probability
  double p_elastic = 0.0;                 ///< nnU-Net: 0 (see elastic.h for how we differ)
  ScalarRange elastic_scale{0, 0.2};      ///< blur sigma as a fraction of the patch size
  ScalarRange elastic_magnitude{0, 0.2};  ///< largest offset, voxels
  double p_synchronize_elastic_scale = 0.0;
  SegInterpolation seg_mode = SegInterpolation::kLinear;
  int16_t seg_padding_value = -1;  ///< 0 means torch's plain zero padding, no fix-up
};

/// nnU-Net's defaults: `RandomTransform(GaussianNoiseTransform(noise_variance=(0, 0.1),
/// p_per_channel=1, synchronize_channels=True), apply_probability=0.1)`. bg2 calls the range
/// "variance" but uses it as the standard deviation; so do we.
struct GaussianNoiseConfig {
  double p_apply = 0.1;
  ScalarRange sigma{0.0, 0.1};
  double p_per_channel = 1.0;
  bool synchronize_channels = true;  ///< one sigma for all channels
};

/// nnU-Net's defaults: `RandomTransform(GaussianBlurTransform(blur_sigma=(0.5, 1.),
/// synchronize_channels=False, synchronize_axes=False, p_per_channel=0.5), 0.2)`.
struct GaussianBlurConfig {
  double p_apply = 0.2;
  ScalarRange sigma{0.5, 1.0};
  double p_per_channel = 0.5;
  bool synchronize_channels = false;
  bool synchronize_axes = false;
};

/// nnU-Net: `RandomTransform(MultiplicativeBrightnessTransform(multiplier_range=
/// BGContrast((0.75, 1.25)), synchronize_channels=False, p_per_channel=1), 0.15)`.
struct BrightnessConfig {
  double p_apply = 0.15;
  ScalarRange multiplier{0.75, 1.25};
  bool bg_contrast = true;  ///< factors from BGContrast (else plain U(lo, hi))
  double p_per_channel = 1.0;
  bool synchronize_channels = false;
};

/// nnU-Net: `RandomTransform(ContrastTransform(contrast_range=BGContrast((0.75, 1.25)),
/// preserve_range=True, synchronize_channels=False, p_per_channel=1), 0.15)`.
struct ContrastConfig {
  double p_apply = 0.15;
  ScalarRange factor{0.75, 1.25};
  bool bg_contrast = true;
  bool preserve_range = true;
  double p_per_channel = 1.0;
  bool synchronize_channels = false;
};

/// nnU-Net: `RandomTransform(SimulateLowResolutionTransform(scale=(0.5, 1),
/// synchronize_channels=False, synchronize_axes=True, ignore_axes=ignore_axes,
/// allowed_channels=None, p_per_channel=0.5), 0.25)`; `ignore_axes = (0,)` in dummy 2D.
struct LowResolutionConfig {
  double p_apply = 0.25;
  ScalarRange zoom{0.5, 1.0};
  bool synchronize_channels = false;
  bool synchronize_axes = true;
  bool ignore_axis[kMaxSpatialDims] = {false, false, false};  ///< zoom 1 on these axes
  double p_per_channel = 0.5;
};

/// Defaults are the second instance: `RandomTransform(GammaTransform(gamma=BGContrast((0.7,
/// 1.5)), p_invert_image=0, synchronize_channels=False, p_per_channel=1, p_retain_stats=1),
/// 0.3)`. The first instance sets `p_apply = 0.1, p_invert = 1`.
struct GammaConfig {
  double p_apply = 0.3;
  ScalarRange gamma{0.7, 1.5};
  bool bg_contrast = true;
  double p_invert = 0.0;
  double p_retain_stats = 1.0;
  double p_per_channel = 1.0;
  bool synchronize_channels = false;

  /// nnU-Net's first (inverted) instance.
  static GammaConfig Inverted() {
    GammaConfig c;
    c.p_apply = 0.1;
    c.p_invert = 1.0;
    return c;
  }
};

/// A binary operator of ApplyRandomBinaryOperatorTransform (bg2's `binary_*_torch`).
enum class BinaryOperator : uint8_t { kDilation, kErosion, kClosing, kOpening };

/// nnU-Net's cascade: `RandomTransform(ApplyRandomBinaryOperatorTransform(channel_idx=<the
/// one-hot channels>, strel_size=(1, 8), p_per_label=0.5), apply_probability=0.4)`. The
/// operators are drawn uniformly from those enabled (bg2: all four).
struct BinaryOperatorConfig {
  double p_apply = 0.4;
  ScalarRange strel_size{1.0, 8.0};  ///< ball (3D) or disk (2D) radius, skimage's footprint
  double p_per_label = 0.5;
  std::array<bool, 4> operators{true, true, true, true};  ///< indexed by BinaryOperator
};

/// nnU-Net's cascade: `RandomTransform(RemoveRandomConnectedComponentFromOneHotEncodingTransform(
/// channel_idx=<the one-hot channels>, fill_with_other_class_p=0,
/// dont_do_if_covers_more_than_x_percent=0.15, p_per_label=0.5), apply_probability=0.2)`.
struct RemoveComponentConfig {
  double p_apply = 0.2;
  double p_per_label = 0.5;
  double fill_with_other_class_p = 0.0;
  /// Only components of fewer voxels than this fraction of the patch are candidates (bg2's
  /// name says percent; it is a fraction).
  double max_coverage = 0.15;
};

/// nnU-Net's 3d_cascade_fullres steps after label removal: the previous stage's segmentation
/// (segmentation channel 1) becomes one one-hot image channel per foreground label, which the
/// two random transforms then perturb. Off unless `foreground_labels` is set.
struct CascadeConfig {
  std::vector<int16_t> foreground_labels;  ///< nnU-Net's label_manager.foreground_labels
  BinaryOperatorConfig binary_operator;
  RemoveComponentConfig remove_component;

  bool enabled() const { return !foreground_labels.empty(); }
};

/// Every transform's settings. Default() gives nnU-Net's; each field can be changed after.
struct NnUNetAugmentConfig {
  int spatial_dims = 3;                 ///< of the data: 2 or 3
  std::array<int64_t, 3> patch_size{};  ///< P, the output; entries past spatial_dims unused
  /// nnU-Net's "dummy 2D" for anisotropic 3D data: the spatial transform runs in 2D on the
  /// last two axes, every slice of axis 0 treated like a channel, and simulated low
  /// resolution leaves axis 0 alone. The crop's axis 0 must then equal patch_size[0].
  bool dummy_2d = false;
  SpatialConfig spatial;
  GaussianNoiseConfig noise;
  GaussianBlurConfig blur;
  BrightnessConfig brightness;
  ContrastConfig contrast;
  LowResolutionConfig low_resolution;
  GammaConfig gamma_inverted = GammaConfig::Inverted();
  GammaConfig gamma;
  std::array<bool, 3> mirror_axes{true, true, true};  ///< axes that may flip (p 0.5 each)
  /// Image channels nnU-Net normalised with a mask (use_mask_for_norm): set to 0 where the
  /// segmentation is negative, after mirroring.
  std::vector<int64_t> mask_channels;
  bool remove_label = true;  ///< segmentation -1 -> 0 at the end (nnU-Net always does)
  /// 3d_cascade_fullres (off by default): the segmentation then has a second channel, the
  /// previous stage's segmentation, and the image output `foreground_labels.size()` channels
  /// more than the crop, which the cascade steps fill from it after label removal.
  CascadeConfig cascade;

  /// nnU-Net's defaults for a `patch` of 2 or 3 axes and rotations in (-max_angle,
  /// max_angle) radians on every axis (nnU-Net: 30 degrees for 3D, 180 for 2D and dummy 2D).
  static NnUNetAugmentConfig Default(std::span<const int64_t> patch,
                                     double max_angle = std::numbers::pi / 6,
                                     bool dummy_2d = false);
};

/// kInvalidArgument naming the setting when the config cannot be run: a patch size outside
/// 2-3 positive axes, a probability outside [0, 1], a non-finite or reversed parameter range.
Status ValidateNnUNetAugmentConfig(const NnUNetAugmentConfig& config);

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_AUGMENT_CONFIG_H_
