// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_SPATIAL_AFFINE_RESAMPLE_H_
#define PATCHFEED_AUGMENT_SPATIAL_AFFINE_RESAMPLE_H_

/// \file
/// The resampling kernels behind SpatialTransform: an image and a label map resampled through
/// one affine map from output indices to input positions, with the semantics of torch's
/// `grid_sample(mode='bilinear', padding_mode='zeros', align_corners=False)` as
/// batchgeneratorsv2 0.3.5 uses it.
///
/// The output is walked in short row segments (32 voxels, grouped into 16 x 16 x 32 tiles
/// for cache reuse under rotation): a segment's positions, floors, neighbour weights and
/// border flags are computed once, in vectorisable loops (positions in double from the row
/// start, rounded once, so nothing drifts), and shared by every image and label channel. The
/// image channels of a segment are resampled together, four voxels' weights and neighbour
/// addresses serving each channel in turn.
/// Labels are not resampled one label at a time as batchgeneratorsv2 does: each output voxel
/// gathers its 2^D neighbours and sums the weights x 1000 per distinct label, term by term in
/// torch's neighbour order, which gives the same float32 sums, hence the same float16 argmax,
/// in one pass; voxels whose neighbours all carry one label (most of them) take it directly,
/// four at a time where the whole segment lies inside the input (positions are monotone along
/// a row, so checking its two ends is enough).
///
/// Each column of tiles (16 x 16 rows, all their segments) is a piece handed to the caller's
/// PieceRunner: it has its own row buffers and label cache, so pieces may run at once on
/// several threads.
///
/// Thread-compatible: a ResampleScratch belongs to one call at a time; reuse it across calls.

#include <array>
#include <cstdint>
#include <vector>

#include "augment/piece_runner.h"
#include "augment/sample_view.h"

namespace patchfeed::internal_augment {

/// Largest input extent per axis the kernels accept (positions are int32 with headroom).
inline constexpr int64_t kMaxInputExtent = int64_t{1} << 22;

/// x_d(i) = origin[d] + sum_k matrix[d][k] * i_k: output index vector i -> input position in
/// index units (voxel centres at integers). Only the leading `spatial_dims` entries are used.
struct AffineSamplingMap {
  int spatial_dims = 3;
  std::array<std::array<double, 3>, 3> matrix{};
  std::array<double, 3> origin{};
  /// The input may be a window of a larger crop: positions x are in crop coordinates (so they,
  /// the weights and the label border test are those of the whole crop), and the input view
  /// holds the crop's voxels from `window_origin` on. `crop_shape` all 0: the input is the crop.
  std::array<int32_t, 3> window_origin{};
  std::array<int64_t, 3> crop_shape{};
};

/// How label maps are resampled.
enum class LabelInterpolation {
  kLinear,   ///< one-hot x 1000, linear, float16, argmax (nnU-Net's default)
  kNearest,  ///< the label at the nearest voxel (round half to even), 0 outside
};

/// State reused across calls (row buffers live on the stack: a few KiB).
struct ResampleScratch {
  std::vector<int32_t> lowest_label;  ///< per piece and label channel, scanned lazily
};

/// Resamples every channel of `image_in` into `image_out` (may have 0 channels) and every
/// channel of `seg_in` into `seg_out` (may have 0 channels) through `map`. Output spatial
/// shapes must be equal; input spatial shapes must be equal. When `seg_padding != 0`, label
/// voxels whose position is outside the input get `seg_padding`, with batchgeneratorsv2's
/// out-of-bounds test (axis d compared against the size of axis D-1-d; see the .cc). Shapes
/// are the caller's responsibility (checked with assert only). `displacement`, when not
/// null, holds per-voxel offsets added to the map's positions (elastic deformation), laid
/// out (spatial_dims, *output shape) C-contiguous, in input index units. The columns of tiles
/// run through `pieces`.
void ResampleAffine(const AffineSamplingMap& map, augment::SampleView<const float> image_in,
                    augment::SampleView<float> image_out, augment::SampleView<const int16_t> seg_in,
                    augment::SampleView<int16_t> seg_out, LabelInterpolation label_mode,
                    int16_t seg_padding, const float* displacement, ResampleScratch& scratch,
                    const augment::PieceRunner& pieces = augment::PieceRunner());

}  // namespace patchfeed::internal_augment

#endif  // PATCHFEED_AUGMENT_SPATIAL_AFFINE_RESAMPLE_H_
