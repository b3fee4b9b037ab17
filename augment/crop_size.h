// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_CROP_SIZE_H_
#define PATCHFEED_AUGMENT_CROP_SIZE_H_

/// \file
/// nnU-Net's rule for the crop a sample is drawn with before the spatial transform: large
/// enough that the patch, rotated and scaled, still lies inside it (nnU-Net's "initial patch
/// size", `get_patch_size` in nnunetv2/training/data_augmentation/compute_initial_patch_size.py).

#include <cstdint>
#include <span>
#include <vector>

#include "common/result.h"

namespace patchfeed::augment {

/// The crop for `patch` (2 or 3 spatial sizes) under rotations of up to `max_angle` radians
/// about every axis (capped at 90 degrees, as nnU-Net does) and scaling down to `min_scale`
/// (nnU-Net passes 0.85, the lower end of its legacy scale range, not the transform's 0.7).
/// Each axis's rotation is taken alone, the largest extent per axis kept, divided by
/// `min_scale` and truncated. `dummy_2d` (3-D patches rotated in-plane only) keeps the first
/// axis at the patch size. Fails on an empty or 1-D patch, non-positive sizes or min_scale.
Result<std::vector<int64_t>> CropForAugmentation(std::span<const int64_t> patch, double max_angle,
                                                 double min_scale = 0.85, bool dummy_2d = false);

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_CROP_SIZE_H_
