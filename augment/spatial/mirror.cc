// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Mirroring: a flip is a view with a negated stride, so out-of-place mirroring is one strided
// copy; in place, one pass swaps each row with its mirrored partner row (reversed when the
// last axis flips).

#include "augment/spatial/mirror.h"

#include <string>
#include <utility>

#include "common/str_cat.h"

namespace patchfeed::augment {
namespace {

template <typename T>
Status CheckDims(const SampleView<T>& v) {
  if (v.spatial_dims != 2 && v.spatial_dims != 3) {
    return InvalidArgumentError(
        StrCat("mirroring needs 2 or 3 spatial dims, got ", v.spatial_dims));
  }
  return Status::Ok();
}

// `v` seen through the flips: start at the far end of each flipped axis, walk backwards.
template <typename T>
SampleView<T> Flipped(SampleView<T> v, const MirrorParams& params) {
  for (int d = 0; d < v.spatial_dims; ++d) {
    if (params.flip[d] && v.shape[d] > 1) {
      v.data += (v.shape[d] - 1) * v.strides[d];
      v.strides[d] = -v.strides[d];
    }
  }
  return v;
}

}  // namespace

MirrorParams DrawMirrorParams(CounterRng& rng, int spatial_dims) {
  MirrorParams p;
  for (int d = 0; d < spatial_dims && d < kMaxSpatialDims; ++d) {
    p.flip[d] = rng.UniformDouble() < 0.5;
  }
  return p;
}

template <typename T>
Status ApplyMirror(const MirrorParams& params, SampleView<T> data) {
  PATCHFEED_RETURN_IF_ERROR(CheckDims(data));
  // One pass for all flips: the combined flip maps row (a, b) to row (a', b'), reversed when
  // the last axis flips. Each pair of distinct rows is swapped once (from the lower one), a row
  // that maps to itself is reversed in place. 2D views have the rows on axis 0.
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
  if (!f0 && !f1 && !f2) {
    return Status::Ok();
  }
  for (int64_t c = 0; c < data.channels; ++c) {
    T* base = data.data + c * data.channel_stride;
    for (int64_t a = 0; a < n0; ++a) {
      const int64_t a2 = f0 ? n0 - 1 - a : a;
      for (int64_t b = 0; b < n1; ++b) {
        const int64_t b2 = f1 ? n1 - 1 - b : b;
        const int64_t r = a * n1 + b, r2 = a2 * n1 + b2;
        if (r2 < r) {
          continue;  // swapped from its partner already
        }
        T* x = base + a * s0 + b * s1;
        T* y = base + a2 * s0 + b2 * s1;
        if (r2 == r) {
          if (f2) {
            for (int64_t e = 0, g = n - 1; e < g; ++e, --g) {
              std::swap(x[e * s], x[g * s]);
            }
          }
        } else if (f2) {
          for (int64_t e = 0; e < n; ++e) {
            std::swap(x[e * s], y[(n - 1 - e) * s]);
          }
        } else {
          for (int64_t e = 0; e < n; ++e) {
            std::swap(x[e * s], y[e * s]);
          }
        }
      }
    }
  }
  return Status::Ok();
}

template <typename T>
Status ApplyMirror(const MirrorParams& params, SampleView<const T> in, SampleView<T> out) {
  PATCHFEED_RETURN_IF_ERROR(CheckDims(in));
  if (out.spatial_dims != in.spatial_dims || out.channels != in.channels || out.shape != in.shape) {
    return InvalidArgumentError("mirror output shape or channels differ from the input");
  }
  const SampleView<const T> src = Flipped(in, params);
  for (int64_t c = 0; c < out.channels; ++c) {
    for (int64_t a = 0; a < out.shape[0]; ++a) {
      for (int64_t b = 0; b < out.shape[1]; ++b) {
        T* o = &out.at(c, a, b, 0);
        const T* i = &src.at(c, a, b, 0);
        const int64_t n = out.shape[2];
        const int64_t os = out.strides[2];
        const int64_t is = src.strides[2];
        for (int64_t e = 0; e < n; ++e) {
          o[e * os] = i[e * is];
        }
      }
    }
  }
  return Status::Ok();
}

template Status ApplyMirror<float>(const MirrorParams&, SampleView<float>);
template Status ApplyMirror<int16_t>(const MirrorParams&, SampleView<int16_t>);
template Status ApplyMirror<float>(const MirrorParams&, SampleView<const float>, SampleView<float>);
template Status ApplyMirror<int16_t>(const MirrorParams&, SampleView<const int16_t>,
                                     SampleView<int16_t>);

}  // namespace patchfeed::augment
