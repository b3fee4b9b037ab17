// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_BINDINGS_DLPACK_EXPORT_H_
#define PATCHFEED_BINDINGS_DLPACK_EXPORT_H_

/// \file
/// Hands a loader batch array to Python without a copy: as a DLPack capsule (for
/// torch.from_dlpack and anything else that speaks DLPack) or as a NumPy array whose base owns
/// the batch.
///
/// Ownership: every export holds a std::shared_ptr to the batch (the Lease inside it), so the
/// ring slot returns to the loader only when the last tensor or array made from the batch is
/// freed. The deleters only drop that C++ reference: they never touch a Python object, so they
/// may run on any thread, with or without the GIL, and after the interpreter has finalised.
///
/// The DLPack structs are the stable v0.x ABI (dlpack.h: DLTensor, DLManagedTensor), declared
/// here rather than vendored because they are 30 lines and we need nothing else from it.

#include <cstdint>
#include <memory>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "loader/batch_view.h"

namespace patchfeed::internal_python {

namespace dlpack {

enum DeviceType : int32_t { kDLCPU = 1 };
enum TypeCode : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBool = 6 };

struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  ///< in elements
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

}  // namespace dlpack

/// A `dltensor` PyCapsule viewing `view`'s memory; `owner` is kept alive until the consumer
/// (or the capsule, when never consumed) calls the deleter. ValueError for a dtype DLPack
/// cannot describe (byte order other than native little-endian, or an unknown kind).
pybind11::capsule ExportDlpack(const loader::ArrayView& view, std::shared_ptr<void> owner);

/// A NumPy array viewing `view`'s memory, with a base object that keeps `owner` alive.
pybind11::array ExportNumpy(const loader::ArrayView& view, std::shared_ptr<void> owner);

}  // namespace patchfeed::internal_python

#endif  // PATCHFEED_BINDINGS_DLPACK_EXPORT_H_
