// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Frame-level calls for Python: open a .b2nd array, read boxes, write arrays. The Python
// package wraps them with NumPy (bindings/python/patchfeed/frames.py).

#include <memory>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/status_to_exception.h"
#include "codec/frame_writer.h"
#include "codec/nd_reader.h"
#include "common/byte_size.h"

namespace py = pybind11;

namespace patchfeed::internal_python {
namespace {

codec::FrameOpenOptions OpenOptions(const std::string& io) {
  codec::FrameOpenOptions o;
  if (io == "pread") {
    o.io_mode = codec::IoMode::kPread;
  } else if (io != "mmap") {
    throw py::value_error("io must be 'mmap' or 'pread', not '" + io + "'");
  }
  return o;
}

std::shared_ptr<codec::NdArrayReader> OpenArray(const std::string& path, const std::string& io) {
  const codec::FrameOpenOptions options = OpenOptions(io);
  Result<codec::NdArrayReader> r = InternalError("not run");
  {
    py::gil_scoped_release release;
    r = codec::NdArrayReader::Open(path, options);
  }
  return std::make_shared<codec::NdArrayReader>(ValueOrThrow(std::move(r)));
}

// Reads [start, stop) in C order into a new bytes object; `pad` fills outside the array.
py::bytes ReadBox(const codec::NdArrayReader& array, const std::vector<int64_t>& start,
                  const std::vector<int64_t>& stop, double pad) {
  const auto pad_item =
      ValueOrThrow(codec::ItemFromDouble(array.meta().dtype, array.itemsize(), pad));
  const codec::Box box{start, stop};
  // Checked before allocating: coordinates come from the caller and may be absurd.
  std::vector<int64_t> shape =
      ValueOrThrow(codec::BoxExtents(box, array.itemsize(), PY_SSIZE_T_MAX));
  int64_t bytes = array.itemsize();
  for (int64_t e : shape)
    bytes *= e;
  PyObject* raw = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(bytes));
  if (raw == nullptr) {
    PyErr_Clear();
    ThrowIfError(ResourceExhaustedError(array.frame().path() + ": the box needs " +
                                        FormatBytes(bytes) +
                                        " of memory, more than can be "
                                        "allocated"));
  }
  py::bytes out = py::reinterpret_steal<py::bytes>(raw);
  auto* dst = reinterpret_cast<std::byte*>(PyBytes_AS_STRING(out.ptr()));
  Status st;
  {
    py::gil_scoped_release release;
    codec::BoxReadScratch scratch;
    st = array.ReadBox(box, codec::NdView::Contiguous(dst, shape, array.itemsize()), pad_item,
                       scratch);
  }
  ThrowIfError(st);
  return out;
}

void WriteB2nd(const std::string& path, const py::buffer& data, const std::vector<int64_t>& shape,
               const std::string& dtype, const std::vector<int32_t>& chunks,
               const std::vector<int32_t>& blocks, const std::string& codec_name, int clevel,
               const std::vector<std::string>& filters, const std::string& splitmode, bool sparse,
               int64_t itemsize) {
  codec::B2ndWriteOptions o;
  o.chunkshape = chunks;
  o.blockshape = blocks;
  o.encode.codec = ValueOrThrow(codec::ParseCodecName(codec_name));
  o.encode.clevel = clevel;
  if (filters.size() > codec::kMaxFilters)
    throw py::value_error("at most 6 filters");
  for (size_t i = 0; i < filters.size(); ++i) {
    o.encode.filters[i] = ValueOrThrow(codec::ParseFilterName(filters[i]));
  }
  o.encode.splitmode = ValueOrThrow(codec::ParseSplitModeName(splitmode));
  o.sparse = sparse;
  o.itemsize = itemsize;
  const py::buffer_info info = data.request();
  const std::span<const std::byte> bytes(static_cast<const std::byte*>(info.ptr),
                                         static_cast<size_t>(info.size * info.itemsize));
  Status st;
  {
    py::gil_scoped_release release;
    st = codec::WriteB2nd(path, bytes, shape, dtype, o);
  }
  ThrowIfError(st);
}

}  // namespace

void RegisterFrames(py::module_& m) {
  py::class_<codec::NdArrayReader, std::shared_ptr<codec::NdArrayReader>>(m, "NdArrayReader")
      .def(py::init(&OpenArray), py::arg("path"), py::arg("io") = "mmap",
           "Opens a .b2nd file or sparse frame directory.")
      .def_property_readonly("shape", [](const codec::NdArrayReader& a) { return a.meta().shape; })
      // Bytes, not str: the dtype string is untrusted file content (the package parses it).
      .def_property_readonly(
          "dtype", [](const codec::NdArrayReader& a) { return py::bytes(a.meta().dtype); })
      .def_property_readonly("path", [](const codec::NdArrayReader& a) { return a.frame().path(); })
      .def_property_readonly("chunks",
                             [](const codec::NdArrayReader& a) { return a.meta().chunkshape; })
      .def_property_readonly("blocks",
                             [](const codec::NdArrayReader& a) { return a.meta().blockshape; })
      .def_property_readonly("itemsize", &codec::NdArrayReader::itemsize)
      .def("read_box", &ReadBox, py::arg("start"), py::arg("stop"), py::arg("pad") = 0.0,
           "Reads [start, stop) (may cross the border) as C-ordered bytes.");
  m.def("write_b2nd", &WriteB2nd, py::arg("path"), py::arg("data"), py::arg("shape"),
        py::arg("dtype"), py::arg("chunks"), py::arg("blocks"), py::arg("codec") = "zstd",
        py::arg("clevel") = 5, py::arg("filters") = std::vector<std::string>{"shuffle"},
        py::arg("splitmode") = "auto", py::arg("sparse") = false, py::arg("itemsize") = 0,
        "Writes C-ordered `data` as a .b2nd frame (a sparse directory when sparse=True).");
}

}  // namespace patchfeed::internal_python
