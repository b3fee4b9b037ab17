// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/dtype.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <string>

#include "common/half_float.h"
#include "common/str_cat.h"

namespace patchfeed::codec {

int64_t ItemSizeOfDtype(const std::string& dtype) {
  if (dtype.size() < 3 ||
      (dtype[0] != '<' && dtype[0] != '>' && dtype[0] != '|' && dtype[0] != '=')) {
    return 0;
  }
  const char kind = dtype[1];
  int64_t n = 0;
  const char* begin = dtype.data() + 2;
  const char* end = dtype.data() + dtype.size();
  const auto [ptr, ec] = std::from_chars(begin, end, n);
  if (ec != std::errc() || n <= 0)
    return 0;
  if (ptr != end && !(kind == 'M' || kind == 'm'))
    return 0;  // datetime units follow
  return kind == 'U' ? 4 * n : n;
}

Result<std::vector<std::byte>> ItemFromDouble(const std::string& dtype, int64_t itemsize,
                                              double value) {
  std::vector<std::byte> item(static_cast<size_t>(itemsize));
  if (value == 0.0)
    return item;
  const char kind = dtype.size() >= 2 ? dtype[1] : '?';
  const auto fail = [&]() {
    return InvalidArgumentError(StrCat("cannot represent ", value, " as dtype '", dtype, "'"));
  };
  uint64_t bits = 0;
  if (kind == 'f' && itemsize == 2) {
    bits = FloatToHalfBits(static_cast<float>(value));
  } else if (kind == 'f' && itemsize == 4) {
    const auto f = static_cast<float>(value);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    bits = b;
  } else if (kind == 'f' && itemsize == 8) {
    std::memcpy(&bits, &value, 8);
  } else if ((kind == 'i' || kind == 'u' || kind == 'b') && itemsize <= 8) {
    if (value != std::floor(value))
      return fail();
    const int nbits = static_cast<int>(itemsize * 8);
    if (kind == 'i') {
      const double lim = std::ldexp(1.0, nbits - 1);
      if (value < -lim || value >= lim)
        return fail();
      bits = static_cast<uint64_t>(static_cast<int64_t>(value));
    } else {
      if (value < 0 || value >= std::ldexp(1.0, nbits) || (kind == 'b' && value > 1)) {
        return fail();
      }
      bits = static_cast<uint64_t>(value);
    }
  } else {
    return fail();
  }
  for (int64_t i = 0; i < itemsize; ++i) {
    const int64_t pos = dtype[0] == '>' ? itemsize - 1 - i : i;
    item[static_cast<size_t>(pos)] = std::byte{static_cast<uint8_t>(bits >> (8 * i))};
  }
  return item;
}

}  // namespace patchfeed::codec
