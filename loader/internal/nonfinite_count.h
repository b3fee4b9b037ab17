// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_NONFINITE_COUNT_H_
#define PATCHFEED_LOADER_INTERNAL_NONFINITE_COUNT_H_

/// \file
/// Counts the NaN and infinite items of a float16, float32 or float64 view, for
/// LoaderConfig::check_finite. A float item is NaN or infinite exactly when all its exponent
/// bits are set, so the test is one AND and one compare per item on the raw bits, in the
/// dtype's byte order (no conversion, no swap), and the loop over a contiguous row vectorizes.
/// It runs on memory a task has just written (a decoded piece, an augmented sample), while
/// that is still in cache. Pure functions; safe to call concurrently.

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/strided_view.h"

namespace patchfeed::loader::internal_loader {

/// How to tell a non-finite item of one float dtype: its size and the bits of its exponent as
/// the item's bytes, loaded little-endian.
struct NonFiniteTest {
  int itemsize = 0;   ///< 2, 4 or 8
  uint64_t mask = 0;  ///< all set in the item <=> NaN or infinite
};

/// The test for NumPy dtype `dtype` ("<f4", ">f8", "=f2", ...); nullopt when it is not a
/// float16/32/64 dtype (integers, bools, complex and others are never checked).
std::optional<NonFiniteTest> NonFiniteTestFor(std::string_view dtype);

/// The number of items of `view` (whose items are of `test.itemsize` bytes) that are NaN or
/// infinite.
int64_t CountNonFinite(const StridedView& view, const NonFiniteTest& test);

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_NONFINITE_COUNT_H_
