// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "storage/remote/remote_errors.h"

#include <algorithm>
#include <array>
#include <string>

#include "common/str_cat.h"
#include "storage/remote/s3_xml.h"

namespace patchfeed::storage {
namespace {

constexpr size_t kMaxQuotedBody = 200;

// Codes S3, GCS's XML API and S3-compatible stores use for credentials they do not accept.
constexpr std::array<std::string_view, 8> kCredentialCodes = {"SignatureDoesNotMatch",
                                                              "InvalidAccessKeyId",
                                                              "InvalidToken",
                                                              "ExpiredToken",
                                                              "TokenRefreshRequired",
                                                              "InvalidClientTokenId",
                                                              "AuthorizationHeaderMalformed",
                                                              "InvalidSecurity"};

bool IsCredentialCode(std::string_view code) {
  return std::find(kCredentialCodes.begin(), kCredentialCodes.end(), code) !=
         kCredentialCodes.end();
}

// The first line of a body that is not an S3 error document (a web server's page), printable
// characters only, cut to a readable length.
std::string QuoteBody(std::string_view body) {
  std::string out;
  for (const char c : body) {
    if (c == '\n' || c == '\r' || out.size() == kMaxQuotedBody)
      break;
    const auto u = static_cast<unsigned char>(c);
    out.push_back(u >= 0x20 && u < 0x7f ? c : '?');
  }
  return out;
}

}  // namespace

Status RemoteRequestError(const HttpResult& result, std::string_view what,
                          const RemoteAccess& access) {
  if (result.status.ok())
    return InternalError(StrCat(what, ": a request that succeeded was reported as failed"));
  if (result.status.code() != StatusCode::kIoError || result.http_status == 0)
    return result.status;
  const int http = result.http_status;
  const auto s3 = ParseS3Error(result.body);
  std::string detail = StrCat("HTTP ", http);
  if (s3) {
    detail += StrCat(" ", s3->code, s3->message.empty() ? "" : ": ", s3->message);
  } else if (const std::string quoted = QuoteBody(result.body); !quoted.empty()) {
    detail += StrCat(": ", quoted);
  }
  if (result.attempts > 1)
    detail += StrCat(", after ", result.attempts, " attempts");
  const std::string_view code = s3 ? std::string_view(s3->code) : std::string_view();
  const bool anonymous = access.auth == RemoteAuth::kAnonymous;

  if (http == 404 || code == "NoSuchKey" || code == "NoSuchBucket") {
    return NotFoundError(StrCat(what, ": ", code == "NoSuchBucket" ? "no such bucket" : "not found",
                                " (", detail, ")"));
  }
  if (!anonymous && (IsCredentialCode(code) || ((http == 401 || http == 403) && !s3))) {
    return IoError(StrCat(what, ": credentials from ", access.source, " were refused (", detail,
                          "); check the key and secret, or the token"));
  }
  if (http == 401 || http == 403 || code == "AccessDenied") {
    if (anonymous) {
      return IoError(StrCat(what, ": access denied to an unsigned request (", access.source,
                            "): the object is not public; give credentials (", detail, ")"));
    }
    return IoError(
        StrCat(what, ": access denied to the credentials from ", access.source, " (", detail, ")"));
  }
  if (http == 412) {
    return DataLossError(
        StrCat(what, ": the object changed since it was opened (", detail, "); open it again"));
  }
  if (http == 416)
    return DataLossError(StrCat(what, ": the range passes the end of the object (", detail, ")"));
  return IoError(StrCat(what, ": ", detail));
}

}  // namespace patchfeed::storage
