// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Bindings of the loader (issue 5): patchfeed.Loader's C++ side. _core.Dataset names the files,
// _core.Loader wraps loader::Loader, _core.Batch is one leased batch whose arrays leave as
// DLPack capsules or NumPy arrays (dlpack_export.h). _core.Loader's keywords are the option
// table of loader_options.h; what Python resolves or alone uses, and everything torch-related,
// is in bindings/python/patchfeed/loader.py.
//
// GIL: every call that waits or works releases it. next() waits on the calling thread, in
// slices of Loader::NextFor without the GIL, and takes the GIL between slices only to let
// Python run its signal handlers: Ctrl-C raises KeyboardInterrupt within a slice instead of
// after the batch, and the batch being read is not lost (a slice that ends without it moved
// nothing, so the next call returns it). No thread is started here: threads belong to loader/.

#include <algorithm>
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
#include "bindings/loader_options.h"
#include "bindings/status_to_exception.h"
#include "bindings/storage_store.h"
#include "loader/dataset.h"
#include "loader/loader.h"

namespace py = pybind11;

namespace patchfeed::internal_python {
namespace {

using loader::Dataset;
using loader::Lease;
using loader::Loader;
using loader::LoaderConfig;
using loader::LoaderState;

// One leased batch. The Lease sits in a shared_ptr that every export holds, so the slot goes
// back to the ring when the last of this object, its capsules and its arrays is gone.
class PyBatch {
 public:
  explicit PyBatch(Lease lease) : lease_(std::make_shared<Lease>(std::move(lease))) {}

  int64_t epoch() const { return held().epoch(); }
  int64_t batch_index() const { return held().batch_index(); }
  bool pinned() const { return held().pinned(); }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& v : held().arrays()) {
      out.push_back(v.name);
    }
    return out;
  }
  /// (case index, box start, forced foreground, foreground class) per sample.
  py::list samples() const {
    py::list out;
    for (const auto& s : held().samples()) {
      out.append(py::make_tuple(s.case_index, py::tuple(py::cast(s.box_start)), s.forced_foreground,
                                s.foreground_class));
    }
    return out;
  }
  uintptr_t data_ptr(size_t i) const { return reinterpret_cast<uintptr_t>(view(i).data); }
  py::capsule dlpack(size_t i) const { return ExportDlpack(view(i), lease_); }
  py::array numpy(size_t i) const { return ExportNumpy(view(i), lease_); }
  /// Drops this object's reference; exports made before keep the batch alive.
  void release() { lease_.reset(); }
  bool released() const { return lease_ == nullptr; }

 private:
  const Lease& held() const {
    if (lease_ == nullptr) {
      throw py::value_error("the batch was released");
    }
    return *lease_;
  }
  const loader::ArrayView& view(size_t i) const {
    const auto arrays = held().arrays();
    if (i >= arrays.size()) {
      throw py::index_error("batch array index out of range");
    }
    return arrays[i];
  }

  std::shared_ptr<Lease> lease_;
};

py::dict StateToDict(const LoaderState& s) {
  py::dict d;
  d["seed"] = s.seed;
  d["epoch"] = s.epoch;
  d["next_batch"] = s.next_batch;
  d["rank"] = s.rank;
  d["world_size"] = s.world_size;
  return d;
}

// The loader as Python sees it. Every call takes its own reference to the C++ loader with the
// GIL held and works on that, so close() on another thread (which needs the GIL to drop
// loader_) cannot free the loader under a call: the last call out destroys it. Loader::Close()
// itself may run while another thread waits in NextFor, which then returns at once.
class PyLoader {
 public:
  explicit PyLoader(LoaderConfig config) {
    Result<std::unique_ptr<Loader>> r = InternalError("not run");
    {
      ScopedGilRelease release;
      r = Loader::Create(std::move(config));
    }
    loader_ = ValueOrThrow(std::move(r));
  }
  ~PyLoader() {
    // No call is inside: each holds a reference to this object. Destroying the loader closes
    // it, which waits for its tasks (a batch in flight at most).
    ScopedGilRelease release;
    loader_.reset();
  }
  PyLoader(const PyLoader&) = delete;
  PyLoader& operator=(const PyLoader&) = delete;

  /// Calls f(loader) (a cheap accessor) with the GIL held.
  template <typename F>
  auto With(F&& f) const {
    const std::shared_ptr<Loader> l = Use();
    return f(*l);
  }

  /// The next batch, or None after the last batch of a finite epoch. Waits in slices of
  /// `poll_seconds` without the GIL and runs Python's signal handlers between them, so Ctrl-C
  /// raises KeyboardInterrupt; a slice that ends without a batch has moved nothing, so the
  /// next call returns the batch this one was waiting for.
  std::optional<PyBatch> Next(double poll_seconds) {
    const std::shared_ptr<Loader> l = Use();
    // 1 ms to 1 min (NaN: 1 ms), so that the conversion to nanoseconds cannot overflow.
    const double seconds = poll_seconds >= 1e-3 ? std::min(poll_seconds, 60.0) : 1e-3;
    const auto slice = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(seconds));
    while (true) {
      Result<std::optional<Lease>> r = InternalError("not run");
      {
        ScopedGilRelease release;
        r = l->NextFor(slice);
      }
      // close() from another thread: no batch reaches Python once closing started. Besides
      // being prompt, this keeps a consumer thread from getting, and freeing, a tensor during
      // interpreter shutdown (torch retakes the GIL while freeing one; see docs/python.md).
      if (loader_ == nullptr) {
        throw py::value_error("the loader is closed");
      }
      ThrowIfError(r.status());
      if (r->has_value()) {
        Lease lease = std::move(**r);
        if (!lease) {
          return std::nullopt;  // end of epoch
        }
        return PyBatch(std::move(lease));
      }
      // Python's signal handlers run on the main thread only; elsewhere this returns 0.
      if (PyErr_CheckSignals() != 0) {
        throw py::error_already_set();
      }
    }
  }

  void Seek(int64_t epoch, int64_t batch_index) {
    const std::shared_ptr<Loader> l = Use();
    Status st;
    {
      ScopedGilRelease release;
      st = l->Seek(epoch, batch_index);
    }
    ThrowIfError(st);
  }

  /// The position of the batch Next() returns next.
  py::dict State() {
    const std::shared_ptr<Loader> l = Use();
    LoaderState s;
    {
      ScopedGilRelease release;
      s = l->state();
    }
    return StateToDict(s);
  }

  py::dict Metrics() {
    const loader::LoaderMetrics m = With([](Loader& l) { return l.metrics(); });
    py::dict d;
    d["batches_delivered"] = m.batches_delivered;
    d["batches_failed"] = m.batches_failed;
    d["samples_delivered"] = m.samples_delivered;
    d["samples_skipped"] = m.samples_skipped;
    d["read_errors"] = m.read_errors;
    d["samples_nonfinite"] = m.samples_nonfinite;
    d["cases_excluded"] = m.cases_excluded;
    d["bytes_read"] = m.bytes_read;
    d["bytes_decoded"] = m.bytes_decoded;
    d["bytes_delivered"] = m.bytes_delivered;
    d["consumer_wait_ns"] = m.consumer_wait_ns;
    d["producer_wait_ns"] = m.producer_wait_ns;
    d["slots"] = m.slots;
    d["slots_free"] = m.slots_free;
    d["slots_producing"] = m.slots_producing;
    d["slots_ready"] = m.slots_ready;
    d["slots_leased"] = m.slots_leased;
    d["files_opened"] = m.files_opened;
    d["files_open"] = m.files_open;
    d["io_backend"] = m.io_backend;
    d["io_depth"] = m.io_depth;
    d["io_requests"] = m.io_requests;
    d["io_bytes"] = m.io_bytes;
    d["io_max_in_flight"] = m.io_max_in_flight;
    d["io_fallback_reads"] = m.io_fallback_reads;
    d["io_retries"] = m.io_retries;
    d["io_errors"] = m.io_errors;
    return d;
  }

  /// (case index, case id, reason) of each case Create left out.
  py::list ExcludedCases() {
    py::list out;
    for (const auto& e : With([](Loader& l) { return l.excluded_cases(); })) {
      out.append(py::make_tuple(e.case_index, e.case_id, e.reason));
    }
    return out;
  }

  /// (name, dtype, shape) of each batch array.
  py::list ArrayLayout() {
    py::list out;
    for (const auto& v : With([](Loader& l) { return l.array_layout(); })) {
      out.append(py::make_tuple(v.name, v.dtype, py::tuple(py::cast(v.shape))));
    }
    return out;
  }

  /// Closes the loader (a next() waiting on another thread then raises) and drops this
  /// object's reference; a call still inside keeps the closed loader alive until it leaves.
  void Close() {
    std::shared_ptr<Loader> l = std::move(loader_);
    if (l == nullptr) {
      return;
    }
    ScopedGilRelease release;
    l->Close();  // cancels read-ahead and waits for the loader's tasks; leases stay valid
    l.reset();
  }
  bool closed() const { return loader_ == nullptr; }

 private:
  std::shared_ptr<Loader> Use() const {
    if (loader_ == nullptr) {
      throw py::value_error("the loader is closed");
    }
    return loader_;
  }

  std::shared_ptr<Loader> loader_;  // read and written with the GIL held only
};

Dataset DatasetFromNnUNet(const std::string& folder, const py::object& store) {
  std::shared_ptr<const storage::Store> s = StoreOr(store, folder);
  Result<Dataset> r = InternalError("not run");
  {
    ScopedGilRelease release;
    r = Dataset::FromNnUNetFolder(folder, std::move(s));
  }
  return ValueOrThrow(std::move(r));
}

Dataset DatasetFromFolder(const std::string& folder,
                          const std::vector<std::pair<std::string, std::string>>& naming,
                          const py::object& store) {
  std::shared_ptr<const storage::Store> s = StoreOr(store, folder);
  std::vector<loader::ArrayNaming> n;
  for (const auto& [name, suffix] : naming) {
    n.push_back({name, suffix});
  }
  Result<Dataset> r = InternalError("not run");
  {
    ScopedGilRelease release;
    r = Dataset::FromFolder(folder, std::move(n), std::move(s));
  }
  return ValueOrThrow(std::move(r));
}

Dataset DatasetFromList(std::vector<std::string> names,
                        const std::vector<std::pair<std::string, std::vector<std::string>>>& cases,
                        const py::object& store) {
  std::vector<loader::CaseFiles> c;
  for (const auto& [id, paths] : cases) {
    c.push_back({id, paths});
  }
  // Without a store, the first path says which (a list of URLs, or of local paths).
  const std::string first = c.empty() || c[0].paths.empty() ? "" : c[0].paths[0];
  return ValueOrThrow(Dataset::FromList(std::move(names), std::move(c), StoreOr(store, first)));
}

// A read-only property of _core.Loader that calls a cheap Loader accessor.
template <auto Method>
auto LoaderGetter() {
  return [](const PyLoader& l) { return l.With([](Loader& x) { return (x.*Method)(); }); };
}

}  // namespace

void RegisterLoader(py::module_& m) {
  py::class_<Dataset>(m, "Dataset", "The cases of a training set and their array files.")
      .def_static("from_nnunet_folder", &DatasetFromNnUNet, py::arg("folder"),
                  py::arg("store") = py::none(),
                  "nnU-Net's layout: `<id>.b2nd` (image) and `<id>_seg.b2nd` (seg) per case.")
      .def_static("from_folder", &DatasetFromFolder, py::arg("folder"), py::arg("naming"),
                  py::arg("store") = py::none(),
                  "Arrays named by file suffix: naming is [(array name, suffix), ...].")
      .def_static(
          "from_zarr_group",
          [](const std::string& group, std::vector<std::string> arrays, const py::object& store) {
            std::shared_ptr<const storage::Store> s = StoreOr(store, group);
            Result<Dataset> r = InternalError("not run");
            {
              ScopedGilRelease release;
              r = Dataset::FromZarrGroup(group, std::move(arrays), std::move(s));
            }
            return ValueOrThrow(std::move(r));
          },
          py::arg("group"), py::arg("arrays"), py::arg("store") = py::none(),
          "One case per entry of a zarr group: arrays [] (each entry one array, 'image') or the "
          "paths of each case's arrays inside its entry.")
      .def_static("from_list", &DatasetFromList, py::arg("array_names"), py::arg("cases"),
                  py::arg("store") = py::none(),
                  "An explicit list: cases is [(case id, [path per array]), ...].")
      .def_property_readonly("array_names", &Dataset::array_names)
      .def_property("fill_missing", &Dataset::fill_missing, &Dataset::set_fill_missing,
                    "Whether a precomputed chunk never written reads as zeros (else an error).")
      .def_property_readonly("num_cases", &Dataset::num_cases)
      .def_property_readonly("case_ids",
                             [](const Dataset& d) {
                               std::vector<std::string> ids;
                               for (const auto& c : d.cases()) {
                                 ids.push_back(c.id);
                               }
                               return ids;
                             })
      .def(
          "paths",
          [](const Dataset& d, int64_t i) {
            if (i < 0 || i >= d.num_cases()) {
              throw py::index_error("case index out of range");
            }
            return d.cases()[static_cast<size_t>(i)].paths;
          },
          py::arg("case_index"), "The files of case `case_index`, in array_names order.")
      .def("__len__", &Dataset::num_cases);

  py::class_<PyBatch>(m, "Batch", "One leased batch (use patchfeed.Loader, not this class).")
      .def_property_readonly("epoch", &PyBatch::epoch)
      .def_property_readonly("batch_index", &PyBatch::batch_index)
      .def_property_readonly("pinned", &PyBatch::pinned)
      .def_property_readonly("names", &PyBatch::names)
      .def_property_readonly("samples", &PyBatch::samples)
      .def_property_readonly("released", &PyBatch::released)
      .def("data_ptr", &PyBatch::data_ptr, py::arg("index"), "Address of array `index`.")
      .def("dlpack", &PyBatch::dlpack, py::arg("index"),
           "Array `index` as a DLPack capsule sharing the slot's memory.")
      .def("numpy", &PyBatch::numpy, py::arg("index"),
           "Array `index` as a NumPy array sharing the slot's memory.")
      .def("release", &PyBatch::release,
           "Drops this object's hold on the slot (exports keep their own).");

  m.def("loader_options", &LoaderOptionNames,
        "The keywords of Loader (the C++ option table), in patchfeed.Loader's order.");
  m.def("loader_option_defaults", &LoaderOptionDefaults,
        "{keyword: default} of Loader's options that have one, read from LoaderConfig.");

  py::class_<PyLoader>(m, "Loader", "The C++ loader (use patchfeed.Loader, not this class).")
      .def(py::init([](const py::kwargs& kw) {
        return std::make_unique<PyLoader>(LoaderConfigFromKwargs(kw));
      }))
      .def("next", &PyLoader::Next, py::arg("poll_seconds") = 0.05,
           "The next batch, or None at the end of a finite epoch. Waits without the GIL.")
      .def("seek", &PyLoader::Seek, py::arg("epoch"), py::arg("batch_index"))
      .def("state", &PyLoader::State)
      .def("metrics", &PyLoader::Metrics)
      .def("array_layout", &PyLoader::ArrayLayout)
      .def_property_readonly("excluded_cases", &PyLoader::ExcludedCases,
                             "(case index, case id, reason) of each case left out at creation.")
      .def("close", &PyLoader::Close)
      .def_property_readonly("closed", &PyLoader::closed)
      .def_property_readonly("batches_per_epoch", LoaderGetter<&Loader::batches_per_epoch>())
      .def_property_readonly("local_batch_size", LoaderGetter<&Loader::local_batch_size>())
      .def_property_readonly("num_cases", LoaderGetter<&Loader::num_cases>())
      .def_property_readonly("num_threads", LoaderGetter<&Loader::num_threads>())
      .def_property_readonly("pinned", LoaderGetter<&Loader::pinned>())
      .def_property_readonly("unpinned_reason", LoaderGetter<&Loader::unpinned_reason>());
}

}  // namespace patchfeed::internal_python
