// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_COMMON_BYTE_SIZE_H_
#define PATCHFEED_COMMON_BYTE_SIZE_H_

/// \file
/// Byte counts in error messages: "1.0 TiB (1099511627776 bytes)", so a reader sees the scale
/// and the exact figure. Stateless.

#include <cstdint>
#include <cstdio>
#include <string>

namespace patchfeed {

inline std::string FormatBytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double scaled = static_cast<double>(bytes);
  int unit = 0;
  while (scaled >= 1024.0 && unit < 6) {
    scaled /= 1024.0;
    ++unit;
  }
  if (unit == 0)
    return std::to_string(bytes) + " bytes";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f %s (%lld bytes)", scaled, kUnits[unit],
                static_cast<long long>(bytes));
  return buf;
}

}  // namespace patchfeed

#endif  // PATCHFEED_COMMON_BYTE_SIZE_H_
