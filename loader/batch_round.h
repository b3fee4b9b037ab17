// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_BATCH_ROUND_H_
#define PATCHFEED_LOADER_BATCH_ROUND_H_

/// \file
/// The producer's per-batch bookkeeping, shared by batch_producer.cc (plain reads) and
/// augmented_sample.cc (reads followed by augmentation). Internal to loader/.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include <oneapi/tbb/task_group.h>

#include "augment/nnunet_pipeline.h"
#include "codec/nd_reader.h"
#include "common/status.h"
#include "loader/loader_core.h"
#include "loader/read_plan.h"

namespace patchfeed::loader::internal_loader {

/// One sample's box of one output array, and where it lands in the slot.
struct LoaderCore::ReadJob {
  int64_t sample = 0;
  size_t output = 0;
  int64_t case_index = 0;
  codec::Box box;  ///< (channels, *patch) in the array's coordinates
  std::byte* base = nullptr;
  std::vector<int64_t> strides;  ///< the sample's byte strides in the slot
  std::vector<ReadCell> cells;
};

/// Cells [begin, end) of one job: one task's work.
struct LoaderCore::ReadRun {
  const ReadJob* job = nullptr;
  size_t begin = 0;
  size_t end = 0;
};

/// One pass of reads over some samples of a batch (all of them, or the redrawn ones).
struct LoaderCore::Round {
  int slot = 0;
  int64_t epoch = 0;
  int64_t batch = 0;
  tbb::task_group* group = nullptr;
  std::vector<ReadJob> jobs;  // reserved up front: runs point into it
  std::vector<ReadRun> spawned;
  std::vector<ReadRun> inlined;
  bool all_inline = false;          // produced by Next() on the consumer thread: spawn nothing
  std::atomic<bool> failed{false};  // a read failed under ErrorPolicy::kFail
  std::mutex mu;
  std::vector<Status> sample_status;  // under mu
  // Augmentation: each sample's draws (by sample index) and the index in `jobs` of its first
  // array's job (its arrays' jobs follow in output order).
  std::vector<augment::NnUNetAugmentParams> augment_params;
  std::vector<augment::CropWindow> augment_windows;  // the part of each crop that is read
  std::vector<size_t> augmented;

  // Spawned reads see Seek's and Shutdown's cancellation through their group; inline ones
  // (in the producer, whose context is the producers' group) see Shutdown's.
  bool Cancelled() const {
    return failed.load(std::memory_order_relaxed) || tbb::is_current_task_group_canceling();
  }
};

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_BATCH_ROUND_H_
