// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// PYBIND11_MODULE for patchfeed._core: each bound area registers itself from its own file.

#include <pybind11/pybind11.h>

#include "bindings/status_to_exception.h"

namespace patchfeed::internal_python {
void RegisterCodec(pybind11::module_& m);
void RegisterFrames(pybind11::module_& m);
void RegisterLayout(pybind11::module_& m);
void RegisterLoader(pybind11::module_& m);
void RegisterTiles(pybind11::module_& m);
void RegisterForeground(pybind11::module_& m);
void RegisterCli(pybind11::module_& m);
void RegisterStorage(pybind11::module_& m);
void RegisterAugmentSpatial(pybind11::module_& m);
void RegisterAugmentIntensity(pybind11::module_& m);
void RegisterAugmentPipeline(pybind11::module_& m);
void RegisterAugmentCascade(pybind11::module_& m);
}  // namespace patchfeed::internal_python

PYBIND11_MODULE(_core, m) {
  m.doc() = "patchfeed's C++ core (use the patchfeed package, not this module)";
  patchfeed::internal_python::RegisterExceptions(m);
  patchfeed::internal_python::RegisterCodec(m);
  patchfeed::internal_python::RegisterFrames(m);
  patchfeed::internal_python::RegisterLayout(m);
  patchfeed::internal_python::RegisterLoader(m);
  patchfeed::internal_python::RegisterTiles(m);
  patchfeed::internal_python::RegisterForeground(m);
  patchfeed::internal_python::RegisterCli(m);
  patchfeed::internal_python::RegisterStorage(m);
  // Augmentations live in _core.augment; the spatial and intensity files each add theirs.
  pybind11::module_ augment = m.def_submodule("augment", "nnU-Net training augmentations");
  patchfeed::internal_python::RegisterAugmentSpatial(augment);
  patchfeed::internal_python::RegisterAugmentIntensity(augment);
  patchfeed::internal_python::RegisterAugmentPipeline(augment);
  patchfeed::internal_python::RegisterAugmentCascade(augment);
}
