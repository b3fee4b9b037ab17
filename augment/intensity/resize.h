// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_INTENSITY_RESIZE_H_
#define PATCHFEED_AUGMENT_INTENSITY_RESIZE_H_

/// \file
/// The two resizes of torch.nn.functional.interpolate the intensity and label transforms
/// use, bit for bit on CPU float32:
/// - `mode='nearest-exact'` (SimulateLowResolution's downsampling, DownsampleSegForDS):
///   output index j reads input `min(floor((j + 0.5) * s), S - 1)` with `s = float(S) / S'`
///   and the product rounded to float before the floor (ATen calls floorf on it);
/// - `mode='(bi|tri)linear', align_corners=False` (SimulateLowResolution's upsampling):
///   source position `max(s * (i + 0.5) - 0.5, 0)` in float, neighbours `floor` and
///   `floor + 1` clamped, weights `1 - l, l`. ATen evaluates the N-linear form innermost axis
///   first (`t0 * w0 + t1 * w1` per level); filtering the last axis, then the middle, then
///   the first performs the same float operations, so the separable form is exact too.
///
/// All functions work on dense C-order arrays of 2 or 3 dimensions.

#include <cstdint>
#include <vector>

namespace patchfeed::internal_augment {

/// Python's `round(S * scale)` (half to even), with `scale` as given (double).
int64_t RoundHalfEven(double x);

/// The input index nearest-exact reads for output index `j` (input `in`, output `out`).
inline int64_t NearestExactIndex(int64_t j, int64_t in, int64_t out) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  // (j + 0.5) * scale is evaluated in double, then floorf rounds it to float: keep both.
  const auto src = static_cast<int64_t>(
      __builtin_floorf(static_cast<float>((static_cast<double>(j) + 0.5) * scale)));
  return src < in - 1 ? src : in - 1;
}

/// Nearest-exact resize of a dense array `in` of shape `in_shape[0..dims)` to `out_shape`
/// (any sizes >= 1, up or down). `index` is scratch for the per-axis index tables.
template <typename T>
void ResizeNearestExact(const T* in, const int64_t* in_shape, T* out, const int64_t* out_shape,
                        int dims, std::vector<int64_t>& index);

/// Linear (align_corners=False) resize of a dense float array `in` of shape `in_shape` to
/// `out_shape`, separably, last axis first; `work` and `index` hold the intermediates and tap
/// tables (grown as needed, never shrunk).
void ResizeLinear(const float* in, const int64_t* in_shape, float* out, const int64_t* out_shape,
                  int dims, std::vector<float>& work, std::vector<int64_t>& index);

}  // namespace patchfeed::internal_augment

#endif  // PATCHFEED_AUGMENT_INTENSITY_RESIZE_H_
