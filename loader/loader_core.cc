// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/loader_core.h"

#include <cassert>
#include <utility>

namespace patchfeed::loader::internal_loader {
namespace {

using Clock = std::chrono::steady_clock;

int64_t Nanos(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
}

}  // namespace

LoaderCore::LoaderCore(CoreParts parts, std::unique_ptr<tbb::task_arena> arena,
                       std::unique_ptr<tbb::global_control> thread_limit)
    : parts_(std::move(parts)),
      thread_limit_(std::move(thread_limit)),
      arena_(std::move(arena)),
      slots_(static_cast<size_t>(parts_.ring.num_slots())) {
  batches_per_epoch_ = parts_.sampler->batches_per_epoch();
  if (parts_.foreground) {
    const ForegroundStore* store = parts_.foreground.get();
    voxel_fn_ = [store](int64_t case_index, int64_t key, int64_t voxel) {
      return store->Voxel(case_index, key, voxel);
    };
  }
  sched_epoch_ = next_epoch_ = parts_.config.start_epoch;
  sched_batch_ = next_batch_ = parts_.config.start_batch;
  counters_.slots_free.store(static_cast<int>(slots_.size()), std::memory_order_relaxed);
}

LoaderCore::~LoaderCore() { Shutdown(); }

void LoaderCore::Start() {
  std::lock_guard lock(mu_);
  started_ = true;
  ScheduleLocked();
}

void LoaderCore::Shutdown() {
  {
    std::lock_guard lock(mu_);
    if (shut_down_) {
      return;
    }
    stopping_ = true;
    for (Slot& s : slots_) {
      if (s.reads != nullptr) {
        s.reads->cancel();
      }
    }
  }
  cv_.notify_all();
  // Producers not started yet are skipped; running ones see their reads cancelled (the read
  // groups are bound to this group's context) and return at once.
  producers_.cancel();
  arena_->execute([this] { producers_.wait(); });
  TsanAcquire(&producers_done_);
  arena_->terminate();
  std::lock_guard lock(mu_);
  shut_down_ = true;
  thread_limit_.reset();
}

void LoaderCore::SetState(Slot& slot, SlotState state) {
  auto counter = [this](SlotState s) -> std::atomic<int>& {
    switch (s) {
      case SlotState::kFree:
        return counters_.slots_free;
      case SlotState::kProducing:
        return counters_.slots_producing;
      case SlotState::kReady:
        return counters_.slots_ready;
      case SlotState::kLeased:
        break;
    }
    return counters_.slots_leased;
  };
  counter(slot.state).fetch_sub(1, std::memory_order_relaxed);
  counter(state).fetch_add(1, std::memory_order_relaxed);
  producing_ += (state == SlotState::kProducing) - (slot.state == SlotState::kProducing);
  slot.state = state;
  // Producers idle: no slot is being produced because every one is ready or leased.
  if (producing_ == 0 && !stopping_) {
    if (!idle_since_) {
      idle_since_ = Clock::now();
    }
  } else if (idle_since_) {
    MetricsCounters::Add(counters_.producer_wait_ns, Nanos(Clock::now() - *idle_since_));
    idle_since_.reset();
  }
}

void LoaderCore::FreeLocked(Slot& slot) {
  SetState(slot, SlotState::kFree);
  slot.reads = nullptr;
}

void LoaderCore::ScheduleLocked() {
  if (!started_ || stopping_) {
    return;
  }
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (s.state != SlotState::kFree) {
      continue;
    }
    if (batches_per_epoch_ >= 0 && sched_batch_ >= batches_per_epoch_) {
      ++sched_epoch_;
      sched_batch_ = 0;
    }
    s.epoch = sched_epoch_;
    s.batch = sched_batch_++;
    s.generation = generation_;
    s.status = Status::Ok();
    SetState(s, SlotState::kProducing);
    s.claimed = false;
    const int slot = static_cast<int>(i);
    EnqueueTask(*arena_, producers_, &producers_done_, [this, slot] {
      bool mine;
      {
        std::lock_guard task_lock(mu_);
        mine = ClaimLocked(slot, /*on_consumer=*/false);
      }
      if (mine) {
        ProduceBatch(slot);
      }
    });
  }
}

bool LoaderCore::ClaimLocked(int index, bool on_consumer) {
  Slot& s = slots_[static_cast<size_t>(index)];
  if (s.state != SlotState::kProducing || s.claimed) {
    return false;  // already produced or being produced (by Next() or a task of this slot)
  }
  s.claimed = true;
  s.on_consumer = on_consumer;
  return true;
}

int LoaderCore::FindSlotLocked(int64_t epoch, int64_t batch) const {
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if ((s.state == SlotState::kProducing || s.state == SlotState::kReady) &&
        s.generation == generation_ && s.epoch == epoch && s.batch == batch) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

Result<Lease> LoaderCore::Next() {
  std::unique_lock lock(mu_);
  if (stopping_) {
    return CancelledError("the loader is shutting down");
  }
  if (batches_per_epoch_ >= 0 && next_batch_ >= batches_per_epoch_) {
    const int64_t epoch = next_epoch_++;
    next_batch_ = 0;
    return Lease::EndOfEpoch(epoch);
  }
  const auto start = Clock::now();
  int index = -1;
  while (true) {
    index = FindSlotLocked(next_epoch_, next_batch_);
    if (index >= 0 && slots_[static_cast<size_t>(index)].state == SlotState::kReady) {
      break;
    }
    if (index < 0) {
      int leased = 0;
      for (const Slot& s : slots_) {
        leased += s.state == SlotState::kLeased;
      }
      if (leased == static_cast<int>(slots_.size())) {
        return ResourceExhaustedError(
            "Next(): the consumer holds all " + std::to_string(leased) +
            " ring slots; release a lease first (or configure more slots)");
      }
    }
    if (index >= 0 && parts_.config.consumer_produces && ClaimLocked(index, /*on_consumer=*/true)) {
      // No worker has started the batch this call waits for: read it here, all inline, rather
      // than pay a worker's wake-up and a condition-variable hand-off (the one-batch latency).
      lock.unlock();
      arena_->execute([this, index] { ProduceBatch(index); });
      lock.lock();
      if (stopping_) {
        return CancelledError("the loader is shutting down");
      }
      continue;
    }
    cv_.wait(lock);
    if (stopping_) {
      return CancelledError("the loader is shutting down");
    }
  }
  MetricsCounters::Add(counters_.consumer_wait_ns, Nanos(Clock::now() - start));
  Slot& slot = slots_[static_cast<size_t>(index)];
  ++next_batch_;
  if (!slot.status.ok()) {
    Status error = slot.status;
    FreeLocked(slot);
    ScheduleLocked();
    counters_.batches_failed.fetch_add(1, std::memory_order_relaxed);
    return error;
  }
  SetState(slot, SlotState::kLeased);
  MetricsCounters::Add(counters_.batches_delivered, 1);
  MetricsCounters::Add(counters_.samples_delivered, static_cast<int64_t>(slot.specs.size()));
  MetricsCounters::Add(counters_.bytes_delivered, parts_.ring.slot_bytes());
  return Lease(shared_from_this(), index, slot.epoch, slot.batch);
}

Status LoaderCore::Seek(int64_t epoch, int64_t batch_index) {
  if (epoch < 0 || batch_index < 0 ||
      (batches_per_epoch_ >= 0 && batch_index > batches_per_epoch_)) {
    return InvalidArgumentError("Seek(" + std::to_string(epoch) + ", " +
                                std::to_string(batch_index) + "): outside the epoch of " +
                                std::to_string(batches_per_epoch_) + " batches");
  }
  std::lock_guard lock(mu_);
  if (stopping_) {
    return CancelledError("the loader is shutting down");
  }
  ++generation_;
  for (Slot& s : slots_) {
    if (s.state == SlotState::kReady) {
      FreeLocked(s);
    }
    // Producing slots of the old generation free themselves when their producer returns.
    if (s.state == SlotState::kProducing && s.reads != nullptr) {
      s.reads->cancel();
    }
  }
  sched_epoch_ = next_epoch_ = epoch;
  sched_batch_ = next_batch_ = batch_index;
  ScheduleLocked();
  return Status::Ok();
}

void LoaderCore::Release(int slot) {
  std::lock_guard lock(mu_);
  Slot& s = slots_[static_cast<size_t>(slot)];
  assert(s.state == SlotState::kLeased);
  FreeLocked(s);
  ScheduleLocked();
}

LoaderState LoaderCore::state() const {
  std::lock_guard lock(mu_);
  LoaderState st;
  st.seed = parts_.config.sampler.seed;
  st.rank = parts_.config.sampler.rank;
  st.world_size = parts_.config.sampler.world_size;
  st.epoch = next_epoch_;
  st.next_batch = next_batch_;
  return st;
}

LoaderMetrics LoaderCore::metrics() const {
  LoaderMetrics m = counters_.Snapshot(static_cast<int>(slots_.size()));
  m.files_opened = parts_.files->opens();
  m.files_open = parts_.files->size();
  return m;
}

}  // namespace patchfeed::loader::internal_loader
