// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_STORAGE_STORE_H_
#define PATCHFEED_STORAGE_STORE_H_

/// \file
/// Store: a namespace of paths the codec opens files in, whatever holds them. A `.b2nd` frame,
/// a zarr array's metadata and chunk files, a sparse frame's chunk files: the codec names each
/// by a path it builds ("<array>/.zarray", "<array>/c/0/1") and asks the store for it.
///
/// Paths are the user's: local paths for LocalFiles(), whole URLs ("s3://bucket/a.zarr/.zarray")
/// for a remote store, so every message the codec writes names what the user would type. A
/// store never parses formats; the codec never parses URLs.
///
/// Thread-safety: every method is const and may be called from any thread at once.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "storage/byte_source.h"

namespace patchfeed::storage {

/// What a store's engine has done since the store was made (remote stores; local files have
/// no engine of their own and report zeros).
struct StoreStats {
  std::string engine;         ///< "" for local files, "libcurl" for remote stores
  int depth = 0;              ///< the most requests in flight at once
  int64_t requests = 0;       ///< requests completed, whatever their outcome
  int64_t retries = 0;        ///< requests sent again after a failure that may pass
  int64_t errors = 0;         ///< requests that failed for good
  int64_t bytes = 0;          ///< body bytes received
  int64_t max_in_flight = 0;  ///< the most requests in flight at once so far
};

enum class EntryKind {
  kNone,    ///< nothing there
  kFile,    ///< a file (an object)
  kFolder,  ///< a directory (a prefix other objects' names continue)
};

/// A file Store::OpenAsync opened, and how many of its first bytes came with it.
struct OpenedFile {
  std::shared_ptr<ByteSource> file;
  uint64_t head_bytes = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  /// The file at `path`, open for reads. kNotFound when there is none (zarr's missing chunks
  /// are fill value, so callers tell absence from failure by this code).
  virtual Result<std::shared_ptr<ByteSource>> Open(const std::string& path, IoMode mode) const = 0;

  /// Open without waiting, for a caller with many files to open (the loader's reads in
  /// flight): `done` runs exactly once with what Open would return. `head` may receive the
  /// file's first bytes with it where that costs nothing more: a remote store asks with one
  /// GET of that range, whose answer gives the object's size and identity as a HEAD's would;
  /// OpenedFile::head_bytes says how many came (the whole file when it is shorter), and `head`
  /// must stay valid until `done` has run. A remote store runs `done` on its engine thread
  /// (return from it at once: hand the work on) and must outlive it; other stores open here,
  /// run `done` before returning, and leave `head` alone.
  virtual void OpenAsync(const std::string& path, IoMode mode, std::span<std::byte> head,
                         std::function<void(Result<OpenedFile>)> done) const {
    (void)head;
    Result<std::shared_ptr<ByteSource>> file = Open(path, mode);
    if (!file.ok()) {
      done(file.status());
      return;
    }
    done(OpenedFile{std::move(*file), 0});
  }

  /// What is at `path`.
  virtual Result<EntryKind> Stat(const std::string& path) const = 0;

  /// The names (not paths) of the files and folders directly in `folder`, sorted; a folder's
  /// name ends with '/'. kNotFound when `folder` is not one.
  virtual Result<std::vector<std::string>> List(const std::string& folder) const = 0;

  /// Small bytes a reader derived from a file and asks the store to keep for its life (a zarr
  /// shard's index), under a key the reader makes of the file's path and version(): a changed
  /// file has another key. A remote store keeps them (bounded), so a shard read again costs
  /// no request for its index; local files are read again instead (null, nothing kept).
  virtual std::shared_ptr<const std::vector<std::byte>> Recall(
      [[maybe_unused]] const std::string& key) const {
    return nullptr;
  }
  virtual void Keep([[maybe_unused]] const std::string& key,
                    [[maybe_unused]] std::span<const std::byte> bytes) const {}

  /// Whether reads wait on a network (a remote store): the loader then keeps them in flight.
  virtual bool remote() const { return false; }

  /// The store's engine's counters.
  virtual StoreStats stats() const { return {}; }
};

/// The local file system: paths as open(2) takes them.
const std::shared_ptr<const Store>& LocalFiles();

/// `folder` + "/" + `name`, without doubling a '/' that ends `folder` ("s3://bucket/" + "a").
std::string JoinPath(const std::string& folder, const std::string& name);

/// Reads the whole file at `path` when it holds at most `max_bytes` (metadata documents, whose
/// size is the file's to claim: kDataLoss naming the file when it claims more).
Result<std::string> ReadSmallFile(const Store& store, const std::string& path, uint64_t max_bytes);

}  // namespace patchfeed::storage

#endif  // PATCHFEED_STORAGE_STORE_H_
