// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_CASCADE_SEG_TO_ONEHOT_H_
#define PATCHFEED_AUGMENT_CASCADE_SEG_TO_ONEHOT_H_

/// \file
/// batchgeneratorsv2's MoveSegAsOneHotToDataTransform (transforms/nnunet/seg_to_onehot.py):
/// one segmentation channel becomes one 0/1 image channel per listed label. nnU-Net's cascade
/// uses it on the previous stage's segmentation (segmentation channel 1) with the foreground
/// labels, in training and in validation. The caller appends the channels: they are written
/// into a view of the image's last channels, and the segmentation channel is simply not used
/// further (bg2's remove_channel_from_source).

#include <cstdint>
#include <span>

#include "augment/sample_view.h"
#include "common/status.h"

namespace patchfeed::augment {

/// `onehot` channel i = 1.0f where `seg` channel `seg_channel` equals `labels[i]`, else 0.0f.
/// `onehot` needs `labels.size()` channels and `seg`'s spatial shape; kInvalidArgument
/// otherwise, naming what differs.
Status ApplySegToOneHot(std::span<const int16_t> labels, SampleView<const int16_t> seg,
                        int64_t seg_channel, SampleView<float> onehot);

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_CASCADE_SEG_TO_ONEHOT_H_
