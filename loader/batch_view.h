// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_BATCH_VIEW_H_
#define PATCHFEED_LOADER_BATCH_VIEW_H_

/// \file
/// What a consumer sees of a batch: one ArrayView per array, pointing into the loader's ring
/// slot (valid while the Lease that handed it out is held), and whether that memory is pinned.

#include <cstdint>
#include <string>

#include "common/strided_view.h"

namespace patchfeed::loader {

/// One array of a batch: a StridedView (`data`, `shape` (B, C, *patch), C-contiguous
/// `byte_strides`; element (i0, .., in-1) at data + sum(i_d * byte_strides[d])) with what the
/// array is. It is-a StridedView so that the loader hands it to the codec and to augmentation
/// as one (`view.Slice(j)` is sample j), and consumers keep reading `view.data`.
struct ArrayView : StridedView {
  std::string name;   ///< the dataset's array name, e.g. "image"
  std::string dtype;  ///< NumPy dtype string, e.g. "<f4", "<i2"
  int64_t itemsize = 0;
  int64_t nbytes = 0;
};

/// Whether batch memory is page-locked for CUDA (through a runtime found with dlopen).
enum class PinMode : uint8_t {
  kAuto,     ///< pin when the CUDA runtime and a device are there, plain memory otherwise
  kOff,      ///< plain memory
  kRequire,  ///< pin or fail
};

}  // namespace patchfeed::loader

#endif  // PATCHFEED_LOADER_BATCH_VIEW_H_
