// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_BOX_FETCH_H_
#define PATCHFEED_LOADER_INTERNAL_BOX_FETCH_H_

/// \file
/// Fetching ahead what box reads need, all at once (issues 15, 24, 25): the machinery behind
/// the loader's ReadPrefetcher (a batch's reads) and loader::ReadBoxFetched (one box).
///
/// Which bytes: the codec's read of each piece is replayed against a FetchedSource (a `.b2nd`
/// frame, fetched_source.h) or a FetchedStore (zarr and precomputed chunk and shard files,
/// fetched_store.h) until it asks for nothing new: a chunk's file is opened first (a shard's
/// index is read next); then each chunk's header and block offsets (one read, long enough to
/// hold them), then the streams of the blocks the piece touches (neighbours merged into one
/// read), straight into an image of the chunk that the decode reads in place; a few more rounds
/// only for chunks stored whole (memcpyed) or with a dictionary. Each round's requests are all
/// submitted before the caller sleeps until the last completes (a condition variable: no
/// polling): a `.b2nd` read costs two round trips, a zarr or precomputed one three (four with
/// shards), however many chunks it touches. Local files go through an IoEngine; remote objects
/// through their store's own engine (ByteSource::ReadAsync, Store::OpenAsync).

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "codec/array_reader.h"
#include "codec/box_plan.h"
#include "common/status.h"
#include "common/strided_view.h"
#include "loader/internal/byte_arena.h"
#include "loader/internal/fetched_source.h"
#include "loader/internal/fetched_store.h"
#include "loader/internal/metrics_counters.h"
#include "storage/io_engine.h"

namespace patchfeed::loader::internal_loader {

/// One box read being fetched for: from one `.b2nd` frame (source), or from an array whose
/// chunks are files of their own (store).
struct FetchJob {
  std::shared_ptr<const codec::ArrayReader> array;
  const codec::BoxPlan* plan = nullptr;   ///< outlives the fetch
  std::span<const std::byte> pad_item;    ///< the read's padding item
  std::shared_ptr<FetchedSource> source;  ///< what was fetched, for the decode
  std::shared_ptr<FetchedStore> store;
  std::vector<codec::BoxPiece> pending;  ///< pieces whose replay still asked for something
  uint64_t min_read = 0;                 ///< the first read of a chunk (or chunk file)
  uint64_t open_read = 0;                ///< bytes asked for with a chunk file's open
  Status error;                          ///< the first fetch that failed (the job stops)
  /// Where discovery writes (pad regions, special chunks): one block's bytes that every item
  /// of the box lands on (zero strides), so it writes nothing the decode will read.
  std::vector<std::byte> sink;
  StridedView sink_view;
};

/// Sets `*job` up to fetch for `plan` (a plan over `array`), or returns false when the
/// array's reads are not fetched ahead: a mapped file, or local chunk files and no `io`.
/// `fallback_reads` counts reads the decode later has to make itself (nothing fetched them).
bool MakeFetchJob(std::shared_ptr<const codec::ArrayReader> array, const codec::BoxPlan& plan,
                  std::span<const std::byte> pad_item, storage::IoEngine* io, ByteArena& arena,
                  std::atomic<int64_t>* fallback_reads, FetchJob* job);

/// Fetches, round by round, what every job's replays ask for, until none asks for anything
/// new or `cancelled()`; a job whose fetch fails gets `error` and drops out. Bytes land in
/// `arena`; `counters` gets io_requests and io_bytes. Returns when every request it sent has
/// completed.
void FetchJobs(std::span<FetchJob> jobs, storage::IoEngine* io, ByteArena& arena,
               codec::BoxReadScratch& scratch, MetricsCounters& counters,
               const std::function<bool()>& cancelled);

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_BOX_FETCH_H_
