// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// IoEngine, both backends (io_uring skips where the kernel refuses it): every byte of many
// concurrent reads, the depth bound, short reads and errno errors naming the request, exactly
// one callback per request through shutdown, engines made and dropped in a loop, and reads
// over patchfeed_latency_fs (a FUSE file system that delays each read) overlapping their
// delays, where FUSE can be mounted.

#include "storage/io_engine.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/testutil/status_matchers.h"

extern char** environ;

namespace patchfeed::loader::internal_loader {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

/// A fresh temporary directory, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "patchfeed_io_XXXXXX").string();
    path_ = mkdtemp(templ.data()) != nullptr ? templ : "";
    EXPECT_FALSE(path_.empty()) << std::strerror(errno);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<std::byte> RandomBytes(size_t n, uint64_t seed) {
  std::vector<std::byte> v(n);
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t x = rng();
    std::memcpy(v.data() + i, &x, std::min<size_t>(8, n - i));
  }
  return v;
}

void WriteFile(const std::string& path, const std::vector<std::byte>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << path;
}

/// An open read-only descriptor, closed at scope exit.
class Fd {
 public:
  explicit Fd(const std::string& path) : fd_(open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    EXPECT_GE(fd_, 0) << path << ": " << std::strerror(errno);
  }
  ~Fd() {
    if (fd_ >= 0)
      close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

/// Collects the callbacks of `n` requests: how often each ran and with what.
class Completions {
 public:
  explicit Completions(size_t n) : calls_(n, 0), statuses_(n) {}

  std::function<void(Status)> For(size_t i) {
    return [this, i](Status s) { Record(i, std::move(s)); };
  }
  void Record(size_t i, Status s) {
    std::lock_guard lock(mu_);
    ++calls_[i];
    statuses_[i] = std::move(s);
    ++total_;
    cv_.notify_all();
  }
  /// Waits until `n` callbacks ran (a hang fails the test after a minute instead).
  bool WaitFor(size_t n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(60), [&] { return total_ >= n; });
  }
  bool WaitAll() { return WaitFor(calls_.size()); }
  int calls(size_t i) const {
    std::lock_guard lock(mu_);
    return calls_[i];
  }
  Status status(size_t i) const {
    std::lock_guard lock(mu_);
    return statuses_[i];
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int> calls_;
  std::vector<Status> statuses_;
  size_t total_ = 0;
};

std::string BackendName(const ::testing::TestParamInfo<storage::IoBackend>& info) {
  return info.param == storage::IoBackend::kIoUring ? "IoUring" : "PreadPool";
}

/// Why io_uring cannot be used here, or nothing.
std::optional<std::string> UringUnavailable() {
  static const std::optional<std::string> reason = []() -> std::optional<std::string> {
    auto engine = storage::IoEngine::Create(storage::IoBackend::kIoUring, 1);
    if (engine.ok())
      return std::nullopt;
    return engine.status().ToString();
  }();
  return reason;
}

class IoEngineTest : public ::testing::TestWithParam<storage::IoBackend> {
 protected:
  void SetUp() override {
    if (GetParam() == storage::IoBackend::kIoUring && UringUnavailable())
      GTEST_SKIP() << "io_uring is refused on this machine: " << *UringUnavailable();
  }
  std::unique_ptr<storage::IoEngine> Make(int depth) {
    auto engine = storage::IoEngine::Create(GetParam(), depth);
    EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    return engine.ok() ? std::move(engine).value() : nullptr;
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, IoEngineTest,
                         ::testing::Values(storage::IoBackend::kIoUring,
                                           storage::IoBackend::kPreadPool),
                         BackendName);

TEST_P(IoEngineTest, RandomReadsFromFourThreadsAreExact) {
  constexpr size_t kFileBytes = size_t{4} << 20;
  constexpr int kReads = 1000;
  constexpr int kThreads = 4;
  constexpr int kDepth = 16;
  ScratchDir dir;
  const std::string path = dir.path() + "/data.bin";
  const std::vector<std::byte> file = RandomBytes(kFileBytes, 1);
  WriteFile(path, file);
  Fd fd(path);

  // Sizes log-uniform in [1 B, 256 KiB], so single bytes and whole blocks both occur often.
  struct Read {
    uint64_t offset;
    std::vector<std::byte> out;
  };
  std::vector<Read> reads(kReads);
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> log_size(0.0, std::log(256.0 * 1024.0));
  int64_t total_bytes = 0;
  for (Read& r : reads) {
    const size_t size =
        std::clamp<size_t>(static_cast<size_t>(std::exp(log_size(rng))), 1, 256 * 1024);
    r.offset = std::uniform_int_distribution<uint64_t>(0, kFileBytes - size)(rng);
    r.out.assign(size, std::byte{0x5a});
    total_bytes += static_cast<int64_t>(size);
  }

  auto engine = Make(kDepth);
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->depth(), kDepth);
  Completions done(kReads);
  std::vector<std::thread> submitters;
  for (int t = 0; t < kThreads; ++t) {
    submitters.emplace_back([&, t] {
      for (int i = t; i < kReads; i += kThreads)
        engine->Submit({fd.get(), reads[i].offset, reads[i].out, "case 'random'", done.For(i)});
    });
  }
  for (std::thread& t : submitters)
    t.join();
  ASSERT_TRUE(done.WaitAll());

  for (int i = 0; i < kReads; ++i) {
    ASSERT_EQ(done.calls(i), 1) << "read " << i;
    ASSERT_OK(done.status(i));
    ASSERT_EQ(std::memcmp(reads[i].out.data(), file.data() + reads[i].offset, reads[i].out.size()),
              0)
        << "read " << i << ": " << reads[i].out.size() << " bytes at " << reads[i].offset;
  }
  const storage::IoEngineStats stats = engine->stats();
  EXPECT_EQ(stats.submitted, kReads);
  EXPECT_EQ(stats.completed, kReads);
  EXPECT_EQ(stats.bytes, total_bytes);
  EXPECT_EQ(stats.in_flight, 0);
  EXPECT_GE(stats.max_in_flight, 1);
  EXPECT_LE(stats.max_in_flight, kDepth);
}

TEST_P(IoEngineTest, DepthBoundsReadsAtTheKernel) {
  ScratchDir dir;
  const std::string path = dir.path() + "/data.bin";
  const std::vector<std::byte> file = RandomBytes(1 << 20, 3);
  WriteFile(path, file);
  Fd fd(path);
  for (int depth : {1, 3}) {
    auto engine = Make(depth);
    ASSERT_NE(engine, nullptr);
    constexpr int kReads = 300;
    std::vector<std::vector<std::byte>> outs(kReads, std::vector<std::byte>(4096));
    Completions done(kReads);
    for (int i = 0; i < kReads; ++i)
      engine->Submit({fd.get(), static_cast<uint64_t>(i) * 3000, outs[i], "depth", done.For(i)});
    ASSERT_TRUE(done.WaitAll());
    for (int i = 0; i < kReads; ++i) {
      ASSERT_OK(done.status(i));
      ASSERT_EQ(std::memcmp(outs[i].data(), file.data() + i * 3000, 4096), 0) << i;
    }
    EXPECT_LE(engine->stats().max_in_flight, depth);
    EXPECT_GE(engine->stats().max_in_flight, 1);
  }
}

TEST_P(IoEngineTest, ReadPastTheEndIsDataLossNamingTheRequest) {
  ScratchDir dir;
  const std::string path = dir.path() + "/small.b2nd";
  const std::vector<std::byte> file = RandomBytes(4096, 4);
  WriteFile(path, file);
  Fd fd(path);
  const std::string label = "case 'x': " + path;
  auto engine = Make(4);
  ASSERT_NE(engine, nullptr);
  std::vector<std::byte> tail(100), beyond(10);
  Completions done(2);
  engine->Submit({fd.get(), 4050, tail, label, done.For(0)});
  engine->Submit({fd.get(), 10000, beyond, label, done.For(1)});
  ASSERT_TRUE(done.WaitAll());
  EXPECT_THAT(done.status(0),
              StatusIs(StatusCode::kDataLoss,
                       "short read: 46 of 100 bytes at offset 4050 of case 'x': " + path));
  EXPECT_THAT(done.status(1),
              StatusIs(StatusCode::kDataLoss,
                       "short read: 0 of 10 bytes at offset 10000 of case 'x': " + path));
  EXPECT_EQ(std::memcmp(tail.data(), file.data() + 4050, 46), 0);  // what the file had
  EXPECT_EQ(engine->stats().bytes, 46);
}

TEST_P(IoEngineTest, RefusedReadsAreIoErrorsNamingTheRequest) {
  ScratchDir dir;
  // The engine and the directory first: their descriptors must not reuse the closed number.
  auto engine = Make(4);
  ASSERT_NE(engine, nullptr);
  Fd directory(dir.path());
  const std::string path = dir.path() + "/gone.b2nd";
  WriteFile(path, RandomBytes(100, 5));
  const int closed_fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(closed_fd, 0);
  close(closed_fd);

  std::vector<std::byte> a(5), b(7), c(9);
  const std::string closed_label = "case 'closed': " + path;
  const std::string dir_label = "case 'dir': " + dir.path();
  Completions done(3);
  engine->Submit({-1, 7, a, "case 'neg': /no/file", done.For(0)});
  engine->Submit({closed_fd, 0, b, closed_label, done.For(1)});
  engine->Submit({directory.get(), 0, c, dir_label, done.For(2)});
  ASSERT_TRUE(done.WaitAll());
  EXPECT_THAT(done.status(0),
              StatusIs(StatusCode::kIoError,
                       "read of 5 bytes at offset 7 of case 'neg': /no/file failed: Bad file "
                       "descriptor (errno 9)"));
  EXPECT_THAT(done.status(1),
              StatusIs(StatusCode::kIoError, AllOf(HasSubstr("read of 7 bytes at offset 0 of case "
                                                             "'closed': " +
                                                             path),
                                                   HasSubstr("Bad file descriptor"))));
  EXPECT_THAT(done.status(2),
              StatusIs(StatusCode::kIoError,
                       AllOf(HasSubstr("case 'dir': " + dir.path()), HasSubstr("Is a directory"))));
}

TEST_P(IoEngineTest, EmptyReadCompletesWithoutTouchingTheFile) {
  auto engine = Make(2);
  ASSERT_NE(engine, nullptr);
  Completions done(1);
  engine->Submit({-1, 123, {}, "empty", done.For(0)});
  ASSERT_TRUE(done.WaitAll());
  EXPECT_OK(done.status(0));
}

// A second read that needs the first one's bytes (a chunk's block offsets, then a block) is
// submitted from the first one's callback.
TEST_P(IoEngineTest, CallbacksMaySubmit) {
  ScratchDir dir;
  const std::string path = dir.path() + "/chained.bin";
  std::vector<std::byte> file = RandomBytes(1 << 20, 6);
  constexpr int kChains = 200;
  for (int i = 0; i < kChains; ++i) {  // 8 bytes at i * 8: where chain i's payload lies
    const uint64_t target = 4096 + static_cast<uint64_t>(i) * 5000;
    std::memcpy(file.data() + i * 8, &target, 8);
  }
  WriteFile(path, file);
  Fd fd(path);
  auto engine = Make(8);
  ASSERT_NE(engine, nullptr);
  std::vector<uint64_t> heads(kChains);
  std::vector<std::vector<std::byte>> payloads(kChains, std::vector<std::byte>(3000));
  Completions done(kChains);
  for (int i = 0; i < kChains; ++i) {
    auto head = std::as_writable_bytes(std::span(&heads[i], 1));
    engine->Submit({fd.get(), static_cast<uint64_t>(i) * 8, head, "head", [&, i](Status s) {
                      if (!s.ok()) {
                        done.Record(i, s);
                        return;
                      }
                      engine->Submit({fd.get(), heads[i], payloads[i], "payload", done.For(i)});
                    }});
  }
  ASSERT_TRUE(done.WaitAll());
  for (int i = 0; i < kChains; ++i) {
    ASSERT_OK(done.status(i));
    ASSERT_EQ(heads[i], 4096 + static_cast<uint64_t>(i) * 5000);
    ASSERT_EQ(std::memcmp(payloads[i].data(), file.data() + heads[i], 3000), 0) << i;
  }
  EXPECT_EQ(engine->stats().completed, 2 * kChains);
}

// The destructor runs every callback once: queued reads are cancelled, reads at the kernel
// finish, and reads their callbacks submit meanwhile are cancelled too.
TEST_P(IoEngineTest, DestructionCompletesEveryRequestOnce) {
  ScratchDir dir;
  const std::string path = dir.path() + "/data.bin";
  const std::vector<std::byte> file = RandomBytes(4 << 20, 7);
  WriteFile(path, file);
  Fd fd(path);
  constexpr int kReads = 400;
  std::vector<std::vector<std::byte>> outs(2 * kReads, std::vector<std::byte>(64 * 1024));
  Completions done(2 * kReads);
  {
    auto engine = Make(2);
    ASSERT_NE(engine, nullptr);
    storage::IoEngine* e = engine.get();
    for (int i = 0; i < kReads; ++i) {
      const uint64_t offset = static_cast<uint64_t>(i) * 9000;
      engine->Submit(
          {fd.get(), offset, outs[i], "first", [&, e, i, offset](Status s) {
             done.Record(i, std::move(s));
             e->Submit({fd.get(), offset, outs[kReads + i], "second", done.For(kReads + i)});
           }});
    }
    // Some reads are done, some at the kernel, most queued: now the engine goes.
    ASSERT_TRUE(done.WaitFor(3));
  }
  ASSERT_TRUE(done.WaitAll());
  int ok = 0;
  for (int i = 0; i < 2 * kReads; ++i) {
    ASSERT_EQ(done.calls(i), 1) << i;
    const Status s = done.status(i);
    if (s.ok()) {
      ++ok;
      const uint64_t offset = static_cast<uint64_t>(i % kReads) * 9000;
      ASSERT_EQ(std::memcmp(outs[i].data(), file.data() + offset, outs[i].size()), 0) << i;
    } else {
      ASSERT_THAT(s, StatusIs(StatusCode::kCancelled, HasSubstr("closed before reading 65536 "
                                                                "bytes at offset")))
          << i;
    }
  }
  std::printf("[          ] %d of %d reads done before the engine closed, the rest cancelled\n", ok,
              2 * kReads);
}

TEST_P(IoEngineTest, ManyEnginesComeAndGo) {
  ScratchDir dir;
  const std::string path = dir.path() + "/data.bin";
  const std::vector<std::byte> file = RandomBytes(1 << 16, 8);
  WriteFile(path, file);
  Fd fd(path);
  for (int round = 0; round < 100; ++round) {
    const int depth = round % 10 == 9 ? 64 : 1 + round % 5;
    auto engine = Make(depth);
    ASSERT_NE(engine, nullptr);
    const int reads = round % 4;  // some engines never see a read
    std::vector<std::vector<std::byte>> outs(reads, std::vector<std::byte>(1000));
    Completions done(reads);
    for (int i = 0; i < reads; ++i)
      engine->Submit({fd.get(), static_cast<uint64_t>(i) * 1000, outs[i], "loop", done.For(i)});
    if (round % 2 == 0) {  // odd rounds leave the reads to the destructor
      ASSERT_TRUE(done.WaitAll());
      for (int i = 0; i < reads; ++i)
        ASSERT_OK(done.status(i));
    }
    engine.reset();
    for (int i = 0; i < reads; ++i)
      ASSERT_EQ(done.calls(i), 1) << "round " << round << ", read " << i;
  }
}

TEST(IoEngineCreateTest, ChoosesABackendAndChecksTheDepth) {
  ASSERT_OK_AND_ASSIGN(auto automatic, storage::IoEngine::Create(storage::IoBackend::kAuto, 8));
  if (UringUnavailable()) {
    EXPECT_STREQ(automatic->backend_name(), "pread pool");
    EXPECT_THAT(storage::IoEngine::Create(storage::IoBackend::kIoUring, 8),
                StatusIs(StatusCode::kIoError, HasSubstr("io_uring is unavailable")));
  } else {
    EXPECT_STREQ(automatic->backend_name(), "io_uring");
    EXPECT_EQ(automatic->backend(), storage::IoBackend::kIoUring);
  }
  ASSERT_OK_AND_ASSIGN(auto pool, storage::IoEngine::Create(storage::IoBackend::kPreadPool, 1000));
  EXPECT_STREQ(pool->backend_name(), "pread pool");
  EXPECT_EQ(pool->depth(), storage::IoEngine::kMaxPreadThreads);
  EXPECT_THAT(storage::IoEngine::Create(storage::IoBackend::kAuto, 0),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("at least 1")));
}

// ---- Over patchfeed_latency_fs (tests/fuse): reads that each wait 5 ms at the file system.

/// The FUSE binary, as tests/python/fuse_bed.py finds it: $PATCHFEED_LATENCY_FS, else this
/// build's, else build/test's.
std::string LatencyFsBinary() {
  if (const char* explicit_path = std::getenv("PATCHFEED_LATENCY_FS"))
    return explicit_path;
  std::vector<std::string> candidates = {std::string(PATCHFEED_BINARY_DIR) +
                                         "/tests/fuse/patchfeed_latency_fs"};
  if (const char* tests = std::getenv("PATCHFEED_TESTDATA"))
    candidates.push_back(std::string(tests) + "/../build/test/tests/fuse/patchfeed_latency_fs");
  for (const std::string& c : candidates) {
    if (access(c.c_str(), X_OK) == 0)
      return c;
  }
  return candidates.front();
}

bool FuseRequired() {
  const char* v = std::getenv("PATCHFEED_REQUIRE_FUSE");
  return v != nullptr && std::string(v) == "1";
}

int Spawn(const std::vector<std::string>& args, const std::string& log, pid_t* pid) {
  std::vector<char*> argv;
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  const int rc = posix_spawnp(pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc;
}

std::string ReadText(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

/// `source` mounted through patchfeed_latency_fs with `delay_us` per read request and the
/// `faults` options, or the reason it could not be (`error()`).
class LatencyMount {
 public:
  LatencyMount(const std::string& source, const std::string& scratch, int delay_us,
               const std::vector<std::string>& faults = {})
      : mountpoint_(scratch + "/mnt"), log_(scratch + "/latency_fs.log") {
    const std::string binary = LatencyFsBinary();
    if (access(binary.c_str(), X_OK) != 0) {
      error_ = "patchfeed_latency_fs is not built at " + binary +
               " (needs libfuse3-dev; or set PATCHFEED_LATENCY_FS)";
      return;
    }
    if (access("/dev/fuse", R_OK | W_OK) != 0) {
      error_ = "/dev/fuse is absent or not ours: FUSE mounts are not possible here";
      return;
    }
    std::filesystem::create_directory(mountpoint_);
    struct stat parent {};
    stat(scratch.c_str(), &parent);
    std::vector<std::string> args = {
        binary, "--source", source, mountpoint_, "-f", "--delay-us", std::to_string(delay_us)};
    args.insert(args.end(), faults.begin(), faults.end());
    if (Spawn(args, log_, &pid_) != 0) {
      pid_ = -1;
      error_ = "cannot start " + binary;
      return;
    }
    // The binary answers no signal to say it mounted: watch the mount point's device change.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (true) {
      struct stat mnt {};
      if (stat(mountpoint_.c_str(), &mnt) == 0 && mnt.st_dev != parent.st_dev)
        return;
      int wstatus = 0;
      if (waitpid(pid_, &wstatus, WNOHANG) == pid_) {
        pid_ = -1;
        error_ = "patchfeed_latency_fs could not mount: " + ReadText(log_);
        return;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        error_ = "patchfeed_latency_fs did not mount within 10 s: " + ReadText(log_);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  ~LatencyMount() {
    if (pid_ < 0)
      return;
    pid_t umount_pid = -1;
    int wstatus = 0;
    if (Spawn({"fusermount3", "-u", mountpoint_}, log_, &umount_pid) == 0)
      waitpid(umount_pid, &wstatus, 0);
    if (umount_pid < 0 || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0)
      kill(pid_, SIGTERM);  // the file system unmounts itself on SIGTERM
    waitpid(pid_, &wstatus, 0);
  }
  LatencyMount(const LatencyMount&) = delete;
  LatencyMount& operator=(const LatencyMount&) = delete;

  const std::string& error() const { return error_; }
  const std::string& path() const { return mountpoint_; }
  /// A counter of the file system's stats file ("max_in_flight": the most read requests
  /// waiting at once, "short_replies", "eio_replies").
  std::string Stat(const std::string& name) const {
    const std::string json = ReadText(mountpoint_ + "/.latency_fs_stats");
    const std::string key = "\"" + name + "\": ";
    const size_t at = json.find(key);
    if (at == std::string::npos)
      return "?";
    const size_t from = at + key.size();
    return json.substr(from, json.find_first_of(",}", from) - from);
  }
  void ResetStats() const { std::ofstream(mountpoint_ + "/.latency_fs_stats") << "reset"; }

 private:
  std::string mountpoint_;
  std::string log_;
  pid_t pid_ = -1;
  std::string error_;
};

TEST_P(IoEngineTest, OverlapsReadsOnASlowFileSystem) {
  constexpr int kDelayUs = 5000;
  constexpr int kReads = 64;
  constexpr size_t kReadBytes = 64 * 1024;
  constexpr double kSerialMs = kReads * kDelayUs / 1000.0;
  ScratchDir dir;
  std::filesystem::create_directory(dir.path() + "/src");
  const std::vector<std::byte> file = RandomBytes(4 << 20, 9);
  WriteFile(dir.path() + "/src/data.bin", file);
  LatencyMount mount(dir.path() + "/src", dir.path(), kDelayUs);
  if (!mount.error().empty()) {
    if (FuseRequired())
      FAIL() << mount.error() << " (PATCHFEED_REQUIRE_FUSE=1)";
    GTEST_SKIP() << mount.error();
  }
  Fd fd(mount.path() + "/data.bin");
  ASSERT_GE(fd.get(), 0);

  for (int depth : {64, 1}) {
    auto engine = Make(depth);
    ASSERT_NE(engine, nullptr);
    std::vector<std::vector<std::byte>> outs(kReads, std::vector<std::byte>(kReadBytes));
    Completions done(kReads);
    mount.ResetStats();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kReads; ++i)
      engine->Submit({fd.get(), i * kReadBytes, outs[i], "fuse", done.For(i)});
    ASSERT_TRUE(done.WaitAll());
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    for (int i = 0; i < kReads; ++i) {
      ASSERT_OK(done.status(i));
      ASSERT_EQ(std::memcmp(outs[i].data(), file.data() + i * kReadBytes, kReadBytes), 0) << i;
    }
    const storage::IoEngineStats stats = engine->stats();
    std::printf(
        "[          ] %s, depth %d: %d reads of 64 KiB at 5 ms each in %.1f ms "
        "(serial: %.0f ms); engine max in flight %lld, file system max in flight %s\n",
        engine->backend_name(), depth, kReads, ms, kSerialMs,
        static_cast<long long>(stats.max_in_flight), mount.Stat("max_in_flight").c_str());
    // What is asserted is how many reads the file system saw at once (its own count), not
    // time: depth 1 is one at a time, depth 64 many (measured 55-64; 8 leaves room for a
    // loaded machine, where the engine may still be submitting when the first ones return).
    EXPECT_LE(stats.max_in_flight, depth);
    const int fs_max = std::atoi(mount.Stat("max_in_flight").c_str());
    if (depth == 1) {
      EXPECT_EQ(fs_max, 1);
    } else {
      EXPECT_GE(stats.max_in_flight, depth / 2);
      EXPECT_GE(fs_max, 8);
    }
  }
}

// The file system answers every read of short.bin with half the bytes asked for and every
// read of bad.bin with EIO: the first must still read exactly, the second name the request.
TEST_P(IoEngineTest, ContinuesShortReadsAndReportsEioOverFuse) {
  ScratchDir dir;
  std::filesystem::create_directory(dir.path() + "/src");
  const std::vector<std::byte> file = RandomBytes(1 << 20, 10);
  WriteFile(dir.path() + "/src/short.bin", file);
  WriteFile(dir.path() + "/src/bad.bin", file);
  LatencyMount mount(dir.path() + "/src", dir.path(), 0,
                     {"--short-read-path-substring", "short", "--eio-path-substring", "bad"});
  if (!mount.error().empty()) {
    if (FuseRequired())
      FAIL() << mount.error() << " (PATCHFEED_REQUIRE_FUSE=1)";
    GTEST_SKIP() << mount.error();
  }
  Fd short_fd(mount.path() + "/short.bin");
  Fd bad_fd(mount.path() + "/bad.bin");
  ASSERT_GE(short_fd.get(), 0);
  ASSERT_GE(bad_fd.get(), 0);
  const std::string bad_label = "case 'bad': " + mount.path() + "/bad.bin";
  auto engine = Make(8);
  ASSERT_NE(engine, nullptr);

  const std::vector<std::pair<uint64_t, size_t>> ranges = {
      {0, 1}, {1, 3}, {1000, 65536}, {12345, 100000}, {(1 << 20) - 7000, 7000}};
  std::vector<std::vector<std::byte>> outs;
  for (const auto& [offset, size] : ranges)
    outs.emplace_back(size);
  std::vector<std::byte> bad_out(4096);
  Completions done(ranges.size() + 1);
  for (size_t i = 0; i < ranges.size(); ++i)
    engine->Submit({short_fd.get(), ranges[i].first, outs[i], "short", done.For(i)});
  engine->Submit({bad_fd.get(), 8192, bad_out, bad_label, done.For(ranges.size())});
  ASSERT_TRUE(done.WaitAll());
  for (size_t i = 0; i < ranges.size(); ++i) {
    ASSERT_OK(done.status(i));
    ASSERT_EQ(std::memcmp(outs[i].data(), file.data() + ranges[i].first, ranges[i].second), 0)
        << ranges[i].second << " bytes at " << ranges[i].first;
  }
  EXPECT_THAT(done.status(ranges.size()),
              StatusIs(StatusCode::kIoError, "read of 4096 bytes at offset 8192 of " + bad_label +
                                                 " failed: Input/output error (errno 5)"));
  EXPECT_NE(mount.Stat("short_replies"), "0");
  EXPECT_NE(mount.Stat("eio_replies"), "0");
}

}  // namespace
}  // namespace patchfeed::loader::internal_loader
