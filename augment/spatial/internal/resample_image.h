// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_SPATIAL_INTERNAL_RESAMPLE_IMAGE_H_
#define PATCHFEED_AUGMENT_SPATIAL_INTERNAL_RESAMPLE_IMAGE_H_

/// \file
/// ResampleAffine's image kernel: one channel of one row segment, linear interpolation with
/// zeros outside the input, summed in torch's neighbour order so every voxel rounds as
/// torch's does. Stateless; safe to call concurrently on distinct outputs.

#include <array>
#include <cstdint>

#include "augment/spatial/internal/resample_row.h"

namespace patchfeed::internal_augment {

/// Writes the `row.size` voxels of `row` from the input channel at `in` (spatial strides
/// `st`; `row.offset` formed for them) to `out`, `out_stride` elements apart.
template <int D>
void ResampleImageRow(const Row& row, const Geometry& geo, const float* in,
                      const std::array<int64_t, 3>& st, float* out, int64_t out_stride);

/// ResampleImageRow for `channels` channels at once (input channels `in_channel_stride`
/// elements apart, output channels `out_channel_stride` apart), with the same values. In a 3D
/// input with unit stride along the last axis, writing to unit stride, each group of four
/// interior voxels loads its neighbour addresses and weights once for every channel.
template <int D>
void ResampleImageChannels(const Row& row, const Geometry& geo, const float* in,
                           int64_t in_channel_stride, const std::array<int64_t, 3>& st,
                           int64_t channels, float* out, int64_t out_channel_stride,
                           int64_t out_stride);

}  // namespace patchfeed::internal_augment

#endif  // PATCHFEED_AUGMENT_SPATIAL_INTERNAL_RESAMPLE_IMAGE_H_
