// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/nonfinite_count.h"

#include <cstddef>
#include <vector>

#include "common/byte_order.h"

namespace patchfeed::loader::internal_loader {
namespace {

// Items whose `mask` bits are all set, in `n` items `stride` bytes apart. The contiguous case
// is its own loop, with a counter as wide as a float32 lane, so that it vectorizes well.
template <typename Bits>
int64_t CountRow(const std::byte* row, int64_t n, int64_t stride, Bits mask) {
  if (stride == static_cast<int64_t>(sizeof(Bits))) {
    uint32_t count = 0;
    for (int64_t i = 0; i < n; ++i) {
      count += (LoadLE<Bits>(row + i * static_cast<int64_t>(sizeof(Bits))) & mask) == mask;
    }
    return count;
  }
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    count += (LoadLE<Bits>(row + i * stride) & mask) == mask;
  }
  return count;
}

// A loaded piece is short rows (its part of the box's last axis, often 32-128 items): the
// rows of a plane go in one tight loop, and only planes step the odometer.
template <typename Bits>
int64_t CountView(const StridedView& view, Bits mask) {
  std::vector<int64_t> shape = view.shape, strides = view.byte_strides;
  for (const int64_t extent : shape) {
    if (extent <= 0) {
      return 0;
    }
  }
  // Axes that are contiguous with the next one merge into it (a whole-width piece is one row).
  for (size_t d = shape.size(); d-- > 1;) {
    if (strides[d - 1] == shape[d] * strides[d]) {
      shape[d] *= shape[d - 1];
      shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(d - 1));
      strides.erase(strides.begin() + static_cast<std::ptrdiff_t>(d - 1));
    }
  }
  if (shape.empty()) {
    return CountRow<Bits>(view.data, 1, sizeof(Bits), mask);
  }
  if (shape.size() == 1) {
    return CountRow<Bits>(view.data, shape[0], strides[0], mask);
  }
  const size_t rows_axis = shape.size() - 2;
  const int64_t rows = shape[rows_axis], row_items = shape.back();
  const int64_t row_stride = strides[rows_axis], item_stride = strides.back();
  std::vector<int64_t> index(rows_axis, 0);  // over the axes before the plane
  int64_t count = 0;
  while (true) {
    const std::byte* plane = view.data;
    for (size_t d = 0; d < rows_axis; ++d) {
      plane += index[d] * strides[d];
    }
    for (int64_t r = 0; r < rows; ++r) {
      count += CountRow<Bits>(plane + r * row_stride, row_items, item_stride, mask);
    }
    size_t d = rows_axis;
    while (d > 0 && ++index[d - 1] == shape[d - 1]) {
      index[d - 1] = 0;
      --d;
    }
    if (d == 0) {
      return count;
    }
  }
}

}  // namespace

std::optional<NonFiniteTest> NonFiniteTestFor(std::string_view dtype) {
  if (dtype.size() != 3 || dtype[1] != 'f') {
    return std::nullopt;
  }
  const char order = dtype[0];
  if (order != '<' && order != '>' && order != '=') {
    return std::nullopt;
  }
  NonFiniteTest t;
  switch (dtype[2]) {
    case '2':
      t = {2, 0x7C00};
      break;
    case '4':
      t = {4, 0x7F800000};
      break;
    case '8':
      t = {8, 0x7FF0000000000000};
      break;
    default:
      return std::nullopt;
  }
  if (order == '>') {
    // The exponent's bytes come first in the file's order: the mask is loaded the same way.
    t.mask = ByteSwap(t.mask) >> (64 - 8 * t.itemsize);
  }
  return t;
}

int64_t CountNonFinite(const StridedView& view, const NonFiniteTest& test) {
  switch (test.itemsize) {
    case 2:
      return CountView<uint16_t>(view, static_cast<uint16_t>(test.mask));
    case 4:
      return CountView<uint32_t>(view, static_cast<uint32_t>(test.mask));
    case 8:
      return CountView<uint64_t>(view, test.mask);
    default:
      return 0;
  }
}

}  // namespace patchfeed::loader::internal_loader
