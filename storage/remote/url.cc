// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "storage/remote/url.h"

#include <algorithm>
#include <cctype>

#include "common/str_cat.h"

namespace patchfeed::storage {
namespace {

constexpr size_t kMaxBucketLength = 255;

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size())
    return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i])
      return false;
  }
  return true;
}

bool IsUnreserved(unsigned char c) {
  return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~';
}

Status UrlError(std::string_view url, std::string_view what) {
  return InvalidArgumentError(StrCat("'", url, "' is not a usable URL: ", what));
}

// Bucket names on S3 and GCS are lower-case letters, digits, '.', '-' (and '_' on GCS);
// old us-east-1 buckets may hold upper case. Anything else cannot be a bucket.
Status CheckBucket(std::string_view url, std::string_view bucket) {
  if (bucket.empty())
    return UrlError(url, "the bucket name is missing (write s3://bucket/key)");
  if (bucket.size() > kMaxBucketLength)
    return UrlError(url, StrCat("the bucket name is ", bucket.size(), " characters long"));
  for (const char c : bucket) {
    const auto u = static_cast<unsigned char>(c);
    if (!std::isalnum(u) && c != '.' && c != '-' && c != '_')
      return UrlError(url, StrCat("the bucket name '", bucket, "' holds a character ('", c,
                                  "') bucket names cannot have"));
  }
  return Status::Ok();
}

Status CheckPrintable(std::string_view url, std::string_view part, std::string_view what) {
  for (const char c : part) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)
      return UrlError(url, StrCat(what, " holds a control character"));
  }
  return Status::Ok();
}

Result<RemoteUrl> ParseBucketUrl(std::string_view url, RemoteScheme scheme, size_t prefix_len) {
  const std::string_view rest = url.substr(prefix_len);
  const size_t slash = rest.find('/');
  RemoteUrl parsed;
  parsed.scheme = scheme;
  parsed.bucket = std::string(rest.substr(0, slash));
  PATCHFEED_RETURN_IF_ERROR(CheckBucket(url, parsed.bucket));
  if (slash != std::string_view::npos)
    parsed.key = std::string(rest.substr(slash + 1));
  PATCHFEED_RETURN_IF_ERROR(CheckPrintable(url, parsed.key, "the key"));
  return parsed;
}

Status CheckHost(std::string_view url, std::string_view host) {
  if (host.empty())
    return UrlError(url, "the host name is missing");
  if (host.front() == '[') {  // an IPv6 literal
    if (host.back() != ']' || host.size() < 3)
      return UrlError(url, "the IPv6 address is not closed by ']'");
    for (const char c : host.substr(1, host.size() - 2)) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.')
        return UrlError(url, "the IPv6 address holds a character addresses cannot have");
    }
    return Status::Ok();
  }
  for (const char c : host) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_')
      return UrlError(url,
                      StrCat("the host name holds a character ('", c, "') host names cannot have"));
  }
  return Status::Ok();
}

Status CheckPort(std::string_view url, std::string_view port) {
  uint32_t value = 0;
  if (port.empty() || port.size() > 5)
    return UrlError(url, StrCat("the port '", port, "' is not a number from 1 to 65535"));
  for (const char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return UrlError(url, StrCat("the port '", port, "' is not a number from 1 to 65535"));
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  if (value == 0 || value > 65535)
    return UrlError(url, StrCat("the port '", port, "' is not a number from 1 to 65535"));
  return Status::Ok();
}

Result<RemoteUrl> ParseHttpUrl(std::string_view url, RemoteScheme scheme, size_t prefix_len) {
  const std::string_view rest = url.substr(prefix_len);
  if (rest.find_first_of("?#") != std::string_view::npos)
    return UrlError(url, "queries and fragments ('?', '#') are not supported in data URLs");
  const size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  if (authority.find('@') != std::string_view::npos) {
    return UrlError(url,
                    "user names and passwords in URLs are not supported (they would show in "
                    "every message); pass a token in the storage options instead");
  }
  // The port follows the last ':' outside an IPv6 literal's brackets.
  const size_t bracket = authority.rfind(']');
  const size_t colon = authority.rfind(':');
  std::string_view host = authority;
  if (colon != std::string_view::npos && (bracket == std::string_view::npos || colon > bracket)) {
    host = authority.substr(0, colon);
    PATCHFEED_RETURN_IF_ERROR(CheckPort(url, authority.substr(colon + 1)));
  }
  PATCHFEED_RETURN_IF_ERROR(CheckHost(url, host));
  RemoteUrl parsed;
  parsed.scheme = scheme;
  std::string lowered(authority);
  std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  parsed.origin = StrCat(scheme == RemoteScheme::kHttps ? "https://" : "http://", lowered);
  parsed.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  for (const char c : parsed.path) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f)
      return UrlError(url, "the path holds a space or control character (encode it as %XX)");
  }
  return parsed;
}

}  // namespace

std::string RemoteUrl::ToString() const {
  switch (scheme) {
    case RemoteScheme::kS3:
      return StrCat("s3://", bucket, "/", key);
    case RemoteScheme::kGs:
      return StrCat("gs://", bucket, "/", key);
    case RemoteScheme::kHttp:
    case RemoteScheme::kHttps:
      return origin + path;
  }
  return {};
}

bool IsRemoteUrl(std::string_view path) {
  return StartsWithNoCase(path, "s3://") || StartsWithNoCase(path, "gs://") ||
         StartsWithNoCase(path, "http://") || StartsWithNoCase(path, "https://");
}

Result<RemoteUrl> ParseRemoteUrl(std::string_view url) {
  if (StartsWithNoCase(url, "s3://"))
    return ParseBucketUrl(url, RemoteScheme::kS3, 5);
  if (StartsWithNoCase(url, "gs://"))
    return ParseBucketUrl(url, RemoteScheme::kGs, 5);
  if (StartsWithNoCase(url, "http://"))
    return ParseHttpUrl(url, RemoteScheme::kHttp, 7);
  if (StartsWithNoCase(url, "https://"))
    return ParseHttpUrl(url, RemoteScheme::kHttps, 8);
  return UrlError(url, "the scheme is not one of s3://, gs://, http://, https://");
}

std::string UriEncode(std::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (IsUnreserved(u) || (keep_slash && c == '/')) {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xf]);
    }
  }
  return out;
}

std::string CanonicalQuery(std::vector<std::pair<std::string, std::string>> params) {
  for (auto& [name, value] : params) {
    name = UriEncode(name, false);
    value = UriEncode(value, false);
  }
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty())
      out.push_back('&');
    out += StrCat(name, "=", value);
  }
  return out;
}

}  // namespace patchfeed::storage
