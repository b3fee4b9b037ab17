// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/read_prefetch.h"

#include <utility>
#include <vector>

#include "loader/internal/box_fetch.h"

namespace patchfeed::loader::internal_loader {

void ReadPrefetcher::Fetch(ReadRound& round) {
  // The slot's previous round is over (its tasks waited for): its fetched bytes are free.
  ByteArena& arena = arenas_[static_cast<size_t>(round.slot())];
  arena.Reset();
  std::vector<FetchJob> jobs;
  std::vector<SampleRead*> reads;  // each job's read
  for (size_t i = 0; i < round.reads().size(); ++i) {
    SampleRead& read = round.read(i);
    if (read.plan.num_pieces() == 0)
      continue;  // PlanBox failed (the failure is recorded), or nothing to read
    const OutputArray& out = parts_.outputs[read.output];
    auto array = parts_.files->Get(read.case_index, out.dataset_array);
    if (!array.ok())
      continue;  // the task reads it (and reports the open error) itself
    FetchJob job;
    if (MakeFetchJob(std::move(*array), read.plan, out.pad_item, io_, arena,
                     &counters_.io_fallback_reads, &job)) {
      jobs.push_back(std::move(job));
      reads.push_back(&read);
    }
  }
  codec::BoxReadScratch& scratch = scratch_[static_cast<size_t>(round.slot())];
  FetchJobs(jobs, io_, arena, scratch, counters_, [&round] { return round.cancelled(); });
  for (size_t k = 0; k < jobs.size(); ++k) {
    if (!jobs[k].error.ok()) {
      reader_.Fail(round, *reads[k], nullptr, jobs[k].error);
      continue;
    }
    reads[k]->fetched = std::move(jobs[k].source);
    reads[k]->fetched_store = std::move(jobs[k].store);
  }
}

}  // namespace patchfeed::loader::internal_loader
