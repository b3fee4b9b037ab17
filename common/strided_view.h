// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_COMMON_STRIDED_VIEW_H_
#define PATCHFEED_COMMON_STRIDED_VIEW_H_

/// \file
/// StridedView: the one untyped N-d view of memory, shared by every layer. The codec decodes
/// boxes into one (`codec::NdView` is this type), the loader describes each array of a batch
/// with one (`loader::ArrayView` is one plus a name and a dtype), and augmentation takes its
/// typed, fixed-rank `augment::SampleView` from one (`augment::SampleViewOf`).
///
/// Element (i_0, .., i_n-1) lives at `data + sum(i_d * byte_strides[d])`. A view does not own
/// memory; whoever made it keeps the memory alive. Plain data: copy it, share it read-only.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "common/check.h"

namespace patchfeed {

struct StridedView {
  std::byte* data = nullptr;
  std::vector<int64_t> shape;
  std::vector<int64_t> byte_strides;

  int ndim() const { return static_cast<int>(shape.size()); }

  /// A C-contiguous view over `data` with the given shape and item size.
  static StridedView Contiguous(std::byte* data, std::vector<int64_t> shape, int64_t itemsize) {
    StridedView v;
    v.data = data;
    v.byte_strides.resize(shape.size());
    int64_t stride = itemsize;
    for (size_t d = shape.size(); d-- > 0;) {
      v.byte_strides[d] = stride;
      stride *= shape[d];
    }
    v.shape = std::move(shape);
    return v;
  }

  /// Entry `index` of the first axis, as a view of the remaining axes: one sample of a batch
  /// `(B, C, *spatial)` is `batch.Slice(j)`.
  StridedView Slice(int64_t index) const {
    PATCHFEED_DCHECK(!shape.empty() && index >= 0 && index < shape[0]);
    StridedView v;
    v.data = data + index * byte_strides[0];
    v.shape.assign(shape.begin() + 1, shape.end());
    v.byte_strides.assign(byte_strides.begin() + 1, byte_strides.end());
    return v;
  }

  /// The view without axis `axis`, whose extent must be 1 (NumPy's squeeze).
  StridedView Squeeze(int axis) const {
    PATCHFEED_DCHECK(axis >= 0 && axis < ndim() && shape[static_cast<size_t>(axis)] == 1);
    StridedView v = *this;
    v.shape.erase(v.shape.begin() + axis);
    v.byte_strides.erase(v.byte_strides.begin() + axis);
    return v;
  }
};

}  // namespace patchfeed

#endif  // PATCHFEED_COMMON_STRIDED_VIEW_H_
