// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Array-level calls for Python: open a .b2nd or zarr array, read boxes, write arrays. The Python
// package wraps them with NumPy (bindings/python/patchfeed/frames.py).

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/status_to_exception.h"
#include "bindings/storage_store.h"
#include "codec/b2nd/frame_writer.h"
#include "codec/dtype.h"
#include "codec/open_array.h"
#include "codec/precomputed/reader.h"
#include "common/byte_size.h"
#include "loader/box_read.h"

namespace py = pybind11;

namespace patchfeed::internal_python {
namespace {

codec::FrameOpenOptions OpenOptions(const std::string& io) {
  codec::FrameOpenOptions o;
  if (io == "pread") {
    o.io_mode = storage::IoMode::kPread;
  } else if (io != "mmap") {
    throw py::value_error("io must be 'mmap' or 'pread', not '" + io + "'");
  }
  return o;
}

// An open array and the read scratch of finished reads: a box read from Python reuses a
// scratch (decoder contexts, chunk buffers) instead of building one per call. Reads may run on
// several Python threads at once (the GIL is released), each with its own scratch.
class PyArray {
 public:
  PyArray(const std::string& path, const std::string& io, int level, const py::object& store,
          bool fill_missing) {
    codec::FrameOpenOptions options = OpenOptions(io);
    options.store = StoreOr(store, path);
    options.fill_missing = fill_missing;
    Result<std::unique_ptr<codec::ArrayReader>> r = InternalError("not run");
    {
      py::gil_scoped_release release;
      r = codec::OpenArray(path, options, level);
    }
    reader_ = ValueOrThrow(std::move(r));
  }

  const codec::ArrayReader& reader() const { return *reader_; }

  // Reads [start, stop) in C order into a new bytearray; `pad` fills outside the array.
  // (Not bytes: the NumPy array over it, frames.py, is then writable like any new array.)
  py::bytearray ReadBox(const std::vector<int64_t>& start, const std::vector<int64_t>& stop,
                        double pad) {
    const codec::ArrayReader& array = *reader_;
    const auto pad_item = ValueOrThrow(codec::ItemFromDouble(array.dtype(), array.itemsize(), pad));
    const codec::Box box{start, stop};
    // Checked before allocating: coordinates come from the caller and may be absurd.
    std::vector<int64_t> shape =
        ValueOrThrow(codec::BoxExtents(box, array.itemsize(), PY_SSIZE_T_MAX));
    int64_t bytes = array.itemsize();
    for (int64_t e : shape)
      bytes *= e;
    PyObject* raw = PyByteArray_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(bytes));
    if (raw == nullptr) {
      PyErr_Clear();
      ThrowIfError(ResourceExhaustedError(array.path() + ": the box needs " + FormatBytes(bytes) +
                                          " of memory, more than can be allocated"));
    }
    py::bytearray out = py::reinterpret_steal<py::bytearray>(raw);
    auto* dst = reinterpret_cast<std::byte*>(PyByteArray_AS_STRING(out.ptr()));
    Status st;
    {
      py::gil_scoped_release release;
      std::unique_ptr<codec::BoxReadScratch> scratch = TakeScratch();
      // Over a network, every chunk the box needs is requested at once.
      st = loader::ReadBoxFetched(reader_, box,
                                  codec::NdView::Contiguous(dst, shape, array.itemsize()), pad_item,
                                  *scratch);
      GiveBack(std::move(scratch));
    }
    ThrowIfError(st);
    return out;
  }

 private:
  std::unique_ptr<codec::BoxReadScratch> TakeScratch() {
    std::lock_guard lock(mu_);
    if (free_.empty())
      return std::make_unique<codec::BoxReadScratch>();
    auto s = std::move(free_.back());
    free_.pop_back();
    return s;
  }
  void GiveBack(std::unique_ptr<codec::BoxReadScratch> s) {
    std::lock_guard lock(mu_);
    if (free_.size() < 4)  // as many as threads commonly read one array at once
      free_.push_back(std::move(s));
  }

  std::shared_ptr<const codec::ArrayReader> reader_;
  std::mutex mu_;
  std::vector<std::unique_ptr<codec::BoxReadScratch>> free_;
};

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
  py::class_<PyArray, std::shared_ptr<PyArray>>(m, "ArrayReader")
      .def(py::init<const std::string&, const std::string&, int, const py::object&, bool>(),
           py::arg("path"), py::arg("io") = "mmap", py::arg("level") = 0,
           py::arg("store") = py::none(), py::arg("fill_missing") = true,
           "Opens a .b2nd file or sparse frame directory, a zarr v2/v3 array, an OME-Zarr "
           "group's level or a precomputed layer's scale, in `store` (a _core.Store; default: "
           "the one the path leads to).")
      .def_property_readonly("origin", [](const PyArray& a) { return a.reader().origin(); })
      .def_property_readonly("shape", [](const PyArray& a) { return a.reader().geometry().shape; })
      // Bytes, not str: the dtype string is untrusted file content (the package parses it).
      .def_property_readonly("dtype",
                             [](const PyArray& a) { return py::bytes(a.reader().dtype()); })
      .def_property_readonly("path", [](const PyArray& a) { return a.reader().path(); })
      .def_property_readonly("format", [](const PyArray& a) { return a.reader().format(); })
      .def_property_readonly("chunks",
                             [](const PyArray& a) { return a.reader().geometry().chunkshape; })
      .def_property_readonly("blocks",
                             [](const PyArray& a) { return a.reader().geometry().blockshape; })
      .def_property_readonly("itemsize", [](const PyArray& a) { return a.reader().itemsize(); })
      .def("read_box", &PyArray::ReadBox, py::arg("start"), py::arg("stop"), py::arg("pad") = 0.0,
           "Reads [start, stop) (may cross the border) as a C-ordered bytearray.");
  m.def(
      "precomputed_scale",
      [](const std::string& layer, const std::string& selector, const py::object& store) {
        const std::shared_ptr<const storage::Store> s = StoreOr(store, layer);
        Result<int> index = InternalError("not run");
        {
          py::gil_scoped_release release;
          Result<codec::precomputed::Info> info = codec::precomputed::ReadInfo(layer, *s);
          index = info.ok() ? codec::precomputed::FindScale(*info, selector) : info.status();
        }
        return ValueOrThrow(std::move(index));
      },
      py::arg("layer"), py::arg("selector"), py::arg("store") = py::none(),
      "The index of a precomputed layer's scale named by key or resolution (\"8,8,40\").");
  m.def(
      "precomputed_scales",
      [](const std::string& layer, const py::object& store) {
        const std::shared_ptr<const storage::Store> s = StoreOr(store, layer);
        Result<codec::precomputed::Info> info = InternalError("not run");
        {
          py::gil_scoped_release release;
          info = codec::precomputed::ReadInfo(layer, *s);
        }
        py::list scales;
        for (const codec::precomputed::Scale& scale : ValueOrThrow(std::move(info)).scales) {
          py::dict d;
          d["key"] = scale.key;
          d["size"] = scale.size;
          d["voxel_offset"] = scale.voxel_offset;
          d["resolution"] = scale.resolution;
          d["encoding"] = scale.encoding;
          scales.append(d);
        }
        return scales;
      },
      py::arg("layer"), py::arg("store") = py::none(),
      "The scales of a precomputed layer's info, in order: key, and x-first size, voxel_offset, "
      "resolution; encoding.");
  m.def("write_b2nd", &WriteB2nd, py::arg("path"), py::arg("data"), py::arg("shape"),
        py::arg("dtype"), py::arg("chunks"), py::arg("blocks"), py::arg("codec") = "zstd",
        py::arg("clevel") = 5, py::arg("filters") = std::vector<std::string>{"shuffle"},
        py::arg("splitmode") = "auto", py::arg("sparse") = false, py::arg("itemsize") = 0,
        "Writes C-ordered `data` as a .b2nd frame (a sparse directory when sparse=True).");
}

}  // namespace patchfeed::internal_python
