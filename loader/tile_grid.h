// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_TILE_GRID_H_
#define PATCHFEED_LOADER_TILE_GRID_H_

/// \file
/// Where the tiles of a whole case go, for validation and sliding-window inference: nnU-Net's
/// positions (compute_steps_for_sliding_window in nnunetv2/inference/sliding_window_prediction.py)
/// and its padding of cases smaller than the tile, as boxes in the case's own coordinates.
///
/// nnU-Net pads a case smaller than the tile along an axis symmetrically (acvl_utils'
/// pad_nd_image: `(tile - size) // 2` before, the rest after) and then places its tiles on the
/// padded case. A TileGrid keeps the case unpadded and moves the boxes instead: along such an
/// axis the one tile starts at `-((tile - size) // 2)`, so every tile covers exactly the voxels
/// (and the padding) nnU-Net's tile covers, and the reader fills the part outside the case with
/// the pad value. A tile's part inside the case is then [max(start, 0), min(stop, size)).
///
/// A tile of one axis fewer than the case is nnU-Net's `2d` configuration on a 3-D case: every
/// slice of the first spatial axis is tiled on its own (slice-major order, as nnU-Net's
/// predictor does), the box spans one slice along that axis, and the tile's arrays have no
/// such axis.
///
/// Pure functions and plain data: copy a grid, read it from any thread.

#include <cstdint>
#include <span>
#include <vector>

#include "codec/box_plan.h"
#include "common/result.h"

namespace patchfeed::loader {

/// nnU-Net's compute_steps_for_sliding_window, computed the same way (in double, rounding half
/// to even): per axis, the starts of the tiles over an image of `image_size` with tiles of
/// `tile_size` placed at most `tile_size * tile_step_size` apart, the first at 0 and the last
/// at `image_size - tile_size`. Needs image_size >= tile_size >= 1 and 0 < tile_step_size <= 1
/// (kInvalidArgument otherwise), and a step of at least one voxel, where nnU-Net would repeat
/// positions.
Result<std::vector<std::vector<int64_t>>> SlidingWindowSteps(std::span<const int64_t> image_size,
                                                             std::span<const int64_t> tile_size,
                                                             double tile_step_size);

class TileGrid {
 public:
  /// The tiles of size `tile_size` (as many axes as `case_shape`, or one fewer: slices) over a
  /// case of spatial shape `case_shape`, overlapping by `overlap` (nnU-Net's tile_step_size is
  /// 1 - overlap; it defaults to 0.5), which must be in [0, 1). kInvalidArgument says what
  /// does not fit, also for grids of absurd size (from a corrupt shape).
  static Result<TileGrid> Create(std::vector<int64_t> case_shape, std::vector<int64_t> tile_size,
                                 double overlap);

  /// Spatial axes of the case (and of every box).
  int ndim() const { return static_cast<int>(case_shape_.size()); }
  const std::vector<int64_t>& case_shape() const { return case_shape_; }
  /// The tile as its arrays hold it (without the slice axis when slices()).
  const std::vector<int64_t>& tile_size() const { return tile_size_; }
  /// The tile's extent along every case axis (1 along the slice axis).
  const std::vector<int64_t>& tile_extent() const { return tile_extent_; }
  /// Whether each slice of the first axis is tiled on its own (nnU-Net's `2d`).
  bool slices() const { return tile_size_.size() < case_shape_.size(); }
  double overlap() const { return overlap_; }

  /// Per case axis, the starts of the tiles, ascending (case coordinates: negative where
  /// the case is padded).
  const std::vector<std::vector<int64_t>>& starts() const { return starts_; }
  int64_t num_tiles() const { return num_tiles_; }
  /// Tile `index` (in [0, num_tiles()), C order over starts()): its spatial box, which may
  /// reach past the case where the case is padded.
  codec::Box box(int64_t index) const;

 private:
  std::vector<int64_t> case_shape_;
  std::vector<int64_t> tile_size_;
  std::vector<int64_t> tile_extent_;
  double overlap_ = 0.5;
  std::vector<std::vector<int64_t>> starts_;
  int64_t num_tiles_ = 0;
};

}  // namespace patchfeed::loader

#endif  // PATCHFEED_LOADER_TILE_GRID_H_
