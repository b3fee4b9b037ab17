// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_BINDINGS_STATUS_TO_EXCEPTION_H_
#define PATCHFEED_BINDINGS_STATUS_TO_EXCEPTION_H_

/// \file
/// The one place a patchfeed Status becomes a Python exception: kInvalidArgument ->
/// ValueError, kNotFound -> FileNotFoundError, kDataLoss -> patchfeed.CorruptDataError,
/// kUnimplemented -> NotImplementedError, kIoError -> OSError, others -> RuntimeError.
/// Messages pass through whole.

#include <utility>

#include <pybind11/pybind11.h>

#include "common/result.h"
#include "common/status.h"

namespace patchfeed::internal_python {

/// Creates patchfeed._core.CorruptDataError (a ValueError subclass) in `m`.
void RegisterExceptions(pybind11::module_& m);

/// Throws the Python exception for `status`; does nothing when it is OK.
void ThrowIfError(const Status& status);

/// The value of `r`, or its error thrown as ThrowIfError does.
template <typename T>
T ValueOrThrow(Result<T> r) {
  ThrowIfError(r.status());
  return std::move(r).value();
}

}  // namespace patchfeed::internal_python

#endif  // PATCHFEED_BINDINGS_STATUS_TO_EXCEPTION_H_
