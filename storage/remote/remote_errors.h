// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_STORAGE_REMOTE_REMOTE_ERRORS_H_
#define PATCHFEED_STORAGE_REMOTE_REMOTE_ERRORS_H_

/// \file
/// One clear line for a request that failed: the URL and byte range, the HTTP status, the
/// store's own error code and message (parsed from its XML body), and, when the store refused
/// credentials or denied access, where the credentials came from and what to do. Stateless.

#include <string_view>

#include "common/status.h"
#include "storage/remote/curl_engine.h"
#include "storage/remote/remote_options.h"

namespace patchfeed::storage {

/// The status for `result`, a request that did not succeed; `what` names it ("s3://b/k",
/// "s3://b/k bytes 0-99"). Answers that are not 2xx become:
/// - kNotFound for 404 / NoSuchKey / NoSuchBucket;
/// - kIoError "credentials from <source> were refused" for SignatureDoesNotMatch,
///   InvalidAccessKeyId, an expired or invalid token, or a 401/403 without an error body to a
///   signed request;
/// - kIoError "access denied" for AccessDenied / 403, saying whether the request was signed;
/// - kDataLoss for 412 (the object changed since it was opened) and 416 (past its end);
/// - kIoError with the status and the store's code and message otherwise (SlowDown, 500...).
/// Transfer failures (kIoError without an answer, kDataLoss, kCancelled...) pass unchanged.
Status RemoteRequestError(const HttpResult& result, std::string_view what,
                          const RemoteAccess& access);

}  // namespace patchfeed::storage

#endif  // PATCHFEED_STORAGE_REMOTE_REMOTE_ERRORS_H_
