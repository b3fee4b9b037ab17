// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/read_prefetch.h"

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "codec/chunk_format.h"

namespace patchfeed::loader::internal_loader {
namespace {

// Header and offsets take 2 rounds, a dictionary or a chunk stored whole 1-2 more.
constexpr int kMaxRounds = 5;
// Ranges of one file closer than this are fetched as one read: a network round trip costs
// far more than reading a few KiB more.
constexpr uint64_t kMergeGap = uint64_t{4} << 10;

// One plain read being fetched for.
struct Job {
  SampleRead* read = nullptr;
  std::shared_ptr<const codec::ArrayReader> array;
  std::shared_ptr<FetchedSource> source;
  std::vector<int64_t> pending;  // chunk pieces whose replay still asked for bytes
  uint64_t min_read = 0;         // a chunk's header and block offsets
  std::string label;             // names the file in the engine's errors
  bool failed = false;
  // Where discovery writes (pad regions, special chunks): one block's bytes that every item
  // of the box lands on (zero strides), so it writes nothing the tasks will read.
  std::vector<std::byte> sink;
  StridedView sink_view;
};

// The reads of one round of fetching: the producer sleeps until `pending` is 0.
struct Inflight {
  std::mutex mu;
  std::condition_variable cv;
  int64_t pending = 0;
};

// `ranges` of `source`'s file sorted and merged where they overlap or lie within kMergeGap of
// each other in the same chunk image (or both outside images); those outside images (chunk
// headers) grown first to at least `min_read` bytes, within the file, so that one read brings a
// chunk's header and block offsets.
std::vector<storage::FileRange> Coalesce(std::vector<storage::FileRange> ranges, uint64_t min_read,
                                         const FetchedSource& source) {
  const uint64_t file_size = source.size();
  for (storage::FileRange& r : ranges) {
    if (source.ImageAt(r.offset) < 0) {
      r.length = std::min(std::max(r.length, min_read), file_size - std::min(r.offset, file_size));
    }
  }
  std::sort(
      ranges.begin(), ranges.end(),
      [](const storage::FileRange& a, const storage::FileRange& b) { return a.offset < b.offset; });
  std::vector<storage::FileRange> merged;
  int64_t merged_image = -1;
  for (const storage::FileRange& r : ranges) {
    if (r.length == 0)
      continue;
    const int64_t image = source.ImageAt(r.offset);
    if (!merged.empty() && image == merged_image &&
        r.offset <= merged.back().offset + merged.back().length + kMergeGap) {
      storage::FileRange& m = merged.back();
      m.length = std::max(m.offset + m.length, r.offset + r.length) - m.offset;
    } else {
      merged.push_back(r);
      merged_image = image;
    }
  }
  return merged;
}

}  // namespace

void ReadPrefetcher::Fetch(ReadRound& round) {
  // The slot's previous round is over (its tasks waited for): its fetched bytes are free.
  ByteArena& arena = arenas_[static_cast<size_t>(round.slot())];
  arena.Reset();
  std::vector<Job> jobs;
  for (size_t i = 0; i < round.reads().size(); ++i) {
    SampleRead& read = round.read(i);
    if (read.plan.num_pieces() == 0)
      continue;  // PlanBox failed (the failure is recorded), or nothing to read
    const OutputArray& out = parts_.outputs[read.output];
    auto array = parts_.files->Get(read.case_index, out.dataset_array);
    if (!array.ok() || (*array)->file() == nullptr)
      continue;  // the task reads it (and reports an open error) itself
    const storage::ByteSource& file = *(*array)->file();
    if (!file.reads_async() && (file.fd() < 0 || io_ == nullptr))
      continue;  // mapped: the task reads it
    Job job;
    job.read = &read;
    job.array = std::move(*array);
    job.source = std::make_shared<FetchedSource>(job.array, &arena, &counters_.io_fallback_reads);
    int64_t blocks = 1;
    for (const int64_t b : job.array->geometry().blocks_per_chunk)
      blocks *= b;
    job.min_read = static_cast<uint64_t>(codec::kBlosc2HeaderSize + 4 * blocks);
    job.label = job.source->name();
    job.sink.resize(
        static_cast<size_t>(std::max(job.array->Footprint().block_bytes, job.array->itemsize())));
    job.sink_view.data = job.sink.data();
    job.sink_view.shape = read.dst.shape;
    job.sink_view.byte_strides.assign(read.dst.shape.size(), 0);
    for (int64_t p = 0; p < read.plan.num_pieces(); ++p) {
      if (read.plan.piece(p).chunk >= 0)
        job.pending.push_back(p);
    }
    jobs.push_back(std::move(job));
  }

  codec::BoxReadScratch& scratch = scratch_[static_cast<size_t>(round.slot())];
  for (int r = 0; r < kMaxRounds && !round.cancelled(); ++r) {
    // Replay every piece still asking for bytes; gather what it asked for.
    std::vector<std::pair<Job*, storage::FileRange>> requests;
    for (Job& job : jobs) {
      if (job.failed || job.pending.empty())
        continue;
      const SampleRead& read = *job.read;
      const OutputArray& out = parts_.outputs[read.output];
      std::vector<storage::FileRange> missing;
      std::vector<int64_t> still;
      scratch.source = job.source.get();
      for (const int64_t p : job.pending) {
        job.source->BeginDiscovery();
        (void)job.array->ReadPiece(read.plan, read.plan.piece(p), job.sink_view, out.pad_item,
                                   scratch);
        std::vector<storage::FileRange> m = job.source->TakeMissing();
        if (!m.empty()) {
          still.push_back(p);
          missing.insert(missing.end(), m.begin(), m.end());
        }
      }
      scratch.source = nullptr;
      job.source->EndDiscovery();
      job.pending = std::move(still);
      for (const storage::FileRange& f : Coalesce(std::move(missing), job.min_read, *job.source)) {
        requests.emplace_back(&job, f);
      }
    }
    if (requests.empty())
      break;

    Inflight inflight;
    inflight.pending = static_cast<int64_t>(requests.size());
    std::vector<Status> results(requests.size());
    int64_t bytes = 0;
    for (size_t k = 0; k < requests.size(); ++k) {
      auto& [job, range] = requests[k];
      bytes += static_cast<int64_t>(range.length);
      auto done = [&inflight, &results, k](Status status) {
        results[k] = std::move(status);
        std::lock_guard lock(inflight.mu);
        if (--inflight.pending == 0)
          inflight.cv.notify_one();
      };
      const std::span<std::byte> into = job->source->AddFetch(range);
      if (job->source->reads_async()) {
        job->source->ReadAsync(range.offset, into, std::move(done));
      } else {
        io_->Submit({job->source->fd(), range.offset, into, job->label, std::move(done)});
      }
    }
    MetricsCounters::Add(counters_.io_requests, static_cast<int64_t>(requests.size()));
    MetricsCounters::Add(counters_.io_bytes, bytes);
    {
      std::unique_lock lock(inflight.mu);
      inflight.cv.wait(lock, [&] { return inflight.pending == 0; });
    }
    for (size_t k = 0; k < requests.size(); ++k) {
      Job& job = *requests[k].first;
      if (!results[k].ok() && !job.failed) {
        job.failed = true;
        reader_.Fail(round, *job.read, nullptr, results[k]);
      }
    }
  }
  for (Job& job : jobs) {
    if (!job.failed)
      job.read->fetched = std::move(job.source);
  }
}

}  // namespace patchfeed::loader::internal_loader
