// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// _core.ForegroundIndex: a case's foreground voxels handed to the loader from Python, e.g. the
// `class_locations` nnU-Net's preprocessing stores in each case's .pkl (patchfeed/loader.py
// reads them), so nothing has to be built or cached. Conversion only.

#include <cstdint>
#include <memory>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/status_to_exception.h"
#include "loader/foreground_index.h"

namespace py = pybind11;

namespace patchfeed::internal_python {
namespace {

using loader::ForegroundIndex;
using Coordinates = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;

// `coords[k]`: key k's voxels as an (n, row_length) array.
std::shared_ptr<ForegroundIndex> FromLocations(std::vector<int64_t> spatial_shape,
                                               std::vector<loader::LabelSet> keys,
                                               const std::vector<Coordinates>& coords,
                                               int64_t row_length) {
  std::vector<std::vector<int64_t>> rows;
  for (const Coordinates& c : coords) {
    if (c.ndim() != 2 && !(c.ndim() == 1 && c.size() == 0)) {
      throw py::value_error("foreground locations: each key's coordinates are an (n, " +
                            std::to_string(row_length) + ") array");
    }
    rows.emplace_back(c.data(), c.data() + c.size());
  }
  return std::make_shared<ForegroundIndex>(ValueOrThrow(
      ForegroundIndex::FromLocations(std::move(spatial_shape), std::move(keys), rows, row_length)));
}

}  // namespace

void RegisterForeground(py::module_& m) {
  py::class_<ForegroundIndex, std::shared_ptr<ForegroundIndex>>(
      m, "ForegroundIndex", "A case's foreground voxels per class key, for the loader's sampler.")
      .def_static("from_locations", &FromLocations, py::arg("spatial_shape"), py::arg("keys"),
                  py::arg("coords"), py::arg("row_length"),
                  "Wraps voxel lists: coords[k] is an (n, row_length) array of key k's voxels, "
                  "spatial coordinates or nnU-Net's rows [0, z, y, x] (row_length ndim + 1).")
      .def_property_readonly("spatial_shape", &ForegroundIndex::spatial_shape)
      .def_property_readonly("keys", &ForegroundIndex::keys)
      .def_property_readonly("counts", &ForegroundIndex::counts);
}

}  // namespace patchfeed::internal_python
