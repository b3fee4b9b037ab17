// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/blosc/filters.h"

#include <cstring>
#include <string>

#include "common/byte_order.h"
#include "common/str_cat.h"

namespace patchfeed::codec {
namespace {

// Word-typed bodies so the compiler vectorises the XOR against block 0; memcpy-based loads
// keep them legal at any alignment.
template <typename Word>
void DeltaEncodeWords(const std::byte* block0, const std::byte* src, std::byte* dst, size_t n) {
  if (block0 == nullptr) {
    Word prev = 0;
    for (size_t i = 0; i < n; ++i) {
      const Word cur = LoadLE<Word>(src + i * sizeof(Word));
      StoreLE<Word>(dst + i * sizeof(Word), static_cast<Word>(cur ^ prev));
      prev = cur;
    }
  } else {
    for (size_t i = 0; i < n; ++i) {
      StoreLE<Word>(dst + i * sizeof(Word),
                    static_cast<Word>(LoadLE<Word>(src + i * sizeof(Word)) ^
                                      LoadLE<Word>(block0 + i * sizeof(Word))));
    }
  }
}

template <typename Word>
void DeltaDecodeWords(const std::byte* block0, std::byte* data, size_t n) {
  if (block0 == nullptr) {
    Word prev = 0;
    for (size_t i = 0; i < n; ++i) {
      prev = static_cast<Word>(LoadLE<Word>(data + i * sizeof(Word)) ^ prev);
      StoreLE<Word>(data + i * sizeof(Word), prev);
    }
  } else {
    for (size_t i = 0; i < n; ++i) {
      StoreLE<Word>(data + i * sizeof(Word),
                    static_cast<Word>(LoadLE<Word>(data + i * sizeof(Word)) ^
                                      LoadLE<Word>(block0 + i * sizeof(Word))));
    }
  }
}

template <typename Word>
void TruncateWords(Word mask, const std::byte* src, std::byte* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    StoreLE<Word>(dst + i * sizeof(Word),
                  static_cast<Word>(LoadLE<Word>(src + i * sizeof(Word)) & mask));
  }
}

}  // namespace

int32_t DeltaWordSize(int32_t typesize) {
  switch (typesize) {
    case 1:
    case 2:
    case 4:
    case 8:
      return typesize;
    default:
      return typesize % 8 == 0 ? 8 : 1;
  }
}

void DeltaEncode(int32_t typesize, const std::byte* block0, const std::byte* src, std::byte* dst,
                 size_t size) {
  const size_t w = static_cast<size_t>(DeltaWordSize(typesize));
  const size_t n = size / w;
  switch (w) {
    case 1:
      DeltaEncodeWords<uint8_t>(block0, src, dst, n);
      break;
    case 2:
      DeltaEncodeWords<uint16_t>(block0, src, dst, n);
      break;
    case 4:
      DeltaEncodeWords<uint32_t>(block0, src, dst, n);
      break;
    default:
      DeltaEncodeWords<uint64_t>(block0, src, dst, n);
      break;
  }
  if (n * w < size && src != dst)
    std::memcpy(dst + n * w, src + n * w, size - n * w);
}

void DeltaDecode(int32_t typesize, const std::byte* block0, std::byte* data, size_t size) {
  const size_t w = static_cast<size_t>(DeltaWordSize(typesize));
  const size_t n = size / w;
  switch (w) {
    case 1:
      DeltaDecodeWords<uint8_t>(block0, data, n);
      break;
    case 2:
      DeltaDecodeWords<uint16_t>(block0, data, n);
      break;
    case 4:
      DeltaDecodeWords<uint32_t>(block0, data, n);
      break;
    default:
      DeltaDecodeWords<uint64_t>(block0, data, n);
      break;
  }
}

void ByteDeltaEncode(int32_t streams, const std::byte* src, std::byte* dst, size_t size) {
  const size_t t = static_cast<size_t>(streams);
  const size_t s = size / t;
  for (size_t k = 0; k < t; ++k) {
    const auto* in = reinterpret_cast<const uint8_t*>(src + k * s);
    auto* out = reinterpret_cast<uint8_t*>(dst + k * s);
    uint8_t prev = 0;
    for (size_t i = 0; i < s; ++i) {
      const uint8_t cur = in[i];
      out[i] = static_cast<uint8_t>(cur - prev);
      prev = cur;
    }
  }
  if (s * t < size && src != dst)
    std::memcpy(dst + s * t, src + s * t, size - s * t);
}

void ByteDeltaDecode(int32_t streams, std::byte* data, size_t size) {
  const size_t t = static_cast<size_t>(streams);
  const size_t s = size / t;
  for (size_t k = 0; k < t; ++k) {
    auto* p = reinterpret_cast<uint8_t*>(data + k * s);
    uint8_t acc = 0;
    for (size_t i = 0; i < s; ++i) {
      acc = static_cast<uint8_t>(acc + p[i]);
      p[i] = acc;
    }
  }
}

Status TruncatePrecision(int32_t typesize, int8_t precision_bits, const std::byte* src,
                         std::byte* dst, size_t size) {
  int mantissa_bits;
  if (typesize == 4) {
    mantissa_bits = 23;
  } else if (typesize == 8) {
    mantissa_bits = 52;
  } else {
    return InvalidArgumentError(StrCat("trunc_prec needs typesize 4 or 8, not ", typesize));
  }
  const int p = precision_bits;
  const int zeroed = p >= 0 ? mantissa_bits - p : -p;
  if (p > mantissa_bits || -p > mantissa_bits || zeroed >= mantissa_bits || zeroed < 0) {
    return InvalidArgumentError(
        StrCat("trunc_prec precision ", p, " is outside the ", mantissa_bits, "-bit mantissa"));
  }
  const size_t w = static_cast<size_t>(typesize);
  const size_t n = size / w;
  if (typesize == 4) {
    TruncateWords<uint32_t>(static_cast<uint32_t>(~uint32_t{0} << zeroed), src, dst, n);
  } else {
    TruncateWords<uint64_t>(~uint64_t{0} << zeroed, src, dst, n);
  }
  if (n * w < size && src != dst)
    std::memcpy(dst + n * w, src + n * w, size - n * w);
  return Status::Ok();
}

}  // namespace patchfeed::codec
