// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_AUGMENTED_SAMPLE_H_
#define PATCHFEED_LOADER_INTERNAL_AUGMENTED_SAMPLE_H_

/// \file
/// The batch producer's second kind of sample task: a read fused with nnU-Net's augmentation
/// (docs/augment.md). Plan draws the sample's augmentation and the window of its crop the
/// spatial transform samples; Run reads that window (into the slot when no rotation or scaling
/// was drawn, else into this worker's staging) and runs the pipeline into the slot. One task
/// per sample, whose steps depend on each other; with more than one thread its two largest
/// steps split into pieces that idle threads take: the reads into runs of block rows
/// (GroupPieces, as plain reads) and the resampling into columns of output tiles. Without that
/// a rotated sample (~2x the work of an unrotated one) held its whole batch, and in-order
/// delivery every batch after it, on one core. Thread-safe: staging is per worker; a worker
/// waits for its pieces in isolation, so it never starts another sample on the same staging.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <span>
#include <vector>

#include <oneapi/tbb/enumerable_thread_specific.h>

#include "augment/nnunet_pipeline.h"
#include "common/random.h"
#include "loader/internal/loader_setup.h"
#include "loader/internal/read_round.h"
#include "loader/internal/read_tasks.h"
#include "loader/internal/sample_reader.h"

namespace patchfeed::loader::internal_loader {

class AugmentedSamples {
 public:
  AugmentedSamples(const LoaderParts& parts, SampleReader* reader);

  /// Adds the reads and the task of sample `sample` (drawn as `spec`) to `round`.
  void Plan(ReadRound& round, int64_t sample, const SampleSpec& spec) const;
  /// Reads and augments one planned sample into the slot; errors go to the round.
  void Run(ReadRound& round, const AugmentedTask& task) noexcept;

 private:
  /// Memory for a window that the read then fills, sized once to the largest window a sample
  /// can have (`bound`: the whole crop, every channel) and kept. It comes from calloc, whose
  /// large blocks are fresh mappings it does not clear: the pages are the kernel's zero pages
  /// until a window first reaches them, each faulted in once and never cleared again. Growing to
  /// each new largest window instead (new T[n]()) freed, reallocated and faulted in the whole
  /// buffer at every new largest window, and window sizes vary from sample to sample: thousands of
  /// minor faults per 4-channel sample through the first ~40 batches (bench/README.md section 7,
  /// issue 26). What the read leaves alone (blocks the footprint skips) holds zeros or an earlier
  /// window's values, as it did before.
  template <typename T>
  class WindowBuffer {
   public:
    /// At least `n` elements; `bound` >= n is the most any window of this buffer needs.
    T* Reserve(size_t n, size_t bound) {
      if (n > capacity_) {
        const size_t size = std::max(n, bound);
        data_.reset(static_cast<T*>(std::calloc(size, sizeof(T))));
        if (data_ == nullptr) {
          throw std::bad_alloc();  // as new T[n]() did
        }
        capacity_ = size;
      }
      return data_.get();
    }

   private:
    struct Free {
      void operator()(T* p) const { std::free(p); }
    };
    std::unique_ptr<T[], Free> data_;
    size_t capacity_ = 0;
  };
  struct Staging {
    augment::NnUNetAugmentScratch pipeline;
    WindowBuffer<float> image;         ///< the image's window
    WindowBuffer<int16_t> seg;         ///< the segmentation's window (cascade: 2 channels)
    WindowBuffer<std::byte> previous;  ///< the cascade's previous-stage window, as in its file
    /// The augmented labels, when the slot holds regions or the cascade's channel 0 only.
    std::vector<int16_t> seg_labels;
    SampleRead split_read;       ///< a read planned for pieces (ReadInPieces)
    std::vector<PieceRun> runs;  ///< its pieces grouped into runs
  };

  /// Reads read.box into `dst` (read.dst, or staging of its shape), skipping the blocks
  /// `filter` declines, in runs that run through `pieces`; false after recording an error.
  bool ReadInPieces(ReadRound& round, const SampleRead& read, const StridedView& dst,
                    Staging& staging, const augment::PieceRunner& pieces);
  /// How a sample of `round` runs its pieces: one after another with one thread (or on the
  /// consumer), else shared with the pool's free threads (shared_pieces.h).
  augment::PieceRunner Pieces(ReadRound& round) const;
  /// Whether the pipeline's segmentation is staged rather than the slot's: as regions, or
  /// with the cascade's second channel, which the slot does not hold.
  bool SegStaged() const;
  /// The crop the pipeline sees: the sampler's, without the slab axis of nnU-Net's 2d.
  std::span<const int64_t> PipelineCrop() const;
  /// nnU-Net's targets from the augmented labels `seg`: regions, deep-supervision scales.
  Status WriteTargets(int slot, int64_t sample, augment::SampleView<int16_t> seg,
                      Staging& staging) const;
  /// The random stream of a sample: its position in the global batch.
  StreamId Stream(BatchId batch, int64_t sample) const;

  const LoaderParts& parts_;
  SampleReader& reader_;
  tbb::enumerable_thread_specific<Staging> staging_;
};

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_AUGMENTED_SAMPLE_H_
