// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_B2ND_INTERNAL_MSGPACK_PUT_H_
#define PATCHFEED_CODEC_B2ND_INTERNAL_MSGPACK_PUT_H_

/// \file
/// Appenders for the fixed-width msgpack that frames and the b2nd metalayer use: a marker byte
/// followed by a big-endian integer, raw bytes. Shared by the frame writer and the metalayer
/// serializer. Stateless.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/byte_order.h"

namespace patchfeed::internal_codec {

inline void PutByte(std::vector<std::byte>& out, uint8_t v) { out.push_back(std::byte{v}); }

/// `marker` then `v` big endian (e.g. 0xD2 + int32, 0xD3 + int64).
template <typename T>
void PutBE(std::vector<std::byte>& out, uint8_t marker, T v) {
  PutByte(out, marker);
  std::byte buf[sizeof(T)];
  StoreBE<T>(buf, v);
  out.insert(out.end(), buf, buf + sizeof(T));
}

inline void PutBytes(std::vector<std::byte>& out, const void* p, size_t n) {
  const auto* b = static_cast<const std::byte*>(p);
  out.insert(out.end(), b, b + n);
}

}  // namespace patchfeed::internal_codec

#endif  // PATCHFEED_CODEC_B2ND_INTERNAL_MSGPACK_PUT_H_
