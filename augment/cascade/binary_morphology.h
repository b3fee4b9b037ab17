// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_CASCADE_BINARY_MORPHOLOGY_H_
#define PATCHFEED_AUGMENT_CASCADE_BINARY_MORPHOLOGY_H_

/// \file
/// Binary dilation, erosion, opening and closing with skimage's ball and disk footprints, as
/// batchgeneratorsv2's `binary_*_torch` compute them (transforms/nnunet/random_binary_operator.py):
/// dilation is a cross-correlation with the footprint (fft_conv, padding 'same': an even
/// footprint extent k puts floor((k - 1) / 2) of it before the centre), thresholded at > 0,
/// with nothing outside the volume; erosion is the complement of the complement's dilation,
/// so the outside counts as foreground there and nothing erodes from the border.
///
/// Masks are C-contiguous bytes (0 or 1) of a `(Z, Y, X)` volume; 2D volumes have Z = 1 and a
/// footprint of one Z plane. MorphologyScratch holds the work buffers: one per thread.

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "augment/augment_config.h"
#include "augment/sample_view.h"
#include "common/result.h"
#include "common/status.h"

namespace patchfeed::augment {

/// A structuring element: a C-order 0/1 mask of `size` (Z, Y, X), anchored at
/// `(size - 1) / 2` (integer division) per axis.
struct Footprint {
  std::array<int64_t, 3> size{1, 1, 1};
  std::vector<uint8_t> mask;
};

/// skimage.morphology.ball(radius) (0.26, strict_radius): `int(2r + 1)` samples of
/// `linspace(-r, r)` per axis, kept where x^2 + y^2 + z^2 <= r^2, in the same double arithmetic,
/// so a non-integer radius gives skimage's footprint bit for bit (an even extent included).
/// kInvalidArgument unless 0.5 <= radius <= 127.
Result<Footprint> BallFootprint(double radius);

/// skimage.morphology.disk(radius): samples `arange(-r, r + 1)` per axis, kept where
/// x^2 + y^2 <= r^2; a Z extent of 1. kInvalidArgument unless 0.5 <= radius <= 127.
Result<Footprint> DiskFootprint(double radius);

/// The footprint bg2 uses for a sample of `spatial_dims` axes: a ball in 3D, a disk in 2D.
Result<Footprint> NnUNetFootprint(double radius, int spatial_dims);

/// Work buffers of the operators; grown on first use and reused.
struct MorphologyScratch {
  std::vector<uint8_t> distance;  ///< padded forward distances to the next foreground voxel
  std::vector<uint8_t> row_any;   ///< per (z, y) row: any foreground
  std::vector<uint16_t> dist_a, dist_b, row;  ///< squared distances of the separable path
  std::vector<uint8_t> source;                ///< the input, when both paths read it
};

/// How a dilation is computed; every method gives the same result.
enum class MorphologyMethod {
  kAuto,  ///< kSeparable where the footprint allows it, else kRuns
  kRuns,  ///< a pass per X-run of the footprint: any footprint, ~pi r^2 passes for a ball
  /// Squared distances in three passes for the footprint's largest Euclidean ball (in
  /// doubled coordinates), runs for its voxels outside that ball (shell voxels float rounding
  /// kept); falls back to kRuns where the footprint has no such ball.
  kSeparable,
};

/// The spatial extents of a mask: (Z, Y, X), Z = 1 for 2D.
using MaskShape = std::array<int64_t, 3>;

/// Whether MorphologyMethod::kSeparable finds a ball core in `fp` (else it runs kRuns).
bool SeparableApplies(const Footprint& fp);

/// Applies `op` with footprint `fp` to `mask` (0/1 bytes of `shape`), in place. `method` is
/// for tests and benchmarks.
/// kInvalidArgument if the sizes disagree.
Status ApplyBinaryMorphology(BinaryOperator op, const Footprint& fp, const MaskShape& shape,
                             std::span<uint8_t> mask, MorphologyScratch& scratch,
                             MorphologyMethod method = MorphologyMethod::kAuto);

/// The (Z, Y, X) shape of a sample's channel, Z = 1 for 2D.
template <typename T>
MaskShape MaskShapeOf(const SampleView<T>& v) {
  return v.spatial_dims == 2 ? MaskShape{1, v.shape[0], v.shape[1]} : v.shape;
}

/// `mask` = (channel != 0) as 0/1 bytes, C order (bg2: `img[a].to(bool)`).
void ChannelToMask(SampleView<const float> channel, std::vector<uint8_t>& mask);

/// Writes `mask` (0/1 bytes, C order) into `channel` as 0.0f / 1.0f.
void MaskToChannel(std::span<const uint8_t> mask, SampleView<float> channel);

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_CASCADE_BINARY_MORPHOLOGY_H_
