// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// The io_uring backend of IoEngine.
//
// One engine thread owns the ring. Each turn it moves queued requests into free slots (one
// slot per read at the kernel, `depth` slots), prepares their reads, submits and sleeps in
// io_uring_enter until at least one completion is there (io_uring_submit_and_wait), then
// handles every completion: a short read is continued from where it stopped in the same
// slot, a finished or failed read frees its slot and runs its callback.
//
// How Submit wakes a sleeping engine: a read of an eventfd is always in the ring, so a write
// to the eventfd completes it. Chosen over io_uring_register_eventfd (that one signals the
// other way: the ring notifies an eventfd of completions, and the engine would then need a
// second wait, e.g. poll() on both) and over IORING_OP_MSG_RING (5.18+, and the submitter
// would need a ring of its own). `wake_pending_` keeps it to one eventfd write per turn of
// the engine, however many requests are submitted meanwhile.
//
// Why io-wq's worker limit is raised to `depth`: reads that block in the file system (where
// neither non-blocking nor asynchronous reads are supported) run on io_uring's kernel
// workers, capped by default at min(ring size, 4 x CPUs) per task (8 on this 2-core machine),
// below the depth asked for and below what the pread pool would run. FUSE direct_io reads do
// not block workers (they are asynchronous requests, capped by FUSE's own max_background, 12
// by default), so there the raise changes nothing (measured); it is kept for the others.

#include <liburing.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/str_cat.h"
#include "storage/io_engine.h"

namespace patchfeed::storage {
namespace {

/// The ring, the eventfd and the buffer of the eventfd read the ring holds (on the heap: its
/// address must not move while the kernel may write it).
struct Ring {
  io_uring ring{};
  int event_fd = -1;
  uint64_t wake_buffer = 0;
  bool ring_open = false;

  Ring() = default;
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  ~Ring() {
    if (ring_open)
      io_uring_queue_exit(&ring);  // also ends the eventfd read still in the ring
    if (event_fd >= 0)
      close(event_fd);
  }
};

constexpr uint64_t kWakeTag = std::numeric_limits<uint64_t>::max();
// One read SQE asks for at most this much; a larger request continues like a short read.
constexpr size_t kMaxReadChunk = size_t{1} << 30;

Status RingError(const char* what, int err) {
  return IoError(StrCat("io_uring is unavailable: ", what, ": ", std::strerror(err)));
}

class UringEngine final : public IoEngine {
 public:
  UringEngine(int depth, std::unique_ptr<Ring> ring)
      : IoEngine(IoBackend::kIoUring, depth),
        ring_(std::move(ring)),
        slots_(static_cast<size_t>(depth)) {
    free_slots_.reserve(slots_.size());
    for (size_t i = slots_.size(); i-- > 0;)
      free_slots_.push_back(static_cast<uint32_t>(i));
    thread_ = std::thread([this] { Run(); });
  }

  ~UringEngine() override {
    PATCHFEED_DCHECK(thread_.get_id() != std::this_thread::get_id());
    bool wake;
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      wake = !std::exchange(wake_pending_, true);
    }
    if (wake)
      Wake();
    thread_.join();
  }

  void Submit(ReadRequest request) override {
    CountSubmitted();
    bool wake;
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(request));
      wake = !std::exchange(wake_pending_, true);
    }
    if (wake)
      Wake();
  }

  const char* backend_name() const override { return "io_uring"; }

 private:
  struct Slot {
    ReadRequest request;
    size_t got = 0;  // bytes in `request.out` so far
  };

  void Wake() {
    const uint64_t one = 1;
    while (write(ring_->event_fd, &one, sizeof(one)) < 0 && errno == EINTR) {
    }
  }

  void Run() {
    std::vector<ReadRequest> taken;
    while (true) {
      bool stopping;
      {
        std::lock_guard lock(mu_);
        stopping = stopping_;
        const size_t n = stopping ? queue_.size() : std::min(queue_.size(), free_slots_.size());
        for (size_t i = 0; i < n; ++i) {
          taken.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      }
      if (stopping) {
        if (!taken.empty()) {
          for (ReadRequest& r : taken)
            Complete(r, ClosedBeforeReadError(r));
          taken.clear();
          continue;  // those callbacks may have queued more
        }
        if (free_slots_.size() == slots_.size())
          return;  // nothing queued, nothing at the kernel
      }
      for (ReadRequest& r : taken)
        Start(std::move(r));
      taken.clear();
      const int ret = io_uring_submit_and_wait(&ring_->ring, 1);
      // EINTR: a signal; EAGAIN/EBUSY: the kernel is short of memory for requests. The
      // prepared reads stay in the submission queue and go with the next turn, which comes
      // after the next completion or Submit.
      PATCHFEED_DCHECK(ret >= 0 || ret == -EINTR || ret == -EAGAIN || ret == -EBUSY);
      if (ret < 0 && ret != -EINTR) {
        io_uring_cqe* cqe = nullptr;
        if (io_uring_wait_cqe(&ring_->ring, &cqe) < 0)
          continue;
      }
      HandleCompletions();
    }
  }

  io_uring_sqe* NextSqe() {
    // At most one SQE per slot plus the wake read is ever outstanding and the ring holds
    // depth + 1, so this finds room at once; the loop is only a guard.
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_->ring);
    while (sqe == nullptr) {
      io_uring_submit(&ring_->ring);
      sqe = io_uring_get_sqe(&ring_->ring);
    }
    return sqe;
  }

  void Start(ReadRequest request) {
    if (request.out.empty()) {
      Complete(request, Status::Ok());
      return;
    }
    PATCHFEED_DCHECK(!free_slots_.empty());
    const uint32_t index = free_slots_.back();
    free_slots_.pop_back();
    slots_[index].request = std::move(request);
    slots_[index].got = 0;
    EnterFlight();
    PrepareRead(index);
  }

  void PrepareRead(uint32_t index) {
    Slot& slot = slots_[index];
    const size_t left = std::min(slot.request.out.size() - slot.got, kMaxReadChunk);
    io_uring_sqe* sqe = NextSqe();
    io_uring_prep_read(sqe, slot.request.fd, slot.request.out.data() + slot.got,
                       static_cast<unsigned>(left), slot.request.offset + slot.got);
    io_uring_sqe_set_data64(sqe, index);
  }

  void ArmWake() {
    io_uring_sqe* sqe = NextSqe();
    io_uring_prep_read(sqe, ring_->event_fd, &ring_->wake_buffer, sizeof(ring_->wake_buffer), 0);
    io_uring_sqe_set_data64(sqe, kWakeTag);
  }

  void HandleCompletions() {
    io_uring_cqe* cqe = nullptr;
    while (io_uring_peek_cqe(&ring_->ring, &cqe) == 0) {
      const uint64_t tag = io_uring_cqe_get_data64(cqe);
      const int res = cqe->res;
      io_uring_cqe_seen(&ring_->ring, cqe);  // before the callback, which may take its time
      if (tag == kWakeTag) {
        // An eventfd read of 8 bytes cannot fail.
        PATCHFEED_DCHECK(res == static_cast<int>(sizeof(ring_->wake_buffer)));
        {
          std::lock_guard lock(mu_);
          wake_pending_ = false;  // a Submit after this writes the eventfd again
        }
        ArmWake();
      } else {
        HandleRead(static_cast<uint32_t>(tag), res);
      }
    }
  }

  void HandleRead(uint32_t index, int res) {
    Slot& slot = slots_[index];
    Status status;
    if (res > 0) {
      slot.got += static_cast<size_t>(res);
      if (slot.got < slot.request.out.size()) {
        PrepareRead(index);  // a short read: the rest, from where it stopped
        return;
      }
    } else if (res == 0) {
      status = ShortReadError(slot.request, slot.got);
    } else if (res == -EINTR) {
      PrepareRead(index);
      return;
    } else {
      status = ReadErrnoError(slot.request, slot.got, -res);
    }
    CountBytes(slot.got);
    LeaveFlight();
    ReadRequest request = std::move(slot.request);
    free_slots_.push_back(index);
    Complete(request, std::move(status));
  }

  const std::unique_ptr<Ring> ring_;  // destroyed after the thread is joined

  // Engine thread only.
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;

  std::mutex mu_;
  std::deque<ReadRequest> queue_;  // guarded by mu_
  bool wake_pending_ = false;      // guarded by mu_: the eventfd was written this turn
  bool stopping_ = false;          // guarded by mu_

  std::thread thread_;  // last: started after everything it uses exists
};

}  // namespace

Result<std::unique_ptr<IoEngine>> CreateUringIoEngine(int depth) {
  depth = std::clamp(depth, 1, IoEngine::kMaxUringDepth);
  auto ring = std::make_unique<Ring>();
  // One entry per read at the kernel plus the eventfd read; completions get twice as many
  // (the kernel's default), so the completion queue cannot overflow.
  const int init = io_uring_queue_init(static_cast<unsigned>(depth + 1), &ring->ring, 0);
  if (init < 0)
    return RingError("io_uring_queue_init", -init);
  ring->ring_open = true;
  ring->event_fd = eventfd(0, EFD_CLOEXEC);
  if (ring->event_fd < 0)
    return RingError("eventfd", errno);
  // The wake read goes in before the thread starts, so a ring that refuses reads (a seccomp
  // filter on io_uring_enter, an LSM) fails here and kAuto falls back.
  io_uring_sqe* sqe = io_uring_get_sqe(&ring->ring);
  io_uring_prep_read(sqe, ring->event_fd, &ring->wake_buffer, sizeof(ring->wake_buffer), 0);
  io_uring_sqe_set_data64(sqe, kWakeTag);
  const int submitted = io_uring_submit(&ring->ring);
  if (submitted < 0)
    return RingError("io_uring_submit", -submitted);
  io_uring_cqe* early = nullptr;
  if (io_uring_peek_cqe(&ring->ring, &early) == 0)  // the eventfd is 0: only an error ends it
    return RingError("a read on the ring", early->res < 0 ? -early->res : EIO);
  // Best effort (kernel 5.15+): let io-wq run `depth` blocking reads at once (file comment).
  unsigned max_workers[2] = {static_cast<unsigned>(depth), 0};
  (void)io_uring_register_iowq_max_workers(&ring->ring, max_workers);
  return std::unique_ptr<IoEngine>(std::make_unique<UringEngine>(depth, std::move(ring)));
}

}  // namespace patchfeed::storage
