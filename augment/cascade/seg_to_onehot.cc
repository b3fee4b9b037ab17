// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "augment/cascade/seg_to_onehot.h"

#include "common/str_cat.h"

namespace patchfeed::augment {

Status ApplySegToOneHot(std::span<const int16_t> labels, SampleView<const int16_t> seg,
                        int64_t seg_channel, SampleView<float> onehot) {
  if (seg_channel < 0 || seg_channel >= seg.channels) {
    return InvalidArgumentError(StrCat("segmentation to one-hot: segmentation channel ",
                                       seg_channel, " does not exist (the segmentation has ",
                                       seg.channels, ")"));
  }
  if (onehot.channels != static_cast<int64_t>(labels.size())) {
    return InvalidArgumentError(StrCat("segmentation to one-hot: ", labels.size(),
                                       " labels need as many output channels, not ",
                                       onehot.channels));
  }
  if (seg.spatial_dims != onehot.spatial_dims || seg.shape != onehot.shape) {
    return InvalidArgumentError(
        "segmentation to one-hot: the segmentation and the image differ in spatial shape");
  }
  for (size_t i = 0; i < labels.size(); ++i) {
    const int16_t label = labels[i];
    const auto c = static_cast<int64_t>(i);
    for (int64_t i0 = 0; i0 < seg.shape[0]; ++i0) {
      for (int64_t i1 = 0; i1 < seg.shape[1]; ++i1) {
        for (int64_t i2 = 0; i2 < seg.shape[2]; ++i2) {
          onehot.at(c, i0, i1, i2) = seg.at(seg_channel, i0, i1, i2) == label ? 1.0f : 0.0f;
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace patchfeed::augment
