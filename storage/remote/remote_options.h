// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_STORAGE_REMOTE_REMOTE_OPTIONS_H_
#define PATCHFEED_STORAGE_REMOTE_REMOTE_OPTIONS_H_

/// \file
/// What a remote store needs besides its URL: the user's options (named as fsspec names them,
/// so a Python `storage_options` dict maps one to one), and the endpoint, region and
/// credentials resolved from them and the environment in the order the AWS tools use.
///
/// s3:// resolution, first found wins:
/// - credentials: `anon` (none at all) > the options' `key`/`secret` (+ `token`, a session
///   token) > a `profile` named in the options > AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY
///   (+ AWS_SESSION_TOKEN) > the profile AWS_PROFILE names (else "default") in
///   AWS_SHARED_CREDENTIALS_FILE (else ~/.aws/credentials), then in AWS_CONFIG_FILE (else
///   ~/.aws/config, where it is `[profile name]`) > anonymous;
/// - endpoint: `endpoint_url` > AWS_ENDPOINT_URL_S3 > AWS_ENDPOINT_URL > the profile's
///   `endpoint_url` in the config file > https://s3.REGION.amazonaws.com;
/// - region: `region` > AWS_REGION > AWS_DEFAULT_REGION > the profile's `region` > us-east-1.
/// gs:// (the XML API, which speaks S3's protocol): endpoint `endpoint_url` >
/// https://storage.googleapis.com; credentials `anon` > `key`/`secret` (HMAC keys, signed
/// GOOG4-HMAC-SHA256) > a bearer `token` > GS_ACCESS_KEY_ID / GS_SECRET_ACCESS_KEY (the names
/// gsutil's boto config uses) > GOOGLE_OAUTH_ACCESS_TOKEN (a bearer token, e.g. from
/// `gcloud auth print-access-token`) > anonymous.
/// http(s)://: anonymous, or `token` as a bearer token.
///
/// The environment is read by ProcessEnvironment() only; resolution takes it as a map, so it
/// is a pure function of its arguments (tests pass their own).

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/result.h"
#include "storage/remote/url.h"

namespace patchfeed::storage {

/// Names as in fsspec/s3fs, plus the transfer settings.
struct RemoteOptions {
  std::string endpoint_url;  ///< e.g. "http://127.0.0.1:8333" for MinIO, SeaweedFS, R2
  bool anon = false;         ///< send unsigned requests (public buckets)
  std::string key;           ///< access key id (s3), HMAC access id (gs)
  std::string secret;        ///< secret access key / HMAC secret
  std::string token;         ///< s3: session token; gs, http(s): OAuth bearer token
  std::string region;
  std::string profile;  ///< a profile of the AWS credentials and config files

  double request_timeout_s = 60;  ///< one request, from start to the last byte
  double connect_timeout_s = 10;
  int max_retries = 6;  ///< retries after the first attempt of a request
  int io_depth = 64;    ///< requests in flight at once

  /// An opt-in local cache of the bytes read (range_cache.h): its folder ("" for none) and
  /// the bound on what it keeps.
  std::string cache_dir;
  uint64_t cache_max_bytes = uint64_t{10} << 30;
};

/// kInvalidArgument naming the option when a transfer setting is out of range.
Status ValidateRemoteOptions(const RemoteOptions& options);

using Environment = std::map<std::string, std::string, std::less<>>;

/// This process's environment variables (the only place the environment is read).
Environment ProcessEnvironment();

enum class RemoteAuth : uint8_t {
  kAnonymous,
  kAwsSigV4,   ///< AWS4-HMAC-SHA256 with key/secret (+ x-amz-security-token)
  kGoogSigV4,  ///< GOOG4-HMAC-SHA256 with an HMAC key/secret
  kBearer,     ///< Authorization: Bearer <token>
};

/// Everything requests to one store need, resolved.
struct RemoteAccess {
  /// Requests go to `endpoint` + "/" + bucket + "/" + key (path style) for s3:// and gs://;
  /// to the URL's origin for http(s)://. No trailing '/'.
  std::string endpoint;
  std::string region;  ///< s3: the signing region; gs: "auto"
  RemoteAuth auth = RemoteAuth::kAnonymous;
  std::string key;
  std::string secret;
  std::string token;  ///< session token (kAwsSigV4) or bearer token (kBearer)
  /// Where the credentials came from, for messages: "AWS_PROFILE=x in /home/u/.aws/credentials",
  /// "the storage options", "no credentials (anonymous)".
  std::string source;
};

/// Resolves `options` and `env` for `url` as the file comment says. kInvalidArgument naming
/// the setting when the options or files contradict themselves (a key without a secret, an
/// endpoint that is not http(s)://, a named profile that no file holds); kIoError when a
/// credentials file exists but cannot be read.
Result<RemoteAccess> ResolveRemoteAccess(const RemoteUrl& url, const RemoteOptions& options,
                                         const Environment& env);

}  // namespace patchfeed::storage

#endif  // PATCHFEED_STORAGE_REMOTE_REMOTE_OPTIONS_H_
