// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_INTENSITY_LABEL_TRANSFORMS_H_
#define PATCHFEED_AUGMENT_INTENSITY_LABEL_TRANSFORMS_H_

/// \file
/// The deterministic segmentation steps at the end of nnU-Net's pipeline:
/// MaskImageTransform (transforms/utils/nnunet_masking.py), RemoveLabelTransform
/// (transforms/utils/remove_label.py) and ConvertSegmentationToRegionsTransform
/// (transforms/utils/seg_to_regions.py). Segmentations are int16, as nnU-Net stores them.
///
/// A RegionTable is built once per training run (it allocates) and is read-only after, so
/// workers can share it.

#include <cstdint>
#include <span>
#include <vector>

#include "augment/sample_view.h"
#include "common/result.h"
#include "common/status.h"

namespace patchfeed::augment {

/// Sets `image` channels listed in `channels` to `set_to` wherever `seg` channel
/// `seg_channel` is negative. Spatial shapes must match.
Status ApplyMaskImage(std::span<const int64_t> channels, SampleView<const int16_t> seg,
                      SampleView<float> image, int64_t seg_channel = 0, float set_to = 0.0f);

/// Replaces `label` by `set_to` in every channel of `seg` (nnU-Net: -1 -> 0), in place.
Status ApplyRemoveLabel(SampleView<int16_t> seg, int16_t label = -1, int16_t set_to = 0);

/// An inclusive run of labels.
struct LabelRange {
  int16_t lo;
  int16_t hi;
};

/// Region membership per label value, as a lookup table over `[min_label, max_label]` and as
/// runs of consecutive labels per region (what the conversion loop uses).
class RegionTable {
 public:
  /// `regions[r]` lists the labels of region r (nnU-Net's `foreground_regions`, plus the
  /// ignore label as a region of its own when there is one). At most 64 regions; labels must
  /// fit int16 and span at most 65536 values.
  static Result<RegionTable> Create(std::span<const std::vector<int64_t>> regions);

  int64_t num_regions() const { return num_regions_; }

  /// Bit r set iff `label` belongs to region r.
  uint64_t Lookup(int16_t label) const {
    const int64_t i = int64_t{label} - min_label_;
    return (i >= 0 && i < static_cast<int64_t>(bits_.size())) ? bits_[static_cast<size_t>(i)] : 0;
  }

  /// The label runs of region r, ascending.
  std::span<const LabelRange> ranges(int64_t r) const {
    const auto b = static_cast<size_t>(range_begin_[static_cast<size_t>(r)]);
    const auto e = static_cast<size_t>(range_begin_[static_cast<size_t>(r) + 1]);
    return std::span<const LabelRange>(ranges_).subspan(b, e - b);
  }

 private:
  int64_t num_regions_ = 0;
  int64_t min_label_ = 0;
  std::vector<uint64_t> bits_;
  std::vector<LabelRange> ranges_;
  std::vector<int64_t> range_begin_;
};

/// Writes `out` (R channels, 0/1 bytes; bool-compatible) from `seg` channel `seg_channel`.
/// `out` must have `table.num_regions()` channels and `seg`'s spatial shape.
Status ApplySegmentationToRegions(const RegionTable& table, SampleView<const int16_t> seg,
                                  SampleView<uint8_t> out, int64_t seg_channel = 0);

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_INTENSITY_LABEL_TRANSFORMS_H_
