// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_STORAGE_REMOTE_RANGE_CACHE_H_
#define PATCHFEED_STORAGE_REMOTE_RANGE_CACHE_H_

/// \file
/// CachedStore: an opt-in local cache of what a remote store reads, for many epochs over the
/// same remote data (storage_options `cache_dir`, `cache_max_bytes`).
///
/// An object's bytes are kept in pages of `page_bytes` (the last one shorter), one file each,
/// under `<folder>/<key>/`, where the key hashes the object's URL, size and version (ETag and
/// Last-Modified): an object that changed has another key and is fetched again, never mixed
/// with its old pages. A read takes the pages it covers from their files; the pages missing are
/// fetched from the store in one read (consecutive pages) and written each whole to a temporary
/// name, then renamed, so other readers (threads, processes, other loaders) see a whole page or
/// none. A page read from the cache has its time set anew: eviction removes the pages
/// least recently used until the folder holds at most 90% of `max_bytes`.
///
/// What is kept: object bytes only. Opening an object still asks the store (one HEAD per
/// object per store, remote_store.h): that is how a changed object is noticed.
///
/// Thread-safety: as every Store. Page files are written on the thread that completes a fetch
/// (the remote engine's, for ReadAsync): a cache on a slow disk slows the engine.

#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "storage/store.h"

namespace patchfeed::storage {

struct RangeCacheOptions {
  std::string folder;                       ///< never the data's own folder
  uint64_t max_bytes = uint64_t{10} << 30;  ///< bound on the page files' bytes
  uint64_t page_bytes = uint64_t{256} << 10;
};

/// `inner` with its objects' bytes cached in `options.folder` (created if needed).
/// kInvalidArgument for an empty folder or zero sizes; kIoError when the folder cannot be made.
Result<std::shared_ptr<const Store>> CachedStore(std::shared_ptr<const Store> inner,
                                                 const RangeCacheOptions& options);

}  // namespace patchfeed::storage

#endif  // PATCHFEED_STORAGE_REMOTE_RANGE_CACHE_H_
