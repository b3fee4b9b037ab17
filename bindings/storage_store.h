// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_BINDINGS_STORAGE_STORE_H_
#define PATCHFEED_BINDINGS_STORAGE_STORE_H_

/// \file
/// _core.Store as the other bindings take it (Dataset factories, open_array).

#include <memory>
#include <string>

#include <pybind11/pybind11.h>

#include "storage/store.h"

namespace patchfeed::internal_python {

struct PyStore {
  std::shared_ptr<const storage::Store> store;
};

/// The store `path` leads to, made with `storage_options` (a dict of fsspec's names, or None).
/// TypeError for an unknown key or a value of the wrong type; the store's own errors (a bad
/// URL, contradictory credentials) as its exceptions. Needs the GIL.
PyStore StoreForPath(const std::string& path, const pybind11::object& storage_options);

/// `store` when given, else the store `path` leads to with no options.
inline std::shared_ptr<const storage::Store> StoreOr(const pybind11::object& store,
                                                     const std::string& path) {
  if (!store.is_none())
    return store.cast<const PyStore&>().store;
  return StoreForPath(path, pybind11::none()).store;
}

}  // namespace patchfeed::internal_python

#endif  // PATCHFEED_BINDINGS_STORAGE_STORE_H_
