// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_SAMPLE_VIEW_H_
#define PATCHFEED_AUGMENT_SAMPLE_VIEW_H_

/// \file
/// SampleView: the one data type every augmentation works on. It views one training sample
/// of one array, channels first, `(C, *spatial)` with 2 or 3 spatial dimensions, the layout
/// nnU-Net hands its transforms (image `(C, Z, Y, X)` float32, segmentation `(1, Z, Y, X)`
/// int16). Strides are in elements, so a view can point into a batch slot of the loader's ring
/// (`(B, C, Z, Y, X)`, one sample at a time) or into a NumPy array without a copy.
///
/// A view does not own memory; the caller keeps the memory alive. 2D samples use
/// `spatial_dims == 2` and only the first two entries of `shape` and `strides`: transforms
/// whose rules differ between 2D and 3D (rotation, the segmentation border quirk) need to
/// know, so 2D is never faked as 3D with a unit axis.
///
/// Why not common's StridedView, which the codec and the loader share: a SampleView is typed
/// and of fixed rank (a channel axis and at most 3 spatial axes, in std::arrays), so the
/// resampling and intensity loops index `at(c, z, y, x)` with element strides, no per-call
/// rank loop, no heap, and `channel(c)` copies in a few words. The loader makes one from a
/// StridedView of a slot or of staging with SampleViewOf, the one conversion between them.

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "common/check.h"
#include "common/status.h"
#include "common/strided_view.h"

namespace patchfeed::augment {

/// Most spatial dimensions a sample has (nnU-Net: 2D or 3D).
inline constexpr int kMaxSpatialDims = 3;

template <typename T>
struct SampleView {
  T* data = nullptr;
  int spatial_dims = 3;  ///< 2 or 3
  int64_t channels = 1;
  int64_t channel_stride = 0;                      ///< elements between channels
  std::array<int64_t, kMaxSpatialDims> shape{};    ///< spatial extents; unused entries 1
  std::array<int64_t, kMaxSpatialDims> strides{};  ///< elements; unused entries 0

  /// A C-contiguous `(channels, *spatial)` view over `data`.
  static SampleView Contiguous(T* data, int64_t channels, std::span<const int64_t> spatial) {
    PATCHFEED_DCHECK(spatial.size() == 2 || spatial.size() == 3);
    SampleView v;
    v.data = data;
    v.spatial_dims = static_cast<int>(spatial.size());
    v.channels = channels;
    v.shape = {1, 1, 1};
    v.strides = {0, 0, 0};
    int64_t stride = 1;
    for (int d = v.spatial_dims - 1; d >= 0; --d) {
      v.shape[d] = spatial[d];
      v.strides[d] = stride;
      stride *= spatial[d];
    }
    v.channel_stride = stride;
    return v;
  }

  /// Voxels per channel.
  int64_t spatial_size() const {
    int64_t n = 1;
    for (int d = 0; d < spatial_dims; ++d)
      n *= shape[d];
    return n;
  }

  /// Whether each channel is one dense run of spatial_size() elements in C order.
  bool channel_is_contiguous() const {
    int64_t stride = 1;
    for (int d = spatial_dims - 1; d >= 0; --d) {
      if (shape[d] != 1 && strides[d] != stride)
        return false;
      stride *= shape[d];
    }
    return true;
  }

  /// Element (c, i0, i1[, i2]); unused trailing indices are 0.
  T& at(int64_t c, int64_t i0, int64_t i1, int64_t i2 = 0) const {
    return data[c * channel_stride + i0 * strides[0] + i1 * strides[1] + i2 * strides[2]];
  }

  /// Channel `c` as a one-channel view.
  SampleView channel(int64_t c) const {
    SampleView v = *this;
    v.data = data + c * channel_stride;
    v.channels = 1;
    return v;
  }

  operator SampleView<const T>() const {  // NOLINT(google-explicit-constructor): T* -> const T*
    return {data, spatial_dims, channels, channel_stride, shape, strides};
  }
};

/// `view`, a `(C, *spatial)` view of items of type T (2 or 3 spatial axes; byte strides that
/// are multiples of sizeof(T)), as a SampleView. T may be const for a read-only view.
template <typename T>
SampleView<T> SampleViewOf(const StridedView& view) {
  const int dims = view.ndim() - 1;
  constexpr auto kItem = static_cast<int64_t>(sizeof(T));
  PATCHFEED_DCHECK(dims == 2 || dims == 3);
  SampleView<T> v;
  v.data = reinterpret_cast<T*>(view.data);
  v.spatial_dims = dims;
  v.channels = view.shape[0];
  v.channel_stride = view.byte_strides[0] / kItem;
  v.shape = {1, 1, 1};
  v.strides = {0, 0, 0};
  for (int d = 0; d < dims; ++d) {
    const auto i = static_cast<size_t>(d);
    PATCHFEED_DCHECK(view.byte_strides[i + 1] % kItem == 0);
    v.shape[i] = view.shape[i + 1];
    v.strides[i] = view.byte_strides[i + 1] / kItem;
  }
  return v;
}

/// Copies a sample between views of equal shape; kInvalidArgument naming `what` when the
/// shapes differ.
template <typename T>
Status CopySample(SampleView<const T> in, SampleView<T> out, const char* what) {
  if (in.channels != out.channels || in.spatial_dims != out.spatial_dims || in.shape != out.shape) {
    return InvalidArgumentError(std::string(what) + " differ in shape");
  }
  for (int64_t c = 0; c < in.channels; ++c) {
    for (int64_t i0 = 0; i0 < in.shape[0]; ++i0) {
      for (int64_t i1 = 0; i1 < in.shape[1]; ++i1) {
        for (int64_t i2 = 0; i2 < in.shape[2]; ++i2) {
          out.at(c, i0, i1, i2) = in.at(c, i0, i1, i2);
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_SAMPLE_VIEW_H_
