// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_STORAGE_REMOTE_URL_H_
#define PATCHFEED_STORAGE_REMOTE_URL_H_

/// \file
/// Remote locations: `s3://bucket/key`, `gs://bucket/key` and `http(s)://host[:port]/path`,
/// parsed into their parts, and the percent-encoding their requests need.
///
/// Object keys in s3:// and gs:// URLs are written raw, as the AWS and gcloud tools take them
/// ("s3://b/my scan.zarr"); they are encoded when a request is built. An http(s) path is taken
/// as written: it is already a URL. Stateless functions, safe to call from any thread.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace patchfeed::storage {

enum class RemoteScheme : uint8_t { kS3, kGs, kHttp, kHttps };

struct RemoteUrl {
  RemoteScheme scheme = RemoteScheme::kS3;
  /// s3://, gs://: the bucket and the key (or key prefix) inside it, raw, without a leading
  /// '/'; the key may be empty (the bucket's top).
  std::string bucket;
  std::string key;
  /// http(s)://: "https://host[:port]" and the path as written, starting with '/'.
  std::string origin;
  std::string path;

  bool is_bucket() const { return scheme == RemoteScheme::kS3 || scheme == RemoteScheme::kGs; }
  /// The URL as the user would write it: "s3://bucket/key", "https://host/path".
  std::string ToString() const;
};

/// Whether `path` names a remote location (s3://, gs://, http://, https://, any case) rather
/// than a local file.
bool IsRemoteUrl(std::string_view path);

/// Parses `url`. kInvalidArgument naming the URL and what is wrong with it: an unknown scheme,
/// a missing or malformed bucket or host, a bad port, user info, a query or a fragment.
Result<RemoteUrl> ParseRemoteUrl(std::string_view url);

/// Percent-encodes `text` as AWS Signature V4 canonicalizes it: the unreserved characters
/// A-Z a-z 0-9 - _ . ~ stay, every other byte becomes %XX (upper-case hex); '/' stays when
/// `keep_slash`. libcurl 7.88 signs the path and query exactly as sent, so what we send must
/// already be canonical.
std::string UriEncode(std::string_view text, bool keep_slash);

/// "k1=v1&k2=v2" with names and values UriEncoded and the pairs sorted by name, the canonical
/// query string of Signature V4 (which libcurl 7.88 does not sort or encode itself).
std::string CanonicalQuery(std::vector<std::pair<std::string, std::string>> params);

}  // namespace patchfeed::storage

#endif  // PATCHFEED_STORAGE_REMOTE_URL_H_
