// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_SPATIAL_ELASTIC_H_
#define PATCHFEED_AUGMENT_SPATIAL_ELASTIC_H_

/// \file
/// The elastic-deformation field of batchgeneratorsv2's SpatialTransform: per spatial
/// component, white Gaussian noise on the patch grid, smoothed with a periodic Gaussian of
/// standard deviation sigma_d (voxels, the same on every axis) and scaled so its largest
/// absolute value is magnitude_d. batchgeneratorsv2 blurs with an FFT (scipy's
/// fourier_gaussian); we approximate the same periodic Gaussian by three box filters per axis
/// (an O(1)-per-voxel filter, no FFT library), and the noise comes from CounterRng, so the
/// field matches batchgeneratorsv2's in distribution and shape, not value by value.
/// nnU-Net's default has p_elastic = 0. Stateless; thread-compatible buffers are the caller's.

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace patchfeed::augment {

/// One sample's elastic draws.
struct ElasticParams {
  std::array<double, 3> sigma{};      ///< blur sigma per component, voxels
  std::array<double, 3> magnitude{};  ///< largest |offset| per component, voxels
  uint64_t field_seed = 0;            ///< names the CounterRng streams of the noise
};

}  // namespace patchfeed::augment

namespace patchfeed::internal_augment {

/// Fills `field`, laid out (spatial_dims, *patch) C-contiguous, with the offsets of `params`.
/// `line` is a scratch buffer (grown as needed).
void MakeElasticOffsets(const augment::ElasticParams& params, int spatial_dims,
                        const std::array<int64_t, 3>& patch, std::span<float> field,
                        std::vector<float>& line);

}  // namespace patchfeed::internal_augment

#endif  // PATCHFEED_AUGMENT_SPATIAL_ELASTIC_H_
