// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_BINDINGS_TORCH_CPP_BATCH_TENSORS_H_
#define PATCHFEED_BINDINGS_TORCH_CPP_BATCH_TENSORS_H_

/// \file
/// A batch as libtorch tensors, for C++ training loops. Each array of a loader::Lease becomes
/// an at::Tensor over the ring slot itself (at::from_blob, no copy), and the tensors own the
/// lease together: the slot goes back to the loader when the last of them, or of any view or
/// alias made from them, is destroyed, on whatever thread that happens. The Python package
/// keeps the same contract through DLPack (bindings/dlpack_export.cc).
///
/// This links libtorch, so it lives beside the Python bindings and outside loader/ (the core
/// never links torch); CMake builds it as patchfeed::torch_cpp when it finds Torch.

#include <ATen/ATen.h>

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "loader/loader.h"

namespace patchfeed::torch_cpp {

/// One batch: its arrays as tensors, in the loader's array order (shapes (B, C, *patch)).
struct BatchTensors {
  std::vector<std::string> names;
  std::vector<at::Tensor> tensors;
  int64_t epoch = 0;
  int64_t batch_index = 0;
  bool pinned = false;  ///< the slot is page-locked: copies to CUDA can be non-blocking

  /// The tensor of array `name`, or nullptr.
  const at::Tensor* find(std::string_view name) const;
};

/// The torch dtype of a NumPy dtype string as the loader reports it ("<f4", "<i2", "|b1", ...).
/// kInvalidArgument for a big-endian or unknown dtype.
Result<at::ScalarType> ScalarTypeOf(std::string_view dtype);

/// `lease`'s arrays as tensors over its slot; the lease moves into them. kInvalidArgument for a
/// lease without a batch (default-constructed or end of epoch) or a dtype torch lacks.
Result<BatchTensors> ToTensors(loader::Lease lease);

/// The tensors on `device`. To CUDA from a pinned slot the copies are non-blocking (they overlap
/// the next step's compute on the current stream); from plain memory, or to the CPU, as torch's
/// `Tensor::to` does them (no copy when already there).
BatchTensors ToDevice(const BatchTensors& batch, const at::Device& device);

}  // namespace patchfeed::torch_cpp

#endif  // PATCHFEED_BINDINGS_TORCH_CPP_BATCH_TENSORS_H_
