// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_INTENSITY_CHANNEL_LOOPS_H_
#define PATCHFEED_AUGMENT_INTENSITY_CHANNEL_LOOPS_H_

/// \file
/// Loops and checks the intensity transforms share: input validation, a row-wise walk over
/// one channel of a strided SampleView, and the reusable scratch buffers.
///
/// AugmentScratch owns memory that grows to the largest sample seen and is then reused, so a
/// worker that keeps one scratch allocates nothing per call. Not thread-safe: one per worker.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "augment/intensity/random_draws.h"
#include "augment/sample_view.h"
#include "common/status.h"
#include "common/str_cat.h"

namespace patchfeed::augment {

/// Buffers reused across calls by blur, low resolution and noise.
struct AugmentScratch {
  std::vector<float> lines;    ///< blur ring buffer / padded row
  std::vector<float> small;    ///< low-resolution image, noise field block
  std::vector<float> work;     ///< intermediate of separable resizes, channel copies
  std::vector<int64_t> index;  ///< resize index tables
};

}  // namespace patchfeed::augment

namespace patchfeed::internal_augment {

using augment::AugmentScratch;
using augment::SampleView;

/// Grows `v` to at least `n` elements (never shrinks) and returns its data. Its contents are
/// not kept when it grows. `bound`: the most it will be asked for by this transform's sample
/// shape; growing straight to it, rather than a step per larger draw (each a fresh block the
/// kernel faults in page by page), leaves one growth per scratch.
template <typename T>
T* Reserve(std::vector<T>& v, int64_t n, int64_t bound = 0) {
  if (static_cast<int64_t>(v.size()) < n) {
    v.clear();
    v.resize(static_cast<size_t>(std::max(n, bound)));
  }
  return v.data();
}

/// OK if `view` is usable: data set, 2 or 3 spatial dims, 1..kMaxChannels channels and no
/// empty axis. `what` names the transform in the message.
template <typename T>
Status ValidateView(const SampleView<T>& view, std::string_view what) {
  if (view.data == nullptr)
    return InvalidArgumentError(StrCat(what, ": null data"));
  if (view.spatial_dims != 2 && view.spatial_dims != 3)
    return InvalidArgumentError(StrCat(what, ": spatial_dims must be 2 or 3"));
  if (view.channels < 1 || view.channels > augment::kMaxChannels)
    return InvalidArgumentError(StrCat(what, ": channels must be in [1, 16]"));
  for (int d = 0; d < view.spatial_dims; ++d) {
    if (view.shape[d] < 1)
      return InvalidArgumentError(StrCat(what, ": empty spatial axis"));
  }
  return Status();
}

/// Calls `f(row, n, stride)` for every row along the last spatial axis of channel `c`, in C
/// order. A contiguous channel is one row, so element-wise passes run as one flat loop.
template <typename T, typename F>
void ForEachRow(const SampleView<T>& view, int64_t c, F&& f) {
  T* base = view.data + c * view.channel_stride;
  if (view.channel_is_contiguous()) {
    f(base, view.spatial_size(), int64_t{1});
    return;
  }
  const int last = view.spatial_dims - 1;
  const int64_t n = view.shape[last];
  const int64_t stride = view.strides[last];
  const int64_t n0 = view.spatial_dims == 3 ? view.shape[0] : 1;
  const int64_t s0 = view.spatial_dims == 3 ? view.strides[0] : 0;
  const int64_t n1 = view.shape[last - 1];
  const int64_t s1 = view.strides[last - 1];
  for (int64_t i0 = 0; i0 < n0; ++i0) {
    for (int64_t i1 = 0; i1 < n1; ++i1)
      f(base + i0 * s0 + i1 * s1, n, stride);
  }
}

/// Copies channel `c` of `view` into dense C-order `out` (spatial_size() elements).
template <typename T>
void GatherChannel(const SampleView<T>& view, int64_t c, T* out) {
  ForEachRow(view, c, [&](T* row, int64_t n, int64_t stride) {
    for (int64_t i = 0; i < n; ++i)
      *out++ = row[i * stride];
  });
}

/// Copies dense C-order `in` back into channel `c` of `view`.
template <typename T>
void ScatterChannel(const T* in, const SampleView<T>& view, int64_t c) {
  ForEachRow(view, c, [&](T* row, int64_t n, int64_t stride) {
    for (int64_t i = 0; i < n; ++i)
      row[i * stride] = *in++;
  });
}

}  // namespace patchfeed::internal_augment

#endif  // PATCHFEED_AUGMENT_INTENSITY_CHANNEL_LOOPS_H_
