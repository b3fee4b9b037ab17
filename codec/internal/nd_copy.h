// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_INTERNAL_ND_COPY_H_
#define PATCHFEED_CODEC_INTERNAL_ND_COPY_H_

/// \file
/// N-d index loops and region copies shared by the b2nd reader and writer: walk every index of
/// a box, copy a region between a C-ordered block and a strided view row by row, fill a region
/// with one item. Stateless.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "codec/b2nd_meta.h"
#include "codec/nd_reader.h"
#include "common/status.h"

namespace patchfeed::internal_codec {

using codec::kMaxDims;
using codec::NdView;

using Index = std::array<int64_t, kMaxDims>;

// Calls f(idx) for every index tuple in [lo, hi) over `n` dimensions, last dimension fastest.
// With n == 0 it calls f once (a scalar).
template <typename F>
inline Status ForEachIndex(int n, const int64_t* lo, const int64_t* hi, F&& f) {
  Index idx{};
  for (int d = 0; d < n; ++d) {
    if (lo[d] >= hi[d]) return Status::Ok();
    idx[static_cast<size_t>(d)] = lo[d];
  }
  while (true) {
    PATCHFEED_RETURN_IF_ERROR(f(idx));
    int d = n - 1;
    for (; d >= 0; --d) {
      auto& v = idx[static_cast<size_t>(d)];
      if (++v < hi[d]) break;
      v = lo[d];
    }
    if (d < 0) return Status::Ok();
  }
}

// Copies the items of region [lo, hi) (global coordinates) from a C-ordered source whose
// origin is `src_origin` and extents `src_shape`, into `dst` whose origin is `dst_origin`.
inline void CopyRegion(int n, int64_t itemsize, const int64_t* lo, const int64_t* hi,
                const std::byte* src, const int64_t* src_origin, const int64_t* src_shape,
                const NdView& dst, const int64_t* dst_origin) {
  if (n == 0) {
    std::memcpy(dst.data, src, static_cast<size_t>(itemsize));
    return;
  }
  Index src_strides{};
  int64_t s = itemsize;
  for (int d = n - 1; d >= 0; --d) {
    src_strides[static_cast<size_t>(d)] = s;
    s *= src_shape[d];
  }
  const int last = n - 1;
  const int64_t run = hi[last] - lo[last];
  const bool dst_rows_contiguous = dst.byte_strides[static_cast<size_t>(last)] == itemsize;
  Index outer_hi{};
  std::copy(hi, hi + n, outer_hi.begin());
  outer_hi[static_cast<size_t>(last)] = lo[last] + 1;  // iterate rows, not items
  (void)ForEachIndex(n, lo, outer_hi.data(), [&](const Index& idx) {
    int64_t so = 0, dof = 0;
    for (int d = 0; d < n; ++d) {
      const auto i = static_cast<size_t>(d);
      so += (idx[i] - src_origin[d]) * src_strides[i];
      dof += (idx[i] - dst_origin[d]) * dst.byte_strides[i];
    }
    if (dst_rows_contiguous) {
      std::memcpy(dst.data + dof, src + so, static_cast<size_t>(run * itemsize));
    } else {
      const int64_t ds = dst.byte_strides[static_cast<size_t>(last)];
      for (int64_t k = 0; k < run; ++k) {
        std::memcpy(dst.data + dof + k * ds, src + so + k * itemsize,
                    static_cast<size_t>(itemsize));
      }
    }
    return Status::Ok();
  });
}

// Fills every item of `dst` with `item`.
inline void FillView(int n, const NdView& dst, std::span<const std::byte> item) {
  Index lo{}, hi{};
  for (int d = 0; d < n; ++d) hi[static_cast<size_t>(d)] = dst.shape[static_cast<size_t>(d)];
  (void)ForEachIndex(n, lo.data(), hi.data(), [&](const Index& idx) {
    int64_t off = 0;
    for (int d = 0; d < n; ++d) {
      off += idx[static_cast<size_t>(d)] * dst.byte_strides[static_cast<size_t>(d)];
    }
    std::memcpy(dst.data + off, item.data(), item.size());
    return Status::Ok();
  });
}

// Fills the items of region [lo, hi) of `dst` (global coordinates, origin `dst_origin`).
inline void FillRegion(int n, const int64_t* lo, const int64_t* hi, const NdView& dst,
                const int64_t* dst_origin, std::span<const std::byte> item) {
  NdView sub = dst;
  for (int d = 0; d < n; ++d) {
    const auto i = static_cast<size_t>(d);
    sub.data += (lo[d] - dst_origin[d]) * dst.byte_strides[i];
    sub.shape[i] = hi[d] - lo[d];
  }
  FillView(n, sub, item);
}

}  // namespace patchfeed::internal_codec

#endif  // PATCHFEED_CODEC_INTERNAL_ND_COPY_H_
