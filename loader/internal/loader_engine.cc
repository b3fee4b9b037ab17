// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/loader_engine.h"

#include <utility>

#include <oneapi/tbb/info.h>

#include "common/str_cat.h"

namespace patchfeed::loader::internal_loader {

Result<std::shared_ptr<LoaderEngine>> LoaderEngine::Create(LoaderConfig config) {
  const int num_threads =
      config.num_threads > 0 ? config.num_threads : tbb::info::default_concurrency();
  // num_threads workers plus one slot for an outside thread (Create's probe, the consumer
  // producing inline, Close's wait). TBB caps its workers at the core count minus one unless
  // told otherwise.
  std::unique_ptr<tbb::global_control> thread_limit;
  if (tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism) <
      static_cast<size_t>(num_threads) + 1) {
    thread_limit = std::make_unique<tbb::global_control>(
        tbb::global_control::max_allowed_parallelism, static_cast<size_t>(num_threads) + 1);
  }
  auto arena = std::make_unique<tbb::task_arena>(num_threads + 1, 1);
  arena->initialize();
  PATCHFEED_ASSIGN_OR_RETURN(LoaderParts parts,
                             PrepareLoader(std::move(config), num_threads, *arena));
  std::shared_ptr<LoaderEngine> engine(
      new LoaderEngine(std::move(parts), std::move(arena), std::move(thread_limit)));
  engine->scheduler_.Start(engine.get());
  return engine;
}

LoaderEngine::LoaderEngine(LoaderParts parts, std::unique_ptr<tbb::task_arena> arena,
                           std::unique_ptr<tbb::global_control> thread_limit)
    : thread_limit_(std::move(thread_limit)),
      arena_(std::move(arena)),
      parts_(std::move(parts)),
      scheduler_(parts_.ring.ring_size(), parts_.sampler->batches_per_epoch(),
                 BatchId{parts_.config.start_epoch, parts_.config.start_batch},
                 parts_.config.consumer_produces, &counters_),
      producer_(parts_, &scheduler_, &counters_) {}

LoaderEngine::~LoaderEngine() { Close(); }

void LoaderEngine::Close() {
  std::call_once(closed_, [this] {
    scheduler_.Stop();  // wakes a waiting NextFor, cancels every batch's reads
    // Producers not started yet are skipped; running ones see their reads cancelled (the read
    // groups are bound to this group's context) and return at once.
    producers_.cancel();
    { std::lock_guard consumer(consumer_mu_); }  // a batch being produced by the consumer
    arena_->execute([this] { producers_.wait(); });
    TsanAcquire(&producers_done_);
    arena_->terminate();
    thread_limit_.reset();
  });
}

void LoaderEngine::Enqueue(int slot) {
  EnqueueTask(*arena_, producers_, &producers_done_, [this, slot] {
    if (scheduler_.Claim(slot, Producer::kWorker)) {
      producer_.Produce(slot, Producer::kWorker);
    }
  });
}

void LoaderEngine::ProduceHere(int slot) {
  arena_->execute([this, slot] { producer_.Produce(slot, Producer::kConsumer); });
}

Result<std::optional<Lease>> LoaderEngine::NextFor(
    std::optional<SlotScheduler::Clock::time_point> deadline) {
  std::lock_guard consumer(consumer_mu_);
  PATCHFEED_ASSIGN_OR_RETURN(std::optional<SlotScheduler::Delivery> delivery,
                             scheduler_.NextFor(deadline));
  if (!delivery) {
    return std::optional<Lease>();
  }
  if (delivery->slot < 0) {
    return std::optional<Lease>(Lease::EndOfEpoch(delivery->batch.epoch));
  }
  MetricsCounters::Add(counters_.batches_delivered, 1);
  MetricsCounters::Add(counters_.samples_delivered,
                       static_cast<int64_t>(producer_.samples(delivery->slot).size()));
  MetricsCounters::Add(counters_.bytes_delivered, parts_.ring.slot_bytes());
  return std::optional<Lease>(
      Lease(shared_from_this(), delivery->slot, delivery->batch.epoch, delivery->batch.batch));
}

Status LoaderEngine::Seek(int64_t epoch, int64_t batch_index) {
  if (epoch < 0) {
    return InvalidArgumentError(StrCat("loader: epoch must be >= 0 (got ", epoch, ")"));
  }
  if (batch_index < 0) {
    return InvalidArgumentError(StrCat("loader: batch index must be >= 0 (got ", batch_index, ")"));
  }
  const int64_t per_epoch = parts_.sampler->batches_per_epoch();
  if (per_epoch >= 0 && batch_index > per_epoch) {
    return InvalidArgumentError(
        StrCat("loader: batch index ", batch_index, " is past the end of the epoch (", per_epoch,
               per_epoch == 1 ? " batch" : " batches", "); give 0 to ", per_epoch));
  }
  return scheduler_.Seek({epoch, batch_index});
}

LoaderState LoaderEngine::state() const {
  const BatchId next = scheduler_.position();
  LoaderState st;
  st.seed = parts_.config.sampler.seed;
  st.rank = parts_.config.sampler.rank;
  st.world_size = parts_.config.sampler.world_size;
  st.epoch = next.epoch;
  st.next_batch = next.batch;
  return st;
}

LoaderMetrics LoaderEngine::metrics() const {
  LoaderMetrics m = counters_.Snapshot(parts_.ring.ring_size());
  m.cases_excluded = static_cast<int64_t>(parts_.excluded.size());
  m.files_opened = parts_.files->opens();
  m.files_open = parts_.files->size();
  if (parts_.io != nullptr) {
    m.io_backend = parts_.io->backend_name();
    m.io_depth = parts_.io->depth();
    m.io_max_in_flight = parts_.io->stats().max_in_flight;
  }
  if (const storage::Store& store = *parts_.config.dataset.store(); store.remote()) {
    const storage::StoreStats s = store.stats();
    m.io_backend = s.engine;
    m.io_depth = s.depth;
    m.io_max_in_flight = s.max_in_flight;
    m.io_retries = s.retries;
    m.io_errors = s.errors;
  }
  return m;
}

}  // namespace patchfeed::loader::internal_loader
