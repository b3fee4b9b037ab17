// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
/// \file
/// patchfeed_latency_fs: a read-only FUSE passthrough of a source directory that behaves like
/// a network file system, for testing and benchmarking the loader's reads (issue 15).
///
///   patchfeed_latency_fs --source DIR MOUNTPOINT [-f] [--delay-us N] [--bandwidth-mbps X]
///       [--max-read BYTES] [--eio-path-substring S] [--eio-range A:B]
///       [--short-read-path-substring S] [--stats FILE] [-d] [-o fuse-option,...]
///
/// * Every file is opened with direct_io: the kernel page cache is bypassed, every read of a
///   file is a request to this process, and every run is cold.
/// * Each read request is answered no earlier than `--delay-us` after it arrived. Requests
///   never wait for each other: the low-level handler reads the source at once, queues the
///   reply with its due time and returns, and one reply thread answers requests as they come
///   due. So N reads issued together finish after about one delay, not N (what a network file
///   system with many requests in flight does; the point of the bed).
/// * `--bandwidth-mbps X` (megabytes, 10^6 bytes, per second; 0 = unlimited) is one link
///   shared by all requests: a request's bytes cross it after its delay and after the bytes of
///   requests queued before it, so N concurrent reads of B bytes take delay + N * B / X.
/// * `--max-read` (4 KiB to 1 MiB, default 128 KiB) is the largest read request the kernel
///   sends (network file systems split reads, e.g. NFS's rsize); a direct_io read larger than
///   that becomes several requests, sent one after another by the kernel for one synchronous
///   read call.
/// * Faults, matched against a file's path relative to the mount root: reads of files whose
///   path contains `--eio-path-substring` fail with EIO (only reads overlapping bytes [A, B)
///   of the file when `--eio-range A:B` is given, e.g. to let a frame's header be read and
///   its chunks fail); reads of files whose path contains `--short-read-path-substring`
///   return half the bytes asked for (at least 1) when the file has them all.
/// * Statistics: the virtual file `.latency_fs_stats` at the root (not listed by readdir)
///   reads as one JSON object (requests served, bytes, the most requests in flight at once,
///   the largest request, fault replies); writing anything to it resets the counters. With
///   `--stats FILE` the same JSON is written to FILE when the file system stops.
/// * `-f` keeps it in the foreground; SIGINT, SIGTERM or `fusermount3 -u MOUNTPOINT` unmount
///   it cleanly (queued replies are sent first).
///
/// Inode numbers are handed out per path and kept until unmount (forget is a no-op): the
/// trees this serves are test datasets, not millions of files.

#define FUSE_USE_VERSION 35

#include <dirent.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tests/fuse/latency_fs_options.h"

namespace patchfeed::latency_fs {
namespace {

using Clock = std::chrono::steady_clock;

constexpr fuse_ino_t kStatsIno = 2;  // FUSE_ROOT_ID is 1
constexpr const char kStatsName[] = ".latency_fs_stats";
constexpr double kAttrTimeoutS = 1.0;

/// Counters shown by `.latency_fs_stats`; guarded by LatencyFs::stats_mu_.
struct Stats {
  uint64_t requests = 0;  // read requests answered on source files (faults included)
  uint64_t bytes = 0;     // bytes returned by them
  uint64_t in_flight = 0;
  uint64_t max_in_flight = 0;
  uint64_t max_request_bytes = 0;  // largest size the kernel asked for
  uint64_t eio_replies = 0;
  uint64_t short_replies = 0;
  uint64_t opens = 0;
};

/// A reply held back until `due`: data (`error` 0) or an errno.
struct PendingReply {
  Clock::time_point due;
  uint64_t sequence = 0;  // FIFO among equal due times
  fuse_req_t req = nullptr;
  int error = 0;
  std::unique_ptr<char[]> data;
  size_t size = 0;
  bool shortened = false;  // a short read injected on purpose
};

/// An open source file; `fh` of its fuse_file_info points at one.
struct OpenFile {
  int fd = -1;
  bool eio = false;
  bool short_reads = false;
};

/// An open `.latency_fs_stats`: the JSON as of open, so reads of one open see one snapshot.
struct OpenStats {
  std::string text;
};

struct OpenDir {
  std::vector<std::pair<std::string, struct stat>> entries;  // ".", "..", then the source's
};

class LatencyFs {
 public:
  explicit LatencyFs(Options options) : options_(std::move(options)) {
    paths_.push_back("");  // ino 1, the root
    paths_.push_back(kStatsName);
  }

  const Options& options() const { return options_; }

  /// Starts the reply thread with every signal blocked, so signals reach libfuse's loop.
  void StartReplies() {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    reply_thread_ = std::thread([this] { RunReplies(); });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }

  /// Sends every queued reply now and joins the reply thread.
  void StopReplies() {
    {
      std::lock_guard lock(queue_mu_);
      stopping_ = true;
    }
    queue_cv_.notify_all();
    if (reply_thread_.joinable())
      reply_thread_.join();
  }

  std::string StatsJson() {
    Stats s;
    {
      std::lock_guard lock(stats_mu_);
      s = stats_;
    }
    auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
    char buf[1024];
    std::snprintf(buf, sizeof(buf),
                  "{\"requests\": %llu, \"bytes\": %llu, \"in_flight\": %llu, "
                  "\"max_in_flight\": %llu, \"max_request_bytes\": %llu, \"eio_replies\": %llu, "
                  "\"short_replies\": %llu, \"opens\": %llu, \"delay_us\": %lld, "
                  "\"bandwidth_bytes_per_s\": %.0f, \"max_read\": %llu}\n",
                  u(s.requests), u(s.bytes), u(s.in_flight), u(s.max_in_flight),
                  u(s.max_request_bytes), u(s.eio_replies), u(s.short_replies), u(s.opens),
                  static_cast<long long>(options_.delay_us), options_.bandwidth_bytes_per_s,
                  u(options_.max_read));
    return buf;
  }

  void ResetStats() {
    std::lock_guard lock(stats_mu_);
    const uint64_t in_flight = stats_.in_flight;
    stats_ = Stats{};
    stats_.in_flight = stats_.max_in_flight = in_flight;
  }

  void WriteStatsFile() {
    if (options_.stats_path.empty())
      return;
    const std::string json = StatsJson();
    FILE* f = std::fopen(options_.stats_path.c_str(), "w");
    if (f == nullptr) {
      std::fprintf(stderr, "latency_fs: cannot write %s: %s\n", options_.stats_path.c_str(),
                   std::strerror(errno));
      return;
    }
    std::fputs(json.c_str(), f);
    std::fclose(f);
  }

  // --- inodes ---------------------------------------------------------------------------

  /// The path of `ino` relative to the source ("" for the root), or nullopt if unknown.
  std::optional<std::string> PathOf(fuse_ino_t ino) {
    std::lock_guard lock(inode_mu_);
    if (ino < 1 || ino > paths_.size())
      return std::nullopt;
    return paths_[ino - 1];
  }

  fuse_ino_t InoOf(const std::string& path) {
    std::lock_guard lock(inode_mu_);
    auto [it, inserted] = inos_.try_emplace(path, paths_.size() + 1);
    if (inserted)
      paths_.push_back(path);
    return it->second;
  }

  std::string SourcePath(const std::string& rel) const {
    return rel.empty() ? options_.source : options_.source + "/" + rel;
  }

  static void StatsAttr(struct stat* st) {
    *st = {};
    st->st_ino = kStatsIno;
    st->st_mode = S_IFREG | 0644;
    st->st_nlink = 1;
    st->st_uid = getuid();
    st->st_gid = getgid();
  }

  // --- reads ----------------------------------------------------------------------------

  /// Serves a read of a source file: reads the source now and queues the reply for when the
  /// delay and the shared link allow it.
  void Read(fuse_req_t req, const OpenFile& file, size_t size, off_t offset) {
    const Clock::time_point arrival = Clock::now();
    {
      std::lock_guard lock(stats_mu_);
      ++stats_.in_flight;
      stats_.max_in_flight = std::max(stats_.max_in_flight, stats_.in_flight);
      stats_.max_request_bytes = std::max<uint64_t>(stats_.max_request_bytes, size);
    }
    PendingReply reply;
    reply.req = req;
    const auto begin = static_cast<uint64_t>(offset);
    if (file.eio && begin < options_.eio_end && begin + size > options_.eio_begin) {
      reply.error = EIO;
    } else {
      reply.data = std::make_unique_for_overwrite<char[]>(size);
      const ssize_t n = pread(file.fd, reply.data.get(), size, offset);
      if (n < 0) {
        reply.error = errno;
      } else {
        reply.size = static_cast<size_t>(n);
        if (file.short_reads && reply.size == size && size > 1) {
          reply.size = size / 2;
          reply.shortened = true;
        }
      }
    }
    reply.due = arrival + std::chrono::microseconds(options_.delay_us);
    if (options_.bandwidth_bytes_per_s > 0 && reply.size > 0) {
      std::lock_guard lock(link_mu_);
      const auto transfer =
          std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
              static_cast<double>(reply.size) / options_.bandwidth_bytes_per_s));
      link_free_ = std::max(link_free_, reply.due) + transfer;
      reply.due = link_free_;
    }
    if (reply.due <= Clock::now()) {
      Send(std::move(reply));
      return;
    }
    {
      std::lock_guard lock(queue_mu_);
      reply.sequence = next_sequence_++;
      queue_.push_back(std::move(reply));
      std::push_heap(queue_.begin(), queue_.end(), Later);
    }
    queue_cv_.notify_one();
  }

  uint64_t CountOpen() {
    std::lock_guard lock(stats_mu_);
    return ++stats_.opens;
  }

 private:
  static bool Later(const PendingReply& a, const PendingReply& b) {
    return a.due != b.due ? a.due > b.due : a.sequence > b.sequence;
  }

  /// Counts the reply, then answers: the counters are final before the reader wakes up.
  void Send(PendingReply reply) {
    {
      std::lock_guard lock(stats_mu_);
      --stats_.in_flight;
      ++stats_.requests;
      if (reply.error == EIO)
        ++stats_.eio_replies;
      if (reply.error == 0)
        stats_.bytes += reply.size;
      if (reply.shortened)
        ++stats_.short_replies;
    }
    if (reply.error != 0) {
      fuse_reply_err(reply.req, reply.error);
    } else {
      fuse_reply_buf(reply.req, reply.data.get(), reply.size);
    }
  }

  void RunReplies() {
    std::unique_lock lock(queue_mu_);
    for (;;) {
      if (queue_.empty()) {
        if (stopping_)
          return;
        queue_cv_.wait(lock);
        continue;
      }
      if (!stopping_ && queue_.front().due > Clock::now()) {
        // A copy: wait_until reads its deadline again after waking, and a Read that queued a
        // reply meanwhile may have moved the queue's storage (found by ASan).
        const Clock::time_point due = queue_.front().due;
        queue_cv_.wait_until(lock, due);
        continue;
      }
      std::pop_heap(queue_.begin(), queue_.end(), Later);
      PendingReply reply = std::move(queue_.back());
      queue_.pop_back();
      lock.unlock();
      Send(std::move(reply));
      lock.lock();
    }
  }

  const Options options_;

  std::mutex inode_mu_;
  std::vector<std::string> paths_;  // index ino - 1
  std::unordered_map<std::string, fuse_ino_t> inos_;

  std::mutex stats_mu_;
  Stats stats_;

  std::mutex link_mu_;
  Clock::time_point link_free_{};

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::vector<PendingReply> queue_;  // a min-heap on (due, sequence)
  uint64_t next_sequence_ = 0;
  bool stopping_ = false;
  std::thread reply_thread_;
};

LatencyFs& Fs(fuse_req_t req) { return *static_cast<LatencyFs*>(fuse_req_userdata(req)); }

/// Whether `path` contains a non-empty `part` (the fault options' match).
bool Contains(const std::string& path, const std::string& part) {
  return !part.empty() && path.find(part) != std::string::npos;
}

std::string Join(const std::string& dir, const char* name) {
  return dir.empty() ? std::string(name) : dir + "/" + name;
}

// --- low-level operations -----------------------------------------------------------------

void OpInit(void* userdata, struct fuse_conn_info* conn) {
  auto* fs = static_cast<LatencyFs*>(userdata);
  // The same value as the max_read mount option (libfuse checks); libfuse derives the
  // kernel's max_pages (the request size limit, 128 KiB by default) from max_write.
  conn->max_read = static_cast<unsigned>(fs->options().max_read);
  conn->max_write = std::max(conn->max_write, conn->max_read);
  // The kernel's limit on asynchronous requests per connection (io_uring's and read-ahead's
  // reads; blocking preads are not counted), 12 by default: a network file system's client
  // keeps many more in flight, and the reads-in-flight tests need it above their depth.
  conn->max_background = 256;
  conn->congestion_threshold = 192;
}

void OpLookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  LatencyFs& fs = Fs(req);
  fuse_entry_param entry{};
  entry.attr_timeout = entry.entry_timeout = kAttrTimeoutS;
  if (parent == FUSE_ROOT_ID && std::strcmp(name, kStatsName) == 0) {
    entry.ino = kStatsIno;
    LatencyFs::StatsAttr(&entry.attr);
    entry.attr_timeout = entry.entry_timeout = 0;
    fuse_reply_entry(req, &entry);
    return;
  }
  const std::optional<std::string> dir = fs.PathOf(parent);
  if (!dir) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  const std::string rel = Join(*dir, name);
  if (stat(fs.SourcePath(rel).c_str(), &entry.attr) != 0) {
    fuse_reply_err(req, errno);
    return;
  }
  entry.ino = fs.InoOf(rel);
  entry.attr.st_ino = entry.ino;
  fuse_reply_entry(req, &entry);
}

void OpForget(fuse_req_t req, fuse_ino_t, uint64_t) { fuse_reply_none(req); }

void OpGetattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  LatencyFs& fs = Fs(req);
  struct stat st = {};
  if (ino == kStatsIno) {
    LatencyFs::StatsAttr(&st);
    fuse_reply_attr(req, &st, 0);
    return;
  }
  const std::optional<std::string> rel = fs.PathOf(ino);
  if (!rel) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  if (stat(fs.SourcePath(*rel).c_str(), &st) != 0) {
    fuse_reply_err(req, errno);
    return;
  }
  st.st_ino = ino;
  fuse_reply_attr(req, &st, kAttrTimeoutS);
}

// Only the stats file may be changed (truncated when opened for writing).
void OpSetattr(fuse_req_t req, fuse_ino_t ino, struct stat*, int, fuse_file_info*) {
  if (ino != kStatsIno) {
    fuse_reply_err(req, EROFS);
    return;
  }
  struct stat st = {};
  LatencyFs::StatsAttr(&st);
  fuse_reply_attr(req, &st, 0);
}

void OpOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  LatencyFs& fs = Fs(req);
  fi->direct_io = 1;
  fi->keep_cache = 0;
  if (ino == kStatsIno) {
    fi->fh = reinterpret_cast<uint64_t>(new OpenStats{fs.StatsJson()});
    fuse_reply_open(req, fi);
    return;
  }
  if ((fi->flags & O_ACCMODE) != O_RDONLY) {
    fuse_reply_err(req, EROFS);
    return;
  }
  const std::optional<std::string> rel = fs.PathOf(ino);
  if (!rel) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  const int fd = open(fs.SourcePath(*rel).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    fuse_reply_err(req, errno);
    return;
  }
  const Options& o = fs.options();
  auto* file =
      new OpenFile{fd, Contains(*rel, o.eio_substring), Contains(*rel, o.short_read_substring)};
  fs.CountOpen();
  fi->fh = reinterpret_cast<uint64_t>(file);
  if (fuse_reply_open(req, fi) != 0) {  // the opener was interrupted: no release will come
    close(fd);
    delete file;
  }
}

void OpRead(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi) {
  if (ino == kStatsIno) {
    // Replied from a copy: the kernel hands the reader its bytes while fuse_reply_buf is still
    // in writev, so the reader's close (and the release that frees the open's text, on another
    // thread) may come before writev returns.
    const std::string& text = reinterpret_cast<OpenStats*>(fi->fh)->text;
    const size_t begin = std::min<size_t>(static_cast<size_t>(offset), text.size());
    const std::string reply = text.substr(begin, std::min(size, text.size() - begin));
    fuse_reply_buf(req, reply.data(), reply.size());
    return;
  }
  Fs(req).Read(req, *reinterpret_cast<OpenFile*>(fi->fh), size, offset);
}

void OpWrite(fuse_req_t req, fuse_ino_t ino, const char*, size_t size, off_t, fuse_file_info*) {
  if (ino != kStatsIno) {
    fuse_reply_err(req, EROFS);
    return;
  }
  Fs(req).ResetStats();
  fuse_reply_write(req, size);
}

void OpRelease(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (ino == kStatsIno) {
    delete reinterpret_cast<OpenStats*>(fi->fh);
  } else {
    auto* file = reinterpret_cast<OpenFile*>(fi->fh);
    close(file->fd);
    delete file;
  }
  fuse_reply_err(req, 0);
}

void OpOpendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  LatencyFs& fs = Fs(req);
  const std::optional<std::string> rel = fs.PathOf(ino);
  if (!rel || ino == kStatsIno) {
    fuse_reply_err(req, rel ? ENOTDIR : ENOENT);
    return;
  }
  DIR* dir = opendir(fs.SourcePath(*rel).c_str());
  if (dir == nullptr) {
    fuse_reply_err(req, errno);
    return;
  }
  auto listing = std::make_unique<OpenDir>();
  while (const dirent* e = readdir(dir)) {
    struct stat st = {};
    st.st_ino = e->d_ino;
    st.st_mode = static_cast<mode_t>(DTTOIF(e->d_type));
    listing->entries.emplace_back(e->d_name, st);
  }
  closedir(dir);
  fi->fh = reinterpret_cast<uint64_t>(listing.release());
  fuse_reply_open(req, fi);
}

void OpReaddir(fuse_req_t req, fuse_ino_t, size_t size, off_t offset, fuse_file_info* fi) {
  const auto& entries = reinterpret_cast<OpenDir*>(fi->fh)->entries;
  std::vector<char> buf(size);
  size_t used = 0;
  for (size_t i = static_cast<size_t>(offset); i < entries.size(); ++i) {
    const size_t need =
        fuse_add_direntry(req, buf.data() + used, size - used, entries[i].first.c_str(),
                          &entries[i].second, static_cast<off_t>(i + 1));
    if (need > size - used)
      break;
    used += need;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void OpReleasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  delete reinterpret_cast<OpenDir*>(fi->fh);
  fuse_reply_err(req, 0);
}

void OpStatfs(fuse_req_t req, fuse_ino_t) {
  struct statvfs st = {};
  if (statvfs(Fs(req).options().source.c_str(), &st) != 0) {
    fuse_reply_err(req, errno);
    return;
  }
  fuse_reply_statfs(req, &st);
}

fuse_lowlevel_ops MakeOps() {
  fuse_lowlevel_ops ops{};
  ops.init = OpInit;
  ops.lookup = OpLookup;
  ops.forget = OpForget;
  ops.getattr = OpGetattr;
  ops.setattr = OpSetattr;
  ops.open = OpOpen;
  ops.read = OpRead;
  ops.write = OpWrite;
  ops.release = OpRelease;
  ops.opendir = OpOpendir;
  ops.readdir = OpReaddir;
  ops.releasedir = OpReleasedir;
  ops.statfs = OpStatfs;
  return ops;
}

int Run(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, &options))
    return 2;
  struct stat st = {};
  if (stat(options.source.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    std::fprintf(stderr, "latency_fs: --source %s is not a directory\n", options.source.c_str());
    return 2;
  }
  for (std::string* path : {&options.source, &options.mountpoint}) {
    char* real = realpath(path->c_str(), nullptr);  // libfuse may chdir("/") when daemonizing
    if (real == nullptr) {
      std::fprintf(stderr, "latency_fs: %s: %s\n", path->c_str(), std::strerror(errno));
      return 2;
    }
    *path = real;
    std::free(real);
  }

  // libfuse's own options: ours first, the user's -o after (so they can override).
  std::string fuse_opts = "fsname=latency_fs:" + options.source +
                          ",subtype=latency_fs,max_read=" + std::to_string(options.max_read);
  for (const std::string& o : options.fuse_options)
    fuse_opts += "," + o;
  std::vector<std::string> fuse_argv_storage = {argv[0], "-o", fuse_opts};
  if (options.debug)
    fuse_argv_storage.emplace_back("-d");
  std::vector<char*> fuse_argv;
  for (std::string& a : fuse_argv_storage)
    fuse_argv.push_back(a.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(fuse_argv.size()), fuse_argv.data());

  LatencyFs fs(std::move(options));
  const fuse_lowlevel_ops ops = MakeOps();
  fuse_session* se = fuse_session_new(&args, &ops, sizeof(ops), &fs);
  if (se == nullptr)
    return 1;
  int rc = 1;
  if (fuse_set_signal_handlers(se) == 0) {
    if (fuse_session_mount(se, fs.options().mountpoint.c_str()) == 0) {
      fuse_daemonize(fs.options().foreground ? 1 : 0);
      fs.StartReplies();  // after daemonizing: fork keeps only the calling thread
      fuse_loop_config config{};
      config.clone_fd = 0;
      config.max_idle_threads = 16;
      // Stopped by SIGINT, SIGTERM or SIGHUP, libfuse returns the signal number: a clean stop.
      const int loop_rc = fuse_session_loop_mt(se, &config);
      rc = loop_rc == 0 || loop_rc == SIGINT || loop_rc == SIGTERM || loop_rc == SIGHUP ? 0 : 1;
      fs.StopReplies();
      fuse_session_unmount(se);
      fs.WriteStatsFile();
    }
    fuse_remove_signal_handlers(se);
  }
  fuse_session_destroy(se);
  fuse_opt_free_args(&args);
  return rc;
}

}  // namespace
}  // namespace patchfeed::latency_fs

int main(int argc, char** argv) { return patchfeed::latency_fs::Run(argc, argv); }
