// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_STORAGE_IO_ENGINE_H_
#define PATCHFEED_STORAGE_IO_ENGINE_H_

/// \file
/// IoEngine: positional reads kept in flight without blocking the caller (issue 15), so many
/// byte ranges of a batch wait on a slow (network) file system together instead of one after
/// another inside decode tasks.
///
/// Two backends, chosen at run time by `IoEngine::Create`:
/// - io_uring (liburing): one engine thread submits up to `depth` reads to the kernel and
///   sleeps in `io_uring_submit_and_wait` until one completes or a submission wakes it (an
///   eventfd whose read is itself in the ring). No polling.
/// - a pread pool: min(depth, kMaxPreadThreads) threads, each sleeping on a condition
///   variable for work and doing blocking `pread` loops; for kernels or sandboxes (seccomp,
///   io_uring_disabled) that refuse io_uring.
///
/// Both give the same results: a request's callback runs exactly once, on an engine thread,
/// after `out` holds every byte asked for, or with the error (kDataLoss for a file that ends
/// early, kIoError for a refused read, kCancelled for a request still queued when the engine
/// is destroyed). Short reads are continued from where they stopped.
///
/// Memory: the caller owns every request's `out` buffer and `label` text, and its `fd`; all
/// three must stay valid (the descriptor open) until its callback has run. The engine owns
/// its threads, its ring and its queue.
/// Thread-safety: `Submit` and `stats` may be called from any thread, callbacks included;
/// destruction must not race with `Submit` from outside the engine's callbacks, nor run in one.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>

#include "common/result.h"
#include "common/status.h"
#include "storage/io_backend.h"

namespace patchfeed::storage {

/// One positional read of `out.size()` bytes at `offset` of `fd`.
struct ReadRequest {
  int fd = -1;
  uint64_t offset = 0;
  std::span<std::byte> out;
  /// Names the read in error messages, e.g. "case 'x': /path/file.b2nd". Not copied.
  std::string_view label;
  /// Called exactly once, on an engine thread, with OK once `out` is filled, or the error.
  /// It runs between completions: hand work on (e.g. enqueue a TBB task) and return, never
  /// block. It may call `Submit` (a second read that needs the first one's bytes).
  std::function<void(Status)> done;
};

/// Counters since creation; read without a lock, so a snapshot may mix moments.
struct IoEngineStats {
  int64_t submitted = 0;      ///< requests accepted by Submit
  int64_t completed = 0;      ///< callbacks run (OK, errors and cancellations)
  int64_t bytes = 0;          ///< bytes read into `out` buffers
  int64_t in_flight = 0;      ///< requests at the kernel now (queued ones are not counted)
  int64_t max_in_flight = 0;  ///< the most requests at the kernel at once; <= depth()
};

class IoEngine {
 public:
  /// The most threads the pread pool starts, whatever the depth.
  static constexpr int kMaxPreadThreads = 64;
  /// The deepest ring io_uring gets.
  static constexpr int kMaxUringDepth = 4096;

  /// An engine of the `wanted` backend keeping at most `depth` (>= 1) reads at the kernel.
  /// kAuto tries io_uring and falls back to the pread pool on any failure (ENOSYS on old
  /// kernels, EPERM under seccomp or io_uring_disabled, ENOMEM); kIoUring returns that
  /// failure as kIoError instead. The pool runs min(depth, kMaxPreadThreads) threads, io_uring
  /// min(depth, kMaxUringDepth) reads: `depth()` says which.
  static Result<std::unique_ptr<IoEngine>> Create(IoBackend wanted, int depth);

  /// Stops accepting work from outside, completes each queued request with kCancelled
  /// (also those its callbacks submit meanwhile), waits for the reads at the kernel and their
  /// callbacks, joins the engine's threads.
  virtual ~IoEngine() = default;
  IoEngine(const IoEngine&) = delete;
  IoEngine& operator=(const IoEngine&) = delete;

  /// Queues `request`; returns at once without waiting for I/O (the queue is unbounded: the
  /// caller bounds what it asks for, the loader by its ring of batches). Reads leave the queue
  /// in submission order, at most `depth()` at the kernel at once. An empty `out` completes
  /// with OK without a read.
  virtual void Submit(ReadRequest request) = 0;

  /// "io_uring" or "pread pool".
  virtual const char* backend_name() const = 0;
  IoBackend backend() const { return backend_; }
  int depth() const { return depth_; }
  IoEngineStats stats() const;

 protected:
  IoEngine(IoBackend backend, int depth) : backend_(backend), depth_(depth) {}

  /// For the backends: counts a request accepted by Submit.
  void CountSubmitted() { submitted_.fetch_add(1, std::memory_order_relaxed); }
  /// Counts a request given to the kernel (tracking the maximum).
  void EnterFlight();
  /// Counts a request back from the kernel for good (not a continued short read).
  void LeaveFlight() { in_flight_.fetch_sub(1, std::memory_order_relaxed); }
  void CountBytes(uint64_t n) {
    bytes_.fetch_add(static_cast<int64_t>(n), std::memory_order_relaxed);
  }
  /// Runs the request's callback with `status` and counts it.
  void Complete(ReadRequest& request, Status status);

 private:
  const IoBackend backend_;
  const int depth_;
  std::atomic<int64_t> submitted_{0};
  std::atomic<int64_t> completed_{0};
  std::atomic<int64_t> bytes_{0};
  std::atomic<int64_t> in_flight_{0};
  std::atomic<int64_t> max_in_flight_{0};
};

/// kDataLoss "short read: N of M bytes at offset O of <label>" (the file ended after `got`).
Status ShortReadError(const ReadRequest& request, uint64_t got);
/// kIoError "read of M bytes at offset O of <label> failed after N bytes: <strerror> (errno E)".
Status ReadErrnoError(const ReadRequest& request, uint64_t got, int err);

/// kCancelled "the I/O engine closed before reading M bytes at offset O of <label>".
Status ClosedBeforeReadError(const ReadRequest& request);

/// The backends (io_engine_uring.cc, io_engine_pread.cc); use IoEngine::Create.
Result<std::unique_ptr<IoEngine>> CreateUringIoEngine(int depth);
std::unique_ptr<IoEngine> CreatePreadPoolIoEngine(int depth);

}  // namespace patchfeed::storage

#endif  // PATCHFEED_STORAGE_IO_ENGINE_H_
