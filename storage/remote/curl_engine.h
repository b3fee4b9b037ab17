// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_STORAGE_REMOTE_CURL_ENGINE_H_
#define PATCHFEED_STORAGE_REMOTE_CURL_ENGINE_H_

/// \file
/// CurlEngine: HTTP(S) requests kept in flight by one thread driving a libcurl multi handle,
/// so hundreds of range reads of an object store wait on the network together.
///
/// - One engine thread sleeps in `curl_multi_poll` until a socket is ready, a timer is due, or
///   `Submit` wakes it (`curl_multi_wakeup`); it never polls in a loop or sleeps for a retry.
/// - At most `depth` requests are at the network at once; the rest queue in submission order.
///   Connections are reused through the multi handle's connection cache (HTTP/1.1 keep-alive)
///   and HTTP/2 streams are multiplexed over one connection where the server offers it.
/// - A request that fails in a way that may pass (HTTP 429 and 5xx, timeouts, refused or reset
///   connections, a body shorter than announced) is tried again after an exponential backoff
///   with full jitter (a timer, not a sleep), at most `max_retries` times.
/// - Signature V4 (AWS or GOOG) is libcurl's own (CURLOPT_AWS_SIGV4): no hand-written crypto.
/// - Every size a server states is checked: a ranged GET must answer 206 with a Content-Range
///   naming exactly the bytes asked for and then deliver exactly that many, or 200 with exactly
///   the object when the range was the whole of it; more bytes than asked are refused as they
///   arrive (never written past `out`), fewer are a short body (retried).
///
/// Memory: the caller owns each request's `out` buffer, which must stay valid until its
/// callback has run. The engine owns its thread, the multi and easy handles, and the queue.
/// Thread-safety: `Submit` and `stats` may be called from any thread, callbacks included.
/// Destruction must not race with `Submit` from outside the callbacks, nor run on the engine
/// thread (so a callback must not drop the last reference to the engine's owner).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/status.h"

namespace patchfeed::storage {

/// How the requests of one store authenticate; shared by all of them.
struct RequestAuth {
  /// CURLOPT_AWS_SIGV4's "provider1:provider2:region:service" ("aws:amz:us-east-1:s3"); empty
  /// for no signature. `user`/`password` are then the access key and the secret.
  std::string sigv4;
  std::string user;
  std::string password;
  /// Extra request headers, "Name: value" ("x-amz-security-token: ...", "Authorization: Bearer
  /// ..."). Signed requests sign them all.
  std::vector<std::string> headers;
};

/// What the answer's headers say about the object.
struct ObjectInfo {
  std::optional<uint64_t> size;  ///< Content-Length of a whole answer, Content-Range's total
  std::string etag;
  std::string last_modified;
};

enum class HttpMethod : uint8_t { kGet, kHead };

struct HttpResult;

struct HttpRequest {
  HttpMethod method = HttpMethod::kGet;
  std::string url;    ///< sent as is: already percent-encoded (and canonical, when signed)
  std::string label;  ///< names the object in messages, e.g. "s3://bucket/key"
  std::shared_ptr<const RequestAuth> auth;  ///< nullptr: anonymous
  /// A ranged GET of `out.size()` (> 0) bytes at `offset` into `out`. Otherwise a GET
  /// collects the whole body into HttpResult::body, failing past `max_body` bytes.
  bool ranged = false;
  uint64_t offset = 0;
  std::span<std::byte> out;
  /// With `ranged` at offset 0: the object may be shorter than `out`, so the answer may hold
  /// fewer bytes (the whole object; HttpResult::received says how many). Its size must come
  /// with it (Content-Range's total, or a 200's Content-Length): a first read that also opens.
  bool up_to = false;
  size_t max_body = 0;
  /// Sent as If-Match when not empty: the ETag the object had when it was opened, so a
  /// replaced object answers 412 instead of mixing two versions' bytes.
  std::string if_match;
  bool follow_redirects = false;
  /// Runs exactly once, on the engine thread, when the request is done for good. It must not
  /// block; it may Submit.
  std::function<void(HttpResult&&)> done;
};

struct HttpResult {
  /// OK: a 2xx answer that passed the checks above. Otherwise kCancelled (the engine closed
  /// first), kDataLoss (the answer's sizes disagree with the request), kUnimplemented (the
  /// server ignores Range), kResourceExhausted (a whole body past max_body), kIoError (the
  /// transfer failed, or the final answer was not 2xx: see http_status and body).
  Status status;
  int http_status = 0;  ///< the final answer's code; 0 when none arrived
  /// A whole GET's body; for an answer that is not 2xx, its first 64 KiB (the error document).
  std::string body;
  ObjectInfo info;
  int attempts = 0;       ///< tries made, retries included
  uint64_t received = 0;  ///< body bytes of the final answer
};

struct CurlEngineOptions {
  int depth = 64;
  double request_timeout_s = 60;
  double connect_timeout_s = 10;
  int max_retries = 6;
  /// Backoff before retry n (1-based): uniform in [0, min(max, base * 2^(n-1))] seconds.
  double retry_base_delay_s = 0.05;
  double retry_max_delay_s = 5;
};

/// Counters since creation, read without a lock (a snapshot may mix moments).
struct CurlEngineStats {
  int64_t submitted = 0;      ///< requests accepted by Submit
  int64_t completed = 0;      ///< callbacks run
  int64_t attempts = 0;       ///< transfers started, retries included
  int64_t retries = 0;        ///< transfers started again after a failure that may pass
  int64_t errors = 0;         ///< requests completed with an error other than kCancelled
  int64_t bytes = 0;          ///< body bytes of successful answers
  int64_t in_flight = 0;      ///< transfers at the network now
  int64_t max_in_flight = 0;  ///< the most at once; <= depth
};

class CurlEngine {
 public:
  /// Starts the engine thread. kInvalidArgument for a depth below 1 or a timeout that is not
  /// positive; kInternal when libcurl cannot make a multi handle.
  static Result<std::unique_ptr<CurlEngine>> Create(const CurlEngineOptions& options);

  /// Completes every queued, waiting and in-flight request with kCancelled (also those their
  /// callbacks submit meanwhile), then joins the engine thread.
  ~CurlEngine();
  CurlEngine(const CurlEngine&) = delete;
  CurlEngine& operator=(const CurlEngine&) = delete;

  /// Queues `request` and returns at once.
  void Submit(HttpRequest request);

  CurlEngineStats stats() const;
  const CurlEngineOptions& options() const { return options_; }

 private:
  class Loop;
  explicit CurlEngine(const CurlEngineOptions& options);

  const CurlEngineOptions options_;
  std::unique_ptr<Loop> loop_;
};

}  // namespace patchfeed::storage

#endif  // PATCHFEED_STORAGE_REMOTE_CURL_ENGINE_H_
