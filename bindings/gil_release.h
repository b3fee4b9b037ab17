// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_BINDINGS_GIL_RELEASE_H_
#define PATCHFEED_BINDINGS_GIL_RELEASE_H_

/// \file
/// ScopedGilRelease: py::gil_scoped_release for calls that may still be waiting when the
/// interpreter shuts down.
///
/// During finalisation CPython ends any non-main thread that takes the GIL back by calling
/// pthread_exit, which unwinds the thread's C++ frames with a forced-unwind exception. A
/// thread that was waiting without the GIL (e.g. a daemon thread in Loader.next_batch at
/// exit) retakes it in a destructor, and destructors are noexcept by default: the unwind would
/// hit that boundary and call std::terminate ("terminate called without an active
/// exception"). This guard's destructor is noexcept(false), so the unwind passes through it,
/// through our frames (releasing the locks they hold) and through pybind11, which rethrows
/// abi::__forced_unwind, and the thread ends as CPython intends. Parking the thread instead
/// would keep those locks held while finalisation may still close the loader.
///
/// Only for scopes that do not throw themselves: a forced unwind that starts while another
/// exception unwinds would terminate after all.

#include <pybind11/pybind11.h>

namespace patchfeed::internal_python {

class ScopedGilRelease {
 public:
  ScopedGilRelease() : state_(PyEval_SaveThread()) {}
  // NOLINTNEXTLINE(bugprone-exception-escape): the forced unwind must escape (see above).
  ~ScopedGilRelease() noexcept(false) { PyEval_RestoreThread(state_); }
  ScopedGilRelease(const ScopedGilRelease&) = delete;
  ScopedGilRelease& operator=(const ScopedGilRelease&) = delete;

 private:
  PyThreadState* state_;
};

}  // namespace patchfeed::internal_python

#endif  // PATCHFEED_BINDINGS_GIL_RELEASE_H_
