// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_INTERNAL_SHARD_INDEX_CACHE_H_
#define PATCHFEED_CODEC_INTERNAL_SHARD_INDEX_CACHE_H_

/// \file
/// The shard indexes of one zarr array, kept once read (checksum checked), so that a shard read
/// again costs its inner chunks alone: on an object store each index is a request, and random
/// patches meet the same shards again and again.
///
/// Kept only for files that say what their version is (ByteSource::version(): a remote
/// object's ETag and Last-Modified), and keyed by it with the path: a replaced shard has
/// another key, so a stale index is never used. Bounded in bytes; when full, emptied whole (a
/// bound on memory, not an LRU: an index read again costs one request).
///
/// Thread-safety: Find and Put may be called from any thread at once (the array is shared by
/// every reader); a mutex guards the map, held for a lookup or an insert only.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace patchfeed::internal_codec {

class ShardIndexCache {
 public:
  using Index = std::shared_ptr<const std::vector<std::byte>>;

  static constexpr size_t kMaxBytes = size_t{8} << 20;

  /// The index kept for `path` at `version`, or null.
  Index Find(const std::string& path, const std::string& version) const {
    std::lock_guard lock(mutex_);
    auto it = indexes_.find(Key(path, version));
    return it == indexes_.end() ? nullptr : it->second;
  }

  /// Keeps a copy of `index`, the index of `path` at `version` (not empty).
  void Put(const std::string& path, const std::string& version, std::span<const std::byte> index) {
    auto kept = std::make_shared<const std::vector<std::byte>>(index.begin(), index.end());
    std::string key = Key(path, version);
    const size_t cost = key.size() + index.size();
    std::lock_guard lock(mutex_);
    if (bytes_ + cost > kMaxBytes) {
      indexes_.clear();
      bytes_ = 0;
    }
    if (indexes_.emplace(std::move(key), std::move(kept)).second)
      bytes_ += cost;
  }

 private:
  static std::string Key(const std::string& path, const std::string& version) {
    std::string key = path;
    key.push_back('\0');
    key.append(version);
    return key;
  }

  mutable std::mutex mutex_;
  std::unordered_map<std::string, Index> indexes_;
  size_t bytes_ = 0;
};

}  // namespace patchfeed::internal_codec

#endif  // PATCHFEED_CODEC_INTERNAL_SHARD_INDEX_CACHE_H_
