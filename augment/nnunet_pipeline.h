// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_NNUNET_PIPELINE_H_
#define PATCHFEED_AUGMENT_NNUNET_PIPELINE_H_

/// \file
/// nnU-Net's default training augmentation (nnUNetTrainer.get_training_transforms, nnU-Net
/// 2.8 with batchgeneratorsv2 0.3.5) as one pipeline: spatial transform, Gaussian noise,
/// Gaussian blur, multiplicative brightness, contrast, simulated low resolution, inverted
/// gamma, gamma, mirroring, image masking, label removal. Deep-supervision targets and region
/// conversion are separate steps (augment/intensity) because they change the output's shape.
///
/// A sample's augmentation is a pure function of its config, its `StreamId` (the loader's
/// (seed, epoch, batch, rank, position)) and its input: draws come from counter-based streams,
/// one per transform, so the thread that runs a sample, and the order samples run in, never
/// change the result, and changing one transform's settings does not shift another's draws.
///
/// The spatial step writes the patch into the output views (e.g. a slot of the loader's
/// batch); every later step works in place there. A scratch struct per thread is reused.
///
/// nnU-Net's cascade (config.cascade, 3d_cascade_fullres): segmentations have two channels,
/// the second the previous stage's segmentation, and image outputs have the crop's channels
/// followed by one channel per foreground label. The spatial step fills the crop's channels
/// and transforms both segmentation channels; after label removal the one-hot channels are
/// made from segmentation channel 1 and perturbed (augment/cascade). Segmentation channel 1 is
/// left as transformed: nnU-Net drops it, the caller ignores it.
///
/// Example (one sample, 3D, image float32 (1, 205, 205, 205) -> (1, 128, 128, 128)):
/// \code
///   NnUNetAugmentConfig config = NnUNetAugmentConfig::Default({128, 128, 128});
///   NnUNetAugmentParams params = DrawNnUNetAugmentParams(config, id, /*channels=*/1);
///   PATCHFEED_RETURN_IF_ERROR(
///       ApplyNnUNetAugment(params, config, id, image_crop, seg_crop, image, seg, scratch));
/// \endcode

#include <array>
#include <cstdint>
#include <numbers>
#include <span>
#include <vector>

#include "augment/augment_config.h"
#include "augment/cascade/cascade_steps.h"
#include "augment/intensity/brightness_contrast.h"
#include "augment/intensity/channel_loops.h"
#include "augment/intensity/gamma.h"
#include "augment/intensity/gaussian_blur.h"
#include "augment/intensity/gaussian_noise.h"
#include "augment/intensity/label_transforms.h"
#include "augment/intensity/low_resolution.h"
#include "augment/piece_runner.h"
#include "augment/sample_view.h"
#include "augment/spatial/mirror.h"
#include "augment/spatial/spatial_transform.h"
#include "common/random.h"
#include "common/result.h"
#include "common/status.h"

namespace patchfeed::augment {

/// One sample's draws, for every transform (a transform that does not fire has apply false).
struct NnUNetAugmentParams {
  SpatialParams spatial;
  GaussianNoiseParams noise;
  GaussianBlurParams blur;
  BrightnessParams brightness;
  ContrastParams contrast;
  LowResolutionParams low_resolution;
  GammaParams gamma_inverted;
  GammaParams gamma;
  MirrorParams mirror;
  BinaryOperatorParams binary_operator;    ///< cascade only
  RemoveComponentParams remove_component;  ///< cascade only
};

/// Draws every transform's parameters for a sample of `channels` image channels (those of
/// the crop: without the cascade's one-hot channels).
NnUNetAugmentParams DrawNnUNetAugmentParams(const NnUNetAugmentConfig& config,
                                            const StreamId& sample, int64_t channels);

/// Reusable buffers of one sample's work at a time.
struct NnUNetAugmentScratch {
  SpatialScratch spatial;
  AugmentScratch intensity;
  std::vector<AugmentScratch> channel;  ///< per image channel (ApplyNnUNetAfterSpatial's pieces)
  std::vector<Status> piece_status;
  CascadeScratch cascade;
};

/// The spatial step: the transformed patch of the crop, written into `image_out`/`seg_out`
/// (shape config.patch_size). `seg_crop`/`seg_out` may have 0 channels (no segmentation).
/// The resampling's pieces run through `pieces` (see ApplySpatialTransform).
Status ApplyNnUNetSpatial(const NnUNetAugmentParams& params, const NnUNetAugmentConfig& config,
                          SampleView<const float> image_crop, SampleView<const int16_t> seg_crop,
                          SampleView<float> image_out, SampleView<int16_t> seg_out,
                          NnUNetAugmentScratch& scratch, const PieceRunner& pieces = PieceRunner());

/// A box of the crop, in crop voxel coordinates: [origin, origin + shape) per spatial axis.
struct CropWindow {
  std::array<int64_t, 3> origin{};
  std::array<int64_t, 3> shape{1, 1, 1};
};

/// The part of a crop of `crop_shape` that the spatial step reads: for the interpolating path
/// the bounding box of the sampling positions plus the linear interpolation's neighbours (and
/// a voxel of margin against rounding), clipped to the crop; for the crop path exactly the
/// patch's box. Reading only this window gives the same patch as reading the whole crop
/// (ApplyNnUNetSpatialWindow), which is how the loader avoids reading an enlarged crop.
CropWindow NnUNetSpatialWindow(const NnUNetAugmentParams& params, const NnUNetAugmentConfig& config,
                               std::span<const int64_t> crop_shape);

/// ApplyNnUNetSpatial on a window of the crop: `image_window`/`seg_window` hold the crop's
/// voxels in `window` (from NnUNetSpatialWindow(params, config, crop_shape)); the result equals
/// ApplyNnUNetSpatial on the whole crop.
Status ApplyNnUNetSpatialWindow(const NnUNetAugmentParams& params,
                                const NnUNetAugmentConfig& config,
                                std::span<const int64_t> crop_shape, const CropWindow& window,
                                SampleView<const float> image_window,
                                SampleView<const int16_t> seg_window, SampleView<float> image_out,
                                SampleView<int16_t> seg_out, NnUNetAugmentScratch& scratch,
                                const PieceRunner& pieces = PieceRunner());

/// Every step after the spatial one, in nnU-Net's order, in place on the patch. `sample`
/// keys the Gaussian noise field. Each image channel's steps up to the mirroring, and the
/// segmentation's mirroring, are pieces run through `pieces`; the result does not depend on how.
Status ApplyNnUNetAfterSpatial(const NnUNetAugmentParams& params, const NnUNetAugmentConfig& config,
                               const StreamId& sample, SampleView<float> image,
                               SampleView<int16_t> seg, NnUNetAugmentScratch& scratch,
                               const PieceRunner& pieces = PieceRunner());

/// The whole pipeline: ApplyNnUNetSpatial then ApplyNnUNetAfterSpatial.
Status ApplyNnUNetAugment(const NnUNetAugmentParams& params, const NnUNetAugmentConfig& config,
                          const StreamId& sample, SampleView<const float> image_crop,
                          SampleView<const int16_t> seg_crop, SampleView<float> image_out,
                          SampleView<int16_t> seg_out, NnUNetAugmentScratch& scratch,
                          const PieceRunner& pieces = PieceRunner());

/// Stream ids the pipeline keys its draws with (StreamId::stream; the loader's own draws use
/// small numbers, these stay clear of them).
inline constexpr uint32_t kAugmentStreamBase = 0x41550000u;

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_NNUNET_PIPELINE_H_
