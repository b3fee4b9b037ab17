// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_BINDINGS_SLICED_WAIT_H_
#define PATCHFEED_BINDINGS_SLICED_WAIT_H_

/// \file
/// WaitInSlices: how a Python call waits for C++ work (the next batch, the next tile) without
/// the GIL and still answers Ctrl-C. It calls a `NextFor(slice)`-style function without the
/// GIL, and between slices takes the GIL only to run Python's signal handlers, so Ctrl-C
/// raises KeyboardInterrupt within a slice; a slice that ends without a result must have moved
/// nothing, so the next call picks up what this one waited for. Needs the GIL on entry.

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include <pybind11/pybind11.h>

#include "bindings/gil_release.h"
#include "bindings/status_to_exception.h"
#include "common/result.h"

namespace patchfeed::internal_python {

/// Calls `next_for(slice)` (returning Result<std::optional<T>>) without the GIL until it
/// returns a value, with slices of `poll_seconds` (clamped to [1 ms, 1 min]; NaN: 1 ms).
/// After each slice, with the GIL, `check_open()` may throw (e.g. the object was closed from
/// another thread); an error status is thrown as its exception.
template <typename T, typename NextFor, typename CheckOpen>
T WaitInSlices(double poll_seconds, NextFor&& next_for, CheckOpen&& check_open) {
  // Bounded so that the conversion to nanoseconds cannot overflow.
  const double seconds = poll_seconds >= 1e-3 ? std::min(poll_seconds, 60.0) : 1e-3;
  const auto slice =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds));
  while (true) {
    Result<std::optional<T>> got = InternalError("not run");
    {
      ScopedGilRelease release;
      got = next_for(slice);
    }
    check_open();
    ThrowIfError(got.status());
    if (got->has_value()) {
      return std::move(**got);
    }
    // Python's signal handlers run on the main thread only; elsewhere this returns 0.
    if (PyErr_CheckSignals() != 0) {
      throw pybind11::error_already_set();
    }
  }
}

}  // namespace patchfeed::internal_python

#endif  // PATCHFEED_BINDINGS_SLICED_WAIT_H_
