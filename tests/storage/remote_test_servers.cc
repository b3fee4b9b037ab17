// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "tests/storage/remote_test_servers.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "common/str_cat.h"
#include "storage/remote/url.h"

namespace patchfeed::testing {
namespace {

using storage::UriEncode;

using Clock = std::chrono::steady_clock;

constexpr double kStartTimeoutS = 120;
// remote_test_server.py stops SeaweedFS within seaweed.py's grace (3 s) on SIGTERM.
constexpr double kStopGraceS = 20;

std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path == nullptr ? "" : path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return {};
}

std::string Tail(const std::string& path, size_t n = 2000) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  return all.size() > n ? all.substr(all.size() - n) : all;
}

size_t CollectBody(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

// Runs remote_test_server.py `mode` `args` and waits for the line it prints once its server
// answers: the process and that line, or nullptr with the reason.
std::unique_ptr<std::pair<std::unique_ptr<ChildProcess>, std::string>> StartScript(
    const std::string& mode, const std::vector<std::string>& args, std::string* why_not) {
  const std::string python = FindOnPath("python3");
  if (python.empty()) {
    *why_not = "python3 is not on PATH";
    return nullptr;
  }
  std::vector<std::string> argv = {
      python, StrCat(PATCHFEED_SOURCE_DIR, "/tests/storage/remote_test_server.py"), mode};
  argv.insert(argv.end(), args.begin(), args.end());
  char log_template[] = "/tmp/patchfeed_remote_server_XXXXXX";
  const int log_fd = ::mkstemp(log_template);
  if (log_fd < 0) {
    *why_not = "cannot make a log file in /tmp";
    return nullptr;
  }
  ::close(log_fd);
  const std::string log = log_template;
  auto process = ChildProcess::Spawn(argv, log);
  if (!process.ok()) {
    *why_not = std::string(process.status().message());
    return nullptr;
  }
  std::string line = (*process)->ReadLine(kStartTimeoutS);
  if (line.empty()) {
    process->reset();  // stopped before its log is read
    *why_not = StrCat("remote_test_server.py ", mode, " did not start; its log ends:\n", Tail(log));
  }
  ::unlink(log.c_str());
  if (line.empty())
    return nullptr;
  return std::make_unique<std::pair<std::unique_ptr<ChildProcess>, std::string>>(
      std::move(*process), std::move(line));
}

}  // namespace

Result<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(const std::vector<std::string>& argv,
                                                          const std::string& log_path) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0)
    return IoError("pipe failed");
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0)
    return IoError(StrCat("cannot write ", log_path));
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0)
    return IoError("fork failed");
  if (pid == 0) {
    // A test that dies without stopping its servers still takes them down.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(log);
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, out[0]));
}

std::string ChildProcess::ReadLine(double timeout_s) {
  std::string line;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (Clock::now() < deadline) {
    pollfd p{out_fd_, POLLIN, 0};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(left, 1))) <= 0)
      continue;
    char c = 0;
    if (::read(out_fd_, &c, 1) != 1)
      return {};
    if (c == '\n')
      return line;
    line.push_back(c);
  }
  return {};
}

bool ChildProcess::running() {
  if (reaped_)
    return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_)
    reaped_ = true;
  return !reaped_;
}

ChildProcess::~ChildProcess() {
  if (running()) {
    ::kill(pid_, SIGTERM);
    const auto deadline = Clock::now() + std::chrono::duration<double>(kStopGraceS);
    while (running() && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (running()) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  ::close(out_fd_);
}

Result<PlainResponse> PlainRequest(std::string_view method, const std::string& url,
                                   std::string_view body, std::string_view key,
                                   std::string_view secret) {
  // One handle for every set-up request keeps one connection open: uploading a thousand
  // objects costs a second, not a thousand handshakes.
  static std::mutex mutex;
  static CURL* const curl = curl_easy_init();
  std::lock_guard lock(mutex);
  if (curl == nullptr)
    return InternalError("curl_easy_init failed");
  curl_easy_reset(curl);
  PlainResponse response;
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/octet-stream");
  const std::string method_text(method);
  const std::string user(key);
  const std::string password(secret);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method_text.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &CollectBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
  if (method == "PUT" || method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  if (!key.empty()) {
    headers = curl_slist_append(headers, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, "aws:amz:us-east-1:s3");
    curl_easy_setopt(curl, CURLOPT_USERNAME, user.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, password.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  const CURLcode code = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  curl_slist_free_all(headers);
  if (code != CURLE_OK)
    return IoError(StrCat(method, " ", url, ": ", curl_easy_strerror(code)));
  return response;
}

std::unique_ptr<SeaweedServer> SeaweedServer::Start(std::string* why_not) {
  auto process = StartScript("seaweed", {}, why_not);
  if (process == nullptr)
    return nullptr;
  std::unique_ptr<SeaweedServer> server(new SeaweedServer());
  server->process_ = std::move(process->first);
  std::istringstream line(process->second);
  line >> server->endpoint_ >> server->admin_key_ >> server->admin_secret_ >>
      server->readonly_key_ >> server->readonly_secret_;
  if (server->readonly_secret_.empty()) {
    *why_not = "remote_test_server.py seaweed printed '" + process->second + "'";
    return nullptr;
  }
  return server;
}

Status SeaweedServer::CreateBucket(std::string_view bucket) {
  PATCHFEED_ASSIGN_OR_RETURN(PlainResponse r, PlainRequest("PUT", StrCat(endpoint_, "/", bucket),
                                                           {}, admin_key_, admin_secret_));
  if (r.status != 200 && r.body.find("BucketAlreadyOwnedByYou") == std::string::npos &&
      r.body.find("BucketAlreadyExists") == std::string::npos)
    return IoError(StrCat("create bucket ", bucket, ": HTTP ", r.status, " ", r.body));
  return Status::Ok();
}

Status SeaweedServer::PutObject(std::string_view bucket, std::string_view key,
                                std::string_view bytes) {
  PATCHFEED_ASSIGN_OR_RETURN(
      PlainResponse r,
      PlainRequest("PUT", StrCat(endpoint_, "/", bucket, "/", UriEncode(key, true)), bytes,
                   admin_key_, admin_secret_));
  if (r.status != 200)
    return IoError(StrCat("put ", bucket, "/", key, ": HTTP ", r.status, " ", r.body));
  return Status::Ok();
}

std::unique_ptr<RangeServer> RangeServer::Start(const std::string& root, std::string* why_not) {
  auto process = StartScript("files", {root}, why_not);
  if (process == nullptr)
    return nullptr;
  std::unique_ptr<RangeServer> server(new RangeServer());
  server->process_ = std::move(process->first);
  server->url_ = StrCat("http://127.0.0.1:", process->second);
  return server;
}

Status RangeServer::QueueFaults(const std::vector<std::string>& faults) {
  std::string list;
  for (const std::string& f : faults)
    list += StrCat(list.empty() ? "" : ",", "\"", f, "\"");
  PATCHFEED_ASSIGN_OR_RETURN(PlainResponse r, PlainRequest("POST", url_ + "/_control/faults",
                                                           "{\"faults\":[" + list + "]}"));
  return r.status == 200 ? Status::Ok() : IoError(r.body);
}

Status RangeServer::SetDelay(double seconds) {
  PATCHFEED_ASSIGN_OR_RETURN(PlainResponse r, PlainRequest("POST", url_ + "/_control/delay",
                                                           StrCat("{\"seconds\":", seconds, "}")));
  return r.status == 200 ? Status::Ok() : IoError(r.body);
}

Result<std::pair<int, int>> RangeServer::RequestsAndMaxInFlight() {
  PATCHFEED_ASSIGN_OR_RETURN(PlainResponse r, PlainRequest("GET", url_ + "/_control/stats"));
  int requests = 0;
  int max_in_flight = 0;
  if (std::sscanf(r.body.c_str(), "{\"requests\": %d, \"in_flight\": %*d, \"max_in_flight\": %d}",
                  &requests, &max_in_flight) != 2)
    return InternalError("stats: " + r.body);
  return std::pair{requests, max_in_flight};
}

std::string PatternBytes(size_t n, uint32_t seed) {
  std::mt19937 random(seed);
  std::string bytes(n, '\0');
  for (char& c : bytes)
    c = static_cast<char>(random());
  return bytes;
}

}  // namespace patchfeed::testing
