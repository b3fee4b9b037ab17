// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/tile_grid.h"

#include <cmath>
#include <string>
#include <utility>

#include "common/str_cat.h"

namespace patchfeed::loader {
namespace {

// Far more tiles than any case has; a shape that asks for more is corrupt or a mistake, and
// the starts of an axis are kept in memory.
constexpr int64_t kMaxTilesPerAxis = int64_t{1} << 24;
constexpr int64_t kMaxTiles = int64_t{1} << 40;

// np.round's rule, without depending on the floating-point environment's rounding mode.
double RoundHalfToEven(double x) {
  return std::fabs(x - std::trunc(x)) == 0.5 ? 2.0 * std::round(x / 2.0) : std::round(x);
}

std::string ShapeString(std::span<const int64_t> shape) {
  std::string s = "(";
  for (size_t d = 0; d < shape.size(); ++d) {
    s += StrCat(d ? ", " : "", shape[d]);
  }
  return s + ")";
}

}  // namespace

Result<std::vector<std::vector<int64_t>>> SlidingWindowSteps(std::span<const int64_t> image_size,
                                                             std::span<const int64_t> tile_size,
                                                             double tile_step_size) {
  if (image_size.size() != tile_size.size()) {
    return InvalidArgumentError(StrCat("sliding window: an image of ", image_size.size(),
                                       " axes and a tile of ", tile_size.size()));
  }
  if (!(tile_step_size > 0 && tile_step_size <= 1)) {
    return InvalidArgumentError(
        StrCat("sliding window: the tile step must be in (0, 1], not ", tile_step_size));
  }
  std::vector<std::vector<int64_t>> steps(image_size.size());
  for (size_t d = 0; d < image_size.size(); ++d) {
    const int64_t image = image_size[d];
    const int64_t tile = tile_size[d];
    if (tile < 1 || image < tile) {
      return InvalidArgumentError(StrCat("sliding window: axis ", d, ": the tile (", tile,
                                         ") must be >= 1 and fit in the image (", image, ")"));
    }
    // nnU-Net's arithmetic, in its order: target = tile * step; n = ceil((image - tile) /
    // target) + 1; starts = round(j * (image - tile) / (n - 1)), half to even as np.round.
    const double target = static_cast<double>(tile) * tile_step_size;
    if (image > tile && target < 1) {
      return InvalidArgumentError(
          StrCat("sliding window: axis ", d, ": a tile of ", tile, " at step ", tile_step_size,
                 " moves less than one voxel (nnU-Net would repeat positions); lower the "
                 "overlap or enlarge the tile"));
    }
    const double n_steps = std::ceil(static_cast<double>(image - tile) / target) + 1;
    if (n_steps > static_cast<double>(kMaxTilesPerAxis)) {
      return InvalidArgumentError(StrCat("sliding window: axis ", d, " of ", image,
                                         " voxels would take ", n_steps, " tiles of ", tile));
    }
    const auto n = static_cast<int64_t>(n_steps);
    const double actual =
        n > 1 ? static_cast<double>(image - tile) / static_cast<double>(n - 1) : 0.0;
    steps[d].resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      steps[d][static_cast<size_t>(j)] =
          static_cast<int64_t>(RoundHalfToEven(actual * static_cast<double>(j)));
    }
  }
  return steps;
}

Result<TileGrid> TileGrid::Create(std::vector<int64_t> case_shape, std::vector<int64_t> tile_size,
                                  double overlap) {
  const std::string what =
      StrCat("tiles ", ShapeString(tile_size), " over a case of ", ShapeString(case_shape));
  if (!(overlap >= 0 && overlap < 1)) {
    return InvalidArgumentError(StrCat(what, ": the overlap must be in [0, 1), not ", overlap));
  }
  const size_t ndim = case_shape.size();
  const bool slices = ndim >= 2 && tile_size.size() + 1 == ndim;
  if (ndim == 0 || (tile_size.size() != ndim && !slices)) {
    return InvalidArgumentError(StrCat(
        what, ": the tile needs as many axes as the case's spatial shape (", ndim,
        "), or one fewer to tile each slice of the first axis (nnU-Net's 2d configuration)"));
  }
  for (const int64_t s : case_shape) {
    if (s < 1) {
      return InvalidArgumentError(what + ": the case is empty");
    }
  }
  for (const int64_t t : tile_size) {
    if (t < 1) {
      return InvalidArgumentError(what + ": tile sizes must be >= 1");
    }
  }
  TileGrid grid;
  grid.overlap_ = overlap;
  grid.tile_extent_ = tile_size;
  if (slices) {
    grid.tile_extent_.insert(grid.tile_extent_.begin(), 1);
  }
  // nnU-Net pads the case to at least the tile, symmetrically, and steps over the padded case.
  const size_t lead = slices ? 1 : 0;
  std::vector<int64_t> padded(case_shape.begin() + static_cast<std::ptrdiff_t>(lead),
                              case_shape.end());
  std::vector<int64_t> pad_before(padded.size());
  for (size_t d = 0; d < padded.size(); ++d) {
    if (padded[d] < tile_size[d]) {
      pad_before[d] = (tile_size[d] - padded[d]) / 2;
      padded[d] = tile_size[d];
    }
  }
  PATCHFEED_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> steps,
                             SlidingWindowSteps(padded, tile_size, 1.0 - overlap), what);
  if (slices) {
    if (case_shape[0] > kMaxTilesPerAxis) {
      return InvalidArgumentError(what + ": too many slices");
    }
    std::vector<int64_t> each(static_cast<size_t>(case_shape[0]));
    for (size_t z = 0; z < each.size(); ++z) {
      each[z] = static_cast<int64_t>(z);
    }
    grid.starts_.push_back(std::move(each));
  }
  for (size_t d = 0; d < steps.size(); ++d) {
    for (int64_t& s : steps[d]) {
      s -= pad_before[d];
    }
    grid.starts_.push_back(std::move(steps[d]));
  }
  grid.num_tiles_ = 1;
  for (const auto& axis : grid.starts_) {
    const auto n = static_cast<int64_t>(axis.size());
    if (grid.num_tiles_ > kMaxTiles / n) {
      return InvalidArgumentError(what + ": too many tiles");
    }
    grid.num_tiles_ *= n;
  }
  grid.case_shape_ = std::move(case_shape);
  grid.tile_size_ = std::move(tile_size);
  return grid;
}

codec::Box TileGrid::box(int64_t index) const {
  PATCHFEED_DCHECK(index >= 0 && index < num_tiles_);
  codec::Box b;
  b.start.resize(starts_.size());
  b.stop.resize(starts_.size());
  for (size_t d = starts_.size(); d-- > 0;) {
    const auto n = static_cast<int64_t>(starts_[d].size());
    b.start[d] = starts_[d][static_cast<size_t>(index % n)];
    b.stop[d] = b.start[d] + tile_extent_[d];
    index /= n;
  }
  return b;
}

}  // namespace patchfeed::loader
