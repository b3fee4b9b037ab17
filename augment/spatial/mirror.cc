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
  if (!params.flip[0] && !params.flip[1] && !(data.spatial_dims == 3 && params.flip[2])) {
    return Status::Ok();
  }
  return ApplyMirrorMapped(params, data, [](T v) { return v; });
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
