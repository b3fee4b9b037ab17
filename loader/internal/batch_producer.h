// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_BATCH_PRODUCER_H_
#define PATCHFEED_LOADER_INTERNAL_BATCH_PRODUCER_H_

/// \file
/// Fills one ring slot with one batch: samples it (the Sampler, from (seed, epoch, batch,
/// rank)), plans every (sample, array) read, runs the reads as tasks any worker may steal, and
/// hands the slot to the scheduler with the batch's status. Two kinds of sample task: plain
/// reads (a sample's box cut into cells of at most one chunk, grouped into runs of at least
/// `min_task_bytes`; small boxes read inline) and augmented samples (augmented_sample.h). With
/// ErrorPolicy::kSkip, failed samples are redrawn and read again in another round.
///
/// Produce runs on a worker or, for the batch the consumer waits for, on the consumer's thread
/// inside the arena; it waits for its reads isolated, so the waiting thread only runs this
/// batch's tasks. Thread-safe for distinct slots.

#include <cstdint>
#include <optional>
#include <vector>

#include "loader/internal/augmented_sample.h"
#include "loader/internal/loader_setup.h"
#include "loader/internal/metrics_counters.h"
#include "loader/internal/read_prefetch.h"
#include "loader/internal/read_round.h"
#include "loader/internal/sample_reader.h"
#include "loader/internal/slot_scheduler.h"
#include "loader/internal/task_spawn.h"
#include "loader/sampler.h"

namespace patchfeed::loader::internal_loader {

class BatchProducer {
 public:
  BatchProducer(const LoaderParts& parts, SlotScheduler* scheduler, MetricsCounters* counters);

  /// Produces the batch assigned to `slot`, claimed by `who`, and finishes the slot.
  void Produce(int slot, Producer who) noexcept;

  /// The samples of the batch in `slot` (after any redraws); valid while the slot is leased.
  const std::vector<SampleSpec>& samples(int slot) const {
    return specs_[static_cast<size_t>(slot)];
  }

 private:
  Status FillBatch(int slot, BatchId batch, bool on_consumer);
  /// Plans and reads `samples` of the slot's batch in one round.
  Status RunRound(ReadRound& round, const std::vector<int64_t>& samples);
  void PlanPlain(ReadRound& round, int64_t sample, const SampleSpec& spec) const;
  Result<SampleSpec> Redraw(BatchId batch, int64_t sample, int attempt) const;

  const LoaderParts& parts_;
  SlotScheduler& scheduler_;
  MetricsCounters& counters_;
  ForegroundVoxelFn voxel_fn_;
  SampleReader reader_;
  std::optional<AugmentedSamples> augmented_;
  std::optional<ReadPrefetcher> prefetcher_;    ///< reads in flight (LoaderParts::io)
  std::vector<std::vector<SampleSpec>> specs_;  ///< per slot, written by its producer only
  std::vector<TsanToken> reads_done_;           ///< per slot: its read tasks release it
};

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_BATCH_PRODUCER_H_
