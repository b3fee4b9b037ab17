// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "storage/remote/curl_engine.h"

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>

#include "common/str_cat.h"
#include "storage/remote/http_headers.h"

namespace patchfeed::storage {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxErrorBody = 64 * 1024;
constexpr long kMaxRedirects = 5;
// The longest the engine sleeps with nothing to do; Submit wakes it sooner.
constexpr int kIdlePollMs = 60 * 1000;

bool IsSuccess(int http_status) { return http_status >= 200 && http_status < 300; }

bool IsRetryableHttp(int http_status) {
  return http_status == 429 || (http_status >= 500 && http_status != 501 && http_status != 505);
}

bool IsRetryableCurl(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
      return true;
    default:
      return false;
  }
}

// libcurl's global state is set up once per process, before the first handle.
void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// One request across its attempts. The engine thread alone touches it after Submit.
struct Transfer {
  HttpRequest request;
  curl_slist* headers = nullptr;
  CURL* easy = nullptr;
  int attempts = 0;
  Clock::time_point due;  // when a waiting retry may start
  Status last_failure;    // why the previous attempt failed, for the final message

  // The current attempt's answer.
  int http_status = 0;
  uint64_t received = 0;
  bool refused_bytes = false;  // the body ran past what was asked for
  bool range_ignored = false;  // a 200 with the whole object to a ranged GET
  std::string body;
  std::string content_range;
  std::string content_length;
  ObjectInfo info;
  char curl_error[CURL_ERROR_SIZE] = {};

  ~Transfer() { curl_slist_free_all(headers); }

  void ResetAttempt() {
    http_status = 0;
    received = 0;
    refused_bytes = false;
    range_ignored = false;
    body.clear();
    content_range.clear();
    content_length.clear();
    info = ObjectInfo();
    curl_error[0] = '\0';
  }

  std::string What() const {
    if (request.method == HttpMethod::kHead)
      return StrCat(request.label, " (HEAD)");
    if (request.ranged)
      return StrCat(request.label, " ", DescribeRange(request.offset, request.out.size()));
    return request.label;
  }
};

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string_view line(data, size * count);
  if (const auto code = ParseStatusLine(line)) {
    // A new answer (after a redirect or a 100 Continue): forget the previous one's headers.
    t->ResetAttempt();
    t->http_status = *code;
  } else if (auto header = SplitHeaderLine(line)) {
    auto& [name, value] = *header;
    if (name == "content-range")
      t->content_range = std::move(value);
    else if (name == "content-length")
      t->content_length = std::move(value);
    else if (name == "etag")
      t->info.etag = std::move(value);
    else if (name == "last-modified")
      t->info.last_modified = std::move(value);
  }
  return size * count;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  const HttpRequest& r = t->request;
  if (!IsSuccess(t->http_status)) {
    const size_t keep = std::min(n, kMaxErrorBody - std::min(kMaxErrorBody, t->body.size()));
    t->body.append(data, keep);
    return n;
  }
  if (r.ranged) {
    const std::optional<uint64_t> length = ParseDecimal(t->content_length);
    const bool whole_fits = r.up_to && length && *length <= r.out.size();
    if (t->http_status == 200 && (r.offset != 0 || (length != r.out.size() && !whole_fits))) {
      t->range_ignored = true;  // the whole object is coming: stop it
      return 0;
    }
    if (n > r.out.size() - t->received) {
      t->refused_bytes = true;
      return 0;  // libcurl stops the transfer with CURLE_WRITE_ERROR
    }
    std::memcpy(r.out.data() + t->received, data, n);
  } else {
    if (n > r.max_body - std::min(r.max_body, t->body.size())) {
      t->refused_bytes = true;
      return 0;
    }
    t->body.append(data, n);
  }
  t->received += n;
  return n;
}

// What an attempt that reached its end came to: OK, a failure to retry, or a final one.
struct Outcome {
  Status status;
  bool retry = false;
};

// A ranged GET from offset 0 that the object may end within (HttpRequest::up_to): the
// answer holds min(asked, size) bytes and says the size.
Outcome CheckAnswerUpTo(Transfer& t, std::optional<uint64_t> length) {
  const HttpRequest& r = t.request;
  const std::string what = t.What();
  uint64_t expect = 0;
  if (t.http_status == 206) {
    const auto range = ParseContentRange(t.content_range);
    if (!range || !range->first || *range->first != 0 || !range->total ||
        *range->last + 1 != std::min<uint64_t>(r.out.size(), *range->total)) {
      return {DataLossError(StrCat(what,
                                   ": the server answered with a Content-Range it cannot "
                                   "mean: '",
                                   t.content_range, "'")),
              false};
    }
    t.info.size = range->total;
    expect = *range->last + 1;
  } else if (t.http_status == 200 && length && *length <= r.out.size()) {
    t.info.size = length;  // the whole object, shorter than asked for
    expect = *length;
  } else {
    return {
        IoError(StrCat(what, ": the server answered a range request with HTTP ", t.http_status)),
        false};
  }
  if (t.received != expect) {
    return {DataLossError(StrCat(what, ": short body: ", t.received, " of ", expect, " bytes")),
            true};
  }
  return {};
}

Outcome CheckAnswer(Transfer& t) {
  const HttpRequest& r = t.request;
  const std::string what = t.What();
  if (!IsSuccess(t.http_status)) {
    return {IoError(StrCat(what, ": HTTP ", t.http_status)), IsRetryableHttp(t.http_status)};
  }
  const std::optional<uint64_t> length = ParseDecimal(t.content_length);
  if (r.method == HttpMethod::kHead) {
    if (!length) {
      return {DataLossError(StrCat(what, ": the answer gives no usable Content-Length ('",
                                   t.content_length, "')")),
              false};
    }
    t.info.size = length;
    return {};
  }
  if (!r.ranged) {
    t.info.size = t.received;
    if (length && *length != t.received) {
      return {DataLossError(StrCat(what, ": short body: ", t.received, " of ", *length, " bytes")),
              true};
    }
    return {};
  }
  if (r.up_to)
    return CheckAnswerUpTo(t, length);
  const uint64_t asked = r.out.size();
  if (t.http_status == 206) {
    Status range = CheckContentRange(t.content_range, r.offset, asked, r.label);
    if (!range.ok())
      return {std::move(range), false};
    if (const auto parsed = ParseContentRange(t.content_range))
      t.info.size = parsed->total;
  } else if (t.http_status != 200 || r.offset != 0 || length != asked) {
    return {
        IoError(StrCat(what, ": the server answered a range request with HTTP ", t.http_status)),
        false};
  }
  if (t.received != asked) {
    return {DataLossError(StrCat(what, ": short body: ", t.received, " of ", asked, " bytes")),
            true};
  }
  return {};
}

Outcome CheckTransfer(Transfer& t, CURLcode code) {
  if (code == CURLE_OK)
    return CheckAnswer(t);
  const std::string what = t.What();
  if (t.range_ignored) {
    return {UnimplementedError(StrCat(what,
                                      ": the server answered with the whole object instead "
                                      "of the range; it does not support range requests")),
            false};
  }
  if (t.refused_bytes) {
    const uint64_t asked = t.request.ranged ? t.request.out.size() : t.request.max_body;
    return {t.request.ranged
                ? DataLossError(
                      StrCat(what, ": the server sent more than the ", asked, " bytes asked for"))
                : ResourceExhaustedError(StrCat(what, ": the answer is larger than the ", asked,
                                                " bytes this request accepts")),
            false};
  }
  const char* detail = t.curl_error[0] != '\0' ? t.curl_error : curl_easy_strerror(code);
  return {IoError(StrCat(what, ": ", detail)), IsRetryableCurl(code)};
}

}  // namespace

class CurlEngine::Loop {
 public:
  Loop(const CurlEngineOptions& options, CURLM* multi)
      : options_(options), multi_(multi), random_(std::random_device{}()) {}

  ~Loop() {
    if (!owns_itself_) {
      {
        std::lock_guard lock(mutex_);
        stopping_ = true;
      }
      curl_multi_wakeup(multi_);
      PATCHFEED_DCHECK(std::this_thread::get_id() != thread_.get_id());
      thread_.join();
    }
    for (CURL* easy : idle_)
      curl_easy_cleanup(easy);
    curl_multi_cleanup(multi_);
  }

  void Start() {
    thread_ = std::thread([this] {
      Run();
      if (owns_itself_)
        delete this;  // StopFromWithin: nobody else holds the loop any more
    });
  }

  bool OnLoopThread() const { return std::this_thread::get_id() == thread_.get_id(); }

  // The engine's last owner let go of it inside a callback, on this thread (the callback held
  // the last reference, say a remote file an open handed over): the thread cannot join itself.
  // It stops as ~CurlEngine promises (every request completed with kCancelled) once the
  // callback returns, and the loop deletes itself when its thread ends.
  void StopFromWithin() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    owns_itself_ = true;
    thread_.detach();
  }

  void Submit(HttpRequest request) {
    auto transfer = std::make_unique<Transfer>();
    transfer->request = std::move(request);
    submitted_.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard lock(mutex_);
      incoming_.push_back(std::move(transfer));
    }
    curl_multi_wakeup(multi_);
  }

  CurlEngineStats stats() const {
    CurlEngineStats s;
    s.submitted = submitted_.load(std::memory_order_relaxed);
    s.completed = completed_.load(std::memory_order_relaxed);
    s.attempts = attempts_.load(std::memory_order_relaxed);
    s.retries = retries_.load(std::memory_order_relaxed);
    s.errors = errors_.load(std::memory_order_relaxed);
    s.bytes = bytes_.load(std::memory_order_relaxed);
    s.in_flight = in_flight_.load(std::memory_order_relaxed);
    s.max_in_flight = max_in_flight_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  void Run() {
    for (;;) {
      if (TakeIncoming())
        break;
      PromoteDueRetries();
      StartPending();
      int running = 0;
      curl_multi_perform(multi_, &running);
      DrainFinished();
      if (!pending_.empty() && static_cast<int>(active_.size()) < options_.depth)
        continue;  // completions made room
      curl_multi_poll(multi_, nullptr, 0, PollTimeoutMs(), nullptr);
    }
    Shutdown();
  }

  // Moves submissions to the pending queue; true once the engine is closing.
  bool TakeIncoming() {
    std::lock_guard lock(mutex_);
    for (auto& t : incoming_)
      pending_.push_back(std::move(t));
    incoming_.clear();
    return stopping_;
  }

  void PromoteDueRetries() {
    const Clock::time_point now = Clock::now();
    // Waiting retries go before new requests: they were submitted first.
    std::vector<std::unique_ptr<Transfer>> due;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      if ((*it)->due <= now) {
        due.push_back(std::move(*it));
        it = waiting_.erase(it);
      } else {
        ++it;
      }
    }
    for (auto it = due.rbegin(); it != due.rend(); ++it)
      pending_.push_front(std::move(*it));
  }

  int PollTimeoutMs() const {
    long curl_ms = -1;
    curl_multi_timeout(multi_, &curl_ms);
    int64_t ms = curl_ms < 0 ? kIdlePollMs : std::min<int64_t>(curl_ms, kIdlePollMs);
    const Clock::time_point now = Clock::now();
    for (const auto& t : waiting_) {
      const auto wait = std::chrono::ceil<std::chrono::milliseconds>(t->due - now).count();
      ms = std::min<int64_t>(ms, std::max<int64_t>(wait, 0));
    }
    return static_cast<int>(ms);
  }

  void StartPending() {
    while (!pending_.empty() && static_cast<int>(active_.size()) < options_.depth) {
      std::unique_ptr<Transfer> t = std::move(pending_.front());
      pending_.pop_front();
      if (t->request.ranged && t->request.out.empty()) {
        Complete(std::move(t), Status::Ok());
        continue;
      }
      const Status setup = SetUp(*t);
      if (!setup.ok()) {
        Complete(std::move(t), setup);
        continue;
      }
      ++t->attempts;
      attempts_.fetch_add(1, std::memory_order_relaxed);
      if (t->attempts > 1)
        retries_.fetch_add(1, std::memory_order_relaxed);
      curl_multi_add_handle(multi_, t->easy);
      Transfer* raw = t.get();
      active_.emplace(raw, std::move(t));
      const int64_t now = in_flight_.fetch_add(1, std::memory_order_relaxed) + 1;
      int64_t seen = max_in_flight_.load(std::memory_order_relaxed);
      while (now > seen && !max_in_flight_.compare_exchange_weak(seen, now)) {
      }
    }
  }

  // Points an easy handle (reused when one is idle) at `t`'s request.
  Status SetUp(Transfer& t) {
    const HttpRequest& r = t.request;
    if (idle_.empty()) {
      t.easy = curl_easy_init();
      if (t.easy == nullptr)
        return InternalError(StrCat(t.What(), ": libcurl could not make a handle"));
    } else {
      t.easy = idle_.back();
      idle_.pop_back();
      curl_easy_reset(t.easy);
    }
    if (t.headers == nullptr) {
      std::vector<std::string> lines;
      if (r.auth != nullptr)
        lines = r.auth->headers;
      if (!r.if_match.empty())
        lines.push_back(StrCat("If-Match: ", r.if_match));
      for (const std::string& line : lines) {
        curl_slist* grown = curl_slist_append(t.headers, line.c_str());
        if (grown == nullptr)
          return ResourceExhaustedError(StrCat(t.What(), ": no memory for request headers"));
        t.headers = grown;
      }
    }
    t.ResetAttempt();
    CURL* e = t.easy;
    curl_easy_setopt(e, CURLOPT_URL, r.url.c_str());
    curl_easy_setopt(e, CURLOPT_PRIVATE, &t);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);  // keys are sent (and signed) exactly
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.curl_error);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &OnHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &OnBody);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, ToMs(options_.request_timeout_s));
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, ToMs(options_.connect_timeout_s));
    // Over TLS, wait for the first connection to learn whether HTTP/2 multiplexes instead of
    // opening `depth` connections at once.
    if (r.url.starts_with("https://"))
      curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    if (t.headers != nullptr)
      curl_easy_setopt(e, CURLOPT_HTTPHEADER, t.headers);
    if (r.method == HttpMethod::kHead)
      curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    if (r.ranged) {
      const std::string range = StrCat(r.offset, "-", r.offset + r.out.size() - 1);
      curl_easy_setopt(e, CURLOPT_RANGE, range.c_str());  // libcurl copies option strings
    }
    if (r.follow_redirects) {
      curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
      curl_easy_setopt(e, CURLOPT_MAXREDIRS, kMaxRedirects);
      curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    }
    if (r.auth != nullptr && !r.auth->sigv4.empty()) {
      curl_easy_setopt(e, CURLOPT_AWS_SIGV4, r.auth->sigv4.c_str());
      curl_easy_setopt(e, CURLOPT_USERNAME, r.auth->user.c_str());
      curl_easy_setopt(e, CURLOPT_PASSWORD, r.auth->password.c_str());
    }
    return Status::Ok();
  }

  static long ToMs(double seconds) { return static_cast<long>(std::ceil(seconds * 1000)); }

  void DrainFinished() {
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
      if (msg->msg != CURLMSG_DONE)
        continue;
      const auto it = active_.find(TransferOf(msg->easy_handle));
      PATCHFEED_DCHECK(it != active_.end());
      std::unique_ptr<Transfer> t = std::move(it->second);
      active_.erase(it);
      const CURLcode code = msg->data.result;  // read before the handle is removed
      Outcome outcome = CheckTransfer(*t, code);
      Release(*t);
      if (outcome.status.ok()) {
        bytes_.fetch_add(static_cast<int64_t>(t->received), std::memory_order_relaxed);
        Complete(std::move(t), Status::Ok());
      } else if (outcome.retry && t->attempts <= options_.max_retries) {
        t->last_failure = std::move(outcome.status);
        t->due = Clock::now() + Backoff(t->attempts);
        waiting_.push_back(std::move(t));
      } else {
        if (t->attempts > 1) {
          outcome.status =
              Status(outcome.status.code(),
                     StrCat(outcome.status.message(), " (after ", t->attempts, " attempts)"));
        }
        Complete(std::move(t), std::move(outcome.status));
      }
    }
  }

  static Transfer* TransferOf(CURL* easy) {
    char* p = nullptr;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, &p);
    return reinterpret_cast<Transfer*>(p);
  }

  // Takes `t`'s handle off the multi handle and keeps it for the next request.
  void Release(Transfer& t) {
    curl_multi_remove_handle(multi_, t.easy);
    idle_.push_back(t.easy);
    t.easy = nullptr;
    in_flight_.fetch_sub(1, std::memory_order_relaxed);
  }

  Clock::duration Backoff(int attempt) {
    const double cap = std::min(options_.retry_max_delay_s,
                                options_.retry_base_delay_s * std::ldexp(1.0, attempt - 1));
    std::uniform_real_distribution<double> full_jitter(0.0, cap);
    return std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(full_jitter(random_)));
  }

  void Complete(std::unique_ptr<Transfer> t, Status status) {
    HttpResult result;
    if (!status.ok() && status.code() != StatusCode::kCancelled)
      errors_.fetch_add(1, std::memory_order_relaxed);
    result.status = std::move(status);
    result.http_status = t->http_status;
    result.body = std::move(t->body);
    result.info = std::move(t->info);
    result.attempts = t->attempts;
    result.received = t->received;
    auto done = std::move(t->request.done);
    t.reset();
    completed_.fetch_add(1, std::memory_order_relaxed);
    if (done)
      done(std::move(result));
  }

  void Cancel(std::unique_ptr<Transfer> t) {
    std::string why = StrCat(t->What(), ": the remote store closed before the request finished");
    if (!t->last_failure.ok())
      why += StrCat(" (the last attempt failed: ", t->last_failure.message(), ")");
    t->http_status = 0;
    t->body.clear();
    Complete(std::move(t), CancelledError(why));
  }

  void Shutdown() {
    for (auto& [raw, t] : active_) {
      Release(*t);
      Cancel(std::move(t));
    }
    active_.clear();
    // Callbacks of cancelled requests may submit more: cancel until nothing is left.
    for (;;) {
      TakeIncoming();
      for (auto& t : waiting_)
        pending_.push_back(std::move(t));
      waiting_.clear();
      if (pending_.empty())
        break;
      while (!pending_.empty()) {
        std::unique_ptr<Transfer> t = std::move(pending_.front());
        pending_.pop_front();
        Cancel(std::move(t));
      }
    }
  }

  const CurlEngineOptions options_;
  CURLM* const multi_;
  std::thread thread_;

  std::mutex mutex_;
  std::vector<std::unique_ptr<Transfer>> incoming_;  // guarded by mutex_
  bool stopping_ = false;                            // guarded by mutex_
  bool owns_itself_ = false;                         // set and read on the loop's thread

  // The engine thread's own.
  std::deque<std::unique_ptr<Transfer>> pending_;
  std::vector<std::unique_ptr<Transfer>> waiting_;  // retries, each with its due time
  std::unordered_map<Transfer*, std::unique_ptr<Transfer>> active_;
  std::vector<CURL*> idle_;
  std::mt19937_64 random_;

  std::atomic<int64_t> submitted_{0};
  std::atomic<int64_t> completed_{0};
  std::atomic<int64_t> attempts_{0};
  std::atomic<int64_t> retries_{0};
  std::atomic<int64_t> errors_{0};
  std::atomic<int64_t> bytes_{0};
  std::atomic<int64_t> in_flight_{0};
  std::atomic<int64_t> max_in_flight_{0};
};

CurlEngine::CurlEngine(const CurlEngineOptions& options) : options_(options) {}

CurlEngine::~CurlEngine() {
  if (loop_ != nullptr && loop_->OnLoopThread())
    loop_.release()->StopFromWithin();
}

Result<std::unique_ptr<CurlEngine>> CurlEngine::Create(const CurlEngineOptions& options) {
  if (options.depth < 1)
    return InvalidArgumentError(StrCat("io_depth is ", options.depth, "; give 1 or more"));
  if (!(options.request_timeout_s > 0) || !(options.connect_timeout_s > 0))
    return InvalidArgumentError("request and connect timeouts must be above 0 seconds");
  if (options.max_retries < 0)
    return InvalidArgumentError(StrCat("max_retries is ", options.max_retries));
  InitCurlOnce();
  CURLM* multi = curl_multi_init();
  if (multi == nullptr)
    return InternalError("libcurl could not make a multi handle");
  curl_multi_setopt(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
  // Keep a connection per request in flight alive between requests (libcurl's default
  // follows the number of handles added, which drops as transfers finish).
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, static_cast<long>(options.depth));
  std::unique_ptr<CurlEngine> engine(new CurlEngine(options));
  engine->loop_ = std::make_unique<Loop>(engine->options_, multi);
  engine->loop_->Start();
  return engine;
}

void CurlEngine::Submit(HttpRequest request) { loop_->Submit(std::move(request)); }

CurlEngineStats CurlEngine::stats() const { return loop_->stats(); }

}  // namespace patchfeed::storage
