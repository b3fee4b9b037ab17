// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// The pread pool: IoEngine's fallback where io_uring is refused. min(depth, kMaxPreadThreads)
// threads sleep on one condition variable; each takes the oldest queued request and reads it
// with blocking preads to the end, so the threads busy in pread are the reads in flight.

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "common/check.h"
#include "storage/io_engine.h"

namespace patchfeed::storage {
namespace {

class PreadPoolEngine final : public IoEngine {
 public:
  explicit PreadPoolEngine(int threads) : IoEngine(IoBackend::kPreadPool, threads) {
    threads_.reserve(static_cast<size_t>(threads));
    for (int i = 0; i < threads; ++i)
      threads_.emplace_back([this] { Work(); });
  }

  ~PreadPoolEngine() override {
    for (const std::thread& t : threads_)
      PATCHFEED_DCHECK(t.get_id() != std::this_thread::get_id());
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    work_cv_.notify_all();
    for (std::thread& t : threads_)
      t.join();
  }

  void Submit(ReadRequest request) override {
    CountSubmitted();
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(request));
    }
    work_cv_.notify_one();
  }

  const char* backend_name() const override { return "pread pool"; }

 private:
  void Work() {
    std::unique_lock lock(mu_);
    while (true) {
      work_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty())
        return;  // stopping, nothing left (callbacks below may queue more: checked first)
      ReadRequest request = std::move(queue_.front());
      queue_.pop_front();
      const bool cancel = stopping_;
      lock.unlock();
      if (cancel)
        Complete(request, ClosedBeforeReadError(request));
      else
        Read(request);
      lock.lock();
    }
  }

  void Read(ReadRequest& request) {
    const std::span<std::byte> out = request.out;
    if (out.empty()) {
      Complete(request, Status::Ok());
      return;
    }
    EnterFlight();
    size_t got = 0;
    Status status;
    while (got < out.size()) {
      const ssize_t n = pread(request.fd, out.data() + got, out.size() - got,
                              static_cast<off_t>(request.offset + got));
      if (n > 0) {
        got += static_cast<size_t>(n);
      } else if (n == 0) {
        status = ShortReadError(request, got);
        break;
      } else if (errno != EINTR) {
        status = ReadErrnoError(request, got, errno);
        break;
      }
    }
    CountBytes(got);
    LeaveFlight();
    Complete(request, std::move(status));
  }

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::deque<ReadRequest> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;  // last: started after everything they use exists
};

}  // namespace

std::unique_ptr<IoEngine> CreatePreadPoolIoEngine(int depth) {
  return std::make_unique<PreadPoolEngine>(std::clamp(depth, 1, IoEngine::kMaxPreadThreads));
}

}  // namespace patchfeed::storage
