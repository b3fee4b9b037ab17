// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_DTYPE_H_
#define PATCHFEED_CODEC_DTYPE_H_

/// \file
/// NumPy dtype strings ("<f4", "|u1"), as every format names its items: the item size one
/// implies, and an item holding a given value (a pad or fill value). Stateless functions; safe
/// to call concurrently.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace patchfeed::codec {

/// The item size a NumPy dtype string implies ("<f4" -> 4, "|u1" -> 1, "<U10" -> 40); 0 when
/// it cannot tell (structured dtypes: use the frame's typesize).
int64_t ItemSizeOfDtype(const std::string& dtype);

/// One item of NumPy `dtype` holding `value` (e.g. a pad value: 0 for images, -1 for labels),
/// in the dtype's byte order. Bool, signed/unsigned integers and floats of 2, 4 or 8 bytes;
/// kInvalidArgument for other dtypes unless `value` is 0 (all-zero bytes), or when `value` does
/// not fit (e.g. -1 for an unsigned type).
Result<std::vector<std::byte>> ItemFromDouble(const std::string& dtype, int64_t itemsize,
                                              double value);

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_DTYPE_H_
