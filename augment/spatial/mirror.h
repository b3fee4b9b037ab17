// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_SPATIAL_MIRROR_H_
#define PATCHFEED_AUGMENT_SPATIAL_MIRROR_H_

/// \file
/// nnU-Net's MirrorTransform (batchgeneratorsv2 `transforms/spatial/mirroring.py`): each
/// allowed spatial axis is flipped independently with probability 0.5, the same flips for
/// image and segmentation. Stateless functions; safe to call concurrently on distinct views.

#include <array>
#include <cstdint>

#include "augment/sample_view.h"
#include "common/random.h"
#include "common/status.h"

namespace patchfeed::augment {

struct MirrorParams {
  std::array<bool, 3> flip{};  ///< per spatial axis
};

/// One uniform per axis 0..spatial_dims-1 in order (nnU-Net: (0, 1, 2) in 3D, (0, 1) in 2D);
/// the axis flips if the draw is below 0.5.
MirrorParams DrawMirrorParams(CounterRng& rng, int spatial_dims);

/// Flips `data` in place along the axes `params` selects.
/// \error kInvalidArgument when the view does not have 2 or 3 spatial dims.
template <typename T>
Status ApplyMirror(const MirrorParams& params, SampleView<T> data);

/// Maps every element of `data` through the pointwise function `f` (T -> T) and flips the
/// result along the axes `params` selects, in one pass over memory: the same values as
/// applying `f` to every element, then ApplyMirror. The pipeline folds the last pass of an
/// intensity transform into mirroring this way.
/// \error kInvalidArgument when the view does not have 2 or 3 spatial dims.
template <typename T, typename F>
Status ApplyMirrorMapped(const MirrorParams& params, SampleView<T> data, F f);

/// Writes `in` flipped into `out` (same channel count and shape; must not overlap `in`).
/// \error kInvalidArgument on mismatched shapes or channel counts.
template <typename T>
Status ApplyMirror(const MirrorParams& params, SampleView<const T> in, SampleView<T> out);

extern template Status ApplyMirror<float>(const MirrorParams&, SampleView<float>);
extern template Status ApplyMirror<int16_t>(const MirrorParams&, SampleView<int16_t>);
extern template Status ApplyMirror<float>(const MirrorParams&, SampleView<const float>,
                                          SampleView<float>);
extern template Status ApplyMirror<int16_t>(const MirrorParams&, SampleView<const int16_t>,
                                            SampleView<int16_t>);

}  // namespace patchfeed::augment

namespace patchfeed::internal_augment {

// One row `x` and its mirror partner `y` (the same row when `same`), each mapped through `f`
// and swapped, reversed when `reverse`. kUnit: the row stride is 1 (known to the compiler, so
// the loops vectorise), else `stride`.
template <bool kUnit, typename T, typename F>
inline void MapRowPair(T* x, T* y, int64_t n, int64_t stride, bool same, bool reverse, F& f) {
  const int64_t s = kUnit ? 1 : stride;
  if (same) {
    if (reverse) {
      int64_t e = 0, g = n - 1;
      for (; e < g; ++e, --g) {
        const T a = f(x[e * s]);
        const T b = f(x[g * s]);
        x[e * s] = b;
        x[g * s] = a;
      }
      if (e == g) {
        x[e * s] = f(x[e * s]);
      }
    } else {
      for (int64_t e = 0; e < n; ++e) {
        x[e * s] = f(x[e * s]);
      }
    }
  } else if (reverse) {
    for (int64_t e = 0; e < n; ++e) {
      const T a = f(x[e * s]);
      const T b = f(y[(n - 1 - e) * s]);
      x[e * s] = b;
      y[(n - 1 - e) * s] = a;
    }
  } else {
    for (int64_t e = 0; e < n; ++e) {
      const T a = f(x[e * s]);
      const T b = f(y[e * s]);
      x[e * s] = b;
      y[e * s] = a;
    }
  }
}

}  // namespace patchfeed::internal_augment

namespace patchfeed::augment {

template <typename T, typename F>
Status ApplyMirrorMapped(const MirrorParams& params, SampleView<T> data, F f) {
  if (data.spatial_dims != 2 && data.spatial_dims != 3) {
    return InvalidArgumentError("mirroring needs 2 or 3 spatial dims");
  }
  // One pass for all flips: the combined flip maps row (a, b) to row (a', b'), reversed when
  // the last axis flips. Each pair of distinct rows is handled once (from the lower one); a
  // row that maps to itself is reversed in place. 2D views have the rows on axis 0.
  const int last = data.spatial_dims - 1;
  const int64_t n0 = data.spatial_dims == 3 ? data.shape[0] : 1;
  const int64_t n1 = data.shape[last - 1];
  const int64_t n = data.shape[last];
  const int64_t s0 = data.spatial_dims == 3 ? data.strides[0] : 0;
  const int64_t s1 = data.strides[last - 1];
  const int64_t s = data.strides[last];
  const bool f0 = data.spatial_dims == 3 && params.flip[0];
  const bool f1 = params.flip[static_cast<size_t>(last - 1)];
  const bool f2 = params.flip[static_cast<size_t>(last)];
  for (int64_t c = 0; c < data.channels; ++c) {
    T* base = data.data + c * data.channel_stride;
    for (int64_t a = 0; a < n0; ++a) {
      const int64_t a2 = f0 ? n0 - 1 - a : a;
      for (int64_t b = 0; b < n1; ++b) {
        const int64_t b2 = f1 ? n1 - 1 - b : b;
        const int64_t r = a * n1 + b, r2 = a2 * n1 + b2;
        if (r2 < r) {
          continue;  // handled with its partner already
        }
        T* x = base + a * s0 + b * s1;
        T* y = base + a2 * s0 + b2 * s1;
        if (s == 1) {
          internal_augment::MapRowPair<true>(x, y, n, s, r2 == r, f2, f);
        } else {
          internal_augment::MapRowPair<false>(x, y, n, s, r2 == r, f2, f);
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_SPATIAL_MIRROR_H_
