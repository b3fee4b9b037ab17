// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_READ_ROUND_H_
#define PATCHFEED_LOADER_INTERNAL_READ_ROUND_H_

/// \file
/// One pass of reads over some samples of a batch (all of them, or the redrawn ones): the work
/// the batch producer planned and the state its tasks share while they run.
///
/// A round holds one SampleRead per (sample, output array) and the tasks made of them: runs of
/// pieces of plain reads, and augmented samples (a read followed by nnU-Net's pipeline). Tasks
/// record the first error of each sample; under ErrorPolicy::kFail the first error cancels the
/// round. The plan is written before any task starts and read-only after; errors are under a
/// mutex.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include <oneapi/tbb/task_group.h>

#include "augment/nnunet_pipeline.h"
#include "codec/box_plan.h"
#include "common/status.h"
#include "common/strided_view.h"
#include "loader/internal/fetched_source.h"
#include "loader/internal/fetched_store.h"
#include "loader/internal/read_tasks.h"
#include "loader/internal/shared_pieces.h"
#include "loader/internal/slot_scheduler.h"
#include "loader/internal/task_spawn.h"
#include "loader/sampler.h"

namespace patchfeed::loader::internal_loader {

/// One sample's box of one output array, and where it lands.
struct SampleRead {
  int64_t sample = 0;
  size_t output = 0;
  int64_t case_index = 0;
  codec::Box box;  ///< (channels, *patch) in the array's coordinates
  /// Where the box lands, of the box's shape: the sample's part of the slot, or (data null)
  /// staging, which belongs to the worker that runs the read.
  StridedView dst;
  codec::BoxPlan plan;  ///< the codec's plan of the box (plain reads: cut into tasks)
  /// Reads in flight (IoMode::kPread): the bytes fetched ahead for this read, which its tasks
  /// decode from (read_prefetch.h); null: the tasks read the file themselves.
  std::shared_ptr<const FetchedSource> fetched;
  /// The same for an array whose chunks are files of their own (zarr): its chunk files opened
  /// and fetched ahead (fetched_store.h).
  std::shared_ptr<const FetchedStore> fetched_store;
  /// LoaderConfig::check_finite on a plain read of a float array: each piece's NaN and
  /// infinite items are counted as it lands in the slot (ReadRound::AddNonFinite).
  bool check_finite = false;
};

/// The read of output array `output` (of `channels` channels) for sample `sample`, drawn as
/// `spec`: all channels, and the spatial box [corner + offset, corner + offset + extent). The
/// destination has the box's shape, but no memory or strides yet.
SampleRead MakeSampleRead(int64_t sample, size_t output, int64_t channels, const SampleSpec& spec,
                          std::span<const int64_t> offset, std::span<const int64_t> extent);

/// Part of one plain read: one task's work.
struct ReadTask {
  const SampleRead* read = nullptr;
  PieceRun run;
};

/// An augmented sample: its draws, the window of its crop it reads, and its reads (the image
/// at `first_read`, the segmentation after it when there is one).
struct AugmentedTask {
  int64_t sample = 0;
  size_t first_read = 0;
  augment::NnUNetAugmentParams params;
  augment::CropWindow window;
  bool unplanned = false;  ///< a read's PlanBox failed (recorded): the sample is not run
};

class ReadRound {
 public:
  /// `on_consumer`: the consumer produces this batch, so nothing is spawned. `tasks_done`:
  /// what the round's tasks release and its waiter acquires (RunTask).
  ReadRound(int slot, BatchId batch, size_t num_samples, size_t max_reads, bool on_consumer,
            bool stop_at_first_error, tbb::task_group* group, TsanToken* tasks_done);
  ReadRound(const ReadRound&) = delete;
  ReadRound& operator=(const ReadRound&) = delete;

  int slot() const { return slot_; }
  BatchId batch() const { return batch_; }
  bool on_consumer() const { return on_consumer_; }
  /// The task group the round's tasks run in, and the token they release (RunTask).
  tbb::task_group* group() const { return group_; }
  TsanToken* tasks_done() const { return tasks_done_; }
  /// A fresh counter for one sample's shared pieces, valid until the round ends (helpers that
  /// start late still read it). Thread-safe.
  PieceShare* NewPieceShare();

  // The plan, written by the producer before any task runs.
  /// Adds a read; the returned pointer stays valid (the storage is reserved up front).
  SampleRead* AddRead(SampleRead read);
  const std::vector<SampleRead>& reads() const { return reads_; }
  /// Read `index`, to complete its plan (the producer, before the round's tasks run).
  SampleRead& read(size_t index) { return reads_[index]; }
  std::vector<ReadTask> spawned;  ///< plain reads run as tasks
  std::vector<ReadTask> inlined;  ///< plain reads the producer runs itself
  std::vector<AugmentedTask> augmented;

  /// Whether a task should stop: a read failed under kFail, or the batch's group (Seek,
  /// shutdown) or the producers' group (shutdown) was cancelled.
  bool cancelled() const {
    return failed_.load(std::memory_order_relaxed) || tbb::is_current_task_group_canceling();
  }
  /// Keeps `status` as the sample's error unless it has one; under kFail cancels the round.
  void Fail(int64_t sample, const Status& status);
  /// After the round: the sample's first error (OK if none).
  const Status& sample_status(int64_t sample) const {
    return sample_status_[static_cast<size_t>(sample)];
  }
  /// Adds `count` NaN or infinite items found in `read`, one of reads(). Thread-safe.
  void AddNonFinite(const SampleRead& read, int64_t count);
  /// After the round: the NaN and infinite items found in reads()[index].
  int64_t nonfinite(size_t index) const {
    return nonfinite_[index].load(std::memory_order_relaxed);
  }

 private:
  const int slot_;
  const BatchId batch_;
  const bool on_consumer_;
  const bool stop_at_first_error_;
  tbb::task_group* const group_;
  TsanToken* const tasks_done_;
  std::vector<SampleRead> reads_;
  std::atomic<bool> failed_{false};
  std::mutex mu_;
  std::vector<Status> sample_status_;                  // under mu_ while tasks run
  std::unique_ptr<std::atomic<int64_t>[]> nonfinite_;  // per read
  std::deque<PieceShare> piece_shares_;                // under mu_; a deque never moves them
};

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_READ_ROUND_H_
