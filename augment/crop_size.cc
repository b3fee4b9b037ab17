// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "augment/crop_size.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "common/str_cat.h"

namespace patchfeed::augment {

Result<std::vector<int64_t>> CropForAugmentation(std::span<const int64_t> patch, double max_angle,
                                                 double min_scale, bool dummy_2d) {
  if (patch.size() != 2 && patch.size() != 3) {
    return InvalidArgumentError(StrCat("the augmentation crop needs a 2-D or 3-D patch size, got ",
                                       patch.size(), " dimensions"));
  }
  for (const int64_t p : patch) {
    if (p <= 0)
      return InvalidArgumentError(StrCat("patch sizes must be positive, got ", p));
  }
  if (!(min_scale > 0) || !std::isfinite(max_angle)) {
    return InvalidArgumentError(
        StrCat("the augmentation crop needs a finite rotation and a positive smallest scale, got ",
               max_angle, " and ", min_scale));
  }
  const double a = std::min(std::abs(max_angle), std::numbers::pi / 2);
  const double c = std::cos(a), s = std::sin(a);
  std::vector<double> p(patch.begin(), patch.end());
  std::vector<double> e = p;  // the largest extent seen per axis, the patch itself included
  // batchgeneratorsv2's rotate_coords_{2,3}d apply a rotation matrix R to the extent vector
  // as p^T R; each rotation is applied on its own, never composed.
  const auto keep = [&](size_t axis, double v) { e[axis] = std::max(e[axis], std::abs(v)); };
  if (p.size() == 3) {
    keep(1, p[1] * c + p[2] * s);  // about x: R = [[1,0,0],[0,c,-s],[0,s,c]]
    keep(2, -p[1] * s + p[2] * c);
    keep(0, p[0] * c - p[2] * s);  // about y: R = [[c,0,s],[0,1,0],[-s,0,c]]
    keep(2, p[0] * s + p[2] * c);
    keep(0, p[0] * c + p[1] * s);  // about z: R = [[c,-s,0],[s,c,0],[0,0,1]]
    keep(1, -p[0] * s + p[1] * c);
  } else {
    keep(0, p[0] * c + p[1] * s);  // R = [[c,-s],[s,c]]
    keep(1, -p[0] * s + p[1] * c);
  }
  std::vector<int64_t> crop(p.size());
  for (size_t d = 0; d < p.size(); ++d)
    crop[d] = static_cast<int64_t>(e[d] / min_scale);
  if (dummy_2d && p.size() == 3)
    crop[0] = patch[0];
  return crop;
}

}  // namespace patchfeed::augment
