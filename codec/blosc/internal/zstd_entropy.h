// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_BLOSC_INTERNAL_ZSTD_ENTROPY_H_
#define PATCHFEED_CODEC_BLOSC_INTERNAL_ZSTD_ENTROPY_H_

/// \file
/// The entropy-coding pieces of a zstd frame (RFC 8878) that the frame check walks with: the
/// format's limits, the backward bit reader of its FSE and Huffman streams, and the readers of
/// FSE table and Huffman tree descriptions. Only structure is read: the tables say how many
/// bits each state or code takes, which is all a walk that produces no output needs.
/// Stateless functions; safe to call concurrently.

#include <array>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>

#include "common/byte_order.h"
#include "common/check.h"

namespace patchfeed::internal_codec::zstd {

// An array indexed by the signed arithmetic RFC 8878 writes its tables in (states, symbols,
// weights): any integer index, checked against the bounds in debug builds. The parser bounds
// every index it derives from the frame before it uses it.
template <typename T, size_t N>
struct Table : std::array<T, N> {
  template <std::integral I>
  constexpr T& operator[](I i) {
    PATCHFEED_DCHECK(i >= 0 && static_cast<size_t>(i) < N);
    return std::array<T, N>::operator[](static_cast<size_t>(i));
  }
  template <std::integral I>
  constexpr const T& operator[](I i) const {
    PATCHFEED_DCHECK(i >= 0 && static_cast<size_t>(i) < N);
    return std::array<T, N>::operator[](static_cast<size_t>(i));
  }
};

// Format limits (RFC 8878 and libzstd's own, which are the ones that decide what decodes).
inline constexpr int kMaxLiteralsLengthCode = 35;
inline constexpr int kMaxMatchLengthCode = 52;
inline constexpr int kMaxOffsetCode = 31;
inline constexpr int kMaxLiteralsLengthLog = 9;
inline constexpr int kMaxMatchLengthLog = 9;
inline constexpr int kMaxOffsetLog = 8;
inline constexpr int kMaxHuffmanWeightLog = 6;
inline constexpr int kMaxHuffmanBits = 12;
inline constexpr int kMaxHuffmanWeights = 255;
inline constexpr int kMaxFseSymbol = 255;

inline int HighBit(uint32_t v) { return 31 - std::countl_zero(v); }

// Reads an entropy-coded stream backward from its end mark (the highest set bit of the last
// byte). Reading past the start yields zero bits and makes left() negative: the overflow that
// libzstd before 1.5.6 lets through.
class BackwardBits {
 public:
  /// False when the stream is empty or its last byte holds no end mark.
  bool Init(const uint8_t* data, size_t size) {
    data_ = data;
    size_ = size;
    if (size == 0 || data[size - 1] == 0)
      return false;
    left_ = static_cast<int64_t>(size - 1) * 8 + HighBit(data[size - 1]);
    return true;
  }

  uint32_t Peek(int n) const {
    if (n == 0 || left_ <= 0)
      return 0;
    const int64_t lo = left_ - n;
    if (lo < 0)
      return Bits(0, static_cast<int>(left_)) << static_cast<int>(-lo);
    return Bits(lo, n);
  }
  void Skip(int n) { left_ -= n; }
  uint32_t Read(int n) {
    const uint32_t v = Peek(n);
    Skip(n);
    return v;
  }
  /// Read() for a caller that knows at least 64 bits are left: the 8 bytes ending at the byte
  /// that holds the next unread bit, shifted so that bit is the top one, hold n <= 32 bits.
  uint32_t ReadFast(int n) {
    const int64_t first = ((left_ - 1) >> 3) - 7;
    const uint64_t window = LoadLE<uint64_t>(data_ + first) << (8 * first + 64 - left_);
    left_ -= n;
    return static_cast<uint32_t>((window >> 1) >> (63 - n));  // n = 0 reads 0
  }
  /// Bits not read yet; negative after an overflow.
  int64_t left() const { return left_; }

 private:
  // Bits [lo, lo + n) of the stream, n <= 32.
  uint32_t Bits(int64_t lo, int n) const {
    const size_t byte = static_cast<size_t>(lo >> 3);
    uint64_t v = 0;
    if (byte + 8 <= size_) {
      v = LoadLE<uint64_t>(data_ + byte);
    } else {
      for (size_t i = byte; i < size_; ++i)
        v |= static_cast<uint64_t>(data_[i]) << (8 * (i - byte));
    }
    return static_cast<uint32_t>((v >> (lo & 7)) & ((uint64_t{1} << n) - 1));
  }

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  int64_t left_ = 0;
};

struct FseState {
  uint8_t symbol;
  uint8_t bits;
  uint16_t baseline;
};

struct FseTable {
  bool present = false;
  int log = 0;
  Table<FseState, 1 << kMaxLiteralsLengthLog> states;
};

/// Builds the decoding table of a normalized distribution (RFC 8878 section 4.1.1). False when
/// the counts do not fill the table exactly.
bool BuildFseTable(const int16_t* counts, int num_symbols, int log, FseTable* table);

/// A one-symbol table: every state decodes `symbol` and reads no bits.
void BuildRleTable(int symbol, FseTable* table);

/// Reads an FSE table description (RFC 8878 section 4.1.1) from the start of `src` and builds
/// its table. Returns the bytes it occupies, or 0 when it is invalid.
size_t ReadFseTable(const uint8_t* src, size_t size, int max_symbol, int max_log, FseTable* table);

// A Huffman decoding table reduced to what the walk needs: the code length at each index of
// `log` peeked bits.
struct HuffmanTable {
  bool present = false;
  int log = 0;
  Table<uint8_t, 1 << kMaxHuffmanBits> bits;
};

/// Reads a Huffman tree description (RFC 8878 section 4.2.1). Returns the bytes it occupies, or
/// 0 when it is invalid.
size_t ReadHuffmanTable(const uint8_t* src, size_t size, HuffmanTable* table);

}  // namespace patchfeed::internal_codec::zstd

#endif  // PATCHFEED_CODEC_BLOSC_INTERNAL_ZSTD_ENTROPY_H_
