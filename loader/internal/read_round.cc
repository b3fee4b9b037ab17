// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/read_round.h"

#include <utility>

#include "common/check.h"

namespace patchfeed::loader::internal_loader {

SampleRead MakeSampleRead(int64_t sample, size_t output, int64_t channels, const SampleSpec& spec,
                          std::span<const int64_t> offset, std::span<const int64_t> extent) {
  SampleRead read;
  read.sample = sample;
  read.output = output;
  read.case_index = spec.case_index;
  read.box.start.push_back(0);
  read.box.stop.push_back(channels);
  read.dst.shape.push_back(channels);
  for (size_t d = 0; d < extent.size(); ++d) {
    const int64_t start = spec.box_start[d] + (offset.empty() ? 0 : offset[d]);
    read.box.start.push_back(start);
    read.box.stop.push_back(start + extent[d]);
    read.dst.shape.push_back(extent[d]);
  }
  return read;
}

ReadRound::ReadRound(int slot, BatchId batch, size_t num_samples, size_t max_reads,
                     bool on_consumer, bool stop_at_first_error, tbb::task_group* group,
                     TsanToken* tasks_done)
    : slot_(slot),
      batch_(batch),
      on_consumer_(on_consumer),
      stop_at_first_error_(stop_at_first_error),
      group_(group),
      tasks_done_(tasks_done),
      sample_status_(num_samples),
      nonfinite_(std::make_unique<std::atomic<int64_t>[]>(max_reads)) {
  reads_.reserve(max_reads);  // tasks keep pointers into it
}

PieceShare* ReadRound::NewPieceShare() {
  std::lock_guard<std::mutex> lock(mu_);
  return &piece_shares_.emplace_back();
}

SampleRead* ReadRound::AddRead(SampleRead read) {
  PATCHFEED_DCHECK(reads_.size() < reads_.capacity());
  reads_.push_back(std::move(read));
  return &reads_.back();
}

void ReadRound::AddNonFinite(const SampleRead& read, int64_t count) {
  const auto index = static_cast<size_t>(&read - reads_.data());
  PATCHFEED_DCHECK(index < reads_.size());
  nonfinite_[index].fetch_add(count, std::memory_order_relaxed);
}

void ReadRound::Fail(int64_t sample, const Status& status) {
  {
    std::lock_guard lock(mu_);
    Status& s = sample_status_[static_cast<size_t>(sample)];
    if (s.ok()) {
      s = status;
    }
  }
  if (stop_at_first_error_) {
    failed_.store(true, std::memory_order_relaxed);
    group_->cancel();
  }
}

}  // namespace patchfeed::loader::internal_loader
