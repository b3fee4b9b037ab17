// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_FETCHED_STORE_H_
#define PATCHFEED_LOADER_INTERNAL_FETCHED_STORE_H_

/// \file
/// FetchedStore: what FetchedSource is to a `.b2nd` frame, for an array whose chunks are files
/// of their own (zarr chunks and shards): the chunk files one read needs, opened and fetched
/// ahead by the loader, handed to the codec as BoxReadScratch::store.
///
/// Discovery learns which files a read opens the way FetchedSource learns which bytes it reads:
/// an Open of a file not opened yet is recorded and fails, and the loader opens every file
/// recorded (all of a batch's at once, Store::OpenAsync: for a remote store, HEADs in flight
/// together) before it replays again. A file once opened is a FetchedSource, which learns the
/// file's bytes as usual; a file the store does not hold (kNotFound: a chunk of fill value) is
/// remembered as such. So a zarr chunk costs the loader one round of opens, then the rounds of
/// its bytes (header and block offsets, then blocks; a shard's index comes first).
///
/// Serving: Open answers with what discovery opened, or with the store's own Open (counted as a
/// fallback read) for a file the replays did not foresee.
///
/// Thread-safety: as FetchedSource: discovery, AddOpened and the fetches on the batch's
/// producer before any task reads; serving is const and safe from many threads.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "loader/internal/byte_arena.h"
#include "loader/internal/fetched_source.h"
#include "storage/store.h"

namespace patchfeed::loader::internal_loader {

class FetchedStore final : public storage::Store {
 public:
  /// Opens files in `store`, which must outlive the FetchedStore (the array that holds it is
  /// kept by the caller). Fetched bytes live in `arena`; fallbacks add to `*fallback_reads`.
  FetchedStore(const storage::Store& store, ByteArena* arena, std::atomic<int64_t>* fallback_reads)
      : store_(store), arena_(arena), fallback_reads_(fallback_reads) {}

  Result<std::shared_ptr<storage::ByteSource>> Open(const std::string& path,
                                                    storage::IoMode mode) const override;
  Result<storage::EntryKind> Stat(const std::string& path) const override {
    return store_.Stat(path);
  }
  Result<std::vector<std::string>> List(const std::string& folder) const override {
    return store_.List(folder);
  }
  std::shared_ptr<const std::vector<std::byte>> Recall(const std::string& key) const override {
    return store_.Recall(key);
  }
  void Keep(const std::string& key, std::span<const std::byte> bytes) const override {
    store_.Keep(key, bytes);
  }
  bool remote() const override { return store_.remote(); }

  /// Discovery (see the file comment) until EndDiscovery; each file opened during it starts
  /// a discovery of its own bytes (FetchedSource::BeginDiscovery).
  void BeginDiscovery() { discovering_ = true; }
  void EndDiscovery();
  /// The files recorded since the last call, each once.
  std::vector<std::string> TakeMissingOpens() { return std::exchange(missing_opens_, {}); }
  /// What opening `path` gave: a file to fetch from, whose first bytes (head_bytes of them)
  /// are in `head`, or the error Open will answer with (kNotFound: the chunk is fill value).
  void AddOpened(const std::string& path, Result<storage::OpenedFile> opened,
                 std::span<std::byte> head);
  /// The files opened, to gather the bytes their replays asked for.
  const std::map<std::string, std::shared_ptr<FetchedSource>>& sources() const { return sources_; }

 private:
  const storage::Store& store_;
  ByteArena* const arena_;
  std::atomic<int64_t>* const fallback_reads_;
  std::map<std::string, std::shared_ptr<FetchedSource>> sources_;
  std::map<std::string, Status> failed_;  // opens that failed, kNotFound included
  bool discovering_ = false;
  mutable std::vector<std::string> missing_opens_;
};

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_FETCHED_STORE_H_
