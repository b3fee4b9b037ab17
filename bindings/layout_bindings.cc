// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Layout rules for Python: nnU-Net 2.8's chunk and block shapes (loader/nnunet_layout.h).

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "loader/nnunet_layout.h"

namespace py = pybind11;

namespace patchfeed::internal_python {
namespace {

// (chunks, blocks) as tuples; ValueError where nnU-Net's comp_blosc2_params raises.
std::tuple<std::vector<int32_t>, std::vector<int32_t>> NnUNetChunkBlockShapes(
    const std::vector<int64_t>& shape, const std::vector<int64_t>& patch_size, int64_t itemsize) {
  loader::ChunkBlockShapes r = loader::NnUNetChunkBlockShapes(shape, patch_size, itemsize);
  if (r.chunkshape.empty()) {
    throw py::value_error(
        "nnunet_chunk_block_shapes: needs a 4-D shape (c, x, y, z), a 2- or 3-value patch "
        "size, positive extents and an item size in 1..131072 bytes");
  }
  return {std::move(r.chunkshape), std::move(r.blockshape)};
}

}  // namespace

void RegisterLayout(py::module_& m) {
  m.def("nnunet_chunk_block_shapes", &NnUNetChunkBlockShapes, py::arg("shape"),
        py::arg("patch_size"), py::arg("itemsize"),
        "(chunks, blocks) that nnU-Net 2.8 (comp_blosc2_params, default caps) picks for an "
        "array of shape (c, x, y, z), a spatial patch size (3 values, or 2 for 2-D patches) and "
        "an item size in bytes. Note the order: nnU-Net's function returns (blocks, chunks).");
}

}  // namespace patchfeed::internal_python
