// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// LoaderCore's producer side: one task per batch samples it, plans every (sample, array) box
// as chunk-sized cells and reads them, spawning runs of cells as tasks and reading small boxes
// inline. See loader_core.h for the bookkeeping around it.

#include <atomic>
#include <mutex>
#include <string>
#include <utility>

#include "loader/batch_round.h"
#include "loader/loader_core.h"

namespace patchfeed::loader::internal_loader {

void LoaderCore::ProduceBatch(int slot_index) noexcept {
  Status status = FillBatch(slot_index);
  std::lock_guard lock(mu_);
  Slot& slot = slots_[static_cast<size_t>(slot_index)];
  slot.reads = nullptr;
  slot.status = std::move(status);
  if (stopping_ || slot.generation != generation_) {
    FreeLocked(slot);  // dropped by Seek or shutdown
    ScheduleLocked();
  } else {
    SetState(slot, SlotState::kReady);
  }
  cv_.notify_all();
}

Status LoaderCore::FillBatch(int slot_index) {
  Slot& slot = slots_[static_cast<size_t>(slot_index)];
  // epoch, batch and generation were set under mu_ before this task was enqueued, and stay.
  const int64_t epoch = slot.epoch, batch = slot.batch;
  auto specs = parts_.sampler->Batch(epoch, batch, voxel_fn_);
  if (!specs.ok()) {
    return specs.status().WithContext("epoch " + std::to_string(epoch) + ", batch " +
                                      std::to_string(batch));
  }
  slot.specs = std::move(*specs);
  std::vector<int64_t> todo(slot.specs.size());
  for (size_t j = 0; j < todo.size(); ++j) {
    todo[j] = static_cast<int64_t>(j);
  }
  const LoaderConfig& config = parts_.config;
  for (int attempt = 0;; ++attempt) {
    Round round;
    round.slot = slot_index;
    round.epoch = epoch;
    round.batch = batch;
    round.all_inline = slot.on_consumer;
    round.sample_status.resize(slot.specs.size());
    PATCHFEED_RETURN_IF_ERROR(RunRound(slot_index, todo, round));
    std::vector<int64_t> failed;
    for (const int64_t j : todo) {
      if (!round.sample_status[static_cast<size_t>(j)].ok()) {
        failed.push_back(j);
      }
    }
    if (failed.empty()) {
      return Status::Ok();
    }
    const Status& first = round.sample_status[static_cast<size_t>(failed[0])];
    if (config.error_policy == ErrorPolicy::kFail) {
      return first;
    }
    if (attempt >= config.max_redraws) {
      return first.WithContext("sample " + std::to_string(failed[0]) + " still failed after " +
                               std::to_string(attempt) + " redraws");
    }
    for (const int64_t j : failed) {
      MetricsCounters::Add(counters_.samples_skipped, 1);
      PATCHFEED_ASSIGN_OR_RETURN(slot.specs[static_cast<size_t>(j)],
                                 Redraw(epoch, batch, j, attempt));
    }
    todo = std::move(failed);
  }
}

Status LoaderCore::RunRound(int slot_index, const std::vector<int64_t>& samples, Round& round) {
  Slot& slot = slots_[static_cast<size_t>(slot_index)];
  tbb::task_group group;  // bound to the producer's context: Shutdown's cancel reaches it
  round.group = &group;
  {
    std::lock_guard lock(mu_);
    if (stopping_ || slot.generation != generation_) {
      return CancelledError("batch dropped");
    }
    slot.reads = &group;
  }
  round.jobs.reserve(samples.size() * parts_.outputs.size());
  if (parts_.config.augment) {
    round.augment_params.resize(slot.specs.size());
    round.augment_windows.resize(slot.specs.size());
    for (const int64_t j : samples) {
      PlanAugmentedSample(slot_index, j, round);
    }
  } else {
    for (const int64_t j : samples) {
      PlanSample(slot_index, j, round);
    }
  }
  // Isolated: while waiting, this thread runs only this batch's reads, never another
  // producer (which would nest a second wait, and a second batch, on its stack).
  tbb::this_task_arena::isolate([&] {
    for (const ReadRun& run : round.spawned) {
      RunTask(group, &slot.done, [this, r = &round, run = &run] { ReadCells(*r, *run); });
    }
    // Augmented samples: one task each but the last, which this thread runs itself.
    for (size_t k = 0; k < round.augmented.size(); ++k) {
      const size_t first = round.augmented[k];
      if (round.all_inline || k + 1 == round.augmented.size()) {
        continue;
      }
      RunTask(group, &slot.done, [this, r = &round, first] { AugmentSample(*r, first); });
    }
    for (const ReadRun& run : round.inlined) {
      ReadCells(round, run);
    }
    for (size_t k = 0; k < round.augmented.size(); ++k) {
      if (round.all_inline || k + 1 == round.augmented.size()) {
        AugmentSample(round, round.augmented[k]);
      }
    }
    group.wait();
  });
  TsanAcquire(&slot.done);
  std::lock_guard lock(mu_);
  slot.reads = nullptr;
  if (stopping_ || slot.generation != generation_) {
    return CancelledError("batch dropped");
  }
  return Status::Ok();
}

void LoaderCore::PlanSample(int slot_index, int64_t sample, Round& round) {
  const SampleSpec& spec =
      slots_[static_cast<size_t>(slot_index)].specs[static_cast<size_t>(sample)];
  const std::vector<int64_t>& patch = parts_.config.sampler.patch_size;
  for (size_t o = 0; o < parts_.outputs.size(); ++o) {
    const OutputArray& out = parts_.outputs[o];
    const ArrayView& view = parts_.ring.views(slot_index)[o];
    ReadJob job;
    job.sample = sample;
    job.output = o;
    job.case_index = spec.case_index;
    job.box.start.push_back(0);
    job.box.stop.push_back(out.channels);
    int64_t bytes = out.channels * out.itemsize;
    for (size_t d = 0; d < patch.size(); ++d) {
      job.box.start.push_back(spec.box_start[d]);
      job.box.stop.push_back(spec.box_start[d] + patch[d]);
      bytes *= patch[d];
    }
    job.base = view.data + sample * view.byte_strides[0];
    job.strides.assign(view.byte_strides.begin() + 1, view.byte_strides.end());
    job.cells = SplitBoxAtChunks(job.box, probe(spec.case_index, o).geometry, job.strides);
    round.jobs.push_back(std::move(job));
    const ReadJob* j = &round.jobs.back();
    if (round.all_inline || bytes < parts_.config.min_task_bytes) {
      round.inlined.push_back({j, 0, j->cells.size()});
      continue;
    }
    // Large chunk cells become slabs of a few blocks, so tasks stay small enough to balance
    // (with pread each slab reads only its blocks' bytes, plus the chunk's header and offsets).
    round.jobs.back().cells =
        SplitCellsAtBlocks(std::move(round.jobs.back().cells), probe(spec.case_index, o).geometry,
                           round.jobs.back().strides, parts_.config.min_task_bytes);
    size_t begin = 0;
    for (const size_t end : GroupCells(j->cells, parts_.config.min_task_bytes)) {
      round.spawned.push_back({j, begin, end});
      begin = end;
    }
  }
}

void LoaderCore::ReadCells(Round& round, const ReadRun& run) noexcept {
  if (round.Cancelled()) {
    return;
  }
  const ReadJob& job = *run.job;
  const OutputArray& out = parts_.outputs[job.output];
  auto reader = parts_.files->Get(job.case_index, out.dataset_array);
  if (!reader.ok()) {
    RecordError(round, job, &job.cells[run.begin], reader.status());
    return;
  }
  codec::BoxReadScratch& scratch = scratch_.local();
  const int64_t read_before = scratch.decoder.compressed_bytes_read();
  const int64_t decoded_before = scratch.decoder.bytes_decoded();
  for (size_t i = run.begin; i < run.end; ++i) {
    if (round.Cancelled()) {
      break;
    }
    const ReadCell& cell = job.cells[i];
    const codec::NdView dst{job.base + cell.dst_offset, cell.shape, job.strides};
    Status st = (*reader)->ReadBox(cell.box, dst, out.pad_item, scratch);
    if (!st.ok()) {
      RecordError(round, job, &cell, st);
      break;
    }
  }
  MetricsCounters::Add(counters_.bytes_decoded, scratch.decoder.bytes_decoded() - decoded_before);
  MetricsCounters::Add(counters_.bytes_read, scratch.decoder.compressed_bytes_read() - read_before);
}

void LoaderCore::RecordError(Round& round, const ReadJob& job, const ReadCell* cell,
                             const Status& status) noexcept {
  MetricsCounters::Add(counters_.read_errors, 1);
  const Dataset& ds = parts_.config.dataset;
  const OutputArray& out = parts_.outputs[job.output];
  std::string context =
      "epoch " + std::to_string(round.epoch) + ", batch " + std::to_string(round.batch) +
      ", sample " + std::to_string(job.sample) + ": case '" + ds.case_id(job.case_index) + "' (#" +
      std::to_string(job.case_index) + "), array '" + out.name + "', file " +
      ds.path(job.case_index, out.dataset_array) + ", patch box " + BoxToString(job.box);
  if (cell != nullptr) {
    context += cell->chunk >= 0 ? ", chunk " + std::to_string(cell->chunk) : ", no chunk";
    context += " (part " + BoxToString(cell->box) + ")";
  }
  {
    std::lock_guard lock(round.mu);
    Status& s = round.sample_status[static_cast<size_t>(job.sample)];
    if (s.ok()) {
      s = status.WithContext(context);
    }
  }
  if (parts_.config.error_policy == ErrorPolicy::kFail) {
    round.failed.store(true, std::memory_order_relaxed);
    round.group->cancel();
  }
}

Result<SampleSpec> LoaderCore::Redraw(int64_t epoch, int64_t batch, int64_t sample,
                                      int attempt) const {
  // A batch index of the replacement sampler that no other (batch, attempt) uses.
  const int64_t key = batch * (parts_.config.max_redraws + 1) + attempt;
  auto redrawn = parts_.redraw_sampler->Batch(epoch, key, voxel_fn_);
  if (!redrawn.ok()) {
    return redrawn.status().WithContext("redrawing a failed sample");
  }
  return std::move((*redrawn)[static_cast<size_t>(sample)]);
}

}  // namespace patchfeed::loader::internal_loader
