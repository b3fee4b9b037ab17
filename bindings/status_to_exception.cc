// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "bindings/status_to_exception.h"

#include <string>

namespace py = pybind11;

namespace patchfeed::internal_python {
namespace {

// Owned by the module; lives as long as the interpreter.
PyObject* g_corrupt_data_error = nullptr;

}  // namespace

void RegisterExceptions(py::module_& m) {
  static py::exception<std::runtime_error> corrupt(m, "CorruptDataError", PyExc_ValueError);
  g_corrupt_data_error = corrupt.ptr();
}

void ThrowIfError(const Status& status) {
  if (status.ok())
    return;
  const std::string msg(status.message());
  PyObject* type = PyExc_RuntimeError;
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      type = PyExc_ValueError;
      break;
    case StatusCode::kNotFound:
      type = PyExc_FileNotFoundError;
      break;
    case StatusCode::kDataLoss:
      type = g_corrupt_data_error != nullptr ? g_corrupt_data_error : PyExc_ValueError;
      break;
    case StatusCode::kUnimplemented:
      type = PyExc_NotImplementedError;
      break;
    case StatusCode::kIoError:
      type = PyExc_OSError;
      break;
    case StatusCode::kResourceExhausted:
      type = PyExc_MemoryError;
      break;
    default:
      break;
  }
  PyErr_SetString(type, msg.c_str());
  throw py::error_already_set();
}

}  // namespace patchfeed::internal_python
