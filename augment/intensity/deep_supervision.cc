// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "augment/intensity/deep_supervision.h"

#include "augment/intensity/resize.h"

namespace patchfeed::augment {

bool IsIdentityScale(const DeepSupervisionScale& scale, int spatial_dims) {
  for (int d = 0; d < spatial_dims; ++d) {
    if (scale.factor[d] != 1.0)
      return false;
  }
  return true;
}

Status DeepSupervisionShape(const DeepSupervisionScale& scale, std::span<const int64_t> shape,
                            int64_t* out) {
  for (size_t d = 0; d < shape.size(); ++d) {
    out[d] = internal_augment::RoundHalfEven(static_cast<double>(shape[d]) * scale.factor[d]);
    if (out[d] < 1)
      return InvalidArgumentError("DownsampleSegForDS: a scale makes an axis empty");
  }
  return Status();
}

template <typename T>
Status DownsampleSegNearestExact(SampleView<const T> seg, SampleView<T> out,
                                 AugmentScratch& scratch) {
  const int dims = seg.spatial_dims;
  if (seg.data == nullptr || out.data == nullptr || (dims != 2 && dims != 3) ||
      out.spatial_dims != dims || out.channels != seg.channels || !out.channel_is_contiguous())
    return InvalidArgumentError("DownsampleSegForDS: unusable views");
  for (int d = 0; d < dims; ++d) {
    if (seg.shape[d] < 1 || out.shape[d] < 1)
      return InvalidArgumentError("DownsampleSegForDS: empty axis");
  }
  // Index tables premultiplied by the input strides (any strides), one per axis, back to back
  // in scratch.index.
  int64_t total = 0;
  for (int d = 0; d < dims; ++d)
    total += out.shape[d];
  if (static_cast<int64_t>(scratch.index.size()) < total)
    scratch.index.resize(static_cast<size_t>(total));
  const int64_t* table[kMaxSpatialDims] = {};
  int64_t* next = scratch.index.data();
  for (int d = 0; d < dims; ++d) {
    table[d] = next;
    for (int64_t j = 0; j < out.shape[d]; ++j)
      *next++ = internal_augment::NearestExactIndex(j, seg.shape[d], out.shape[d]) * seg.strides[d];
  }
  const int64_t n0 = dims == 3 ? out.shape[0] : 1;
  const int64_t n1 = out.shape[dims - 2];
  const int64_t nx = out.shape[dims - 1];
  const int64_t* tx = table[dims - 1];
  const int64_t* t1 = table[dims - 2];
  for (int64_t c = 0; c < seg.channels; ++c) {
    const T* in = seg.data + c * seg.channel_stride;
    T* o = out.data + c * out.channel_stride;
    for (int64_t a = 0; a < n0; ++a) {
      const T* plane = dims == 3 ? in + table[0][a] : in;
      for (int64_t b = 0; b < n1; ++b) {
        const T* row = plane + t1[b];
        for (int64_t x = 0; x < nx; ++x)
          *o++ = row[tx[x]];
      }
    }
  }
  return Status();
}

template Status DownsampleSegNearestExact<int16_t>(SampleView<const int16_t>, SampleView<int16_t>,
                                                   AugmentScratch&);
template Status DownsampleSegNearestExact<uint8_t>(SampleView<const uint8_t>, SampleView<uint8_t>,
                                                   AugmentScratch&);

}  // namespace patchfeed::augment
