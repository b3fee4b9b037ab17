// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_SPATIAL_SPATIAL_TRANSFORM_H_
#define PATCHFEED_AUGMENT_SPATIAL_SPATIAL_TRANSFORM_H_

/// \file
/// nnU-Net's SpatialTransform (batchgeneratorsv2 0.3.5 `transforms/spatial/spatial.py`) as a
/// draw and an apply: DrawSpatialParams makes batchgeneratorsv2's random decisions from a
/// CounterRng, ApplySpatialTransform turns the (enlarged) crop of one sample into the patch.
///
/// Either rotation or scaling drawn: the patch is resampled through
///   x(i) = A (i - (P - 1)/2) + (S - 1)/2,   A = Rz(a2) Ry(a1) Rx(a0) diag(s)   (3D)
///                                             A = R(a1) diag(s)                  (2D)
/// (image: linear, zero padding; segmentation: one-hot x 1000 linear + float16 argmax, or
/// nearest; outside voxels of the segmentation get `seg_padding_value`). Neither drawn (64 %
/// of nnU-Net's samples): a plain crop centred at floor(S/2), no interpolation.
///
/// Outputs are caller-owned views (e.g. a slot of the loader's batch). A SpatialScratch is
/// reused across calls by one thread: the apply allocates nothing once it has grown.

#include <array>
#include <cstdint>
#include <numbers>
#include <span>
#include <vector>

#include "augment/augment_config.h"
#include "augment/piece_runner.h"
#include "augment/sample_view.h"
#include "augment/scalar_range.h"
#include "augment/spatial/affine_resample.h"
#include "augment/spatial/elastic.h"
#include "common/random.h"
#include "common/status.h"

namespace patchfeed::augment {

/// nnU-Net's configuration for patch size `patch` (2 or 3 entries) and rotation range
/// (-max_angle, max_angle) on every axis, in radians (30 degrees in 3D for low anisotropy).
SpatialConfig NnUnetSpatialConfig(std::span<const int64_t> patch,
                                  double max_angle = std::numbers::pi / 6);

/// One sample's draws.
struct SpatialParams {
  bool do_rotation = false;
  bool do_scale = false;
  bool do_deform = false;
  std::array<double, 3> angles{};         ///< radians, per axis (2D: only angles[1] acts)
  std::array<double, 3> scales{1, 1, 1};  ///< per axis
  ElasticParams elastic;                  ///< used when do_deform

  /// Whether the interpolating path runs (otherwise a crop).
  bool transforms() const { return do_rotation || do_scale || do_deform; }
};

/// Draws in batchgeneratorsv2's order: do_rotation, do_scale, do_deform (three uniforms);
/// if rotating, one angle per axis (2D draws two, only the last acts), then per-axis dropping
/// when p_rotation_per_axis < 1; if scaling, one uniform for synchronisation, then one scale
/// (or one per axis); if deforming, one uniform for synchronisation, the scale(s), one
/// magnitude per axis and a 64-bit seed for the noise field.
SpatialParams DrawSpatialParams(CounterRng& rng, const SpatialConfig& config, int spatial_dims);

/// The matrix A of the sampling map (rows/columns in array-axis order; 2D uses the top-left
/// 2x2 block).
std::array<std::array<double, 3>, 3> SpatialAffineMatrix(const SpatialParams& params,
                                                         int spatial_dims);

/// Reusable per-thread buffers for ApplySpatialTransform.
struct SpatialScratch {
  internal_augment::ResampleScratch resample;
  std::vector<float> displacement;  ///< elastic field, (D, *P)
  std::vector<float> line;          ///< elastic blur line buffer
};

/// Writes the transformed patch of `image_in` (C channels, input shape S) into `image_out`
/// (C channels, shape config.patch_size) and of `seg_in` into `seg_out`; `seg_in` may have
/// 0 channels (then `seg_out` must too), otherwise its spatial shape must equal S. The
/// resampling's pieces (columns of output tiles) run through `pieces`; the result does not
/// depend on how.
/// \error kInvalidArgument on mismatched dimensions, shapes or channel counts, on empty
///   shapes, or on non-finite angles, scales or elastic parameters.
Status ApplySpatialTransform(const SpatialParams& params, const SpatialConfig& config,
                             SampleView<const float> image_in, SampleView<const int16_t> seg_in,
                             SampleView<float> image_out, SampleView<int16_t> seg_out,
                             SpatialScratch& scratch, const PieceRunner& pieces = PieceRunner());

/// ApplySpatialTransform on a window of the crop: `image_window`/`seg_window` hold the voxels
/// of a crop of `crop_shape` from `window_origin` on. Positions, weights and the label border
/// are the whole crop's; only neighbours inside the window are read, so when the window holds
/// every neighbour the map reaches inside the crop (NnUNetSpatialWindow's box), the result is
/// bit-identical to ApplySpatialTransform on the whole crop. The loader reads just that window.
/// Rotation or scaling only (not the crop path, not elastic deformation).
/// \error kInvalidArgument as ApplySpatialTransform, or for a window outside the crop.
Status ApplySpatialTransformWindow(
    const SpatialParams& params, const SpatialConfig& config, std::span<const int64_t> crop_shape,
    std::span<const int64_t> window_origin, SampleView<const float> image_window,
    SampleView<const int16_t> seg_window, SampleView<float> image_out, SampleView<int16_t> seg_out,
    SpatialScratch& scratch, const PieceRunner& pieces = PieceRunner());

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_SPATIAL_SPATIAL_TRANSFORM_H_
