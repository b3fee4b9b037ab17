// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// The public face of the loader: Loader and Lease over the shared LoaderEngine
// (loader/internal/loader_engine.h), which does the work.

#include "loader/loader.h"

#include <utility>

#include "loader/internal/loader_engine.h"

namespace patchfeed::loader {

using internal_loader::LoaderEngine;

void LoaderConfig::ResumeFrom(const LoaderState& s) {
  sampler.seed = s.seed;
  sampler.rank = s.rank;
  sampler.world_size = s.world_size;
  start_epoch = s.epoch;
  start_batch = s.next_batch;
}

Result<std::unique_ptr<Loader>> Loader::Create(LoaderConfig config) {
  PATCHFEED_ASSIGN_OR_RETURN(std::shared_ptr<LoaderEngine> engine,
                             LoaderEngine::Create(std::move(config)));
  return std::unique_ptr<Loader>(new Loader(std::move(engine)));
}

Loader::Loader(std::shared_ptr<LoaderEngine> engine) : engine_(std::move(engine)) {}

Loader::~Loader() { engine_->Close(); }

Result<Lease> Loader::Next() {
  PATCHFEED_ASSIGN_OR_RETURN(std::optional<Lease> lease, engine_->NextFor(std::nullopt));
  return std::move(*lease);
}

Result<std::optional<Lease>> Loader::NextFor(std::chrono::nanoseconds timeout) {
  return engine_->NextFor(std::chrono::steady_clock::now() + timeout);
}

void Loader::Close() { engine_->Close(); }
Status Loader::SetEpoch(int64_t epoch) { return engine_->Seek(epoch, 0); }
Status Loader::Seek(int64_t epoch, int64_t batch_index) {
  return engine_->Seek(epoch, batch_index);
}
LoaderState Loader::state() const { return engine_->state(); }
int64_t Loader::batches_per_epoch() const { return engine_->parts().sampler->batches_per_epoch(); }
int64_t Loader::local_batch_size() const { return engine_->parts().sampler->local_batch_size(); }
int64_t Loader::num_cases() const {
  return engine_->parts().config.dataset.num_cases() -
         static_cast<int64_t>(engine_->parts().excluded.size());
}
const std::vector<ExcludedCase>& Loader::excluded_cases() const {
  return engine_->parts().excluded;
}
int Loader::num_threads() const { return engine_->parts().num_threads; }
bool Loader::pinned() const { return engine_->parts().ring.pinned(); }
std::string Loader::unpinned_reason() const { return engine_->parts().ring.unpinned_reason(); }
LoaderMetrics Loader::metrics() const { return engine_->metrics(); }
const Sampler& Loader::sampler() const { return *engine_->parts().sampler; }

std::vector<ArrayView> Loader::array_layout() const {
  std::vector<ArrayView> views = engine_->parts().ring.views(0);
  for (ArrayView& v : views) {
    v.data = nullptr;
  }
  return views;
}

Lease::Lease(std::shared_ptr<LoaderEngine> engine, int slot, int64_t epoch, int64_t batch_index)
    : engine_(std::move(engine)), slot_(slot), epoch_(epoch), batch_index_(batch_index) {}

Lease Lease::EndOfEpoch(int64_t epoch) {
  Lease lease;
  lease.end_of_epoch_ = true;
  lease.epoch_ = epoch;
  return lease;
}

Lease::Lease(Lease&& other) noexcept
    : engine_(std::move(other.engine_)),
      slot_(std::exchange(other.slot_, -1)),
      end_of_epoch_(other.end_of_epoch_),
      epoch_(other.epoch_),
      batch_index_(other.batch_index_) {}

Lease& Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Release();
    engine_ = std::move(other.engine_);
    slot_ = std::exchange(other.slot_, -1);
    end_of_epoch_ = other.end_of_epoch_;
    epoch_ = other.epoch_;
    batch_index_ = other.batch_index_;
  }
  return *this;
}

Lease::~Lease() { Release(); }

void Lease::Release() {
  if (slot_ >= 0) {
    engine_->Release(slot_);
  }
  slot_ = -1;
  engine_.reset();
}

const std::vector<SampleSpec>& Lease::samples() const {
  static const std::vector<SampleSpec> kNone;
  return slot_ >= 0 ? engine_->samples(slot_) : kNone;
}

std::span<const ArrayView> Lease::arrays() const {
  if (slot_ < 0) {
    return {};
  }
  return engine_->parts().ring.views(slot_);
}

const ArrayView* Lease::array(std::string_view name) const {
  for (const ArrayView& v : arrays()) {
    if (v.name == name) {
      return &v;
    }
  }
  return nullptr;
}

bool Lease::pinned() const { return slot_ >= 0 && engine_->parts().ring.pinned(); }

}  // namespace patchfeed::loader
