// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/batch_producer.h"

#include <span>
#include <string>
#include <utility>

#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include "common/str_cat.h"

namespace patchfeed::loader::internal_loader {

BatchProducer::BatchProducer(const LoaderParts& parts, SlotScheduler* scheduler,
                             MetricsCounters* counters)
    : parts_(parts),
      scheduler_(*scheduler),
      counters_(*counters),
      reader_(parts, counters),
      specs_(static_cast<size_t>(parts.ring.ring_size())),
      reads_done_(static_cast<size_t>(parts.ring.ring_size())) {
  if (parts_.foreground) {
    const ForegroundStore* store = parts_.foreground.get();
    voxel_fn_ = [store](int64_t case_index, int64_t key, int64_t voxel) {
      return store->Voxel(case_index, key, voxel);
    };
  }
  if (parts_.config.augment) {
    augmented_.emplace(parts_, &reader_);
  }
  // Reads in flight: through the I/O engine for local files read with pread, and through the
  // store itself for a remote one (its objects read asynchronously, whatever io_mode says).
  if (parts_.io != nullptr || parts_.config.dataset.store()->remote()) {
    prefetcher_.emplace(parts_, parts_.io.get(), &reader_, &counters_);
  }
}

void BatchProducer::Produce(int slot, Producer who) noexcept {
  // The batch was assigned under the scheduler's lock before the slot was handed out, and
  // stays until Finish.
  const BatchId batch = scheduler_.assigned(slot);
  scheduler_.Finish(slot, FillBatch(slot, batch, who == Producer::kConsumer));
}

Status BatchProducer::FillBatch(int slot, BatchId batch, bool on_consumer) {
  std::vector<SampleSpec>& specs = specs_[static_cast<size_t>(slot)];
  auto drawn = parts_.sampler->Batch(batch.epoch, batch.batch, voxel_fn_);
  if (!drawn.ok()) {
    return drawn.status().WithContext(StrCat("epoch ", batch.epoch, ", batch ", batch.batch));
  }
  specs = std::move(*drawn);
  std::vector<int64_t> todo(specs.size());
  for (size_t j = 0; j < todo.size(); ++j) {
    todo[j] = static_cast<int64_t>(j);
  }
  const LoaderConfig& config = parts_.config;
  for (int attempt = 0;; ++attempt) {
    tbb::task_group group;  // bound to the producer's context: shutdown's cancel reaches it
    ReadRound round(slot, batch, specs.size(), todo.size() * parts_.outputs.size(), on_consumer,
                    config.error_policy == ErrorPolicy::kFail, &group,
                    &reads_done_[static_cast<size_t>(slot)]);
    PATCHFEED_RETURN_IF_ERROR(RunRound(round, todo));
    if (config.check_finite) {
      // After the round, when every piece of a sample has counted its part.
      for (size_t i = 0; i < round.reads().size(); ++i) {
        if (const int64_t n = round.nonfinite(i); n > 0) {
          reader_.FailNonFinite(round, round.reads()[i], n);
        }
      }
    }
    std::vector<int64_t> failed;
    for (const int64_t j : todo) {
      if (!round.sample_status(j).ok()) {
        failed.push_back(j);
      }
    }
    if (failed.empty()) {
      return Status::Ok();
    }
    const Status& first = round.sample_status(failed[0]);
    if (config.error_policy == ErrorPolicy::kFail) {
      return first;
    }
    if (attempt >= config.max_redraws) {
      return first.WithContext(
          StrCat("sample ", failed[0], " still failed after ", attempt, " redraws"));
    }
    for (const int64_t j : failed) {
      MetricsCounters::Add(counters_.samples_skipped, 1);
      PATCHFEED_ASSIGN_OR_RETURN(specs[static_cast<size_t>(j)], Redraw(batch, j, attempt));
    }
    todo = std::move(failed);
  }
}

Status BatchProducer::RunRound(ReadRound& round, const std::vector<int64_t>& samples) {
  const int slot = round.slot();
  const std::vector<SampleSpec>& specs = specs_[static_cast<size_t>(slot)];
  tbb::task_group& group = *round.group();
  if (!scheduler_.AttachReads(slot, &group)) {
    return CancelledError("batch dropped");
  }
  for (const int64_t j : samples) {
    const SampleSpec& spec = specs[static_cast<size_t>(j)];
    if (augmented_) {
      augmented_->Plan(round, j, spec);
    } else {
      PlanPlain(round, j, spec);
    }
  }
  if (prefetcher_) {
    // The batch's bytes, in two round trips, before any decode task starts.
    prefetcher_->Fetch(round);
  }
  TsanToken* done = round.tasks_done();
  // Augmented samples: one task each, but the last (or all, when the consumer produces) runs
  // on this thread.
  const size_t spawned_augmented =
      round.on_consumer() || round.augmented.empty() ? 0 : round.augmented.size() - 1;
  // Isolated: while waiting, this thread runs only this batch's reads, never another
  // producer (which would nest a second wait, and a second batch, on its stack).
  tbb::this_task_arena::isolate([&] {
    for (const ReadTask& task : round.spawned) {
      RunTask(group, done,
              [this, r = &round, t = &task] { reader_.ReadRun(*r, *t->read, t->run); });
    }
    for (size_t k = 0; k < spawned_augmented; ++k) {
      RunTask(group, done,
              [this, r = &round, task = &round.augmented[k]] { augmented_->Run(*r, *task); });
    }
    for (const ReadTask& task : round.inlined) {
      reader_.ReadRun(round, *task.read, task.run);
    }
    for (size_t k = spawned_augmented; k < round.augmented.size(); ++k) {
      augmented_->Run(round, round.augmented[k]);
    }
    group.wait();
  });
  TsanAcquire(done);
  if (!scheduler_.AttachReads(slot, nullptr)) {
    return CancelledError("batch dropped");
  }
  return Status::Ok();
}

void BatchProducer::PlanPlain(ReadRound& round, int64_t sample, const SampleSpec& spec) const {
  const std::vector<int64_t>& patch = parts_.config.sampler.patch_size;
  const int64_t min_task_bytes = parts_.config.min_task_bytes;
  for (size_t o = 0; o < parts_.outputs.size(); ++o) {
    const OutputArray& out = parts_.outputs[o];
    SampleRead read = MakeSampleRead(sample, o, out.channels, spec, {}, patch);
    read.dst = parts_.ring.views(round.slot())[o].Slice(sample);
    read.check_finite = out.nonfinite.has_value();
    const Status planned =
        codec::PlanBox(parts_.probe(spec.case_index, o).geometry, read.box, {}, &read.plan);
    const SampleRead* added = round.AddRead(std::move(read));
    if (!planned.ok()) {
      reader_.Fail(round, *added, nullptr, planned);
      continue;
    }
    int64_t bytes = out.channels * out.itemsize;
    for (const int64_t p : patch) {
      bytes *= p;
    }
    if (round.on_consumer() || bytes < min_task_bytes) {
      round.inlined.push_back({added, WholePlan(added->plan)});
      continue;
    }
    // Large chunk pieces become runs of a few block rows, so tasks stay small enough to
    // balance (with pread each reads only its blocks' bytes, plus the chunk's header and
    // offsets).
    for (const PieceRun& run : GroupPieces(added->plan, min_task_bytes)) {
      round.spawned.push_back({added, run});
    }
  }
}

Result<SampleSpec> BatchProducer::Redraw(BatchId batch, int64_t sample, int attempt) const {
  // A batch index of the replacement sampler that no other (batch, attempt) uses.
  const int64_t key = batch.batch * (parts_.config.max_redraws + 1) + attempt;
  auto redrawn = parts_.redraw_sampler->Batch(batch.epoch, key, voxel_fn_);
  if (!redrawn.ok()) {
    return redrawn.status().WithContext("redrawing a failed sample");
  }
  return std::move((*redrawn)[static_cast<size_t>(sample)]);
}

}  // namespace patchfeed::loader::internal_loader
