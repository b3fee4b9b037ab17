// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_LOADER_ENGINE_H_
#define PATCHFEED_LOADER_INTERNAL_LOADER_ENGINE_H_

/// \file
/// The engine behind Loader and Lease: the loader's threads (one tbb::task_arena), the slot
/// scheduler, the batch producer and the parts Create prepared. Shared by the Loader and every
/// outstanding Lease, so the ring outlives the Loader while the consumer still holds batches.
///
/// Threads: `num_threads` arena workers run producer tasks (one per batch, enqueued as slots
/// free up) and the read tasks they spawn; the consumer's thread joins the arena only to
/// produce the batch it waits for when no worker has started it. Nothing here sleeps or polls.

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include "loader/internal/batch_producer.h"
#include "loader/internal/loader_setup.h"
#include "loader/internal/metrics_counters.h"
#include "loader/internal/slot_scheduler.h"
#include "loader/internal/task_spawn.h"
#include "loader/loader.h"

namespace patchfeed::loader::internal_loader {

class LoaderEngine final : public SlotFiller, public std::enable_shared_from_this<LoaderEngine> {
 public:
  /// Checks the configuration, prepares the parts and starts producing.
  static Result<std::shared_ptr<LoaderEngine>> Create(LoaderConfig config);

  LoaderEngine(const LoaderEngine&) = delete;
  LoaderEngine& operator=(const LoaderEngine&) = delete;
  ~LoaderEngine();

  /// Stops scheduling, cancels what is in flight and waits for every task. Idempotent;
  /// NextFor returns kCancelled after it. Leases stay valid.
  void Close();

  /// The next batch as a lease (or the end-of-epoch marker); nullopt when `deadline` passes
  /// first. See Loader::NextFor.
  Result<std::optional<Lease>> NextFor(std::optional<SlotScheduler::Clock::time_point> deadline);
  Status Seek(int64_t epoch, int64_t batch_index);
  void Release(int slot) { scheduler_.Release(slot); }

  LoaderState state() const;
  LoaderMetrics metrics() const;
  const LoaderParts& parts() const { return parts_; }
  const std::vector<SampleSpec>& samples(int slot) const { return producer_.samples(slot); }

  // SlotFiller.
  void Enqueue(int slot) override;
  void ProduceHere(int slot) override;

 private:
  LoaderEngine(LoaderParts parts, std::unique_ptr<tbb::task_arena> arena,
               std::unique_ptr<tbb::global_control> thread_limit);

  std::unique_ptr<tbb::global_control> thread_limit_;
  std::unique_ptr<tbb::task_arena> arena_;
  LoaderParts parts_;
  MetricsCounters counters_;
  SlotScheduler scheduler_;
  BatchProducer producer_;
  tbb::task_group producers_;  ///< every producer task; cancelled and waited for by Close
  TsanToken producers_done_;
  /// Held by NextFor for its whole call, so that Close, after waking it, waits for a batch the
  /// consumer is producing in the arena before it tears the arena down.
  std::mutex consumer_mu_;
  std::once_flag closed_;
};

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_LOADER_ENGINE_H_
