// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_TILES_H_
#define PATCHFEED_LOADER_TILES_H_

/// \file
/// Every tile of one whole case, in order, for validation and sliding-window inference: the
/// positions of nnU-Net's predictor (tile_grid.h), read the way the Loader reads a patch.
///
/// A TileReader owns a tbb::task_arena and a small ring of tile buffers. While the consumer
/// works on one tile, the workers read the next `read_ahead` ones: each tile's box of each
/// array is planned by the codec (codec::PlanBox: only the chunks and blocks the tile touches)
/// and its pieces are read as tasks straight into the tile's buffer, the part outside the case
/// filled with the array's pad value. Next() hands tiles out in order through a Tile, whose
/// buffer goes back to the ring when the Tile is released.
///
/// Threads: Next and NextFor are meant for one consumer; Close may be called from any thread,
/// also while another waits in Next. Tiles may be released from any thread, before or after
/// the TileReader is destroyed (a tile keeps the ring alive). Destroying the reader cancels
/// the reads in flight and waits for its tasks, never for tiles.
///
/// Example (validation of one case with a model that takes (1, C, *tile)):
/// \code
///   TileConfig config;
///   config.dataset = dataset;
///   config.case_index = 3;
///   config.tile_size = {128, 128, 128};
///   PATCHFEED_ASSIGN_OR_RETURN(auto tiles, TileReader::Create(std::move(config)));
///   while (true) {
///     PATCHFEED_ASSIGN_OR_RETURN(Tile tile, tiles->Next());
///     if (!tile) break;  // past the last tile
///     Predict(tile.array("image")->data, tile.box());  // (C, 128, 128, 128), case coordinates
///   }
/// \endcode

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codec/b2nd/frame_reader.h"
#include "codec/box_plan.h"
#include "common/result.h"
#include "loader/batch_view.h"
#include "loader/dataset.h"
#include "loader/loader.h"
#include "loader/tile_grid.h"

namespace patchfeed::loader {

namespace internal_loader {
class TileEngine;
}  // namespace internal_loader

struct TileConfig {
  Dataset dataset;
  int64_t case_index = 0;
  /// Arrays to read, in output order, with their pad values (default: -1 for "seg", 0
  /// otherwise, as the Loader); empty: every dataset array. Their spatial shapes must agree.
  std::vector<ArrayOptions> arrays;
  /// Spatial size of a tile: as many axes as the arrays' spatial axes, or one fewer to tile
  /// each slice of the first axis (nnU-Net's 2d configuration, TileGrid).
  std::vector<int64_t> tile_size;
  double overlap = 0.5;  ///< in [0, 1); nnU-Net's tile_step_size is 1 - overlap
  /// Tiles read while the consumer holds one (>= 1: a loop holds a tile while it asks for
  /// the next); the ring has read_ahead + 1 tile buffers.
  int read_ahead = 2;
  int num_threads = 0;  ///< arena size; 0: every core
  storage::IoMode io_mode = storage::IoMode::kMmap;
  PinMode pin_memory = PinMode::kAuto;
  /// A tile's array of fewer bytes is read by one task; a larger one is split into tasks of
  /// at least this many bytes (LoaderConfig::min_task_bytes).
  int64_t min_task_bytes = int64_t{256} << 10;
  /// Bytes the tile buffers and the workers' decode scratch may take; Create refuses more.
  int64_t memory_budget = int64_t{4} << 30;
};

/// A tile held by the consumer. Movable, not copyable; releasing or destroying it returns its
/// buffer to the reader. A default-constructed Tile, or the one Next() returns after the last
/// tile, holds nothing.
class Tile {
 public:
  Tile() = default;
  Tile(Tile&& other) noexcept;
  Tile& operator=(Tile&& other) noexcept;
  Tile(const Tile&) = delete;
  Tile& operator=(const Tile&) = delete;
  ~Tile();

  explicit operator bool() const { return slot_ >= 0; }
  /// Its position in the reader's order, in [0, num_tiles).
  int64_t index() const { return index_; }
  /// Its spatial box in the case's coordinates; it reaches past the case where the case is
  /// smaller than the tile (TileGrid).
  codec::Box box() const;
  /// Every array, in the configured order, shaped (C, *tile_size).
  std::span<const ArrayView> arrays() const;
  /// The array named `name`, or nullptr.
  const ArrayView* array(std::string_view name) const;
  /// Whether the memory is page-locked for CUDA.
  bool pinned() const;

  /// Returns the buffer now (the views dangle after this).
  void Release();

 private:
  friend class internal_loader::TileEngine;
  Tile(std::shared_ptr<internal_loader::TileEngine> engine, int slot, int64_t index);

  std::shared_ptr<internal_loader::TileEngine> engine_;
  int slot_ = -1;
  int64_t index_ = 0;
};

class TileReader {
 public:
  /// Opens the case's arrays, checks that they and the tile fit together, allocates the tile
  /// buffers and starts reading. kInvalidArgument for options or arrays that do not fit (the
  /// message names the case and file), kResourceExhausted over `memory_budget`; file errors
  /// name the file.
  static Result<std::unique_ptr<TileReader>> Create(TileConfig config);

  TileReader(const TileReader&) = delete;
  TileReader& operator=(const TileReader&) = delete;
  /// Close().
  ~TileReader();

  /// The next tile in order, waiting for it if needed; an empty Tile after the last one. A
  /// tile whose read failed comes back as its error, naming the case, array, file, tile box
  /// and chunk (the following call returns the next tile). kResourceExhausted when the
  /// consumer holds every buffer; kCancelled once closed.
  Result<Tile> Next();
  /// Next, waiting at most `timeout`: nullopt when it passes first (nothing has moved).
  Result<std::optional<Tile>> NextFor(std::chrono::nanoseconds timeout);
  /// Cancels the reads in flight and waits for the reader's tasks; held tiles stay valid.
  /// Idempotent; Next then returns kCancelled.
  void Close();

  const TileGrid& grid() const;
  int64_t num_tiles() const { return grid().num_tiles(); }
  /// Shapes and dtypes of a tile's arrays (data is null).
  std::vector<ArrayView> array_layout() const;
  int num_threads() const;
  /// Whether the tile buffers are page-locked for CUDA.
  bool pinned() const;

 private:
  explicit TileReader(std::shared_ptr<internal_loader::TileEngine> engine);

  std::shared_ptr<internal_loader::TileEngine> engine_;
};

}  // namespace patchfeed::loader

#endif  // PATCHFEED_LOADER_TILES_H_
