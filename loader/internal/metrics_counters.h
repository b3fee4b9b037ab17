// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_METRICS_COUNTERS_H_
#define PATCHFEED_LOADER_INTERNAL_METRICS_COUNTERS_H_

/// \file
/// The live values behind LoaderMetrics, as relaxed atomics: workers bump them without a lock,
/// and a snapshot costs a few loads (its fields are not read at one instant).

#include <atomic>
#include <cstdint>

#include "loader/metrics.h"

namespace patchfeed::loader::internal_loader {

/// The live counters behind LoaderMetrics. Thread-safe; all updates are relaxed.
struct MetricsCounters {
  std::atomic<int64_t> batches_delivered{0};
  std::atomic<int64_t> batches_failed{0};
  std::atomic<int64_t> samples_delivered{0};
  std::atomic<int64_t> samples_skipped{0};
  std::atomic<int64_t> read_errors{0};
  std::atomic<int64_t> samples_nonfinite{0};
  std::atomic<int64_t> bytes_read{0};
  std::atomic<int64_t> bytes_decoded{0};
  std::atomic<int64_t> bytes_delivered{0};
  std::atomic<int64_t> consumer_wait_ns{0};
  std::atomic<int64_t> producer_wait_ns{0};
  std::atomic<int64_t> io_requests{0};
  std::atomic<int64_t> io_bytes{0};
  std::atomic<int64_t> io_fallback_reads{0};
  std::atomic<int> slots_free{0};
  std::atomic<int> slots_producing{0};
  std::atomic<int> slots_ready{0};
  std::atomic<int> slots_leased{0};

  static void Add(std::atomic<int64_t>& counter, int64_t value) {
    counter.fetch_add(value, std::memory_order_relaxed);
  }

  /// Everything but the file counts, which the open-file cache keeps, the I/O engine's own
  /// and the cases left out at creation.
  LoaderMetrics Snapshot(int slots) const {
    constexpr auto r = std::memory_order_relaxed;
    LoaderMetrics m;
    m.batches_delivered = batches_delivered.load(r);
    m.batches_failed = batches_failed.load(r);
    m.samples_delivered = samples_delivered.load(r);
    m.samples_skipped = samples_skipped.load(r);
    m.read_errors = read_errors.load(r);
    m.samples_nonfinite = samples_nonfinite.load(r);
    m.bytes_read = bytes_read.load(r);
    m.bytes_decoded = bytes_decoded.load(r);
    m.bytes_delivered = bytes_delivered.load(r);
    m.consumer_wait_ns = consumer_wait_ns.load(r);
    m.producer_wait_ns = producer_wait_ns.load(r);
    m.io_requests = io_requests.load(r);
    m.io_bytes = io_bytes.load(r);
    m.io_fallback_reads = io_fallback_reads.load(r);
    m.slots = slots;
    m.slots_free = slots_free.load(r);
    m.slots_producing = slots_producing.load(r);
    m.slots_ready = slots_ready.load(r);
    m.slots_leased = slots_leased.load(r);
    return m;
  }
};

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_METRICS_COUNTERS_H_
