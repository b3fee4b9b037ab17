// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_LOADER_H_
#define PATCHFEED_LOADER_LOADER_H_

/// \file
/// patchfeed's loader: hands a trainer batches of patches sampled across a dataset of `.b2nd`
/// cases, read on all cores straight into a ring of preallocated (pinned, when CUDA is there)
/// batch buffers.
///
/// How a batch is made (docs/architecture.md follows one through every file): when a ring slot
/// is free, the next batch index is assigned to it and a producer task runs in the loader's
/// tbb::task_arena: it asks the Sampler for the batch's SampleSpecs, splits every sample's box
/// of every array at chunk and block boundaries, and reads the pieces as tasks that any worker
/// may steal (small boxes are read inline). Up to K batches are in flight; Next() hands them
/// out in batch-index order through a Lease, and the slot is reused when the lease is released.
///
/// Determinism: a batch's contents depend only on (seed, epoch, batch index, rank) and the
/// configuration, never on the thread count or timing. The loader's position is
/// LoaderState; a loader created from a saved state continues exactly where the saved one
/// stopped.
///
/// Threads: Next, NextFor, SetEpoch, Seek, state and metrics may be called from any thread but
/// are meant for one consumer (concurrent Next calls take turns); Close may be called from any
/// thread, also while another waits in Next. Leases may be released from any thread, before or
/// after the Loader is destroyed (a lease keeps the ring memory alive). Closing or destroying
/// the Loader cancels the batches in flight and waits for its tasks; it never waits for leases.
///
/// Example:
/// \code
///   LoaderConfig config;
///   PATCHFEED_ASSIGN_OR_RETURN(config.dataset, Dataset::FromNnUNetFolder(folder));
///   config.sampler.patch_size = {128, 128, 128};
///   config.sampler.batch_size = 2;
///   PATCHFEED_ASSIGN_OR_RETURN(auto loader, Loader::Create(std::move(config)));
///   for (int step = 0; step < 250; ++step) {
///     PATCHFEED_ASSIGN_OR_RETURN(Lease batch, loader->Next());
///     const ArrayView& image = *batch.array("image");  // (2, C, 128, 128, 128) "<f4"
///     Train(image.data, batch.array("seg")->data);     // then the lease goes out of scope
///   }
/// \endcode

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "augment/augment_config.h"
#include "common/result.h"
#include "loader/batch_view.h"
#include "loader/dataset.h"
#include "loader/foreground_index.h"
#include "loader/metrics.h"
#include "loader/sampler.h"
#include "storage/byte_source.h"
#include "storage/io_backend.h"

namespace patchfeed::loader {

namespace internal_loader {
class LoaderEngine;
}  // namespace internal_loader

/// What a bad case or a failed read does.
enum class ErrorPolicy : uint8_t {
  /// Create fails on any case it cannot use, listing them all; a failed read (or a non-finite
  /// sample, LoaderConfig::check_finite) fails its batch: Next() returns the error (naming
  /// case, array, file, chunk, box).
  kFail,
  /// Create leaves out the cases it cannot use (Loader::excluded_cases()); a failed sample is
  /// replaced by a deterministic redraw and counted in metrics.
  kSkip,
};

/// A case Loader::Create left out under ErrorPolicy::kSkip, and why.
struct ExcludedCase {
  int64_t case_index = 0;  ///< in the dataset
  std::string case_id;
  std::string reason;  ///< what is wrong with it, naming the array and its file
};

/// Which dataset arrays a batch holds, and what fills patch parts outside the case.
struct ArrayOptions {
  std::string name;
  /// Default: -1 for an array named "seg" (nnU-Net's label padding), 0 otherwise.
  std::optional<double> pad_value;
};

/// Foreground oversampling: the per-case indexes the sampler centres forced samples on.
struct ForegroundOptions {
  enum class Mode : uint8_t {
    kAuto,  ///< on when the sampler can force foreground and the dataset has `seg_array`
    kOff,   ///< forced samples fall back to random boxes
    kOn,    ///< on; kInvalidArgument when `seg_array` is missing
  };
  Mode mode = Mode::kAuto;
  std::string seg_array = "seg";
  /// Class keys in the order the sampler sees them; empty: each case's labels > 0.
  std::vector<LabelSet> keys;
  uint64_t seed = 1234;                         ///< the index's voxel subset (nnU-Net uses 1234)
  int64_t resident_bytes = int64_t{256} << 20;  ///< indexes kept in memory; the rest reload
  /// Where built indexes are kept between runs (never in the dataset's folder): nullopt for
  /// ForegroundIndex::DefaultCacheDir() ($PATCHFEED_CACHE_DIR, ~/.cache/patchfeed, ...), ""
  /// for nowhere (built each run, kept in memory).
  std::optional<std::string> cache_dir;
  /// Indexes computed elsewhere, one per case (e.g. from nnU-Net's `class_locations`): used
  /// as they are, nothing is built or cached for them. Empty: build or load them all; a null
  /// entry: that case's is built or loaded.
  std::vector<std::shared_ptr<const ForegroundIndex>> indexes;
};

/// nnU-Net's training augmentation, run on each sample as soon as it is read (docs/augment.md).
/// The sampler's `patch_size` is then the crop it draws (nnU-Net's enlarged initial patch),
/// the batch holds patches of `pipeline.patch_size`, and of each crop only the window the
/// spatial transform samples is read: the patch itself when no rotation or scaling is drawn.
///
/// nnU-Net's `2d` configuration (2-D patches from 3-D cases): a 2-D `pipeline` with a 3-D
/// sampler crop (1, Y, X) reads a slab of one slice and augments it as a 2-D sample; the batch
/// holds (B, C, *pipeline.patch_size).
///
/// nnU-Net's training targets come after the pipeline, in the same task (the tail of its
/// get_training_transforms and get_validation_transforms): with `regions`, the segmentation
/// array holds one bool ("|b1") channel per region (ConvertSegmentationToRegions); with
/// `deep_supervision_scales`, every scale that is not all ones adds an array `<seg>_ds<k>`
/// (k its index in the list) holding the target downsampled to round(patch * scale), nearest
/// exact (DownsampleSegForDSTransform); a scale of all ones is the segmentation array itself.
struct AugmentOptions {
  augment::NnUNetAugmentConfig pipeline;
  std::string image_array = "image";  ///< float32 "<f4", (C, *spatial)
  std::string seg_array = "seg";      ///< int16 "<i2"; empty: images only
  /// The labels of each region (nnU-Net's foreground_regions, then its ignore label as a
  /// region of its own); empty: the segmentation stays labels.
  std::vector<std::vector<int64_t>> regions;
  /// Per scale, a factor per spatial axis (nnU-Net's _get_deep_supervision_scales()).
  std::vector<std::array<double, 3>> deep_supervision_scales;
  /// nnU-Net's cascade (pipeline.cascade enabled): the array holding the previous stage's
  /// segmentation, a label map of the case's spatial shape without a channel axis (nnU-Net's
  /// predicted_next_stage files: uint8 or uint16; int8 and int16 too). It is read with the
  /// crop's box (-1 outside the case) as the pipeline's segmentation channel 1 and is not an
  /// output: the image gains one channel per foreground label instead.
  std::string previous_seg_array;
};

/// The position of a loader: everything needed, with its configuration, to resume exactly.
struct LoaderState {
  uint64_t seed = 0;
  int64_t epoch = 0;
  int64_t next_batch = 0;  ///< index in `epoch` of the batch the next Next() returns
  int rank = 0;
  int world_size = 1;
};

struct LoaderConfig {
  Dataset dataset;
  /// Arrays to load, in output order; empty: every dataset array with its default pad value.
  std::vector<ArrayOptions> arrays;
  /// Patch size, batch size, oversampling, seed, rank/world size, epoch mode.
  SamplerConfig sampler;
  ForegroundOptions foreground;

  int num_threads = 0;            ///< arena size; 0: every core (tbb::info::default_concurrency())
  int ring_size = 3;              ///< K slots: the batches in flight plus those the consumer holds
  int64_t max_open_files = 1024;  ///< frames kept open (least recently used closed first)
  storage::IoMode io_mode = storage::IoMode::kMmap;  ///< kPread for network file systems
  /// kPread: the most reads kept at the file system at once, fetched for a whole batch ahead
  /// of its decode tasks (read_prefetch.h); 0 reads synchronously inside the decode tasks.
  /// Ignored with kMmap.
  int io_depth = 64;
  storage::IoBackend io_backend =
      storage::IoBackend::kAuto;  ///< how those reads are kept in flight
  PinMode pin_memory = PinMode::kAuto;
  /// Bytes the ring, per-worker scratch and open-file state may take; Create refuses more.
  int64_t memory_budget = int64_t{4} << 30;
  ErrorPolicy error_policy = ErrorPolicy::kFail;
  int max_redraws = 8;  ///< kSkip: redraws per sample before the batch fails after all
  /// Whether every delivered sample's floating arrays (float16/32/64; with augmentation the
  /// image after the pipeline) are checked for NaN and infinite values. A sample holding any
  /// fails like a failed read (error_policy), naming the count, case, array, file and box.
  /// The check rides on the sample's task, over memory it has just written (docs/loader.md
  /// gives its cost).
  bool check_finite = false;
  /// A (sample, array) box smaller than this is read inline by its producer, a larger one is
  /// split at chunk boundaries into tasks of at least this many bytes.
  int64_t min_task_bytes = int64_t{256} << 10;
  /// Whether Next() reads a batch that no worker has started yet on the calling thread (all
  /// reads inline) instead of waiting for a worker: it saves the hand-off on the one-batch
  /// latency. Off, only the arena's `num_threads` workers read; the consumer only waits (a
  /// trainer thread that must stay free for the GPU, or a measurement of the arena's scaling).
  bool consumer_produces = true;
  /// Augmentation; the batch then holds exactly the image array and the segmentation (in
  /// that order; `arrays` may name them to set pad values).
  std::optional<AugmentOptions> augment;

  int64_t start_epoch = 0;  ///< the position of the first Next()
  int64_t start_batch = 0;

  /// Sets seed, rank, world size and the start position from a saved state.
  void ResumeFrom(const LoaderState& state);
};

/// A batch held by the consumer. Movable, not copyable; destroying or releasing it returns
/// the slot to the loader. A default-constructed or end-of-epoch lease holds no batch.
class Lease {
 public:
  Lease() = default;
  Lease(Lease&& other) noexcept;
  Lease& operator=(Lease&& other) noexcept;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease();

  /// Whether this lease holds a batch.
  explicit operator bool() const { return slot_ >= 0; }
  /// The marker Next() returns after the last batch of a finite epoch.
  bool end_of_epoch() const { return end_of_epoch_; }

  int64_t epoch() const { return epoch_; }
  int64_t batch_index() const { return batch_index_; }
  /// The samples, in batch order (after any kSkip redraws).
  const std::vector<SampleSpec>& samples() const;
  /// Every array, in the configured order; shapes (B, C, *patch).
  std::span<const ArrayView> arrays() const;
  /// The array named `name`, or nullptr.
  const ArrayView* array(std::string_view name) const;
  /// Whether the memory is page-locked for CUDA.
  bool pinned() const;

  /// Returns the slot now (the views dangle after this).
  void Release();

 private:
  friend class internal_loader::LoaderEngine;
  Lease(std::shared_ptr<internal_loader::LoaderEngine> engine, int slot, int64_t epoch,
        int64_t batch_index);
  static Lease EndOfEpoch(int64_t epoch);

  std::shared_ptr<internal_loader::LoaderEngine> engine_;
  int slot_ = -1;
  bool end_of_epoch_ = false;
  int64_t epoch_ = 0;
  int64_t batch_index_ = 0;
};

class Loader {
 public:
  /// Checks the configuration, opens every case once (in parallel) for its shapes, builds or
  /// loads foreground indexes when oversampling, allocates and touches the ring, and starts
  /// producing. kInvalidArgument for options that do not fit each other or the cases' arrays
  /// (e.g. a patch_size of another rank); kResourceExhausted, with the numbers, when the ring,
  /// scratch and open files exceed `memory_budget`. A case that cannot be used (a missing or
  /// unreadable file, an array whose rank, channels or dtype differ from the other cases') is
  /// an error listing every such case with its file and reason (the first one's code), or
  /// under ErrorPolicy::kSkip is left out (excluded_cases()); with none left, an error either
  /// way.
  static Result<std::unique_ptr<Loader>> Create(LoaderConfig config);

  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;
  /// Close().
  ~Loader();

  /// The next batch in index order, waiting for it if needed. A batch whose read failed comes
  /// back as its error (and is skipped: the following call returns the next batch). In the
  /// finite modes, after the last batch of an epoch an end_of_epoch() lease is returned and
  /// the loader moves to batch 0 of the next epoch. kResourceExhausted when the consumer holds
  /// every slot (release a lease first); kCancelled once closed.
  Result<Lease> Next();

  /// Next, waiting at most `timeout`: nullopt when it passes first, and then nothing has moved
  /// (the batch keeps being read; the next call returns it). For a caller that must do
  /// something between waits, e.g. Python handling Ctrl-C, without a thread of its own. When
  /// the consumer reads the batch itself (LoaderConfig::consumer_produces), the call returns
  /// once that batch is read, which may be after `timeout`.
  Result<std::optional<Lease>> NextFor(std::chrono::nanoseconds timeout);

  /// Cancels the batches in flight and waits for the loader's tasks (not for outstanding
  /// leases, which stay valid). A Next waiting on another thread returns kCancelled.
  /// Idempotent; every call but the destructor then returns kCancelled.
  void Close();

  /// Moves to batch 0 of `epoch`; batches read ahead are dropped. Held leases stay valid.
  Status SetEpoch(int64_t epoch);
  /// Moves to batch `batch_index` of `epoch`.
  Status Seek(int64_t epoch, int64_t batch_index);

  LoaderState state() const;
  /// Batches per epoch for this rank (`len`); -1 for EpochMode::kInfinite.
  int64_t batches_per_epoch() const;
  int64_t local_batch_size() const;
  /// The cases batches are drawn from: the dataset's, less excluded_cases().
  int64_t num_cases() const;
  /// The cases Create left out (ErrorPolicy::kSkip), in dataset order.
  const std::vector<ExcludedCase>& excluded_cases() const;
  int num_threads() const;
  /// Shapes and dtypes of a batch's arrays (data is null).
  std::vector<ArrayView> array_layout() const;
  /// Whether the ring is page-locked for CUDA; unpinned_reason() says why not.
  bool pinned() const;
  std::string unpinned_reason() const;
  LoaderMetrics metrics() const;
  const Sampler& sampler() const;

 private:
  explicit Loader(std::shared_ptr<internal_loader::LoaderEngine> engine);

  std::shared_ptr<internal_loader::LoaderEngine> engine_;
};

}  // namespace patchfeed::loader

#endif  // PATCHFEED_LOADER_LOADER_H_
