// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/sampler.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <numeric>
#include <string>
#include <utility>

#include "common/random.h"
#include "common/str_cat.h"

namespace patchfeed::loader {
namespace internal_loader {

/// The permutation of the cases for one (epoch, pass). Computing one is O(cases) and every
/// batch of the epoch needs it, so the few most recent are kept. Two threads missing at once
/// both compute the same permutation (it is a pure function); the lock only guards the list.
class PermutationCache {
 public:
  using Permutation = std::shared_ptr<const std::vector<int64_t>>;

  Permutation Get(uint64_t seed, int64_t epoch, int64_t pass, int64_t num_cases) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const Entry& e : entries_) {
        if (e.perm != nullptr && e.epoch == epoch && e.pass == pass) {
          return e.perm;
        }
      }
    }
    // Fisher-Yates: exactly uniform given uniform draws. `batch` carries the pass; the stream
    // id keeps these draws apart from the per-batch ones.
    auto perm = std::make_shared<std::vector<int64_t>>(num_cases);
    std::iota(perm->begin(), perm->end(), int64_t{0});
    CounterRng rng(StreamId{.seed = seed, .epoch = epoch, .batch = pass, .stream = 6});
    for (int64_t i = num_cases - 1; i > 0; --i) {
      std::swap((*perm)[i], (*perm)[rng.UniformInt(0, i)]);
    }
    std::lock_guard<std::mutex> lock(mu_);
    entries_[next_] = Entry{epoch, pass, perm};
    next_ = (next_ + 1) % entries_.size();
    return perm;
  }

 private:
  struct Entry {
    int64_t epoch = 0;
    int64_t pass = 0;
    Permutation perm;
  };
  std::mutex mu_;
  std::array<Entry, 4> entries_;  // epochs' last and next passes, for a few threads' batches
  size_t next_ = 0;
};

}  // namespace internal_loader

namespace {

// Stream ids: one per kind of draw of a sample, so changing how one kind draws (e.g. more
// axes) never shifts another kind's numbers. 6 is the permutation stream above.
enum StreamKind : uint32_t {
  kCaseStream = 1,
  kForcedStream = 2,
  kBoxStream = 3,
  kClassStream = 4,
  kVoxelStream = 5,
};

std::string Str(int64_t v) { return std::to_string(v); }

}  // namespace

int64_t FirstForcedPosition(int64_t batch_size, double oversample) {
  // Python's round(): nearest, ties to even. x - floor(x) is exact for |x| < 2^52, so the tie
  // test is exact, and no floating-point rounding mode is involved.
  const double x = static_cast<double>(batch_size) * (1.0 - oversample);
  const double f = std::floor(x);
  const double frac = x - f;
  auto r = static_cast<int64_t>(f);
  if (frac > 0.5 || (frac == 0.5 && r % 2 != 0)) {
    ++r;
  }
  return r;
}

std::vector<int64_t> SplitGlobalBatch(int64_t global_batch, int world_size) {
  std::vector<int64_t> sizes(world_size, global_batch / world_size);
  for (int r = 0; r < world_size; ++r) {
    if (sizes[r] * world_size + r < global_batch) {
      ++sizes[r];
    }
  }
  return sizes;
}

CornerBounds RandomCornerBounds(std::span<const int64_t> shape, std::span<const int64_t> patch,
                                std::span<const int64_t> need_to_pad) {
  CornerBounds b;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t n = need_to_pad.empty() ? 0 : need_to_pad[d];
    if (n + shape[d] < patch[d]) {
      n = patch[d] - shape[d];  // pad small images on both sides
    }
    const int64_t half_up = n / 2 + n % 2;  // n >= 0: ceil(n / 2) == -((-n) // 2)
    b.lb.push_back(-half_up);
    b.ub.push_back(shape[d] + half_up - patch[d]);
  }
  return b;
}

Status ValidateSamplerConfig(const SamplerConfig& config) {
  const size_t ndim = config.patch_size.size();
  if (ndim == 0) {
    return InvalidArgumentError("sampler: patch_size is empty; give one size per spatial axis");
  }
  for (size_t d = 0; d < ndim; ++d) {
    if (config.patch_size[d] <= 0) {
      return InvalidArgumentError("sampler: patch_size must be at least 1 on every axis (got " +
                                  Str(config.patch_size[d]) + " on axis " +
                                  Str(static_cast<int64_t>(d)) + ")");
    }
  }
  if (!config.need_to_pad.empty() && config.need_to_pad.size() != ndim) {
    return InvalidArgumentError(
        "sampler: need_to_pad has " + Str(static_cast<int64_t>(config.need_to_pad.size())) +
        " entries for a patch_size of " + Str(static_cast<int64_t>(ndim)) + "; give one per axis");
  }
  for (const int64_t n : config.need_to_pad) {
    if (n < 0) {
      return InvalidArgumentError("sampler: need_to_pad must be >= 0 on every axis (got " + Str(n) +
                                  ")");
    }
  }
  if (config.world_size < 1) {
    return InvalidArgumentError("sampler: world_size must be at least 1 (got " +
                                Str(config.world_size) + ")");
  }
  if (config.rank < 0 || config.rank >= config.world_size) {
    return InvalidArgumentError("sampler: rank must be in [0, world_size) (got rank " +
                                Str(config.rank) + ", world_size " + Str(config.world_size) + ")");
  }
  if (config.batch_size < 1) {
    return InvalidArgumentError("sampler: batch_size must be at least 1 (got " +
                                Str(config.batch_size) + ")");
  }
  if (config.batch_size < config.world_size) {
    // nnU-Net asserts the same: a rank without samples cannot take part in a DDP step.
    return InvalidArgumentError(
        "sampler: the global batch size " + Str(config.batch_size) +
        " is smaller than the world size " + Str(config.world_size) +
        ": every rank needs a sample; give batch_size >= " + Str(config.world_size));
  }
  if (!(config.oversample_foreground >= 0.0 && config.oversample_foreground <= 1.0)) {
    return InvalidArgumentError("sampler: oversample_foreground must lie in [0, 1] (got " +
                                StrCat(config.oversample_foreground) + ")");
  }
  if (config.samples_per_epoch < 0) {
    return InvalidArgumentError("sampler: samples_per_epoch must be at least 0 (got " +
                                Str(config.samples_per_epoch) + "; 0: the number of cases)");
  }
  if (config.annotated_key < -1) {
    return InvalidArgumentError("sampler: annotated_key must be a key index or -1 for none (got " +
                                Str(config.annotated_key) + ")");
  }
  if (!config.case_weights.empty() && config.epoch_mode == EpochMode::kFiniteWithoutReplacement) {
    return InvalidArgumentError(
        "sampler: case_weights need epoch_mode \"infinite\" or \"with_replacement\" (without "
        "replacement every case is drawn equally often)");
  }
  return Status::Ok();
}

Result<Sampler> Sampler::Create(SamplerConfig config, std::vector<CaseInfo> cases) {
  PATCHFEED_RETURN_IF_ERROR(ValidateSamplerConfig(config));
  const size_t ndim = config.patch_size.size();
  if (config.need_to_pad.empty()) {
    config.need_to_pad.assign(ndim, 0);
  }
  if (cases.empty()) {
    return InvalidArgumentError("sampler: no cases");
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    const CaseInfo& c = cases[i];
    if (c.spatial_shape.size() != ndim ||
        std::any_of(c.spatial_shape.begin(), c.spatial_shape.end(),
                    [](int64_t s) { return s <= 0; })) {
      return InvalidArgumentError("sampler: case " + Str(static_cast<int64_t>(i)) + " needs " +
                                  Str(static_cast<int64_t>(ndim)) + " positive spatial sizes");
    }
    if (std::any_of(c.foreground_counts.begin(), c.foreground_counts.end(),
                    [](int64_t n) { return n < 0; })) {
      return InvalidArgumentError("sampler: case " + Str(static_cast<int64_t>(i)) +
                                  " has a negative foreground count");
    }
  }

  Sampler s;
  if (!config.case_weights.empty()) {
    if (config.case_weights.size() != cases.size()) {
      return InvalidArgumentError(
          "sampler: case_weights has " + Str(static_cast<int64_t>(config.case_weights.size())) +
          " weights for " + Str(static_cast<int64_t>(cases.size())) + " cases; give one per case");
    }
    double total = 0;
    for (const double w : config.case_weights) {
      if (!std::isfinite(w) || w < 0) {
        return InvalidArgumentError("sampler: case weights must be finite and >= 0");
      }
      total += w;
      s.cumulative_weights_.push_back(total);
    }
    if (!(total > 0) || !std::isfinite(total)) {
      return InvalidArgumentError("sampler: case weights must have a positive finite sum");
    }
  }
  const std::vector<int64_t> sizes = SplitGlobalBatch(config.batch_size, config.world_size);
  s.local_batch_size_ = sizes[config.rank];
  s.rank_offset_ = std::accumulate(sizes.begin(), sizes.begin() + config.rank, int64_t{0});
  s.first_forced_ = FirstForcedPosition(config.batch_size, config.oversample_foreground);
  s.config_ = std::move(config);
  s.cases_ = std::move(cases);
  s.permutations_ = std::make_shared<internal_loader::PermutationCache>();
  return s;
}

int64_t Sampler::batches_per_epoch() const {
  if (config_.epoch_mode == EpochMode::kInfinite) {
    return -1;
  }
  const int64_t samples = config_.samples_per_epoch > 0 ? config_.samples_per_epoch
                                                        : static_cast<int64_t>(cases_.size());
  return (samples + config_.batch_size - 1) / config_.batch_size;
}

int64_t Sampler::DrawCase(int64_t epoch, int64_t batch_index, int64_t position) const {
  const auto num_cases = static_cast<int64_t>(cases_.size());
  if (config_.epoch_mode == EpochMode::kFiniteWithoutReplacement) {
    // The epoch's sequence is pass 0's permutation, then pass 1's, ...: each case appears
    // floor or ceil(samples / cases) times, never twice more than another.
    const int64_t i = batch_index * config_.batch_size + position;
    const auto perm = permutations_->Get(config_.seed, epoch, i / num_cases, num_cases);
    return (*perm)[i % num_cases];
  }
  CounterRng rng(StreamId{.seed = config_.seed,
                          .epoch = epoch,
                          .batch = batch_index,
                          .position = static_cast<uint32_t>(position),
                          .stream = kCaseStream});
  if (cumulative_weights_.empty()) {
    return rng.UniformInt(0, num_cases - 1);
  }
  // Inverse CDF by binary search: the first case whose cumulative weight exceeds u. Zero-weight
  // cases have no interval of their own and are never chosen.
  const double u = rng.UniformDouble() * cumulative_weights_.back();
  auto it = std::upper_bound(cumulative_weights_.begin(), cumulative_weights_.end(), u);
  if (it == cumulative_weights_.end()) {  // u rounded up to the total: the last weighted case
    it = std::lower_bound(cumulative_weights_.begin(), cumulative_weights_.end(),
                          cumulative_weights_.back());
  }
  return it - cumulative_weights_.begin();
}

bool Sampler::IsForced(int64_t epoch, int64_t batch_index, int64_t position) const {
  if (!config_.probabilistic_oversampling) {
    // "Last XX percent" on the global batch. nnU-Net's DDP trainer gives each rank an
    // oversample fraction chosen to force exactly these positions; using them directly is
    // the same set (checked against its rule in the tests) without the per-rank detour.
    return position >= first_forced_;
  }
  CounterRng rng(StreamId{.seed = config_.seed,
                          .epoch = epoch,
                          .batch = batch_index,
                          .position = static_cast<uint32_t>(position),
                          .stream = kForcedStream});
  return rng.UniformDouble() < config_.oversample_foreground;
}

int64_t Sampler::ChooseForegroundKey(const CaseInfo& c, int64_t epoch, int64_t batch_index,
                                     int64_t position) const {
  std::vector<int64_t> eligible;
  for (size_t k = 0; k < c.foreground_counts.size(); ++k) {
    if (c.foreground_counts[k] > 0) {
      eligible.push_back(static_cast<int64_t>(k));
    }
  }
  // The annotated key covers background too; it only serves when no real class is present.
  if (eligible.size() > 1) {
    std::erase(eligible, config_.annotated_key);
  }
  if (eligible.empty()) {
    return -1;
  }
  CounterRng rng(StreamId{.seed = config_.seed,
                          .epoch = epoch,
                          .batch = batch_index,
                          .position = static_cast<uint32_t>(position),
                          .stream = kClassStream});
  // Uniform over keys, not weighted by voxel count: rare classes get as many patches.
  return eligible[rng.UniformInt(0, static_cast<int64_t>(eligible.size()) - 1)];
}

Status Sampler::ChooseBox(int64_t epoch, int64_t batch_index, int64_t position, const CaseInfo& c,
                          const ForegroundVoxelFn& voxel_fn, SampleSpec& spec) const {
  const std::vector<int64_t>& patch = config_.patch_size;
  const CornerBounds bounds = RandomCornerBounds(c.spatial_shape, patch, config_.need_to_pad);
  const auto count_of = [&c](int64_t key) {
    return key >= 0 && key < static_cast<int64_t>(c.foreground_counts.size())
               ? c.foreground_counts[key]
               : 0;
  };
  int64_t key = -1;
  if (spec.forced_foreground) {
    key = ChooseForegroundKey(c, epoch, batch_index, position);
  } else if (count_of(config_.annotated_key) > 0) {
    key = config_.annotated_key;  // ignore label: stay on annotated voxels
  }
  const size_t ndim = patch.size();
  spec.box_start.assign(ndim, 0);
  spec.foreground_class = key;
  if (key < 0) {
    // nnU-Net's random rule, also its fallback for a case without foreground.
    CounterRng rng(StreamId{.seed = config_.seed,
                            .epoch = epoch,
                            .batch = batch_index,
                            .position = static_cast<uint32_t>(position),
                            .stream = kBoxStream});
    for (size_t d = 0; d < ndim; ++d) {
      spec.box_start[d] = rng.UniformInt(bounds.lb[d], bounds.ub[d]);
    }
    return Status::Ok();
  }
  CounterRng rng(StreamId{.seed = config_.seed,
                          .epoch = epoch,
                          .batch = batch_index,
                          .position = static_cast<uint32_t>(position),
                          .stream = kVoxelStream});
  const int64_t voxel = rng.UniformInt(0, count_of(key) - 1);
  const std::string where =
      "case " + Str(spec.case_index) + ", class key " + Str(key) + ", stored voxel " + Str(voxel);
  if (!voxel_fn) {
    return InvalidArgumentError(where + ": no foreground voxel function given");
  }
  Result<std::vector<int64_t>> v = voxel_fn(spec.case_index, key, voxel);
  if (!v.ok()) {
    return v.status().WithContext(where);
  }
  if (v->size() != ndim) {
    return InvalidArgumentError(where + ": voxel has " + Str(static_cast<int64_t>(v->size())) +
                                " coordinates, want " + Str(static_cast<int64_t>(ndim)));
  }
  for (size_t d = 0; d < ndim; ++d) {
    if ((*v)[d] < 0 || (*v)[d] >= c.spatial_shape[d]) {
      return DataLossError(where + " lies outside the case on axis " +
                           Str(static_cast<int64_t>(d)));
    }
    // Centred on the voxel; only the lower clamp, as nnU-Net (a box near the upper border
    // may reach further out than a random one).
    spec.box_start[d] = std::max(bounds.lb[d], (*v)[d] - patch[d] / 2);
  }
  return Status::Ok();
}

Result<std::vector<SampleSpec>> Sampler::Batch(int64_t epoch, int64_t batch_index,
                                               const ForegroundVoxelFn& voxel_fn) const {
  if (epoch < 0 || batch_index < 0) {
    return InvalidArgumentError("sampler: epoch and batch index must be >= 0");
  }
  const int64_t per_epoch = batches_per_epoch();
  if (per_epoch >= 0 && batch_index >= per_epoch) {
    return InvalidArgumentError("sampler: batch " + Str(batch_index) + " is past the end of an " +
                                Str(per_epoch) + "-batch epoch");
  }
  std::vector<SampleSpec> batch(local_batch_size_);
  for (int64_t j = 0; j < local_batch_size_; ++j) {
    // Draws are keyed by the global position, so a global batch is the same for any world
    // size and ranks cannot overlap.
    const int64_t g = rank_offset_ + j;
    SampleSpec& spec = batch[j];
    const CaseInfo& c = cases_[DrawCase(epoch, batch_index, g)];
    spec.case_index = c.dataset_index >= 0 ? c.dataset_index : &c - cases_.data();
    spec.forced_foreground = IsForced(epoch, batch_index, g);
    if (Status s = ChooseBox(epoch, batch_index, g, c, voxel_fn, spec); !s.ok()) {
      return s.WithContext("sampler: epoch " + Str(epoch) + ", batch " + Str(batch_index) +
                           ", sample " + Str(g));
    }
  }
  return batch;
}

}  // namespace patchfeed::loader
