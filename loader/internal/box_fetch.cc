// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/box_fetch.h"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "codec/blosc/chunk_format.h"

namespace patchfeed::loader::internal_loader {
namespace {

// A frame: header and offsets, then blocks, a dictionary or a chunk stored whole 1-2 more. A
// zarr chunk adds its open; a shard, its index.
constexpr int kMaxRounds = 7;
// Ranges of one file closer than this are fetched as one read: a network round trip costs
// far more than reading a few KiB more.
constexpr uint64_t kMergeGap = uint64_t{4} << 10;
// The first read of a chunk file (a zarr chunk's Blosc header and block offsets, a shard's
// index) is at least this long, so that it brings the block offsets too; on a network, where a
// round trip costs far more, long enough to bring small chunks whole.
constexpr uint64_t kChunkFileMinRead = uint64_t{4} << 10;
constexpr uint64_t kRemoteChunkFileMinRead = uint64_t{64} << 10;
// A remote chunk file is opened with a GET of its first bytes (no HEAD): a zarr chunk up to
// this size comes whole in that one request, as tensorstore reads it. Shards are opened with a
// HEAD instead: their index is at the end.
constexpr uint64_t kRemoteChunkFileFirstRead = uint64_t{512} << 10;
// A remote chunk file that reads take whole (ArrayFootprint::whole_file_bytes) is opened with a
// GET of up to its largest size, this at most: one request brings it.
constexpr uint64_t kRemoteWholeFileMaxRead = uint64_t{16} << 20;

// What a round asks for: ranges of fetched files, and (chunk files) files to open.
struct RangeRequest {
  FetchJob* job;
  FetchedSource* source;
  storage::FileRange range;
};
struct OpenRequest {
  FetchJob* job;
  std::string path;
  std::span<std::byte> head;  // where its first bytes may come with the open
};

// The reads of one round of fetching: the producer sleeps until `pending` is 0.
struct Inflight {
  std::mutex mu;
  std::condition_variable cv;
  int64_t pending = 0;

  void Done() {
    std::lock_guard lock(mu);
    if (--pending == 0)
      cv.notify_one();
  }
  void Wait() {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return pending == 0; });
  }
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

// The chunk pieces of `plan` a replay goes through: each piece, or for arrays whose blocks are
// stored apart (a shard's inner chunks) each wanted block of it, since a replay stops at the
// first block whose bytes it learns.
std::vector<codec::BoxPiece> ReplayPieces(const codec::BoxPlan& plan, bool blocks_apart) {
  std::vector<codec::BoxPiece> pieces;
  const auto n = static_cast<size_t>(plan.ndim());
  for (int64_t p = 0; p < plan.num_pieces(); ++p) {
    const codec::BoxPiece piece = plan.piece(p);
    if (piece.chunk < 0)
      continue;
    if (!blocks_apart) {
      pieces.push_back(piece);
      continue;
    }
    // Every block k in [block_lo, block_hi), C order.
    codec::NdIndex k = piece.block_lo;
    for (bool more = true; more;) {
      if (!plan.filtered() || plan.wants(piece, k))
        pieces.push_back(plan.Block(piece, k));
      more = false;
      for (size_t d = n; d-- > 0;) {
        if (++k[d] < piece.block_hi[d]) {
          more = true;
          break;
        }
        k[d] = piece.block_lo[d];
      }
    }
  }
  return pieces;
}

bool BlocksApart(const codec::ArrayReader& array) {
  if (array.chunk_store() == nullptr)
    return false;
  for (const int64_t b : array.geometry().blocks_per_chunk) {
    if (b > 1)
      return true;
  }
  return false;
}

// Replays the job's pending pieces against what was fetched so far; adds what they asked for
// to `ranges` (coalesced per file) and `opens`, and keeps pending only the pieces that asked.
void Discover(FetchJob& job, ByteArena& arena, codec::BoxReadScratch& scratch,
              std::vector<RangeRequest>* ranges, std::vector<OpenRequest>* opens) {
  // Per file: the ranges its replays asked for.
  std::map<FetchedSource*, std::vector<storage::FileRange>> missing;
  const auto take = [&](FetchedSource& source) {
    std::vector<storage::FileRange> m = source.TakeMissing();
    if (m.empty())
      return false;
    std::vector<storage::FileRange>& all = missing[&source];
    all.insert(all.end(), m.begin(), m.end());
    return true;
  };
  std::vector<codec::BoxPiece> still;
  std::set<std::string> opening;
  scratch.source = job.source.get();
  scratch.store = job.store.get();
  if (job.store)
    job.store->BeginDiscovery();
  for (const codec::BoxPiece& piece : job.pending) {
    if (job.source)
      job.source->BeginDiscovery();
    (void)job.array->ReadPiece(*job.plan, piece, job.sink_view, job.pad_item, scratch);
    bool asked = false;
    if (job.source) {
      asked = take(*job.source);
    } else {
      for (std::string& path : job.store->TakeMissingOpens()) {
        // Pieces of one file (a shard's chunks) ask for its open each: it is opened once.
        if (opening.insert(path).second) {
          opens->push_back(
              {&job, std::move(path), arena.Allocate(job.open_read).first(job.open_read)});
        }
        asked = true;
      }
      for (const auto& [path, source] : job.store->sources())
        asked |= take(*source);
    }
    if (asked)
      still.push_back(piece);
  }
  scratch.source = nullptr;
  scratch.store = nullptr;
  if (job.source)
    job.source->EndDiscovery();
  if (job.store)
    job.store->EndDiscovery();
  job.pending = std::move(still);
  for (auto& [source, wanted] : missing) {
    for (const storage::FileRange& f : Coalesce(std::move(wanted), job.min_read, *source))
      ranges->push_back({&job, source, f});
  }
}

// Sends a round's opens and reads all at once and sleeps until the last completes; hands each
// open's outcome to its FetchedStore. Returns each read's outcome.
std::vector<Status> Request(storage::IoEngine* io, MetricsCounters& counters,
                            const std::vector<RangeRequest>& ranges,
                            const std::vector<OpenRequest>& opens) {
  Inflight inflight;
  inflight.pending = static_cast<int64_t>(ranges.size() + opens.size());
  std::vector<Status> results(ranges.size());
  std::vector<Result<storage::OpenedFile>> opened(opens.size(), CancelledError("not opened"));
  int64_t requests = static_cast<int64_t>(ranges.size());
  int64_t bytes = 0;
  for (size_t k = 0; k < opens.size(); ++k) {
    const OpenRequest& o = opens[k];
    requests += o.job->store->remote() ? 1 : 0;  // a GET or a HEAD; a local open reads nothing
    o.job->array->chunk_store()->OpenAsync(
        o.path, storage::IoMode::kPread, o.head,
        [&inflight, &opened, k](Result<storage::OpenedFile> file) {
          opened[k] = std::move(file);
          inflight.Done();
        });
  }
  for (size_t k = 0; k < ranges.size(); ++k) {
    const RangeRequest& q = ranges[k];
    bytes += static_cast<int64_t>(q.range.length);
    auto done = [&inflight, &results, k](Status status) {
      results[k] = std::move(status);
      inflight.Done();
    };
    const std::span<std::byte> into = q.source->AddFetch(q.range);
    if (q.source->reads_async() || q.source->fd() < 0 || io == nullptr) {
      q.source->ReadAsync(q.range.offset, into, std::move(done));
    } else {
      io->Submit({q.source->fd(), q.range.offset, into, q.source->name(), std::move(done)});
    }
  }
  inflight.Wait();
  for (size_t k = 0; k < opens.size(); ++k) {
    if (opened[k].ok())
      bytes += static_cast<int64_t>(opened[k]->head_bytes);
    opens[k].job->store->AddOpened(opens[k].path, std::move(opened[k]), opens[k].head);
  }
  MetricsCounters::Add(counters.io_requests, requests);
  MetricsCounters::Add(counters.io_bytes, bytes);
  return results;
}

}  // namespace

bool MakeFetchJob(std::shared_ptr<const codec::ArrayReader> array, const codec::BoxPlan& plan,
                  std::span<const std::byte> pad_item, storage::IoEngine* io, ByteArena& arena,
                  std::atomic<int64_t>* fallback_reads, FetchJob* job) {
  const codec::ArrayReader& a = *array;
  if (const storage::ByteSource* file = a.file()) {
    if (!file->reads_async() && (file->fd() < 0 || io == nullptr))
      return false;  // mapped: the task reads it
    job->source = std::make_shared<FetchedSource>(
        std::shared_ptr<const storage::ByteSource>(array, file), &arena, fallback_reads);
    int64_t blocks = 1;
    for (const int64_t b : a.geometry().blocks_per_chunk)
      blocks *= b;
    job->min_read = static_cast<uint64_t>(codec::kBlosc2HeaderSize + 4 * blocks);
  } else if (const storage::Store* store = a.chunk_store()) {
    if (!store->remote() && io == nullptr)
      return false;  // local chunk files without an engine: the task reads them
    job->store = std::make_shared<FetchedStore>(*store, &arena, fallback_reads);
    job->min_read = store->remote() ? kRemoteChunkFileMinRead : kChunkFileMinRead;
    if (store->remote() && !BlocksApart(a)) {
      // A file read whole comes whole with its open (up to a bound), in one request.
      job->open_read = std::clamp(static_cast<uint64_t>(a.Footprint().whole_file_bytes),
                                  kRemoteChunkFileFirstRead, kRemoteWholeFileMaxRead);
    }
  } else {
    return false;
  }
  job->array = std::move(array);
  job->plan = &plan;
  job->pad_item = pad_item;
  job->sink.resize(static_cast<size_t>(std::max(a.Footprint().block_bytes, a.itemsize())));
  job->sink_view.data = job->sink.data();
  job->sink_view.shape = plan.shape();
  job->sink_view.byte_strides.assign(plan.shape().size(), 0);
  job->pending = ReplayPieces(plan, BlocksApart(a));
  return true;
}

void FetchJobs(std::span<FetchJob> jobs, storage::IoEngine* io, ByteArena& arena,
               codec::BoxReadScratch& scratch, MetricsCounters& counters,
               const std::function<bool()>& cancelled) {
  for (int r = 0; r < kMaxRounds && !cancelled(); ++r) {
    std::vector<RangeRequest> ranges;
    std::vector<OpenRequest> opens;
    for (FetchJob& job : jobs) {
      if (job.error.ok() && !job.pending.empty())
        Discover(job, arena, scratch, &ranges, &opens);
    }
    if (ranges.empty() && opens.empty())
      break;
    const std::vector<Status> results = Request(io, counters, ranges, opens);
    for (size_t k = 0; k < ranges.size(); ++k) {
      FetchJob& job = *ranges[k].job;
      if (!results[k].ok() && job.error.ok())
        job.error = results[k];
    }
  }
}

}  // namespace patchfeed::loader::internal_loader
