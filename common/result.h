// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_COMMON_RESULT_H_
#define PATCHFEED_COMMON_RESULT_H_

/// \file
/// Result<T>: a value or a non-OK Status, with abseil StatusOr's surface
/// (`ok()`, `status()`, `value()`, `*`, `->`). Fallible constructors return one.

#include <optional>
#include <utility>

#include "common/check.h"
#include "common/status.h"

namespace patchfeed {

template <typename T>
class [[nodiscard]] Result {
 public:
  /// A failed result; `status` must not be OK.
  Result(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    PATCHFEED_DCHECK(!status_.ok());
    if (status_.ok())
      status_ = Status(StatusCode::kInternal, "Result built from an OK status");
  }
  Result(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & {
    PATCHFEED_DCHECK(ok());
    return *value_;
  }
  const T& value() const& {
    PATCHFEED_DCHECK(ok());
    return *value_;
  }
  T&& value() && {
    PATCHFEED_DCHECK(ok());
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace patchfeed

/// `PATCHFEED_ASSIGN_OR_RETURN(auto x, MakeX());` declares `x` or returns the error, with the
/// StrCat of optional context pieces in front: `PATCHFEED_ASSIGN_OR_RETURN(auto x, MakeX(),
/// path, ": chunk ", i);`.
#define PATCHFEED_ASSIGN_OR_RETURN(lhs, expr, ...)                                             \
  PATCHFEED_ASSIGN_OR_RETURN_IMPL_(PATCHFEED_STATUS_CONCAT_(patchfeed_result_, __LINE__), lhs, \
                                   expr __VA_OPT__(, ) __VA_ARGS__)
#define PATCHFEED_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr, ...)                                 \
  auto tmp = (expr);                                                                          \
  if (!tmp.ok()) [[unlikely]]                                                                 \
    return ::patchfeed::internal_status::AddContext(tmp.status() __VA_OPT__(, ) __VA_ARGS__); \
  lhs = std::move(tmp).value()

#endif  // PATCHFEED_COMMON_RESULT_H_
