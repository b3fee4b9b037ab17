// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "augment/intensity/label_transforms.h"

#include <algorithm>
#include <limits>

#include "augment/intensity/channel_loops.h"

namespace patchfeed::augment {
namespace {

template <typename A, typename B>
bool SameSpatialShape(const SampleView<A>& a, const SampleView<B>& b) {
  if (a.spatial_dims != b.spatial_dims)
    return false;
  for (int d = 0; d < a.spatial_dims; ++d) {
    if (a.shape[d] != b.shape[d])
      return false;
  }
  return true;
}

// Walks two views of the same spatial shape together, calling f(a_row, a_stride, b_row,
// b_stride, n) for each row along the last axis.
template <typename A, typename B, typename F>
void ForEachRowPair(const SampleView<A>& a, int64_t ca, const SampleView<B>& b, int64_t cb, F&& f) {
  const int dims = a.spatial_dims;
  const int last = dims - 1;
  const int64_t n0 = dims == 3 ? a.shape[0] : 1;
  const int64_t n1 = a.shape[last - 1];
  A* pa = a.data + ca * a.channel_stride;
  B* pb = b.data + cb * b.channel_stride;
  const int64_t sa0 = dims == 3 ? a.strides[0] : 0, sb0 = dims == 3 ? b.strides[0] : 0;
  for (int64_t i0 = 0; i0 < n0; ++i0) {
    for (int64_t i1 = 0; i1 < n1; ++i1) {
      f(pa + i0 * sa0 + i1 * a.strides[last - 1], a.strides[last],
        pb + i0 * sb0 + i1 * b.strides[last - 1], b.strides[last], a.shape[last]);
    }
  }
}

}  // namespace

Status ApplyMaskImage(std::span<const int64_t> channels, SampleView<const int16_t> seg,
                      SampleView<float> image, int64_t seg_channel, float set_to) {
  if (channels.empty())
    return Status();
  PATCHFEED_RETURN_IF_ERROR(internal_augment::ValidateView(image, "MaskImage"));
  if (seg.data == nullptr || !SameSpatialShape(image, seg))
    return InvalidArgumentError("MaskImage: image and segmentation shapes differ");
  if (seg_channel < 0 || seg_channel >= seg.channels)
    return InvalidArgumentError("MaskImage: no such segmentation channel");
  for (int64_t c : channels) {
    if (c < 0 || c >= image.channels)
      return InvalidArgumentError("MaskImage: no such image channel");
  }
  for (int64_t c : channels) {
    if (image.channel_is_contiguous() && seg.channel_is_contiguous()) {
      // Branch-free select over one flat run: vectorises; a branch per voxel mispredicts on
      // the ragged mask borders.
      float* x = image.data + c * image.channel_stride;
      const int16_t* s = seg.data + seg_channel * seg.channel_stride;
      const int64_t n = image.spatial_size();
      for (int64_t i = 0; i < n; ++i)
        x[i] = s[i] < 0 ? set_to : x[i];
      continue;
    }
    ForEachRowPair(image, c, seg, seg_channel,
                   [set_to](float* x, int64_t sx, const int16_t* s, int64_t ss, int64_t n) {
                     for (int64_t i = 0; i < n; ++i)
                       x[i * sx] = s[i * ss] < 0 ? set_to : x[i * sx];
                   });
  }
  return Status();
}

Status ApplyRemoveLabel(SampleView<int16_t> seg, int16_t label, int16_t set_to) {
  if (seg.data == nullptr || (seg.spatial_dims != 2 && seg.spatial_dims != 3))
    return InvalidArgumentError("RemoveLabel: unusable segmentation view");
  for (int64_t c = 0; c < seg.channels; ++c) {
    internal_augment::ForEachRow(seg, c, [=](int16_t* x, int64_t n, int64_t stride) {
      // Branch-free select: vectorises, and the labels are mostly not `label`.
      for (int64_t i = 0; i < n; ++i)
        x[i * stride] = x[i * stride] == label ? set_to : x[i * stride];
    });
  }
  return Status();
}

Result<RegionTable> RegionTable::Create(std::span<const std::vector<int64_t>> regions) {
  if (regions.empty() || regions.size() > 64)
    return InvalidArgumentError("regions: need 1 to 64 regions");
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (const auto& labels : regions) {
    if (labels.empty())
      return InvalidArgumentError("regions: a region has no labels");
    for (int64_t l : labels) {
      if (l < std::numeric_limits<int16_t>::min() || l > std::numeric_limits<int16_t>::max())
        return InvalidArgumentError("regions: label outside int16");
      lo = std::min(lo, l);
      hi = std::max(hi, l);
    }
  }
  RegionTable t;
  t.num_regions_ = static_cast<int64_t>(regions.size());
  t.min_label_ = lo;
  t.bits_.assign(static_cast<size_t>(hi - lo + 1), 0);
  for (size_t r = 0; r < regions.size(); ++r) {
    for (int64_t l : regions[r])
      t.bits_[static_cast<size_t>(l - lo)] |= uint64_t{1} << r;
  }
  // Runs of consecutive member labels, per region, from the lookup table.
  for (size_t r = 0; r < regions.size(); ++r) {
    t.range_begin_.push_back(static_cast<int64_t>(t.ranges_.size()));
    for (int64_t l = lo; l <= hi; ++l) {
      if (!((t.bits_[static_cast<size_t>(l - lo)] >> r) & 1u))
        continue;
      if (t.ranges_.size() > static_cast<size_t>(t.range_begin_.back()) &&
          t.ranges_.back().hi == l - 1)
        t.ranges_.back().hi = static_cast<int16_t>(l);
      else
        t.ranges_.push_back({static_cast<int16_t>(l), static_cast<int16_t>(l)});
    }
  }
  t.range_begin_.push_back(static_cast<int64_t>(t.ranges_.size()));
  return t;
}

Status ApplySegmentationToRegions(const RegionTable& table, SampleView<const int16_t> seg,
                                  SampleView<uint8_t> out, int64_t seg_channel) {
  if (seg.data == nullptr || out.data == nullptr || !SameSpatialShape(seg, out) ||
      (seg.spatial_dims != 2 && seg.spatial_dims != 3))
    return InvalidArgumentError("SegmentationToRegions: shapes differ or views unusable");
  if (out.channels != table.num_regions())
    return InvalidArgumentError("SegmentationToRegions: output needs one channel per region");
  if (seg_channel < 0 || seg_channel >= seg.channels)
    return InvalidArgumentError("SegmentationToRegions: no such segmentation channel");
  // One region per pass: each pass streams the labels (int16, cheap) and writes one output
  // channel sequentially, instead of R interleaved write streams. A region is a union of
  // label ranges; membership is one unsigned compare per range, which vectorises (16 labels
  // per AVX2 op), where a table lookup per voxel would be a gather.
  const bool dense = seg.channel_is_contiguous() && out.channel_is_contiguous();
  for (int64_t r = 0; r < out.channels; ++r) {
    const std::span<const LabelRange> ranges = table.ranges(r);
    auto row = [ranges](const int16_t* s, int64_t ss, uint8_t* o, int64_t so, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        o[i * so] = 0;
      for (const LabelRange& range : ranges) {
        const auto lo = static_cast<uint16_t>(range.lo);
        const auto span = static_cast<uint16_t>(range.hi - range.lo);
        for (int64_t i = 0; i < n; ++i) {
          const auto d = static_cast<uint16_t>(static_cast<uint16_t>(s[i * ss]) - lo);
          o[i * so] = static_cast<uint8_t>(o[i * so] | (d <= span ? 1 : 0));
        }
      }
    };
    if (dense) {
      row(seg.data + seg_channel * seg.channel_stride, 1, out.data + r * out.channel_stride, 1,
          seg.spatial_size());
    } else {
      ForEachRowPair(seg, seg_channel, out, r, row);
    }
  }
  return Status();
}

}  // namespace patchfeed::augment
