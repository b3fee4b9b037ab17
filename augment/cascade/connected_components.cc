// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "augment/cascade/connected_components.h"

#include <limits>

namespace patchfeed::augment {
namespace {

int32_t Find(std::vector<int32_t>& parent, int32_t a) {
  while (parent[static_cast<size_t>(a)] != a) {
    const int32_t up = parent[static_cast<size_t>(parent[static_cast<size_t>(a)])];
    parent[static_cast<size_t>(a)] = up;  // path halving
    a = up;
  }
  return a;
}

// Joins the sets of a and b under the smaller root, so a root is always the first provisional
// label of its component, the one its first voxel in raster order got.
int32_t Union(std::vector<int32_t>& parent, int32_t a, int32_t b) {
  a = Find(parent, a);
  b = Find(parent, b);
  if (a == b)
    return a;
  if (b < a)
    std::swap(a, b);
  parent[static_cast<size_t>(b)] = a;
  return a;
}

}  // namespace

Status LabelComponents(const MaskShape& shape, std::span<const uint8_t> mask,
                       ComponentLabels& out) {
  // Named copies, not a structured binding: clang 14 cannot capture those in a lambda.
  const int64_t nz = shape[0], ny = shape[1], nx = shape[2];
  const int64_t n = nz * ny * nx;
  if (nz < 1 || ny < 1 || nx < 1 || static_cast<int64_t>(mask.size()) != n) {
    return InvalidArgumentError("connected components: the mask's size does not match its shape");
  }
  if (n >= std::numeric_limits<int32_t>::max()) {
    return InvalidArgumentError("connected components: the volume has 2^31 voxels or more");
  }
  out.label.assign(static_cast<size_t>(n), 0);
  out.sizes.clear();
  std::vector<int32_t>& parent = out.parent;
  parent.assign(1, 0);
  int32_t* label = out.label.data();
  // First pass: each foreground voxel joins the labels of its 13 neighbours already visited
  // (the previous Z plane's 3x3, the previous row's 3, the voxel before it).
  for (int64_t z = 0; z < nz; ++z) {
    for (int64_t y = 0; y < ny; ++y) {
      for (int64_t x = 0; x < nx; ++x) {
        const int64_t i = (z * ny + y) * nx + x;
        if (!mask[static_cast<size_t>(i)])
          continue;
        int32_t l = 0;
        const auto join = [&](int64_t zz, int64_t yy, int64_t xx) {
          if (zz < 0 || yy < 0 || yy >= ny || xx < 0 || xx >= nx)
            return;
          const int32_t m = label[(zz * ny + yy) * nx + xx];
          if (m != 0)
            l = l == 0 ? Find(parent, m) : Union(parent, l, m);
        };
        for (int64_t dy = -1; dy <= 1; ++dy) {
          for (int64_t dx = -1; dx <= 1; ++dx)
            join(z - 1, y + dy, x + dx);
        }
        for (int64_t dx = -1; dx <= 1; ++dx)
          join(z, y - 1, x + dx);
        join(z, y, x - 1);
        if (l == 0) {
          l = static_cast<int32_t>(parent.size());
          parent.push_back(l);
        }
        label[i] = l;
      }
    }
  }
  // Second pass: provisional labels to final numbers, in place. A non-root's parent is a
  // smaller label (unions hang the larger root below the smaller, halving only shortens), so
  // one ascending sweep has each parent final before its children; roots are numbered 1.. in
  // the order they were created, raster order of their components' first voxels.
  for (size_t r = 1; r < parent.size(); ++r) {
    if (parent[r] == static_cast<int32_t>(r)) {
      out.sizes.push_back(0);
      parent[r] = static_cast<int32_t>(out.sizes.size());
    } else {
      parent[r] = parent[static_cast<size_t>(parent[r])];
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (label[i] == 0)
      continue;
    const int32_t k = parent[static_cast<size_t>(label[i])];
    label[i] = k;
    ++out.sizes[static_cast<size_t>(k - 1)];
  }
  return Status::Ok();
}

}  // namespace patchfeed::augment
