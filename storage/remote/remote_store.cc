// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "storage/remote/remote_store.h"

#include <algorithm>
#include <condition_variable>
#include <optional>
#include <utility>

#include "common/str_cat.h"
#include "storage/remote/http_headers.h"
#include "storage/remote/remote_errors.h"
#include "storage/remote/s3_xml.h"

namespace patchfeed::storage {
namespace internal_remote {

// One bucket (s3://b, gs://b) or web server (https://host:port): where its requests go and
// how they sign.
struct Location {
  RemoteAccess access;
  std::shared_ptr<const RequestAuth> auth;
  bool bucket = false;  // s3://, gs://: signed requests, which must not follow redirects
};

}  // namespace internal_remote

namespace {

using internal_remote::Location;

// Listing pages are small XML documents (1000 names); past this one is not a listing.
constexpr size_t kMaxListingBytes = 16 << 20;
constexpr int kMaxListingPages = 1'000'000;

std::shared_ptr<const RequestAuth> MakeAuth(const RemoteAccess& access) {
  auto auth = std::make_shared<RequestAuth>();
  switch (access.auth) {
    case RemoteAuth::kAnonymous:
      return nullptr;
    case RemoteAuth::kAwsSigV4:
      auth->sigv4 = StrCat("aws:amz:", access.region, ":s3");
      // S3 wants the payload's hash signed; a GET has none to protect. libcurl 7.88 signs the
      // value of this header as the payload hash instead of hashing an empty body.
      auth->headers.push_back("x-amz-content-sha256: UNSIGNED-PAYLOAD");
      if (!access.token.empty())
        auth->headers.push_back(StrCat("x-amz-security-token: ", access.token));
      break;
    case RemoteAuth::kGoogSigV4:
      // GCS's V4 signing with HMAC keys: GOOG4-HMAC-SHA256, scope auto/storage/goog4_request.
      auth->sigv4 = "goog:goog:auto:storage";
      auth->headers.push_back("x-goog-content-sha256: UNSIGNED-PAYLOAD");
      break;
    case RemoteAuth::kBearer:
      auth->headers.push_back(StrCat("Authorization: Bearer ", access.token));
      break;
  }
  auth->user = access.key;
  auth->password = access.secret;
  return auth;
}

HttpRequest MakeRequest(HttpMethod method, std::string url, std::string label,
                        const Location& location) {
  HttpRequest request;
  request.method = method;
  request.url = std::move(url);
  request.label = std::move(label);
  request.auth = location.auth;
  request.follow_redirects = !location.bucket;
  return request;
}

// Submits `request` and waits for its result on this thread.
HttpResult SubmitAndWait(CurlEngine& engine, HttpRequest request) {
  std::mutex mutex;
  std::condition_variable cv;
  std::optional<HttpResult> outcome;
  request.done = [&](HttpResult&& result) {
    std::lock_guard lock(mutex);  // notified under the lock: the waiter's stack outlives it
    outcome = std::move(result);
    cv.notify_one();
  };
  engine.Submit(std::move(request));
  std::unique_lock lock(mutex);
  cv.wait(lock, [&] { return outcome.has_value(); });
  return std::move(*outcome);
}

std::string_view WithoutTrailingSlashes(std::string_view key) {
  while (!key.empty() && key.back() == '/')
    key.remove_suffix(1);
  return key;
}

}  // namespace

struct RemoteStore::Target {
  RemoteUrl url;
  std::string name;  // the path as given, for messages
  std::shared_ptr<const Location> location;

  // Where a request for `key` of the bucket goes (path style); the URL itself for http(s).
  std::string RequestUrl(std::string_view key) const {
    if (!url.is_bucket())
      return url.origin + url.path;
    return StrCat(location->access.endpoint, "/", url.bucket, key.empty() ? "" : "/",
                  UriEncode(key, true));
  }
  HttpRequest Request(HttpMethod method, std::string request_url, std::string label) const {
    return MakeRequest(method, std::move(request_url), std::move(label), *location);
  }
};

RemoteSource::RemoteSource(std::shared_ptr<CurlEngine> engine,
                           std::shared_ptr<const Location> location, std::string url,
                           std::string request_url, ObjectInfo info)
    : engine_(std::move(engine)),
      location_(std::move(location)),
      name_(std::move(url)),
      request_url_(std::move(request_url)),
      info_(std::move(info)),
      size_(info_.size.value_or(0)) {}

void RemoteSource::ReadAsync(uint64_t offset, std::span<std::byte> out,
                             std::function<void(Status)> done) const {
  if (out.empty()) {
    done(Status::Ok());
    return;
  }
  if (offset > size_ || out.size() > size_ - offset) {
    done(DataLossError(StrCat(name_, ": ", DescribeRange(offset, out.size()),
                              " pass the end of the object, which holds ", size_, " bytes")));
    return;
  }
  HttpRequest request = MakeRequest(HttpMethod::kGet, request_url_, name_, *location_);
  request.ranged = true;
  request.offset = offset;
  request.out = out;
  // A weak ETag ("W/...") never matches If-Match: send only strong ones.
  if (!info_.etag.empty() && !info_.etag.starts_with("W/"))
    request.if_match = info_.etag;
  // The callback holds the location, not the source: it must not keep the engine alive from
  // the engine's own thread.
  request.done = [what = StrCat(name_, " ", DescribeRange(offset, out.size())),
                  location = location_, done = std::move(done)](HttpResult&& result) {
    done(result.status.ok() ? Status::Ok() : RemoteRequestError(result, what, location->access));
  };
  engine_->Submit(std::move(request));
}

Status RemoteSource::ReadAt(uint64_t offset, std::span<std::byte> out) const {
  return ReadAndWait(*this, offset, out);
}

RemoteStore::RemoteStore(const RemoteOptions& options, Environment env,
                         std::shared_ptr<CurlEngine> engine)
    : options_(options), env_(std::move(env)), engine_(std::move(engine)) {}

Result<std::shared_ptr<RemoteStore>> RemoteStore::Create(const RemoteOptions& options,
                                                         Environment env,
                                                         std::shared_ptr<CurlEngine> engine) {
  PATCHFEED_RETURN_IF_ERROR(ValidateRemoteOptions(options));
  if (engine == nullptr) {
    CurlEngineOptions engine_options;
    engine_options.depth = options.io_depth;
    engine_options.request_timeout_s = options.request_timeout_s;
    engine_options.connect_timeout_s = options.connect_timeout_s;
    engine_options.max_retries = options.max_retries;
    PATCHFEED_ASSIGN_OR_RETURN(auto own, CurlEngine::Create(engine_options));
    engine = std::move(own);
  }
  return std::shared_ptr<RemoteStore>(new RemoteStore(options, std::move(env), std::move(engine)));
}

Result<RemoteStore::Target> RemoteStore::Resolve(const std::string& path) const {
  Target target;
  PATCHFEED_ASSIGN_OR_RETURN(target.url, ParseRemoteUrl(path));
  target.name = path;
  RemoteUrl root = target.url;
  root.key.clear();
  root.path = "/";
  const std::string where = root.is_bucket() ? root.ToString() : root.origin;
  std::lock_guard lock(mutex_);
  auto it = locations_.find(where);
  if (it == locations_.end()) {
    auto resolve = [&]() -> Result<std::shared_ptr<const Location>> {
      auto location = std::make_shared<Location>();
      PATCHFEED_ASSIGN_OR_RETURN(location->access, ResolveRemoteAccess(root, options_, env_),
                                 where);
      location->auth = MakeAuth(location->access);
      location->bucket = root.is_bucket();
      return std::shared_ptr<const Location>(std::move(location));
    };
    it = locations_.emplace(where, resolve()).first;
  }
  if (!it->second.ok())
    return it->second.status();
  target.location = *it->second;
  return target;
}

Result<RemoteAccess> RemoteStore::AccessFor(const std::string& url) const {
  PATCHFEED_ASSIGN_OR_RETURN(const Target target, Resolve(url));
  return target.location->access;
}

void RemoteStore::HeadAsync(const Target& target,
                            std::function<void(Result<ObjectInfo>)> done) const {
  HttpRequest head =
      target.Request(HttpMethod::kHead, target.RequestUrl(target.url.key), target.name);
  // A HEAD answer has no body, so no error code: when it is refused, ask for the first byte to
  // learn why (which credentials were refused, why access was denied, which endpoint a bucket
  // in another region wants). A server that refuses HEAD but serves ranges gives the size this
  // way too. The probe is made here and sent from the HEAD's callback.
  HttpRequest probe = target.Request(HttpMethod::kGet, head.url, target.name);
  auto first = std::make_shared<std::byte>();
  probe.ranged = true;
  probe.out = std::span(first.get(), 1);
  head.done = [engine = engine_.get(), location = target.location, name = target.name,
               probe = std::move(probe), first,
               done = std::move(done)](HttpResult&& answer) mutable {
    if (answer.status.ok()) {
      done(std::move(answer.info));
      return;
    }
    if (answer.http_status == 0 || answer.http_status >= 500 || answer.http_status == 404) {
      done(RemoteRequestError(answer, name, location->access));
      return;
    }
    probe.done = [head = std::move(answer), location, name, first,
                  done = std::move(done)](HttpResult&& get) {
      if (get.status.ok() && get.info.size) {
        done(std::move(get.info));
        return;
      }
      done(RemoteRequestError(get.http_status >= 400 ? get : head, name, location->access));
    };
    engine->Submit(std::move(probe));
  };
  engine_->Submit(std::move(head));
}

Result<ObjectInfo> RemoteStore::Head(const Target& target) const {
  std::mutex mutex;
  std::condition_variable cv;
  std::optional<Result<ObjectInfo>> outcome;
  HeadAsync(target, [&](Result<ObjectInfo> result) {
    std::lock_guard lock(mutex);  // notified under the lock: the waiter's stack outlives it
    outcome = std::move(result);
    cv.notify_one();
  });
  std::unique_lock lock(mutex);
  cv.wait(lock, [&] { return outcome.has_value(); });
  return std::move(*outcome);
}

std::optional<Result<ObjectInfo>> RemoteStore::Remembered(const std::string& path) const {
  std::lock_guard lock(mutex_);
  if (auto it = known_.find(path); it != known_.end())
    return it->second;
  return std::nullopt;
}

void RemoteStore::Remember(const std::string& path, const Result<ObjectInfo>& known) const {
  // Only answers that will not change while training reads: an object, or none at all (zarr's
  // fill-value chunks). Refusals and failures are asked again.
  if (!known.ok() && known.status().code() != StatusCode::kNotFound)
    return;
  std::lock_guard lock(mutex_);
  if (known_.size() >= kMaxKnownObjects)
    known_.clear();
  known_.emplace(path, known);
}

Result<std::shared_ptr<RemoteSource>> RemoteStore::SourceFor(const Target& target,
                                                             Result<ObjectInfo> known) const {
  PATCHFEED_ASSIGN_OR_RETURN(ObjectInfo info, std::move(known));
  return std::make_shared<RemoteSource>(engine_, target.location, target.name,
                                        target.RequestUrl(target.url.key), std::move(info));
}

Result<std::shared_ptr<RemoteSource>> RemoteStore::OpenRemote(const std::string& path) const {
  PATCHFEED_ASSIGN_OR_RETURN(const Target target, Resolve(path));
  std::optional<Result<ObjectInfo>> known = Remembered(path);
  if (!known.has_value()) {
    known = Head(target);
    Remember(path, *known);
  }
  return SourceFor(target, std::move(*known));
}

Result<std::shared_ptr<ByteSource>> RemoteStore::Open(const std::string& path,
                                                      IoMode /*mode*/) const {
  PATCHFEED_ASSIGN_OR_RETURN(auto source, OpenRemote(path));
  return std::shared_ptr<ByteSource>(std::move(source));
}

void RemoteStore::OpenAsync(const std::string& path, IoMode /*mode*/, std::span<std::byte> head,
                            std::function<void(Result<OpenedFile>)> done) const {
  Result<Target> target = Resolve(path);
  if (!target.ok()) {
    done(target.status());
    return;
  }
  // The object is known: read its first bytes (if asked) and answer.
  const auto opened = [this, head](const Target& t, Result<ObjectInfo> known,
                                   std::function<void(Result<OpenedFile>)> answer) {
    Result<std::shared_ptr<RemoteSource>> source = SourceFor(t, std::move(known));
    if (!source.ok()) {
      answer(source.status());
      return;
    }
    const uint64_t n = std::min<uint64_t>(head.size(), (*source)->size());
    if (n == 0) {
      answer(OpenedFile{std::move(*source), 0});
      return;
    }
    RemoteSource& file = **source;
    file.ReadAsync(0, head.first(n),
                   [file = std::move(*source), n, answer = std::move(answer)](Status status) {
                     if (!status.ok()) {
                       answer(std::move(status));
                       return;
                     }
                     answer(OpenedFile{file, n});
                   });
  };
  if (std::optional<Result<ObjectInfo>> known = Remembered(path)) {
    opened(*target, std::move(*known), std::move(done));
    return;
  }
  const auto by_head = [this, opened](const Target& t,
                                      std::function<void(Result<OpenedFile>)> answer) {
    HeadAsync(t, [this, opened, t, answer = std::move(answer)](Result<ObjectInfo> known) {
      Remember(t.name, known);
      opened(t, std::move(known), answer);
    });
  };
  if (head.empty()) {
    by_head(*target, std::move(done));
    return;
  }
  // One GET of the first bytes opens the object: its answer says the size and the ETag.
  HttpRequest get =
      target->Request(HttpMethod::kGet, target->RequestUrl(target->url.key), target->name);
  get.ranged = true;
  get.up_to = true;
  get.out = head;
  get.done = [this, by_head, t = *target, done = std::move(done)](HttpResult&& answer) {
    if (answer.status.ok()) {
      Remember(t.name, answer.info);
      Result<std::shared_ptr<RemoteSource>> source = SourceFor(t, answer.info);
      if (!source.ok()) {
        done(source.status());
        return;
      }
      done(OpenedFile{std::move(*source), answer.received});
      return;
    }
    if (answer.http_status == 416) {
      by_head(t, done);  // an empty object has no first byte to ask for
      return;
    }
    Status error = RemoteRequestError(answer, t.name, t.location->access);
    Remember(t.name, error);  // kept when it says nothing is there
    done(std::move(error));
  };
  engine_->Submit(std::move(get));
}

std::shared_ptr<const std::vector<std::byte>> RemoteStore::Recall(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = kept_.find(key);
  return it == kept_.end() ? nullptr : it->second;
}

void RemoteStore::Keep(const std::string& key, std::span<const std::byte> bytes) const {
  auto kept = std::make_shared<const std::vector<std::byte>>(bytes.begin(), bytes.end());
  const size_t cost = key.size() + bytes.size();
  std::lock_guard lock(mutex_);
  if (kept_bytes_ + cost > kMaxKeptBytes) {
    kept_.clear();
    kept_bytes_ = 0;
  }
  if (kept_.emplace(key, std::move(kept)).second)
    kept_bytes_ += cost;
}

StoreStats RemoteStore::stats() const {
  const CurlEngineStats e = engine_->stats();
  StoreStats s;
  s.engine = "libcurl";
  s.depth = options_.io_depth;
  s.requests = e.completed;
  s.retries = e.retries;
  s.errors = e.errors;
  s.bytes = e.bytes;
  s.max_in_flight = e.max_in_flight;
  return s;
}

Result<EntryKind> RemoteStore::Stat(const std::string& path) const {
  PATCHFEED_ASSIGN_OR_RETURN(const Target target, Resolve(path));
  const std::string_view key = WithoutTrailingSlashes(target.url.key);
  // A key without a trailing '/' may be an object; on a web server it is the only question.
  if (!target.url.is_bucket() || (!key.empty() && key.size() == target.url.key.size())) {
    const Result<ObjectInfo> head = Head(target);
    if (head.ok())
      return EntryKind::kFile;
    if (head.status().code() != StatusCode::kNotFound)
      return head.status();
    if (!target.url.is_bucket())
      return EntryKind::kNone;
  }
  const Result<std::vector<std::string>> names =
      ListNames(target, key.empty() ? std::string() : StrCat(key, "/"), 1);
  if (names.ok())
    return EntryKind::kFolder;
  if (names.status().code() == StatusCode::kNotFound)
    return EntryKind::kNone;
  return names.status();
}

Result<std::vector<std::string>> RemoteStore::List(const std::string& folder) const {
  PATCHFEED_ASSIGN_OR_RETURN(Target target, Resolve(folder));
  if (!target.url.is_bucket()) {
    return UnimplementedError(StrCat(folder,
                                     ": web servers offer no listing; name the objects (cases, "
                                     "arrays) one by one, or use an s3:// or gs:// URL"));
  }
  const std::string_view key = WithoutTrailingSlashes(target.url.key);
  return ListNames(target, key.empty() ? std::string() : StrCat(key, "/"), 0);
}

// The names directly under `prefix` in the bucket (folders ending with '/'), sorted; at most
// one page of `max_keys` names when it is above 0. kNotFound when there are none under a
// non-empty prefix (no such folder) or the bucket does not exist.
Result<std::vector<std::string>> RemoteStore::ListNames(const Target& target,
                                                        const std::string& prefix,
                                                        int max_keys) const {
  const std::string label = StrCat(target.name, " (listing)");
  std::vector<std::string> names;
  bool any = false;  // a folder marker object ("prefix/" itself) makes a folder too
  std::string token;
  for (int page_number = 0;; ++page_number) {
    if (page_number == kMaxListingPages)
      return DataLossError(StrCat(label, ": the store sent ", kMaxListingPages, " pages"));
    std::vector<std::pair<std::string, std::string>> params = {
        {"list-type", "2"}, {"delimiter", "/"}, {"prefix", prefix}};
    if (max_keys > 0)
      params.emplace_back("max-keys", StrCat(max_keys));
    if (!token.empty())
      params.emplace_back("continuation-token", token);
    HttpRequest request = target.Request(
        HttpMethod::kGet, StrCat(target.RequestUrl(""), "?", CanonicalQuery(std::move(params))),
        label);
    request.max_body = kMaxListingBytes;
    const HttpResult result = SubmitAndWait(*engine_, std::move(request));
    if (!result.status.ok())
      return RemoteRequestError(result, label, target.location->access);
    PATCHFEED_ASSIGN_OR_RETURN(ListPage page, ParseListObjectsV2(result.body, label));
    any = any || !page.keys.empty() || !page.prefixes.empty();
    for (std::string& key : page.keys) {
      if (key.starts_with(prefix) && key.size() > prefix.size())
        names.push_back(key.substr(prefix.size()));
    }
    for (std::string& folder : page.prefixes) {
      if (folder.starts_with(prefix) && folder.size() > prefix.size() + 1 && folder.ends_with('/'))
        names.push_back(folder.substr(prefix.size()));
    }
    if (!page.truncated || max_keys > 0)
      break;
    if (page.next_token == token)
      return DataLossError(StrCat(label, ": the store repeats its continuation token"));
    token = std::move(page.next_token);
  }
  if (!any && !prefix.empty()) {
    return NotFoundError(
        StrCat(target.name, ": no such folder (no object's name starts with '", prefix, "')"));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace patchfeed::storage
