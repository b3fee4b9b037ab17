// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_TESTS_STORAGE_REMOTE_TEST_SERVERS_H_
#define PATCHFEED_TESTS_STORAGE_REMOTE_TEST_SERVERS_H_

/// \file
/// Real servers for the remote backend's tests, started and stopped by the tests themselves on
/// free ports of 127.0.0.1, both through remote_test_server.py: SeaweedFS's S3 gateway (as
/// tests/servers/seaweed.py runs it) and a range file server with injected faults (aiohttp).
/// Each Start returns nullptr with the reason when the server cannot run here, for GTEST_SKIP.
/// A server is stopped by its own process id (SIGTERM, then SIGKILL after a grace period) when
/// the object dies, or when the test process dies first (PR_SET_PDEATHSIG).

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace patchfeed::testing {

/// A child process, stopped by its pid when destroyed.
class ChildProcess {
 public:
  /// Runs `argv` with stdout to a pipe (read with ReadLine) and stderr to `log_path`. When
  /// destroyed, the child gets SIGTERM, then SIGKILL after 20 s.
  static Result<std::unique_ptr<ChildProcess>> Spawn(const std::vector<std::string>& argv,
                                                     const std::string& log_path);
  ~ChildProcess();
  /// One line of the child's stdout, waiting at most `timeout_s`; empty on timeout or exit.
  std::string ReadLine(double timeout_s);
  bool running();
  pid_t pid() const { return pid_; }

 private:
  ChildProcess(pid_t pid, int out_fd) : pid_(pid), out_fd_(out_fd) {}
  pid_t pid_;
  int out_fd_;
  bool reaped_ = false;
};

/// An HTTP request with libcurl's easy interface, for setting up and inspecting servers
/// (uploads, control calls); signed with SigV4 when `key` is not empty. Returns the status
/// code and the body.
struct PlainResponse {
  long status = 0;
  std::string body;
};
Result<PlainResponse> PlainRequest(std::string_view method, const std::string& url,
                                   std::string_view body = {}, std::string_view key = {},
                                   std::string_view secret = {});

/// SeaweedFS's S3 gateway, run by tests/servers/seaweed.py (through remote_test_server.py):
/// identities admin (everything), readonly (Read, List) and anonymous (Read and List on the
/// bucket `public` only).
class SeaweedServer {
 public:
  static constexpr char kPublicBucket[] = "public";

  static std::unique_ptr<SeaweedServer> Start(std::string* why_not);

  const std::string& endpoint() const { return endpoint_; }  ///< "http://127.0.0.1:PORT"
  const std::string& admin_key() const { return admin_key_; }
  const std::string& admin_secret() const { return admin_secret_; }
  const std::string& readonly_key() const { return readonly_key_; }
  const std::string& readonly_secret() const { return readonly_secret_; }
  /// With the admin identity.
  Status CreateBucket(std::string_view bucket);
  Status PutObject(std::string_view bucket, std::string_view key, std::string_view bytes);

 private:
  SeaweedServer() = default;
  std::string endpoint_;
  std::string admin_key_;
  std::string admin_secret_;
  std::string readonly_key_;
  std::string readonly_secret_;
  std::unique_ptr<ChildProcess> process_;
};

class RangeServer {
 public:
  /// Serves the files of `root` under url() + "/files/".
  static std::unique_ptr<RangeServer> Start(const std::string& root, std::string* why_not);

  const std::string& url() const { return url_; }  ///< "http://127.0.0.1:PORT"
  /// Queues faults for the next GETs of files ("503", "reset", "short", "delay:0.5", ...).
  Status QueueFaults(const std::vector<std::string>& faults);
  Status SetDelay(double seconds);
  /// The server's count of GETs of files and the most it served at once.
  Result<std::pair<int, int>> RequestsAndMaxInFlight();

 private:
  RangeServer() = default;
  std::string url_;
  std::unique_ptr<ChildProcess> process_;
};

/// `n` bytes of a fixed pseudo-random pattern (the same for the same seed).
std::string PatternBytes(size_t n, uint32_t seed);

}  // namespace patchfeed::testing

#endif  // PATCHFEED_TESTS_STORAGE_REMOTE_TEST_SERVERS_H_
