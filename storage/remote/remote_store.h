// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_STORAGE_REMOTE_REMOTE_STORE_H_
#define PATCHFEED_STORAGE_REMOTE_REMOTE_STORE_H_

/// \file
/// RemoteStore: the Store of s3://, gs:// and http(s):// URLs, read through one CurlEngine;
/// RemoteSource: one object of it as a ByteSource.
///
/// Paths are whole URLs, as the user writes them ("s3://bucket/a.zarr/.zarray"), so every
/// message names what they typed. Each bucket (or web server) gets its endpoint and
/// credentials resolved once, the first time a path leads there (remote_options.h); requests
/// are path style (endpoint/bucket/key), which every S3-compatible store and GCS's XML API
/// accept.
///
/// Costs: Open is one HEAD (size and identity: ETag, Last-Modified); each read is one ranged
/// GET carrying If-Match with that ETag, so an object replaced after it was opened is an
/// error, never a mix of two versions. Stat is one HEAD, plus one listing request when nothing
/// is at the key (is it a folder?). List is one ListObjectsV2 request per 1000 names.
///
/// Errors name the URL, the byte range, the HTTP status and the store's own code and message
/// (remote_errors.h); refused credentials fail at Open with where they came from.
///
/// Thread-safety: every method is const and may be called from any thread at once. The store
/// and its sources share the engine, which lives until the last of them is gone; its
/// destruction cancels what is still in flight (never drop the last reference inside a read's
/// callback: see curl_engine.h).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "storage/byte_source.h"
#include "storage/remote/curl_engine.h"
#include "storage/remote/remote_options.h"
#include "storage/remote/url.h"
#include "storage/store.h"

namespace patchfeed::storage {

namespace internal_remote {
struct Location;
}  // namespace internal_remote

class RemoteSource final : public ByteSource {
 public:
  RemoteSource(std::shared_ptr<CurlEngine> engine,
               std::shared_ptr<const internal_remote::Location> location, std::string url,
               std::string request_url, ObjectInfo info);

  /// The object's URL as it was opened, "s3://bucket/key".
  const std::string& name() const override { return name_; }
  uint64_t size() const override { return size_; }
  /// Remote bytes are never in memory: nullptr (read with ReadAt or ReadAsync).
  const std::byte* Data(uint64_t, size_t) const override { return nullptr; }
  /// One ranged GET, waited for. kDataLoss when the range passes size(); the request's error
  /// (remote_errors.h) otherwise.
  Status ReadAt(uint64_t offset, std::span<std::byte> out) const override;

  bool reads_async() const override { return true; }
  /// Starts a ranged GET of `out.size()` bytes at `offset` into `out` and returns at once;
  /// `done` runs once with the outcome on the engine thread (it must not block it), or at once
  /// on this thread for an empty or out-of-bounds range. `out` must stay valid until then.
  void ReadAsync(uint64_t offset, std::span<std::byte> out,
                 std::function<void(Status)> done) const override;

  /// ETag and Last-Modified from the open: what a cache of fetched ranges is keyed by.
  const ObjectInfo& info() const { return info_; }
  std::string version() const override { return info_.etag + "|" + info_.last_modified; }

 private:
  std::shared_ptr<CurlEngine> engine_;
  std::shared_ptr<const internal_remote::Location> location_;
  std::string name_;
  std::string request_url_;
  ObjectInfo info_;
  uint64_t size_ = 0;
};

class RemoteStore final : public Store {
 public:
  /// A store for every remote URL, resolving each bucket's endpoint and credentials from
  /// `options` and `env` when first used. Reads go through `engine` when given, else through an
  /// engine of the store's own made with the options' depth, timeouts and retries.
  /// kInvalidArgument for options that cannot work.
  static Result<std::shared_ptr<RemoteStore>> Create(const RemoteOptions& options, Environment env,
                                                     std::shared_ptr<CurlEngine> engine = nullptr);

  /// The object at the URL `path`, with one HEAD the first time: the store remembers what
  /// each HEAD said (size and ETag, or that nothing is there) for its lifetime, so a zarr chunk
  /// read again costs its GETs alone. Reads carry the remembered ETag (If-Match): an object
  /// replaced since is an error naming it, never a mix of versions. `mode` does not apply
  /// (remote objects are neither mapped nor read with pread). kNotFound naming the URL when
  /// nothing is there; refused credentials or denied access are kIoError saying where the
  /// credentials came from.
  Result<std::shared_ptr<ByteSource>> Open(const std::string& path, IoMode mode) const override;
  /// Open with its request in flight: for an object not remembered, one GET of `head`'s
  /// range (size, identity and first bytes at once), or a HEAD when `head` is empty or the
  /// object is empty; for one remembered, a GET of its first bytes (none when `head` is
  /// empty). `done` runs on the engine thread, or here when nothing is asked.
  void OpenAsync(const std::string& path, IoMode mode, std::span<std::byte> head,
                 std::function<void(Result<OpenedFile>)> done) const override;
  /// Open, typed: for callers that want info().
  Result<std::shared_ptr<RemoteSource>> OpenRemote(const std::string& path) const;

  /// kFile when an object is at `path`, kFolder when objects' names continue it with '/' (on
  /// http(s) servers, which cannot be listed, never), else kNone.
  Result<EntryKind> Stat(const std::string& path) const override;

  /// The names directly in the folder `folder` (objects, and folders ending with '/'), sorted.
  /// kNotFound when no object's name continues `folder` + '/'; kUnimplemented for http(s)
  /// servers, which offer no listing.
  Result<std::vector<std::string>> List(const std::string& folder) const override;

  /// Kept in memory, bounded (kMaxKeptBytes; emptied whole when full).
  std::shared_ptr<const std::vector<std::byte>> Recall(const std::string& key) const override;
  void Keep(const std::string& key, std::span<const std::byte> bytes) const override;

  bool remote() const override { return true; }

  /// The endpoint and credentials requests for `url` use (resolved now if not yet).
  Result<RemoteAccess> AccessFor(const std::string& url) const;
  CurlEngineStats engine_stats() const { return engine_->stats(); }
  StoreStats stats() const override;

 private:
  struct Target;
  RemoteStore(const RemoteOptions& options, Environment env, std::shared_ptr<CurlEngine> engine);

  Result<Target> Resolve(const std::string& path) const;
  // The object's size and identity (one HEAD, and a one-byte GET to learn why when it is
  // refused); `done` runs on the engine thread. Head waits for it.
  void HeadAsync(const Target& target, std::function<void(Result<ObjectInfo>)> done) const;
  Result<ObjectInfo> Head(const Target& target) const;
  // What HEAD said of `path` before, if it is remembered; Remember keeps an answer that lasts.
  std::optional<Result<ObjectInfo>> Remembered(const std::string& path) const;
  void Remember(const std::string& path, const Result<ObjectInfo>& known) const;
  Result<std::shared_ptr<RemoteSource>> SourceFor(const Target& target,
                                                  Result<ObjectInfo> known) const;
  Result<std::vector<std::string>> ListNames(const Target& target, const std::string& prefix,
                                             int max_keys) const;

  const RemoteOptions options_;
  const Environment env_;
  const std::shared_ptr<CurlEngine> engine_;
  mutable std::mutex mutex_;
  // "s3://bucket", "gs://bucket", "https://host:port" -> its resolution, kept errors included.
  mutable std::map<std::string, Result<std::shared_ptr<const internal_remote::Location>>>
      locations_;
  // What HEAD said of each object opened: its info, or kNotFound. Dropped whole when it
  // holds kMaxKnownObjects (a bound on memory, not an LRU: reopening costs one HEAD).
  static constexpr size_t kMaxKnownObjects = size_t{1} << 16;
  mutable std::unordered_map<std::string, Result<ObjectInfo>> known_;
  // What readers asked to keep (Keep), and its bytes with the keys'.
  static constexpr size_t kMaxKeptBytes = size_t{16} << 20;
  mutable std::unordered_map<std::string, std::shared_ptr<const std::vector<std::byte>>> kept_;
  mutable size_t kept_bytes_ = 0;
};

}  // namespace patchfeed::storage

#endif  // PATCHFEED_STORAGE_REMOTE_REMOTE_STORE_H_
