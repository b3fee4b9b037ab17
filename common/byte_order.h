// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_COMMON_BYTE_ORDER_H_
#define PATCHFEED_COMMON_BYTE_ORDER_H_

/// \file
/// Unaligned little- and big-endian loads and stores. Blosc chunk headers are little endian,
/// frame headers (msgpack) big endian; all loads go through memcpy so they are legal at any
/// address and compile to a single move. Safe to call concurrently.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace patchfeed {

static_assert(std::endian::native == std::endian::little,
              "patchfeed assumes a little-endian host (x86-64, aarch64)");

template <typename T>
inline T LoadLE(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
inline void StoreLE(void* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

/// Reverses the bytes of an integer (std::byteswap arrives only in C++23).
template <typename T>
inline T ByteSwap(T v) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);
  if constexpr (sizeof(T) == 1) {
    return v;
  } else if constexpr (sizeof(T) == 2) {
    return static_cast<T>(__builtin_bswap16(static_cast<uint16_t>(v)));
  } else if constexpr (sizeof(T) == 4) {
    return static_cast<T>(__builtin_bswap32(static_cast<uint32_t>(v)));
  } else {
    return static_cast<T>(__builtin_bswap64(static_cast<uint64_t>(v)));
  }
}

template <typename T>
inline T LoadBE(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return ByteSwap(v);
}

template <typename T>
inline void StoreBE(void* p, T v) {
  v = ByteSwap(v);
  std::memcpy(p, &v, sizeof(T));
}

}  // namespace patchfeed

#endif  // PATCHFEED_COMMON_BYTE_ORDER_H_
