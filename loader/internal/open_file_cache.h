// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_OPEN_FILE_CACHE_H_
#define PATCHFEED_LOADER_INTERNAL_OPEN_FILE_CACHE_H_

/// \file
/// A bounded set of open arrays (`.b2nd` frames, zarr arrays: codec::OpenArray), keyed by (case,
/// array), least recently used closed first. Reopening is cheap (one open, a header read and the
/// offsets chunk; a zarr array's metadata file), so a dataset of thousands of cases runs with a
/// few hundred descriptors.
///
/// Get hands out shared references: a reader evicted while a read task still uses it stays
/// open until that task drops it, so at most `capacity` + (reads in flight) frames are open.
/// Opening happens outside the lock; two threads missing the same frame at once may both open
/// it (the second copy is used once and closed), which is cheaper than making one wait.
/// A mapped file that shrank under its mapping (storage/mapping_fault_guard.h) is reopened at
/// the next Get. Thread-safe.

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "codec/open_array.h"
#include "common/result.h"
#include "loader/dataset.h"

namespace patchfeed::loader::internal_loader {

class OpenFileCache {
 public:
  /// Keeps its own copy of the dataset's paths. `capacity` >= 1.
  OpenFileCache(Dataset dataset, int64_t capacity, codec::FrameOpenOptions options);

  /// The open reader for array `array` of case `case_index`, opening it if needed. Errors are
  /// the codec's (they name the path).
  Result<std::shared_ptr<const codec::ArrayReader>> Get(int64_t case_index, int array);

  int64_t capacity() const { return capacity_; }
  int64_t size() const;
  /// Opens so far, reopens included.
  int64_t opens() const;

 private:
  using Reader = std::shared_ptr<const codec::ArrayReader>;
  using Lru = std::list<std::pair<int64_t, Reader>>;  // most recently used first

  const Dataset dataset_;
  const int64_t capacity_;
  const codec::FrameOpenOptions options_;

  mutable std::mutex mu_;
  Lru lru_;
  std::unordered_map<int64_t, Lru::iterator> index_;
  int64_t opens_ = 0;
};

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_OPEN_FILE_CACHE_H_
