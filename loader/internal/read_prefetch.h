// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_READ_PREFETCH_H_
#define PATCHFEED_LOADER_INTERNAL_READ_PREFETCH_H_

/// \file
/// Reads in flight (issues 15 and 24): before a round's read tasks start, its producer fetches
/// the bytes every read needs (plain and augmented samples alike), all files and chunks of the
/// batch at once, so that the tasks decode from memory and never wait on I/O. Local files go
/// through the IoEngine (IoMode::kPread); remote objects through their store's own engine
/// (ByteSource::ReadAsync, Store::OpenAsync).
///
/// Which bytes, and in how many round trips: box_fetch.h. Up to `io_depth` requests are in
/// flight at once (several batches' producers share the engine).
///
/// What it leaves to the tasks: reads of mapped files, of sparse frames (chunks are files of
/// their own, not opened through a store the reader is handed), of local zarr chunks without
/// an engine, and any read whose fetch failed: the failure is recorded as the sample's error,
/// naming the case, file, offset and length (a chunk file that fails to open is the task's to
/// report). Fetched bytes live in a per-slot arena that the slot's next batch reuses.
/// Thread-safe for distinct slots.

#include <atomic>
#include <cstdint>
#include <vector>

#include "loader/internal/byte_arena.h"
#include "loader/internal/loader_setup.h"
#include "loader/internal/metrics_counters.h"
#include "loader/internal/read_round.h"
#include "loader/internal/sample_reader.h"
#include "storage/io_engine.h"

namespace patchfeed::loader::internal_loader {

class ReadPrefetcher {
 public:
  /// `io` must outlive the prefetcher and every round it fetched for; null when only sources
  /// that read asynchronously themselves (remote objects) are fetched ahead.
  ReadPrefetcher(const LoaderParts& parts, storage::IoEngine* io, SampleReader* reader,
                 MetricsCounters* counters)
      : parts_(parts),
        io_(io),
        reader_(*reader),
        counters_(*counters),
        arenas_(static_cast<size_t>(parts.ring.ring_size())),
        scratch_(static_cast<size_t>(parts.ring.ring_size())) {}

  /// Fetches for the reads of `round` and sets their SampleRead::fetched. Runs on the
  /// round's producer after planning, before any of its tasks; returns when every read it
  /// submitted has completed.
  void Fetch(ReadRound& round);

 private:
  const LoaderParts& parts_;
  storage::IoEngine* io_;
  SampleReader& reader_;
  MetricsCounters& counters_;
  std::vector<ByteArena> arenas_;  ///< per slot: its round's fetched bytes, reused
  /// Per slot: the discovery replays' scratch, kept so that its chunk image is not cleared
  /// anew for every batch.
  std::vector<codec::BoxReadScratch> scratch_;
};

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_READ_PREFETCH_H_
