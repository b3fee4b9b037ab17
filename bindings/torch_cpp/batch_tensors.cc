// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "bindings/torch_cpp/batch_tensors.h"

#include <memory>
#include <utility>

#include "common/str_cat.h"

namespace patchfeed::torch_cpp {

const at::Tensor* BatchTensors::find(std::string_view name) const {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) {
      return &tensors[i];
    }
  }
  return nullptr;
}

Result<at::ScalarType> ScalarTypeOf(std::string_view dtype) {
  // The loader writes the .b2nd metalayer's NumPy dtype strings: byte order, kind, item size.
  if (dtype.size() >= 3 && dtype[0] != '>') {
    const std::string_view kind_size = dtype.substr(1);
    if (kind_size == "f4")
      return at::kFloat;
    if (kind_size == "f8")
      return at::kDouble;
    if (kind_size == "f2")
      return at::kHalf;
    if (kind_size == "i1")
      return at::kChar;
    if (kind_size == "i2")
      return at::kShort;
    if (kind_size == "i4")
      return at::kInt;
    if (kind_size == "i8")
      return at::kLong;
    if (kind_size == "u1")
      return at::kByte;
    if (kind_size == "u2")
      return at::kUInt16;
    if (kind_size == "u4")
      return at::kUInt32;
    if (kind_size == "u8")
      return at::kUInt64;
    if (kind_size == "b1")
      return at::kBool;
  }
  return InvalidArgumentError(StrCat("dtype '", dtype, "' has no torch scalar type"));
}

Result<BatchTensors> ToTensors(loader::Lease lease) {
  if (!lease) {
    return InvalidArgumentError(lease.end_of_epoch() ? "the end-of-epoch marker holds no batch"
                                                     : "the lease holds no batch");
  }
  BatchTensors batch;
  batch.epoch = lease.epoch();
  batch.batch_index = lease.batch_index();
  batch.pinned = lease.pinned();
  // One owner shared by every tensor's deleter: the last tensor to go releases the slot.
  const auto owner = std::make_shared<loader::Lease>(std::move(lease));
  for (const loader::ArrayView& view : owner->arrays()) {
    PATCHFEED_ASSIGN_OR_RETURN(const at::ScalarType type, ScalarTypeOf(view.dtype),
                               StrCat("array '", view.name, "'"));
    std::vector<int64_t> strides(view.byte_strides.size());
    for (size_t d = 0; d < strides.size(); ++d) {
      strides[d] = view.byte_strides[d] / view.itemsize;
    }
    batch.names.push_back(view.name);
    batch.tensors.push_back(at::from_blob(
        view.data, view.shape, strides, [owner](void*) {}, at::TensorOptions().dtype(type)));
  }
  return batch;
}

BatchTensors ToDevice(const BatchTensors& batch, const at::Device& device) {
  BatchTensors out;
  out.names = batch.names;
  out.epoch = batch.epoch;
  out.batch_index = batch.batch_index;
  out.pinned = batch.pinned && device.is_cpu();
  const bool non_blocking = batch.pinned && device.is_cuda();
  for (const at::Tensor& t : batch.tensors) {
    out.tensors.push_back(t.to(device, /*non_blocking=*/non_blocking));
  }
  return out;
}

}  // namespace patchfeed::torch_cpp
