// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_CASCADE_CONNECTED_COMPONENTS_H_
#define PATCHFEED_AUGMENT_CASCADE_CONNECTED_COMPONENTS_H_

/// \file
/// Connected-component labelling of a binary mask, as batchgeneratorsv2's
/// RemoveRandomConnectedComponentFromOneHotEncodingTransform gets it from acvl_utils'
/// `label_with_component_sizes`, i.e. `skimage.measure.label(mask, connectivity=None)`: full
/// connectivity (26 neighbours in 3D, 8 in 2D), components numbered from 1 in raster order of
/// their first voxel, 0 the background.
///
/// ComponentLabels owns its buffers and is reused between calls: keep one per thread.

#include <cstdint>
#include <span>
#include <vector>

#include "augment/cascade/binary_morphology.h"
#include "common/status.h"

namespace patchfeed::augment {

/// A labelling and its work space.
struct ComponentLabels {
  std::vector<int32_t> label;   ///< per voxel, C order; 0 = background
  std::vector<int64_t> sizes;   ///< sizes[k]: voxels of component k + 1
  std::vector<int32_t> parent;  ///< union-find forest over provisional labels (scratch)

  int64_t count() const { return static_cast<int64_t>(sizes.size()); }
};

/// Labels the non-zero bytes of `mask` (C order, `shape` (Z, Y, X), Z = 1 for 2D) into
/// `out`. kInvalidArgument if the sizes disagree or the volume has 2^31 voxels or more.
Status LabelComponents(const MaskShape& shape, std::span<const uint8_t> mask, ComponentLabels& out);

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_CASCADE_CONNECTED_COMPONENTS_H_
