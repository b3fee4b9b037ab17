// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_SAMPLER_H_
#define PATCHFEED_LOADER_SAMPLER_H_

/// \file
/// Turns (seed, epoch, batch index, rank) into the samples of one batch: which case, which
/// patch box, forced foreground or not. Pure and deterministic: a batch depends only on those
/// integers and the configuration, never on threads or timing, so any batch can be recomputed
/// alone and the loader's state is a few integers. Thread-safe (const after construction).
///
/// Rules follow nnU-Net v2 (../shared/reference/nnunet-pipeline.md section 2): cases drawn
/// uniformly with replacement (or by weight), the last round(B * (1 - p)) .. B-1 positions of a
/// batch forced to foreground, the box rule of `get_bbox` (random lower corner in [lb, ub], or
/// centred on a stored foreground voxel with only a lower clamp).

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "common/result.h"

namespace patchfeed::loader {

namespace internal_loader {
class PermutationCache;
}  // namespace internal_loader

/// One sample of a batch.
struct SampleSpec {
  int64_t case_index = 0;
  /// Lower corner of the patch in the case's spatial voxel space (may be negative or reach
  /// past the end: the parts outside are padded). The box is [box_start, box_start + patch).
  std::vector<int64_t> box_start;
  bool forced_foreground = false;
  /// The class key whose stored voxel centres the box: chosen for a forced sample, or the
  /// annotated key (SamplerConfig::annotated_key) for the others; -1 when the random rule was
  /// used (not forced, or forced in a case without foreground).
  int64_t foreground_class = -1;

  friend bool operator==(const SampleSpec&, const SampleSpec&) = default;
};

enum class EpochMode : uint8_t {
  kInfinite,                  ///< nnU-Net: every batch draws cases with replacement; no epochs end
  kFiniteWithReplacement,     ///< epochs of `samples_per_epoch` draws with replacement
  kFiniteWithoutReplacement,  ///< each epoch is a permutation of the cases (x repeats)
};

struct SamplerConfig {
  std::vector<int64_t> patch_size;  ///< spatial crop size Q (nnU-Net's initial patch size)
  /// Extra room per axis a random box may cross the border by, in total over both sides
  /// (nnU-Net's need_to_pad = Q - P when augmentation crops to P later; 0 keeps boxes inside
  /// when the case is at least as large as the patch).
  std::vector<int64_t> need_to_pad;
  int64_t batch_size = 2;  ///< global batch size (over all ranks)
  double oversample_foreground = 0.33;
  bool probabilistic_oversampling = false;
  uint64_t seed = 0;
  int rank = 0;
  int world_size = 1;
  EpochMode epoch_mode = EpochMode::kInfinite;
  /// Finite modes; 0 = number of cases. An epoch has ceil(samples_per_epoch / batch_size)
  /// global batches; the last one is filled up with the next draws (without replacement: the
  /// start of the next pass over the cases), so every batch is full and every case is seen.
  int64_t samples_per_epoch = 0;
  /// Relative case probabilities (>= 0, not all 0); empty = uniform. Only with replacement.
  std::vector<double> case_weights;
  /// Key index of nnU-Net's `annotated_classes_key` (-1, 0, ..., K) for datasets with an ignore
  /// label, -1 when there is none. Then every sample is centred on a stored voxel: forced ones
  /// on a voxel of a foreground key, the others on an annotated voxel (section 2.4).
  int64_t annotated_key = -1;
};

/// What the sampler knows of a case: its spatial shape and, for foreground sampling, how many
/// stored foreground voxels each class key has (0 = none). Voxels themselves are fetched
/// lazily through ForegroundVoxelFn, so cases' indexes need not be in memory.
struct CaseInfo {
  std::vector<int64_t> spatial_shape;
  std::vector<int64_t> foreground_counts;  ///< per class key, in key order
  /// The index SampleSpec::case_index and ForegroundVoxelFn give this case (its index in the
  /// dataset when the loader left some cases out); -1: its position in the list.
  int64_t dataset_index = -1;
};

/// Returns stored voxel `voxel` (spatial coordinates) of class key `key` of case `case_index`.
using ForegroundVoxelFn =
    std::function<Result<std::vector<int64_t>>(int64_t case_index, int64_t key, int64_t voxel)>;

/// Python's `round(batch_size * (1 - oversample))` with ties to even, as nnU-Net computes it
/// in binary64 (1 - 0.33 is 0.6699999999999999): the first forced position of a batch.
int64_t FirstForcedPosition(int64_t batch_size, double oversample);

/// nnU-Net's DDP split (`_set_batch_size_and_oversample`): per-rank sizes of a global batch,
/// differing by at most one, lower ranks getting the extra samples. Needs batch >= world_size.
std::vector<int64_t> SplitGlobalBatch(int64_t global_batch, int world_size);

/// `get_bbox`'s range of a random lower corner per axis, [lb, ub] inclusive: lb = -ceil(n/2),
/// ub = S + ceil(n/2) - Q, where n = need_to_pad, raised to Q - S for axes smaller than Q.
struct CornerBounds {
  std::vector<int64_t> lb, ub;
};
CornerBounds RandomCornerBounds(std::span<const int64_t> shape, std::span<const int64_t> patch,
                                std::span<const int64_t> need_to_pad);

/// The checks of `config` that need no cases (sizes, rank, batch size, probabilities), which
/// Sampler::Create makes first: kInvalidArgument naming the option, the value and the fix.
Status ValidateSamplerConfig(const SamplerConfig& config);

class Sampler {
 public:
  static Result<Sampler> Create(SamplerConfig config, std::vector<CaseInfo> cases);

  const SamplerConfig& config() const { return config_; }
  /// This rank's share of the global batch (sizes differ by at most one; lower ranks get more).
  int64_t local_batch_size() const { return local_batch_size_; }
  /// Position in the global batch of this rank's first sample.
  int64_t rank_offset() const { return rank_offset_; }
  /// Batches per epoch for this rank in the finite modes; -1 when infinite.
  int64_t batches_per_epoch() const;

  /// The samples of batch `batch_index` of `epoch` for this rank. `voxel_fn` is called for
  /// forced-foreground samples only (and, with an annotated key, for the others too); it may
  /// be empty otherwise. Every draw is keyed by the sample's position in the global batch, not
  /// by rank, so the ranks' batches together are the world-size-1 batch. kInvalidArgument for
  /// a batch index past the epoch; voxel_fn's errors come back with case, key and voxel added.
  Result<std::vector<SampleSpec>> Batch(int64_t epoch, int64_t batch_index,
                                        const ForegroundVoxelFn& voxel_fn) const;

 private:
  Sampler() = default;
  int64_t DrawCase(int64_t epoch, int64_t batch_index, int64_t position) const;
  bool IsForced(int64_t epoch, int64_t batch_index, int64_t position) const;
  int64_t ChooseForegroundKey(const CaseInfo& c, int64_t epoch, int64_t batch_index,
                              int64_t position) const;
  /// Fills the box of `spec`, drawn from case `c`.
  Status ChooseBox(int64_t epoch, int64_t batch_index, int64_t position, const CaseInfo& c,
                   const ForegroundVoxelFn& voxel_fn, SampleSpec& spec) const;

  SamplerConfig config_;
  std::vector<CaseInfo> cases_;
  std::vector<double> cumulative_weights_;
  int64_t local_batch_size_ = 0;
  int64_t rank_offset_ = 0;
  int64_t first_forced_ = 0;
  /// Permutations of the cases per (epoch, pass), shared by copies; internally locked.
  std::shared_ptr<internal_loader::PermutationCache> permutations_;
};

}  // namespace patchfeed::loader

#endif  // PATCHFEED_LOADER_SAMPLER_H_
