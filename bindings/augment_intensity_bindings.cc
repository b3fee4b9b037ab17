// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Bindings of intensity augmentations (augment/intensity/) for Python.

#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace patchfeed::internal_python {

void RegisterAugmentIntensity(py::module_& m) { static_cast<void>(m); }

}  // namespace patchfeed::internal_python
