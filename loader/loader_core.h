// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_LOADER_CORE_H_
#define PATCHFEED_LOADER_LOADER_CORE_H_

/// \file
/// Internal to loader/: the engine behind Loader and Lease. Shared by the Loader and every
/// outstanding Lease, so the ring outlives the Loader while the consumer still holds batches.
///
/// Slots move free -> producing -> ready -> leased -> free. All slot bookkeeping is under
/// `mu_`; `cv_` wakes the consumer. Scheduling is in batch order: a freed slot gets the next
/// batch index at once (from whichever thread freed it) and a producer task is enqueued into
/// the arena, so no thread of ours ever sleeps or polls. A producer samples its batch, plans
/// the reads and waits, isolated, on its own task_group while any worker steals its reads.
/// Batch contents are fixed by (seed, epoch, batch, rank) before any thread touches them.
///
/// Scheduling state carries a generation: Seek bumps it, and a batch produced for an older
/// generation is dropped (its reads cancelled) instead of delivered.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include "augment/nnunet_pipeline.h"
#include "codec/nd_reader.h"
#include "common/random.h"
#include "loader/batch_ring.h"
#include "loader/dataset.h"
#include "loader/foreground_store.h"
#include "loader/loader.h"
#include "loader/metrics.h"
#include "loader/open_file_cache.h"
#include "loader/read_plan.h"
#include "loader/sampler.h"
#include "loader/task_spawn.h"

namespace patchfeed::loader::internal_loader {

/// One output array: which dataset array feeds it and how to pad it.
struct OutputArray {
  std::string name;
  int dataset_array = 0;
  std::string dtype;
  int64_t itemsize = 0;
  int64_t channels = 0;
  std::vector<std::byte> pad_item;
};

/// Everything Loader::Create works out before the engine starts.
struct CoreParts {
  LoaderConfig config;
  int num_threads = 1;
  std::vector<OutputArray> outputs;
  std::vector<ArrayProbe> probes;  ///< [case * outputs.size() + output]
  std::optional<Sampler> sampler;
  std::optional<Sampler> redraw_sampler;  ///< kSkip: an infinite sampler for replacements
  std::unique_ptr<ForegroundStore> foreground;
  std::unique_ptr<OpenFileCache> files;
  BatchRing ring;
};

class LoaderCore : public std::enable_shared_from_this<LoaderCore> {
 public:
  /// Takes the arena (already used to probe the dataset) and the parts; call Start next.
  LoaderCore(CoreParts parts, std::unique_ptr<tbb::task_arena> arena,
             std::unique_ptr<tbb::global_control> thread_limit);
  ~LoaderCore();

  void Start();
  /// Stops scheduling, cancels what is in flight and waits for every task. Idempotent.
  void Shutdown();

  Result<Lease> Next();
  Status Seek(int64_t epoch, int64_t batch_index);
  void Release(int slot);

  LoaderState state() const;
  LoaderMetrics metrics() const;
  int64_t batches_per_epoch() const { return batches_per_epoch_; }
  const Sampler& sampler() const { return *parts_.sampler; }
  const CoreParts& parts() const { return parts_; }
  const BatchRing& ring() const { return parts_.ring; }
  const std::vector<SampleSpec>& samples(int slot) const {
    return slots_[static_cast<size_t>(slot)].specs;
  }

 private:
  enum class SlotState : uint8_t { kFree, kProducing, kReady, kLeased };
  struct Slot {
    SlotState state = SlotState::kFree;
    int64_t epoch = 0;
    int64_t batch = 0;
    uint64_t generation = 0;
    std::vector<SampleSpec> specs;
    Status status;
    tbb::task_group* reads = nullptr;  ///< the batch's read group while it runs
    TsanToken done;                    ///< its read tasks release this
    /// Set by whoever starts producing the slot's batch: its enqueued task, or Next() when
    /// the batch it waits for has not been started by any worker.
    bool claimed = false;
    bool on_consumer = false;  ///< claimed by Next(): all reads inline, no hand-offs
  };
  struct ReadJob;
  struct ReadRun;
  struct Round;

  // Bookkeeping, all under mu_.
  void SetState(Slot& slot, SlotState state);
  void ScheduleLocked();
  void FreeLocked(Slot& slot);
  int FindSlotLocked(int64_t epoch, int64_t batch) const;
  /// Claims slot `index` for production if it is scheduled and nobody started it yet.
  bool ClaimLocked(int index, bool on_consumer);
  const ArrayProbe& probe(int64_t case_index, size_t output) const {
    return parts_.probes[static_cast<size_t>(case_index) * parts_.outputs.size() + output];
  }

  // Production (batch_producer.cc).
  void ProduceBatch(int slot) noexcept;
  Status FillBatch(int slot);
  Status RunRound(int slot_index, const std::vector<int64_t>& samples, Round& round);
  void PlanSample(int slot_index, int64_t sample, Round& round);
  void ReadCells(Round& round, const ReadRun& run) noexcept;
  void RecordError(Round& round, const ReadJob& job, const ReadCell* cell,
                   const Status& status) noexcept;

  // Augmented samples (augmented_sample.cc): one task per sample reads the window of its
  // crop that the spatial transform needs and runs the pipeline into the slot.
  struct AugmentStaging {
    augment::NnUNetAugmentScratch pipeline;
    std::vector<float> image;
    std::vector<int16_t> seg;
  };
  StreamId AugmentStream(const Round& round, int64_t sample) const;
  void PlanAugmentedSample(int slot_index, int64_t sample, Round& round);
  void AugmentSample(Round& round, size_t first_job) noexcept;
  Result<SampleSpec> Redraw(int64_t epoch, int64_t batch, int64_t sample, int attempt) const;

  CoreParts parts_;
  ForegroundVoxelFn voxel_fn_;
  int64_t batches_per_epoch_ = -1;

  std::unique_ptr<tbb::global_control> thread_limit_;
  std::unique_ptr<tbb::task_arena> arena_;
  tbb::task_group producers_;
  TsanToken producers_done_;
  tbb::enumerable_thread_specific<codec::BoxReadScratch> scratch_;
  tbb::enumerable_thread_specific<AugmentStaging> augment_scratch_;
  MetricsCounters counters_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Slot> slots_;
  bool started_ = false;
  bool stopping_ = false;
  bool shut_down_ = false;
  uint64_t generation_ = 0;
  int64_t sched_epoch_ = 0, sched_batch_ = 0;  ///< next batch to schedule
  int64_t next_epoch_ = 0, next_batch_ = 0;    ///< next batch Next() returns
  int producing_ = 0;
  std::optional<std::chrono::steady_clock::time_point> idle_since_;  ///< no slot producing
};

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_LOADER_CORE_H_
