// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_FOREGROUND_STORE_H_
#define PATCHFEED_LOADER_INTERNAL_FOREGROUND_STORE_H_

/// \file
/// The loader's foreground indexes, one per case (foreground_index.h): given (nnU-Net's
/// `class_locations`), or built or loaded from the cache folder once when the loader is
/// created, to give the sampler each case's per-key voxel counts; then kept in memory up to a
/// byte cap. Past the cap, cached indexes are reloaded from their files when a forced-foreground
/// sample needs a voxel (a small LRU keeps the recent ones); given indexes and those that could
/// not be cached stay in memory whatever the cap.
///
/// Prepare may run concurrently for distinct cases; Voxel is thread-safe.

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "loader/foreground_index.h"

namespace patchfeed::loader::internal_loader {

class ForegroundStore {
 public:
  /// `seg_paths[i]` is case i's label map, whose last `spatial_dims` axes are spatial;
  /// `given[i]`, when `given` is not empty, its index. Label maps are opened with `open`.
  ForegroundStore(std::vector<std::string> seg_paths, int spatial_dims, std::vector<LabelSet> keys,
                  uint64_t seed, int64_t resident_bytes, std::string cache_dir,
                  std::vector<std::shared_ptr<const ForegroundIndex>> given,
                  codec::FrameOpenOptions open = {});

  /// Builds or loads case `case_index`'s index and records its counts.
  Status Prepare(int64_t case_index);

  /// The stored-voxel counts per key of a prepared case (CaseInfo::foreground_counts).
  const std::vector<int64_t>& counts(int64_t case_index) const {
    return counts_[static_cast<size_t>(case_index)];
  }
  /// Bytes of indexes held in memory for good.
  int64_t resident_bytes() const { return resident_total_.load(std::memory_order_relaxed); }

  /// Stored voxel `voxel` of key `key` of case `case_index` (a ForegroundVoxelFn).
  Result<std::vector<int64_t>> Voxel(int64_t case_index, int64_t key, int64_t voxel) const;

 private:
  using Index = std::shared_ptr<const ForegroundIndex>;
  static constexpr size_t kLazyCacheSize = 16;

  Result<Index> Lazy(int64_t case_index) const;

  std::vector<std::string> seg_paths_;
  int spatial_dims_;
  std::string cache_dir_;
  codec::FrameOpenOptions open_;
  std::vector<LabelSet> keys_;
  uint64_t seed_;
  int64_t resident_cap_;
  std::atomic<int64_t> resident_total_{0};
  std::vector<std::vector<int64_t>> counts_;
  std::vector<Index> resident_;  // written by Prepare only

  mutable std::mutex mu_;
  mutable std::list<std::pair<int64_t, Index>> lazy_;  // most recent first
};

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_FOREGROUND_STORE_H_
