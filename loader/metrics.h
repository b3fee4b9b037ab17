// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_METRICS_H_
#define PATCHFEED_LOADER_METRICS_H_

/// \file
/// What the loader counts while it runs: bytes through each stage, time each side of the ring
/// waited, ring occupancy, errors. LoaderMetrics is a plain snapshot (Loader::metrics()); the
/// live counters are internal (internal/metrics_counters.h).

#include <cstdint>
#include <string>

namespace patchfeed::loader {

/// A snapshot of a loader's counters since it was created.
struct LoaderMetrics {
  int64_t batches_delivered = 0;  ///< leases handed out by Next()
  int64_t batches_failed = 0;     ///< Next() calls that returned a batch's error
  int64_t samples_delivered = 0;
  /// Samples replaced by a redraw after a failed read (ErrorPolicy::kSkip).
  int64_t samples_skipped = 0;
  int64_t read_errors = 0;  ///< failed reads (or opens), whatever the policy did with them
  /// Samples whose floating arrays held NaN or infinite values (LoaderConfig::check_finite),
  /// whatever the policy did with them.
  int64_t samples_nonfinite = 0;
  /// Cases left out at creation because they could not be used (ErrorPolicy::kSkip;
  /// Loader::excluded_cases() says which and why).
  int64_t cases_excluded = 0;

  /// Compressed stream bytes the decoders read (exact, counted by each worker's BlockDecoder;
  /// chunk headers and offsets not included).
  int64_t bytes_read = 0;
  /// Bytes the decoders produced: every block a box touches, or its front when the stream can
  /// stop early (LZ4 split streams), or the whole chunk for DELTA chunks.
  int64_t bytes_decoded = 0;
  int64_t bytes_delivered = 0;  ///< batch bytes handed to the consumer

  int64_t consumer_wait_ns = 0;  ///< time Next() spent waiting for its batch
  int64_t producer_wait_ns = 0;  ///< time the ring had no free slot for the next batch

  int slots = 0;  ///< ring size K
  int slots_free = 0;
  int slots_producing = 0;  ///< being sampled and read
  int slots_ready = 0;      ///< read, waiting for Next()
  int slots_leased = 0;     ///< held by the consumer

  int64_t files_opened = 0;  ///< frame opens, counting reopens after eviction
  int64_t files_open = 0;    ///< frames in the open-file cache now

  /// Reads in flight (IoMode::kPread with io_depth > 0): "io_uring" or "pread pool"; for a
  /// dataset in an object store "libcurl" (its store's engine, storage_options' io_depth);
  /// empty when reads are synchronous, inside the decode tasks.
  std::string io_backend;
  int io_depth = 0;              ///< the most reads at the file system at once
  int64_t io_requests = 0;       ///< reads fetched ahead (headers and offsets, block streams)
  int64_t io_bytes = 0;          ///< bytes they asked for
  int64_t io_max_in_flight = 0;  ///< the most of them at the file system at once
  /// Reads a decode task made itself because no fetched range held the bytes (0 unless the
  /// fetch missed something: a hint that the prefetch plan is incomplete).
  int64_t io_fallback_reads = 0;
  /// A remote dataset's requests sent again after a failure that may pass (429, 5xx, a reset
  /// connection, a short body), and those that failed for good; every request of its store
  /// counts, opens and listings included.
  int64_t io_retries = 0;
  int64_t io_errors = 0;
};

}  // namespace patchfeed::loader

#endif  // PATCHFEED_LOADER_METRICS_H_
