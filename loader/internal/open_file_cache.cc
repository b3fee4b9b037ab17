// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/open_file_cache.h"

#include <algorithm>
#include <utility>

namespace patchfeed::loader::internal_loader {

OpenFileCache::OpenFileCache(Dataset dataset, int64_t capacity, codec::FrameOpenOptions options)
    : dataset_(std::move(dataset)), capacity_(std::max<int64_t>(1, capacity)), options_(options) {}

Result<std::shared_ptr<const codec::ArrayReader>> OpenFileCache::Get(int64_t case_index,
                                                                     int array) {
  const auto num_arrays = static_cast<int64_t>(dataset_.array_names().size());
  const int64_t key = case_index * num_arrays + array;
  Reader stale;  // released after the lock, as evicted readers below
  {
    std::lock_guard lock(mu_);
    if (auto it = index_.find(key); it != index_.end()) {
      if (it->second->second->CheckMapping().ok()) [[likely]] {
        lru_.splice(lru_.begin(), lru_, it->second);
        return it->second->second;
      }
      // The file shrank under its mapping: that read failed; later ones see the file as it
      // is now.
      stale = std::move(it->second->second);
      lru_.erase(it->second);
      index_.erase(it);
    }
    ++opens_;
  }
  auto opened = codec::OpenArray(dataset_.path(case_index, array), options_);
  if (!opened.ok()) {
    return opened.status();
  }
  Reader reader = std::move(*opened);
  // Evicted readers are released after the lock: closing a mapping is a system call.
  Reader evicted;
  std::lock_guard lock(mu_);
  if (auto it = index_.find(key); it != index_.end()) {
    // Another thread opened it meanwhile; keep theirs.
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
  }
  lru_.emplace_front(key, reader);
  index_[key] = lru_.begin();
  if (static_cast<int64_t>(lru_.size()) > capacity_) {
    index_.erase(lru_.back().first);
    evicted = std::move(lru_.back().second);
    lru_.pop_back();
  }
  return reader;
}

int64_t OpenFileCache::size() const {
  std::lock_guard lock(mu_);
  return static_cast<int64_t>(lru_.size());
}

int64_t OpenFileCache::opens() const {
  std::lock_guard lock(mu_);
  return opens_;
}

}  // namespace patchfeed::loader::internal_loader
