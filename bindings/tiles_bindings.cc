// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Bindings of the tile reader: patchfeed.tiles' C++ side. _core.TileReader wraps
// loader::TileReader over one case of a _core.Dataset; _core.Tile is one held tile whose
// arrays leave as DLPack capsules or NumPy arrays (dlpack_export.h) sharing its buffer. What
// Python resolves (the source, case ids, pad values per array, torch) is in
// bindings/python/patchfeed/tiles.py.
//
// GIL: as _core.Loader.next, next() waits in slices of TileReader::NextFor without the GIL
// and runs Python's signal handlers between slices, so Ctrl-C raises KeyboardInterrupt
// promptly; a slice that ends without a tile moved nothing. No thread is started here.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/dlpack_export.h"
#include "bindings/gil_release.h"
#include "bindings/sliced_wait.h"
#include "bindings/status_to_exception.h"
#include "loader/dataset.h"
#include "loader/tiles.h"

namespace py = pybind11;

namespace patchfeed::internal_python {
namespace {

using loader::Tile;
using loader::TileConfig;
using loader::TileReader;

// One held tile. The Tile sits in a shared_ptr that every export holds, so its buffer goes
// back to the reader when the last of this object, its capsules and its arrays is gone.
class PyTile {
 public:
  explicit PyTile(Tile tile) : tile_(std::make_shared<Tile>(std::move(tile))) {}

  int64_t index() const { return held().index(); }
  /// (start, stop) of the spatial box, case coordinates.
  py::tuple box() const {
    const codec::Box b = held().box();
    return py::make_tuple(py::tuple(py::cast(b.start)), py::tuple(py::cast(b.stop)));
  }
  bool pinned() const { return held().pinned(); }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& v : held().arrays()) {
      out.push_back(v.name);
    }
    return out;
  }
  uintptr_t data_ptr(size_t i) const { return reinterpret_cast<uintptr_t>(view(i).data); }
  py::capsule dlpack(size_t i) const { return ExportDlpack(view(i), tile_); }
  py::array numpy(size_t i) const { return ExportNumpy(view(i), tile_); }
  /// Drops this object's reference; exports made before keep the tile alive.
  void release() { tile_.reset(); }
  bool released() const { return tile_ == nullptr; }

 private:
  const Tile& held() const {
    if (tile_ == nullptr) {
      throw py::value_error("the tile was released");
    }
    return *tile_;
  }
  const loader::ArrayView& view(size_t i) const {
    const auto arrays = held().arrays();
    if (i >= arrays.size()) {
      throw py::index_error("tile array index out of range");
    }
    return arrays[i];
  }

  std::shared_ptr<Tile> tile_;
};

storage::IoMode ParseIoMode(const std::string& io) {
  if (io == "mmap") {
    return storage::IoMode::kMmap;
  }
  if (io == "pread") {
    return storage::IoMode::kPread;
  }
  throw py::value_error("io_mode must be 'mmap' or 'pread', not '" + io + "'");
}

// As _core.Loader's pin_memory: None pins when CUDA is there, True requires it, False is off.
loader::PinMode ParsePinMode(const py::object& pin) {
  if (pin.is_none()) {
    return loader::PinMode::kAuto;
  }
  return py::bool_(pin) ? loader::PinMode::kRequire : loader::PinMode::kOff;
}

// The reader as Python sees it; every call takes its own reference to the C++ reader with
// the GIL held (as PyLoader does), so close() on another thread cannot free it under a call.
class PyTileReader {
 public:
  explicit PyTileReader(TileConfig config) {
    Result<std::unique_ptr<TileReader>> r = InternalError("not run");
    {
      ScopedGilRelease release;
      r = TileReader::Create(std::move(config));
    }
    reader_ = ValueOrThrow(std::move(r));
  }
  ~PyTileReader() {
    ScopedGilRelease release;
    reader_.reset();  // closes: waits for the tiles being read
  }
  PyTileReader(const PyTileReader&) = delete;
  PyTileReader& operator=(const PyTileReader&) = delete;

  /// The next tile, or None after the last. Waits in slices of `poll_seconds` without the GIL.
  std::optional<PyTile> Next(double poll_seconds) {
    const std::shared_ptr<TileReader> r = Use();
    Tile tile = WaitInSlices<Tile>(
        poll_seconds, [&](std::chrono::nanoseconds slice) { return r->NextFor(slice); },
        [this] { Use(); });  // closed from another thread meanwhile: no tile reaches Python
    if (!tile) {
      return std::nullopt;  // past the last tile
    }
    return PyTile(std::move(tile));
  }

  void Close() {
    std::shared_ptr<TileReader> r = std::move(reader_);
    if (r == nullptr) {
      return;
    }
    ScopedGilRelease release;
    r->Close();  // cancels the read-ahead and waits for its tasks; held tiles stay valid
    r.reset();
  }
  bool closed() const { return reader_ == nullptr; }

  const loader::TileGrid& grid() const { return Use()->grid(); }
  int num_threads() const { return Use()->num_threads(); }
  bool pinned() const { return Use()->pinned(); }
  /// (name, dtype, shape) of each tile array.
  py::list ArrayLayout() const {
    py::list out;
    for (const auto& v : Use()->array_layout()) {
      out.append(py::make_tuple(v.name, v.dtype, py::tuple(py::cast(v.shape))));
    }
    return out;
  }

 private:
  std::shared_ptr<TileReader> Use() const {
    if (reader_ == nullptr) {
      throw py::value_error("the tile reader is closed");
    }
    return reader_;
  }

  std::shared_ptr<TileReader> reader_;  // read and written with the GIL held only
};

std::unique_ptr<PyTileReader> MakeTileReader(
    const loader::Dataset& dataset, int64_t case_index, std::vector<int64_t> tile_size,
    double overlap, const std::vector<std::pair<std::string, std::optional<double>>>& arrays,
    int read_ahead, int num_threads, const std::string& io_mode, const py::object& pin_memory,
    int64_t min_task_bytes, int64_t memory_budget) {
  TileConfig c;
  c.dataset = dataset;
  c.case_index = case_index;
  c.tile_size = std::move(tile_size);
  c.overlap = overlap;
  for (const auto& [name, pad] : arrays) {
    c.arrays.push_back({name, pad});
  }
  c.read_ahead = read_ahead;
  c.num_threads = num_threads;
  c.io_mode = ParseIoMode(io_mode);
  c.pin_memory = ParsePinMode(pin_memory);
  c.min_task_bytes = min_task_bytes;
  c.memory_budget = memory_budget;
  return std::make_unique<PyTileReader>(std::move(c));
}

}  // namespace

void RegisterTiles(py::module_& m) {
  py::class_<PyTile>(m, "Tile", "One held tile (use patchfeed.tiles, not this class).")
      .def_property_readonly("index", &PyTile::index)
      .def_property_readonly("box", &PyTile::box)
      .def_property_readonly("pinned", &PyTile::pinned)
      .def_property_readonly("names", &PyTile::names)
      .def_property_readonly("released", &PyTile::released)
      .def("data_ptr", &PyTile::data_ptr, py::arg("index"), "Address of array `index`.")
      .def("dlpack", &PyTile::dlpack, py::arg("index"),
           "Array `index` as a DLPack capsule sharing the tile's buffer.")
      .def("numpy", &PyTile::numpy, py::arg("index"),
           "Array `index` as a NumPy array sharing the tile's buffer.")
      .def("release", &PyTile::release,
           "Drops this object's hold on the buffer (exports keep their own).");

  py::class_<PyTileReader>(m, "TileReader",
                           "The C++ tile reader (use patchfeed.tiles, not this class).")
      .def(py::init(&MakeTileReader), py::arg("dataset"), py::arg("case_index"),
           py::arg("tile_size"), py::arg("overlap") = 0.5,
           py::arg("arrays") = std::vector<std::pair<std::string, std::optional<double>>>{},
           py::arg("read_ahead") = 2, py::arg("num_threads") = 0, py::arg("io_mode") = "mmap",
           py::arg("pin_memory") = py::none(), py::arg("min_task_bytes") = int64_t{256} << 10,
           py::arg("memory_budget") = int64_t{4} << 30)
      .def("next", &PyTileReader::Next, py::arg("poll_seconds") = 0.05,
           "The next tile, or None after the last. Waits without the GIL.")
      .def("close", &PyTileReader::Close)
      .def("array_layout", &PyTileReader::ArrayLayout)
      .def_property_readonly("closed", &PyTileReader::closed)
      .def_property_readonly("num_tiles",
                             [](const PyTileReader& r) { return r.grid().num_tiles(); })
      .def_property_readonly("starts", [](const PyTileReader& r) { return r.grid().starts(); })
      .def_property_readonly("case_shape",
                             [](const PyTileReader& r) { return r.grid().case_shape(); })
      .def_property_readonly("tile_size",
                             [](const PyTileReader& r) { return r.grid().tile_size(); })
      .def_property_readonly("slices", [](const PyTileReader& r) { return r.grid().slices(); })
      .def_property_readonly("num_threads", &PyTileReader::num_threads)
      .def_property_readonly("pinned", &PyTileReader::pinned);

  m.def(
      "sliding_window_steps",
      [](const std::vector<int64_t>& image_size, const std::vector<int64_t>& tile_size,
         double tile_step_size) {
        return ValueOrThrow(loader::SlidingWindowSteps(image_size, tile_size, tile_step_size));
      },
      py::arg("image_size"), py::arg("tile_size"), py::arg("tile_step_size"),
      "nnU-Net's compute_steps_for_sliding_window: the tile starts per axis.");
}

}  // namespace patchfeed::internal_python
