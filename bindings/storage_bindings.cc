// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// _core.Store: where a path leads (local files, or an object store / web server for a URL),
// made once from fsspec-style `storage_options` and shared by what is opened through it.
#include <memory>
#include <string>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/status_to_exception.h"
#include "bindings/storage_store.h"
#include "storage/remote/store_for.h"

namespace py = pybind11;

namespace patchfeed::internal_python {
namespace {

// One storage_options key: how it reaches RemoteOptions.
template <typename T>
void Take(const py::dict& options, const char* name, T* field) {
  if (!options.contains(name))
    return;
  const py::handle value = options[name];
  try {
    *field = value.cast<T>();
  } catch (const py::cast_error&) {
    throw py::type_error(std::string("storage_options['") + name + "'] has the wrong type (" +
                         py::str(py::type::of(value).attr("__name__")).cast<std::string>() + ")");
  }
}

storage::RemoteOptions RemoteOptionsFrom(const py::object& given) {
  storage::RemoteOptions o;
  if (given.is_none())
    return o;
  if (!py::isinstance<py::dict>(given))
    throw py::type_error("storage_options must be a dict");
  const auto options = given.cast<py::dict>();
  static const char* const kKnown[] = {"endpoint_url",
                                       "anon",
                                       "key",
                                       "secret",
                                       "token",
                                       "region",
                                       "profile",
                                       "client_kwargs",
                                       "request_timeout_s",
                                       "connect_timeout_s",
                                       "max_retries",
                                       "io_depth",
                                       "cache_dir",
                                       "cache_max_bytes"};
  for (const auto& [k, v] : options) {
    const auto name = py::str(k).cast<std::string>();
    bool known = false;
    for (const char* n : kKnown)
      known |= name == n;
    if (!known) {
      throw py::type_error("storage_options: unknown key '" + name +
                           "' (known: endpoint_url, anon, key, secret, token, region, profile, "
                           "client_kwargs, request_timeout_s, connect_timeout_s, max_retries, "
                           "io_depth, cache_dir, cache_max_bytes)");
    }
  }
  // s3fs users write the endpoint and region inside client_kwargs, as botocore takes them.
  if (options.contains("client_kwargs")) {
    if (!py::isinstance<py::dict>(options["client_kwargs"]))
      throw py::type_error("storage_options['client_kwargs'] must be a dict");
    const auto client = options["client_kwargs"].cast<py::dict>();
    Take(client, "endpoint_url", &o.endpoint_url);
    Take(client, "region_name", &o.region);
  }
  Take(options, "endpoint_url", &o.endpoint_url);
  Take(options, "anon", &o.anon);
  Take(options, "key", &o.key);
  Take(options, "secret", &o.secret);
  Take(options, "token", &o.token);
  Take(options, "region", &o.region);
  Take(options, "profile", &o.profile);
  Take(options, "request_timeout_s", &o.request_timeout_s);
  Take(options, "connect_timeout_s", &o.connect_timeout_s);
  Take(options, "max_retries", &o.max_retries);
  Take(options, "io_depth", &o.io_depth);
  Take(options, "cache_dir", &o.cache_dir);
  Take(options, "cache_max_bytes", &o.cache_max_bytes);
  return o;
}

}  // namespace

PyStore StoreForPath(const std::string& path, const py::object& storage_options) {
  const storage::RemoteOptions options = RemoteOptionsFrom(storage_options);
  Result<std::shared_ptr<const storage::Store>> r = InternalError("not run");
  {
    py::gil_scoped_release release;
    r = storage::StoreFor(path, options);
  }
  PyStore store{ValueOrThrow(std::move(r))};
  // Options that would change nothing are a mistake to say so about, not to ignore.
  if (!storage_options.is_none() && !store.store->remote()) {
    throw py::value_error("storage_options apply to s3://, gs:// and http(s):// URLs; '" + path +
                          "' is a local path");
  }
  return store;
}

void RegisterStorage(py::module_& m) {
  py::class_<PyStore>(m, "Store",
                      "Where paths lead: local files, or the object store or web server of "
                      "URLs, with the options it was made with.")
      .def_property_readonly("remote", [](const PyStore& s) { return s.store->remote(); })
      .def(
          "stat",
          [](const PyStore& s, const std::string& path) -> py::object {
            Result<storage::EntryKind> r = InternalError("not run");
            {
              py::gil_scoped_release release;
              r = s.store->Stat(path);
            }
            switch (ValueOrThrow(std::move(r))) {
              case storage::EntryKind::kFile:
                return py::str("file");
              case storage::EntryKind::kFolder:
                return py::str("folder");
              case storage::EntryKind::kNone:
                break;
            }
            return py::none();
          },
          py::arg("path"), "'file', 'folder', or None when nothing is there.")
      .def(
          "list",
          [](const PyStore& s, const std::string& folder) {
            Result<std::vector<std::string>> r = InternalError("not run");
            {
              py::gil_scoped_release release;
              r = s.store->List(folder);
            }
            return ValueOrThrow(std::move(r));
          },
          py::arg("folder"), "The names in `folder`, sorted; a folder's name ends with '/'.")
      .def(
          "read",
          [](const PyStore& s, const std::string& path, uint64_t max_bytes) {
            Result<std::string> r = InternalError("not run");
            {
              py::gil_scoped_release release;
              r = storage::ReadSmallFile(*s.store, path, max_bytes);
            }
            return py::bytes(ValueOrThrow(std::move(r)));
          },
          py::arg("path"), py::arg("max_bytes"),
          "The whole file at `path`, when it holds at most max_bytes.");
  m.def("store_for", &StoreForPath, py::arg("path"), py::arg("storage_options") = py::none(),
        "The store `path` leads to: local files for a path, a remote store (s3://, gs://, "
        "http(s)://) made with storage_options for a URL.");
}

}  // namespace patchfeed::internal_python
