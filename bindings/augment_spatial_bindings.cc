// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Bindings of spatial augmentations (augment/spatial/) for Python.

#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace patchfeed::internal_python {

void RegisterAugmentSpatial(py::module_& m) { static_cast<void>(m); }

}  // namespace patchfeed::internal_python
