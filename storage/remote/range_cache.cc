// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "storage/remote/range_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/str_cat.h"

namespace patchfeed::storage {
namespace {

namespace fs = std::filesystem;

// FNV-1a, 64 bits, twice with different offsets: names, not security (the folder is the
// user's own).
std::string KeyOf(const std::string& name, uint64_t size, const std::string& version) {
  const std::string text = StrCat(name, "\n", size, "\n", version);
  uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
  for (const char c : text) {
    a = (a ^ static_cast<uint8_t>(c)) * 0x100000001B3ull;
    b = (b ^ static_cast<uint8_t>(c)) * 0x100000001B3ull;
  }
  char out[33];
  std::snprintf(out, sizeof(out), "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return out;
}

// The cache folder's bookkeeping, shared by the store and its sources.
class PageFiles {
 public:
  explicit PageFiles(RangeCacheOptions options) : options_(std::move(options)) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(options_.folder, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file(ec))
        bytes_ += it->file_size(ec);
    }
  }

  const RangeCacheOptions& options() const { return options_; }

  // Page `page` of the object keyed `key` into `out` (its whole length); false when absent or
  // of another length (a page of an object that is now longer or shorter: never served).
  // Bytes [within, within + out.size()) of the page file, which must hold `page_size` bytes
  // (a file of another size is not a page this cache wrote whole): read straight into `out`.
  bool Read(const std::string& key, uint64_t page, uint64_t page_size, uint64_t within,
            std::span<std::byte> out) const {
    const std::string path = PagePath(key, page);
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return false;
    struct stat st;
    bool ok = fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_size) == page_size;
    size_t got = 0;
    while (ok && got < out.size()) {
      const ssize_t n =
          pread(fd, out.data() + got, out.size() - got, static_cast<off_t>(within + got));
      ok = n > 0;
      got += ok ? static_cast<size_t>(n) : 0;
    }
    if (ok)
      (void)futimens(fd, nullptr);  // recently used: evicted last
    close(fd);
    return ok;
  }

  // Writes a page whole under a temporary name, then renames it into place. A failure (a full
  // disk, a read-only folder) only means the page is fetched again next time.
  void Write(const std::string& key, uint64_t page, std::span<const std::byte> bytes) {
    const std::string dir = StrCat(options_.folder, "/", key);
    std::error_code ec;
    fs::create_directories(dir, ec);
    const std::string path = PagePath(key, page);
    const std::string tmp =
        StrCat(path, ".tmp.", getpid(), ".", counter_.fetch_add(1, std::memory_order_relaxed));
    const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
      return;
    size_t put = 0;
    while (put < bytes.size()) {
      const ssize_t n = write(fd, bytes.data() + put, bytes.size() - put);
      if (n <= 0)
        break;
      put += static_cast<size_t>(n);
    }
    close(fd);
    if (put != bytes.size() || std::rename(tmp.c_str(), path.c_str()) != 0) {
      std::remove(tmp.c_str());
      return;
    }
    bool evict = false;
    {
      std::lock_guard lock(mutex_);
      bytes_ += bytes.size();
      evict = bytes_ > options_.max_bytes;
    }
    if (evict)
      Evict();
  }

 private:
  std::string PagePath(const std::string& key, uint64_t page) const {
    return StrCat(options_.folder, "/", key, "/", page);
  }

  // Removes the least recently used pages (oldest times first) until the folder holds at most
  // 90% of the bound; counts what is there anew, as other processes write into it too.
  void Evict() {
    std::lock_guard lock(evict_mutex_);
    struct Page {
      fs::file_time_type time;
      uint64_t size;
      fs::path path;
    };
    std::vector<Page> pages;
    uint64_t total = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(options_.folder, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      std::error_code e;
      if (!it->is_regular_file(e) ||
          it->path().filename().string().find(".tmp.") != std::string::npos)
        continue;
      const uint64_t size = it->file_size(e);
      const auto time = it->last_write_time(e);
      if (e)
        continue;
      pages.push_back({time, size, it->path()});
      total += size;
    }
    std::sort(pages.begin(), pages.end(),
              [](const Page& a, const Page& b) { return a.time < b.time; });
    const uint64_t target = options_.max_bytes / 10 * 9;
    for (const Page& p : pages) {
      if (total <= target)
        break;
      if (fs::remove(p.path, ec))
        total -= p.size;
    }
    std::lock_guard count(mutex_);
    bytes_ = total;
  }

  const RangeCacheOptions options_;
  std::mutex mutex_;
  std::mutex evict_mutex_;  // one eviction scan at a time
  uint64_t bytes_ = 0;      // approximately what the folder holds
  std::atomic<uint64_t> counter_{0};
};

class CachedSource final : public ByteSource {
 public:
  CachedSource(std::shared_ptr<ByteSource> inner, std::shared_ptr<PageFiles> pages)
      : inner_(std::move(inner)),
        pages_(std::move(pages)),
        key_(KeyOf(inner_->name(), inner_->size(), inner_->version())) {}

  const std::string& name() const override { return inner_->name(); }
  uint64_t size() const override { return inner_->size(); }
  std::string version() const override { return inner_->version(); }
  const std::byte* Data(uint64_t, size_t) const override { return nullptr; }
  bool reads_async() const override { return inner_->reads_async(); }

  Status ReadAt(uint64_t offset, std::span<std::byte> out) const override {
    return ReadAndWait(*this, offset, out);
  }

  void ReadAsync(uint64_t offset, std::span<std::byte> out,
                 std::function<void(Status)> done) const override {
    const uint64_t size = inner_->size();
    if (out.empty() || offset > size || out.size() > size - offset) {
      inner_->ReadAsync(offset, out, std::move(done));  // the inner source names the error
      return;
    }
    const uint64_t page_bytes = pages_->options().page_bytes;
    const uint64_t first = offset / page_bytes;
    const uint64_t last = (offset + out.size() - 1) / page_bytes;
    // From each cached page, the part of it `out` covers, straight into `out`.
    std::vector<uint64_t> missing;
    for (uint64_t p = first; p <= last; ++p) {
      const uint64_t lo = p * page_bytes;
      const uint64_t hi = std::min(lo + page_bytes, size);
      const uint64_t from = std::max(lo, offset);
      const uint64_t to = std::min<uint64_t>(hi, offset + out.size());
      const std::span<std::byte> part =
          out.subspan(static_cast<size_t>(from - offset), static_cast<size_t>(to - from));
      if (!pages_->Read(key_, p, hi - lo, from - lo, part))
        missing.push_back(p);
    }
    if (missing.empty()) {
      done(Status::Ok());
      return;
    }
    // One fetch of the pages from the first missing to the last (those between that were
    // cached come again: one request is cheaper than several).
    const uint64_t lo = missing.front() * page_bytes;
    const uint64_t hi = std::min((missing.back() + 1) * page_bytes, size);
    auto fetched = std::make_shared<std::vector<std::byte>>(static_cast<size_t>(hi - lo));
    inner_->ReadAsync(lo, *fetched,
                      [fetched, lo, offset, out, pages = pages_, key = key_, page_bytes,
                       done = std::move(done)](Status status) {
                        if (status.ok()) {
                          for (uint64_t at = lo; at < lo + fetched->size(); at += page_bytes) {
                            const auto n = static_cast<size_t>(
                                std::min<uint64_t>(page_bytes, lo + fetched->size() - at));
                            const std::span<const std::byte> bytes(fetched->data() + (at - lo), n);
                            pages->Write(key, at / page_bytes, bytes);
                            CopyOut(at, bytes, offset, out);
                          }
                        }
                        done(std::move(status));
                      });
  }

 private:
  // The part of `bytes` (the file's bytes from `at`) inside [offset, offset + out.size())
  // into `out`.
  static void CopyOut(uint64_t at, std::span<const std::byte> bytes, uint64_t offset,
                      std::span<std::byte> out) {
    const uint64_t from = std::max(at, offset);
    const uint64_t to = std::min<uint64_t>(at + bytes.size(), offset + out.size());
    if (from < to) {
      std::memcpy(out.data() + (from - offset), bytes.data() + (from - at),
                  static_cast<size_t>(to - from));
    }
  }

  const std::shared_ptr<ByteSource> inner_;
  const std::shared_ptr<PageFiles> pages_;
  const std::string key_;
};

class CachingStore final : public Store {
 public:
  CachingStore(std::shared_ptr<const Store> inner, std::shared_ptr<PageFiles> pages)
      : inner_(std::move(inner)), pages_(std::move(pages)) {}

  Result<std::shared_ptr<ByteSource>> Open(const std::string& path, IoMode mode) const override {
    PATCHFEED_ASSIGN_OR_RETURN(std::shared_ptr<ByteSource> source, inner_->Open(path, mode));
    return std::shared_ptr<ByteSource>(std::make_shared<CachedSource>(std::move(source), pages_));
  }
  // The inner store opens (its HEAD, or what it remembers); the first bytes are then read
  // through the cache, which serves or keeps them.
  void OpenAsync(const std::string& path, IoMode mode, std::span<std::byte> head,
                 std::function<void(Result<OpenedFile>)> done) const override {
    inner_->OpenAsync(
        path, mode, {}, [pages = pages_, head, done = std::move(done)](Result<OpenedFile> opened) {
          if (!opened.ok()) {
            done(opened.status());
            return;
          }
          auto cached = std::make_shared<CachedSource>(std::move(opened->file), pages);
          const uint64_t n = std::min<uint64_t>(head.size(), cached->size());
          if (n == 0) {
            done(OpenedFile{std::move(cached), 0});
            return;
          }
          CachedSource& source = *cached;
          source.ReadAsync(0, head.first(n),
                           [cached = std::move(cached), n, done](Status status) mutable {
                             if (!status.ok()) {
                               done(std::move(status));
                               return;
                             }
                             done(OpenedFile{std::move(cached), n});
                           });
        });
  }
  Result<EntryKind> Stat(const std::string& path) const override { return inner_->Stat(path); }
  Result<std::vector<std::string>> List(const std::string& folder) const override {
    return inner_->List(folder);
  }
  std::shared_ptr<const std::vector<std::byte>> Recall(const std::string& key) const override {
    return inner_->Recall(key);
  }
  void Keep(const std::string& key, std::span<const std::byte> bytes) const override {
    inner_->Keep(key, bytes);
  }
  bool remote() const override { return inner_->remote(); }
  StoreStats stats() const override { return inner_->stats(); }

 private:
  const std::shared_ptr<const Store> inner_;
  const std::shared_ptr<PageFiles> pages_;
};

}  // namespace

Result<std::shared_ptr<const Store>> CachedStore(std::shared_ptr<const Store> inner,
                                                 const RangeCacheOptions& options) {
  if (options.folder.empty())
    return InvalidArgumentError("a range cache needs a folder (cache_dir)");
  if (options.max_bytes == 0 || options.page_bytes == 0) {
    return InvalidArgumentError(
        StrCat("a range cache needs cache_max_bytes and its page size "
               "above 0, not ",
               options.max_bytes, " and ", options.page_bytes));
  }
  std::error_code ec;
  fs::create_directories(options.folder, ec);
  if (ec) {
    return IoError(
        StrCat(options.folder, ": cannot make the range cache's folder: ", ec.message()));
  }
  return std::shared_ptr<const Store>(
      std::make_shared<CachingStore>(std::move(inner), std::make_shared<PageFiles>(options)));
}

}  // namespace patchfeed::storage
