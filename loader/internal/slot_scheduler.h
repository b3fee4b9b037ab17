// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_SLOT_SCHEDULER_H_
#define PATCHFEED_LOADER_INTERNAL_SLOT_SCHEDULER_H_

/// \file
/// The ring's slot state machine: which batch each slot holds, who owns it, and the order in
/// which batches reach the consumer. It reads nothing and owns no thread; a SlotFiller does the
/// producing.
///
/// A slot moves free -> producing -> ready -> leased -> free. A freed slot gets the next batch
/// index at once (on whichever thread freed it) and is handed to the filler's Enqueue, so no
/// thread of ours sleeps or polls. A producing slot is produced by exactly one producer: the
/// worker task Enqueue started, or the consumer itself when NextFor waits for a batch no worker
/// has started yet (Claim decides who, once; `Producer` records it). Batches leave in index
/// order, whatever order they finish in.
///
/// Seek bumps a generation: a batch scheduled for an older generation is dropped (its reads
/// cancelled) instead of delivered. Stop ends scheduling and wakes every waiter.
///
/// Thread-safe: every method takes the one mutex; the consumer waits on a condition variable.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <oneapi/tbb/task_group.h>

#include "common/result.h"
#include "loader/internal/metrics_counters.h"

namespace patchfeed::loader::internal_loader {

/// A batch of the loader's sequence.
struct BatchId {
  int64_t epoch = 0;
  int64_t batch = 0;
};

/// Who produces a slot's batch.
enum class Producer : uint8_t {
  kNone,      ///< nobody yet
  kWorker,    ///< the task Enqueue started, on a worker of the arena
  kConsumer,  ///< the consumer inside NextFor: every read inline, no hand-off
};

/// What fills slots for the scheduler.
class SlotFiller {
 public:
  /// Starts a task that claims `slot` (Claim(slot, kWorker)) and produces it; returns at once.
  /// Called with the scheduler's lock held: must not call back into the scheduler.
  virtual void Enqueue(int slot) = 0;
  /// Produces `slot`, already claimed for the consumer, on the calling thread.
  virtual void ProduceHere(int slot) = 0;

 protected:
  ~SlotFiller() = default;  // not owned through this interface
};

class SlotScheduler {
 public:
  using Clock = std::chrono::steady_clock;

  /// `batches_per_epoch` -1: an infinite sequence. `counters` gets the slot occupancy, the
  /// consumer's waits and the producers' idle time.
  SlotScheduler(int ring_size, int64_t batches_per_epoch, BatchId start, bool consumer_produces,
                MetricsCounters* counters);

  /// Starts scheduling into `filler`, which must outlive Stop().
  void Start(SlotFiller* filler);
  /// Ends scheduling: cancels the reads in flight, wakes every waiter; NextFor and Seek
  /// return kCancelled from now on. Idempotent.
  void Stop();
  bool stopped() const;

  /// What NextFor hands the consumer: a ready slot, or the end of a finite epoch.
  struct Delivery {
    int slot = -1;  ///< -1: end of epoch `batch.epoch`
    BatchId batch;
  };
  /// The next batch in order, once ready; waits until `deadline` (forever if none) and returns
  /// nullopt when it passes first, leaving the position unchanged. A batch that failed is
  /// returned as its error (its slot freed, the position moved past it). kResourceExhausted
  /// when the consumer holds every slot; kCancelled after Stop().
  Result<std::optional<Delivery>> NextFor(std::optional<Clock::time_point> deadline);
  /// Moves to batch `batch` of `epoch`; batches produced for the old position are dropped.
  Status Seek(BatchId position);
  /// Returns a leased slot to the ring.
  void Release(int slot);
  /// The batch the next NextFor returns.
  BatchId position() const;

  /// Producers: claims `slot` for `who` when it waits to be produced and nobody has claimed
  /// it; false otherwise (already produced, being produced, or dropped).
  bool Claim(int slot, Producer who);
  /// The batch a claimed slot is to hold (fixed until Finish).
  BatchId assigned(int slot) const;
  /// Registers the task group reading `slot`, so Seek and Stop can cancel it (null: none);
  /// false when the batch was dropped meanwhile (the producer stops).
  bool AttachReads(int slot, tbb::task_group* reads);
  /// The producer is done: the slot becomes ready holding `status`, or free when dropped.
  void Finish(int slot, Status status);

 private:
  enum class SlotState : uint8_t { kFree, kProducing, kReady, kLeased };
  struct Slot {
    SlotState state = SlotState::kFree;
    BatchId batch;
    uint64_t generation = 0;
    Producer producer = Producer::kNone;
    Status status;
    tbb::task_group* reads = nullptr;
  };

  void SetStateLocked(Slot& slot, SlotState state);
  void ScheduleLocked();
  int FindLocked(BatchId batch) const;
  bool DroppedLocked(const Slot& slot) const { return stopping_ || slot.generation != generation_; }

  const int64_t batches_per_epoch_;
  const bool consumer_produces_;
  MetricsCounters* const counters_;
  SlotFiller* filler_ = nullptr;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Slot> slots_;
  bool stopping_ = false;
  uint64_t generation_ = 0;
  BatchId scheduled_;  ///< the next batch to give a free slot
  BatchId next_;       ///< the next batch NextFor returns
  int producing_ = 0;
  std::optional<Clock::time_point> idle_since_;  ///< no slot producing since
};

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_SLOT_SCHEDULER_H_
