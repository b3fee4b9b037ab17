// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/slot_scheduler.h"

#include <utility>

#include "common/check.h"
#include "common/str_cat.h"

namespace patchfeed::loader::internal_loader {
namespace {

int64_t Nanos(SlotScheduler::Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
}

Status ShuttingDown() { return CancelledError("the loader is shutting down"); }

}  // namespace

SlotScheduler::SlotScheduler(int ring_size, int64_t batches_per_epoch, BatchId start,
                             bool consumer_produces, MetricsCounters* counters)
    : batches_per_epoch_(batches_per_epoch),
      consumer_produces_(consumer_produces),
      counters_(counters),
      slots_(static_cast<size_t>(ring_size)),
      scheduled_(start),
      next_(start) {
  counters_->slots_free.store(ring_size, std::memory_order_relaxed);
}

void SlotScheduler::Start(SlotFiller* filler) {
  std::lock_guard lock(mu_);
  filler_ = filler;
  ScheduleLocked();
}

void SlotScheduler::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (Slot& s : slots_) {
      if (s.reads != nullptr) {
        s.reads->cancel();
      }
    }
    if (idle_since_) {
      MetricsCounters::Add(counters_->producer_wait_ns, Nanos(Clock::now() - *idle_since_));
      idle_since_.reset();
    }
  }
  cv_.notify_all();
}

bool SlotScheduler::stopped() const {
  std::lock_guard lock(mu_);
  return stopping_;
}

void SlotScheduler::SetStateLocked(Slot& slot, SlotState state) {
  auto counter = [this](SlotState s) -> std::atomic<int>& {
    switch (s) {
      case SlotState::kFree:
        return counters_->slots_free;
      case SlotState::kProducing:
        return counters_->slots_producing;
      case SlotState::kReady:
        return counters_->slots_ready;
      case SlotState::kLeased:
        break;
    }
    return counters_->slots_leased;
  };
  counter(slot.state).fetch_sub(1, std::memory_order_relaxed);
  counter(state).fetch_add(1, std::memory_order_relaxed);
  producing_ += (state == SlotState::kProducing) - (slot.state == SlotState::kProducing);
  slot.state = state;
  if (state != SlotState::kProducing) {
    slot.producer = Producer::kNone;
    slot.reads = nullptr;
  }
  // Producers idle: no slot is being produced because every one is ready or leased.
  if (producing_ == 0 && !stopping_) {
    if (!idle_since_) {
      idle_since_ = Clock::now();
    }
  } else if (idle_since_) {
    MetricsCounters::Add(counters_->producer_wait_ns, Nanos(Clock::now() - *idle_since_));
    idle_since_.reset();
  }
}

void SlotScheduler::ScheduleLocked() {
  if (filler_ == nullptr || stopping_) {
    return;
  }
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (s.state != SlotState::kFree) {
      continue;
    }
    if (batches_per_epoch_ >= 0 && scheduled_.batch >= batches_per_epoch_) {
      scheduled_ = {scheduled_.epoch + 1, 0};
    }
    s.batch = scheduled_;
    ++scheduled_.batch;
    s.generation = generation_;
    s.status = Status::Ok();
    SetStateLocked(s, SlotState::kProducing);
    filler_->Enqueue(static_cast<int>(i));
  }
}

int SlotScheduler::FindLocked(BatchId batch) const {
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if ((s.state == SlotState::kProducing || s.state == SlotState::kReady) &&
        s.generation == generation_ && s.batch.epoch == batch.epoch &&
        s.batch.batch == batch.batch) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

Result<std::optional<SlotScheduler::Delivery>> SlotScheduler::NextFor(
    std::optional<Clock::time_point> deadline) {
  std::unique_lock lock(mu_);
  if (stopping_) {
    return ShuttingDown();
  }
  if (batches_per_epoch_ >= 0 && next_.batch >= batches_per_epoch_) {
    const int64_t epoch = next_.epoch;
    next_ = {epoch + 1, 0};
    return std::optional<Delivery>(Delivery{-1, {epoch, batches_per_epoch_}});
  }
  const auto start = Clock::now();
  const auto waited = [&] {
    MetricsCounters::Add(counters_->consumer_wait_ns, Nanos(Clock::now() - start));
  };
  int index = -1;
  while (true) {
    index = FindLocked(next_);
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
            StrCat("Next(): the consumer holds all ", leased,
                   " ring slots; release a lease first (or configure more slots)"));
      }
    }
    Slot* slot = index >= 0 ? &slots_[static_cast<size_t>(index)] : nullptr;
    if (slot != nullptr && consumer_produces_ && slot->producer == Producer::kNone) {
      // No worker has started the batch this call waits for: read it here, all inline, rather
      // than pay a worker's wake-up and a condition-variable hand-off (the one-batch latency).
      slot->producer = Producer::kConsumer;
      lock.unlock();
      filler_->ProduceHere(index);
      lock.lock();
    } else if (!deadline) {
      cv_.wait(lock);
    } else if (cv_.wait_until(lock, *deadline) == std::cv_status::timeout) {
      waited();
      return std::optional<Delivery>();
    }
    if (stopping_) {
      return ShuttingDown();
    }
  }
  waited();
  Slot& slot = slots_[static_cast<size_t>(index)];
  const Delivery delivery{index, slot.batch};
  ++next_.batch;
  if (!slot.status.ok()) {
    Status error = std::move(slot.status);
    SetStateLocked(slot, SlotState::kFree);
    ScheduleLocked();
    counters_->batches_failed.fetch_add(1, std::memory_order_relaxed);
    return error;
  }
  SetStateLocked(slot, SlotState::kLeased);
  return std::optional<Delivery>(delivery);
}

Status SlotScheduler::Seek(BatchId position) {
  std::lock_guard lock(mu_);
  if (stopping_) {
    return ShuttingDown();
  }
  ++generation_;
  for (Slot& s : slots_) {
    if (s.state == SlotState::kReady) {
      SetStateLocked(s, SlotState::kFree);
    } else if (s.state == SlotState::kProducing && s.reads != nullptr) {
      s.reads->cancel();  // the producer sees the drop and Finish frees the slot
    }
  }
  scheduled_ = next_ = position;
  ScheduleLocked();
  return Status::Ok();
}

void SlotScheduler::Release(int index) {
  std::lock_guard lock(mu_);
  Slot& s = slots_[static_cast<size_t>(index)];
  PATCHFEED_DCHECK(s.state == SlotState::kLeased);
  SetStateLocked(s, SlotState::kFree);
  ScheduleLocked();
}

BatchId SlotScheduler::position() const {
  std::lock_guard lock(mu_);
  return next_;
}

bool SlotScheduler::Claim(int index, Producer who) {
  std::lock_guard lock(mu_);
  Slot& s = slots_[static_cast<size_t>(index)];
  if (s.state != SlotState::kProducing || s.producer != Producer::kNone) {
    return false;
  }
  s.producer = who;
  return true;
}

BatchId SlotScheduler::assigned(int index) const {
  std::lock_guard lock(mu_);
  return slots_[static_cast<size_t>(index)].batch;
}

bool SlotScheduler::AttachReads(int index, tbb::task_group* reads) {
  std::lock_guard lock(mu_);
  Slot& s = slots_[static_cast<size_t>(index)];
  s.reads = reads;
  return !DroppedLocked(s);
}

void SlotScheduler::Finish(int index, Status status) {
  {
    std::lock_guard lock(mu_);
    Slot& s = slots_[static_cast<size_t>(index)];
    PATCHFEED_DCHECK(s.state == SlotState::kProducing);
    if (DroppedLocked(s)) {
      SetStateLocked(s, SlotState::kFree);  // dropped by Seek or Stop
      ScheduleLocked();
    } else {
      s.status = std::move(status);
      SetStateLocked(s, SlotState::kReady);
    }
  }
  cv_.notify_all();
}

}  // namespace patchfeed::loader::internal_loader
