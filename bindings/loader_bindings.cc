// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Bindings of the loader (issue 5): patchfeed.Loader's C++ side.

#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace patchfeed::internal_python {

void RegisterLoader(py::module_& m) { static_cast<void>(m); }

}  // namespace patchfeed::internal_python
