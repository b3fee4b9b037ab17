// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_TILE_ENGINE_H_
#define PATCHFEED_LOADER_INTERNAL_TILE_ENGINE_H_

/// \file
/// The engine behind TileReader and Tile: the loader's pieces put together for one case. Tile
/// i is batch i of a one-epoch sequence of the SlotScheduler (which orders, schedules and
/// hands out ring slots exactly as for batches), its buffers are a BatchRing, and its reads are
/// codec::PlanBox plans cut into tasks by GroupPieces and read with ArrayReader::ReadPiece, as
/// the batch producer reads a plain sample. Shared by the TileReader and every held Tile, so
/// the ring outlives the reader while the consumer still holds tiles.
///
/// Threads: `num_threads` arena workers read tiles ahead, one producer task per tile (its
/// pieces spawned as tasks of their own); the consumer only waits, so that Python can handle
/// Ctrl-C between waits. Nothing here sleeps or polls.

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include "codec/array_reader.h"
#include "loader/internal/batch_ring.h"
#include "loader/internal/metrics_counters.h"
#include "loader/internal/read_tasks.h"
#include "loader/internal/slot_scheduler.h"
#include "loader/internal/task_spawn.h"
#include "loader/tiles.h"

namespace patchfeed::loader::internal_loader {

/// One array of the case, as the tiles read it.
struct TileSource {
  std::string name;
  std::string path;
  std::shared_ptr<const codec::ArrayReader> reader;
  std::vector<std::byte> pad_item;
};

class TileEngine final : public SlotFiller, public std::enable_shared_from_this<TileEngine> {
 public:
  /// Opens and checks the case's arrays, builds the grid and the ring, and starts reading.
  static Result<std::shared_ptr<TileEngine>> Create(TileConfig config);

  TileEngine(const TileEngine&) = delete;
  TileEngine& operator=(const TileEngine&) = delete;
  ~TileEngine();

  /// Stops scheduling, cancels what is in flight and waits for every task. Idempotent.
  void Close();
  /// The next tile (an empty one after the last); nullopt when `deadline` passes first.
  Result<std::optional<Tile>> NextFor(std::optional<SlotScheduler::Clock::time_point> deadline);
  void Release(int slot) { scheduler_.Release(slot); }

  const TileGrid& grid() const { return grid_; }
  /// The arrays as a tile shows them, (C, *tile_size), over slot `slot`'s memory.
  const std::vector<ArrayView>& views(int slot) const { return views_[static_cast<size_t>(slot)]; }
  int num_threads() const { return num_threads_; }
  bool pinned() const { return ring_.pinned(); }

  // SlotFiller.
  void Enqueue(int slot) override;
  void ProduceHere(int slot) override;

 private:
  /// The reads of the tile in one slot: the plan of each source's box and the first error.
  struct SlotReads {
    int64_t index = 0;  ///< the tile
    std::vector<codec::Box> boxes;
    std::vector<codec::BoxPlan> plans;
    std::vector<std::pair<size_t, PieceRun>> runs;  // (source, run)
    std::mutex mu;
    Status status;
    std::atomic<bool> failed{false};
    TsanToken done;
  };

  TileEngine(TileConfig config, std::vector<TileSource> sources, TileGrid grid, BatchRing ring,
             int num_threads, std::unique_ptr<tbb::task_arena> arena,
             std::unique_ptr<tbb::global_control> thread_limit);

  void Produce(int slot) noexcept;
  Status ReadTile(int slot, int64_t index);
  /// Reads `run` of source `source`'s plan in `slot`; records the first error.
  void ReadRun(int slot, size_t source, const PieceRun& run);
  void Fail(int slot, size_t source, const codec::BoxPiece* piece, const Status& status);

  const TileConfig config_;
  const std::vector<TileSource> sources_;
  const TileGrid grid_;
  BatchRing ring_;
  std::vector<std::vector<ArrayView>> views_;
  const int num_threads_;
  std::unique_ptr<tbb::global_control> thread_limit_;
  std::unique_ptr<tbb::task_arena> arena_;
  MetricsCounters counters_;
  SlotScheduler scheduler_;
  std::vector<std::unique_ptr<SlotReads>> reads_;
  tbb::enumerable_thread_specific<codec::BoxReadScratch> scratch_;
  tbb::task_group producers_;  ///< every producer task; cancelled and waited for by Close
  TsanToken producers_done_;
  std::mutex consumer_mu_;
  bool finished_ = false;  ///< the consumer got the empty tile (under consumer_mu_)
  std::once_flag closed_;
};

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_TILE_ENGINE_H_
