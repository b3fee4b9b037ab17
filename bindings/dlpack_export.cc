// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "bindings/dlpack_export.h"

#include <string>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace patchfeed::internal_python {
namespace {

using dlpack::DLManagedTensor;

constexpr const char* kCapsuleName = "dltensor";

// The manager context: the tensor itself plus the shape/stride storage it points into and the
// reference that keeps the batch (and so the ring slot) alive.
struct Export {
  DLManagedTensor tensor{};
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::shared_ptr<void> owner;
};

// Only C++ state is released here (see the header): safe on any thread, GIL or not.
void DeleteExport(DLManagedTensor* self) { delete static_cast<Export*>(self->manager_ctx); }

// A capsule nobody consumed still owns its tensor; a consumed one was renamed by the consumer,
// which now calls the deleter itself.
void DestroyCapsule(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, kCapsuleName) == 0) {
    return;
  }
  auto* tensor = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  if (tensor != nullptr && tensor->deleter != nullptr) {
    tensor->deleter(tensor);
  }
}

dlpack::DLDataType DataType(const std::string& dtype, int64_t itemsize) {
  // The loader writes NumPy dtype strings from the .b2nd metalayer, e.g. "<f4", "|u1", "|b1".
  if (dtype.size() < 2 || dtype[0] == '>') {
    throw py::value_error("cannot export dtype '" + dtype + "' through DLPack (not little-endian)");
  }
  const auto bits = static_cast<uint8_t>(itemsize * 8);
  switch (dtype[1]) {
    case 'f':
      return {dlpack::kDLFloat, bits, 1};
    case 'i':
      return {dlpack::kDLInt, bits, 1};
    case 'u':
      return {dlpack::kDLUInt, bits, 1};
    case 'b':
      return {dlpack::kDLBool, bits, 1};
    default:
      throw py::value_error("cannot export dtype '" + dtype + "' through DLPack");
  }
}

}  // namespace

py::capsule ExportDlpack(const loader::ArrayView& view, std::shared_ptr<void> owner) {
  auto e = std::make_unique<Export>();
  e->shape = view.shape;
  for (const int64_t s : view.byte_strides) {
    e->strides.push_back(s / view.itemsize);
  }
  e->owner = std::move(owner);
  dlpack::DLTensor& t = e->tensor.dl_tensor;
  t.data = view.data;
  // Pinned slots are still host memory; torch finds out they are page-locked by asking CUDA.
  t.device = {dlpack::kDLCPU, 0};
  t.ndim = static_cast<int32_t>(e->shape.size());
  t.dtype = DataType(view.dtype, view.itemsize);
  t.shape = e->shape.data();
  t.strides = e->strides.data();
  t.byte_offset = 0;
  e->tensor.manager_ctx = e.get();
  e->tensor.deleter = &DeleteExport;
  PyObject* capsule = PyCapsule_New(&e->tensor, kCapsuleName, &DestroyCapsule);
  if (capsule == nullptr) {
    throw py::error_already_set();
  }
  e.release();  // the capsule (or its consumer) owns it now
  return py::reinterpret_steal<py::capsule>(capsule);
}

py::array ExportNumpy(const loader::ArrayView& view, std::shared_ptr<void> owner) {
  // The capsule's destructor runs with the GIL (Python calls it), but it only drops C++ state.
  auto* keep = new std::shared_ptr<void>(std::move(owner));
  py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<void>*>(p); });
  return py::array(py::dtype(view.dtype), view.shape, view.byte_strides, view.data, base);
}

}  // namespace patchfeed::internal_python
