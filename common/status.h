// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_COMMON_STATUS_H_
#define PATCHFEED_COMMON_STATUS_H_

/// \file
/// Status: the error value every patchfeed layer returns instead of throwing.
///
/// A Status is a code plus a message. The OK status carries no allocation, so returning it on
/// the hot path costs a pointer compare. Layers add context on the way up with `WithContext`
/// (the codec says which block is bad, the loader adds the file and the patch). Thread-safe to
/// copy and read; not to mutate concurrently.

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "common/str_cat.h"

namespace patchfeed {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,  ///< the caller passed something unusable
  kNotFound = 2,         ///< a file or key is missing
  kDataLoss = 3,         ///< corrupt or truncated input data
  kUnimplemented = 4,    ///< a valid format feature we do not support (named in the message)
  kResourceExhausted = 5,
  kCancelled = 6,
  kInternal = 7,
  kIoError = 8,  ///< the operating system refused a read or write
};

/// Returns the code's name, e.g. "DATA_LOSS".
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  /// The OK status.
  Status() = default;
  Status(StatusCode code, std::string_view message);

  static Status Ok() { return Status(); }

  bool ok() const { return rep_ == nullptr; }
  StatusCode code() const { return rep_ ? rep_->code : StatusCode::kOk; }
  std::string_view message() const { return rep_ ? std::string_view(rep_->message) : ""; }

  /// Returns a copy whose message is `context + ": " + message()`. OK stays OK.
  Status WithContext(std::string_view context) const;

  /// "DATA_LOSS: block 3: lz4 stream is corrupt", or "OK".
  std::string ToString() const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code() == b.code() && a.message() == b.message();
  }

 private:
  struct Rep {
    StatusCode code;
    std::string message;
  };
  // Shared and immutable: copying an error status is a refcount bump.
  std::shared_ptr<const Rep> rep_;
};

inline Status InvalidArgumentError(std::string_view m) {
  return Status(StatusCode::kInvalidArgument, m);
}
inline Status NotFoundError(std::string_view m) { return Status(StatusCode::kNotFound, m); }
inline Status DataLossError(std::string_view m) { return Status(StatusCode::kDataLoss, m); }
inline Status UnimplementedError(std::string_view m) {
  return Status(StatusCode::kUnimplemented, m);
}
inline Status ResourceExhaustedError(std::string_view m) {
  return Status(StatusCode::kResourceExhausted, m);
}
inline Status CancelledError(std::string_view m) { return Status(StatusCode::kCancelled, m); }
inline Status InternalError(std::string_view m) { return Status(StatusCode::kInternal, m); }
inline Status IoError(std::string_view m) { return Status(StatusCode::kIoError, m); }

}  // namespace patchfeed

#define PATCHFEED_STATUS_CONCAT_INNER_(a, b) a##b
#define PATCHFEED_STATUS_CONCAT_(a, b) PATCHFEED_STATUS_CONCAT_INNER_(a, b)

namespace patchfeed::internal_status {

inline Status AddContext(Status status) { return status; }
template <typename... Pieces>
Status AddContext(const Status& status, const Pieces&... context) {
  return status.WithContext(StrCat(context...));
}

}  // namespace patchfeed::internal_status

/// Returns from the current function if `expr` (a Status) is not OK, with the StrCat of the
/// optional context pieces in front of its message:
/// `PATCHFEED_RETURN_IF_ERROR(DecodeBlock(...), path, ": chunk ", index);`
#define PATCHFEED_RETURN_IF_ERROR(expr, ...)                                                      \
  do {                                                                                            \
    ::patchfeed::Status patchfeed_status_ = (expr);                                               \
    if (!patchfeed_status_.ok()) [[unlikely]]                                                     \
      return ::patchfeed::internal_status::AddContext(std::move(patchfeed_status_) __VA_OPT__(, ) \
                                                          __VA_ARGS__);                           \
  } while (false)

#endif  // PATCHFEED_COMMON_STATUS_H_
