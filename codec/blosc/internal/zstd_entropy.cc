// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/blosc/internal/zstd_entropy.h"

#include <cstring>

namespace patchfeed::internal_codec::zstd {
namespace {

// Reads a bitstream forward, least significant bit first; past the end it reads zeros (the
// caller compares bits_read() with the size afterwards).
class ForwardBits {
 public:
  ForwardBits(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  uint32_t Read(int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i, ++pos_) {
      const size_t byte = pos_ >> 3;
      if (byte < size_)
        v |= static_cast<uint32_t>((data_[byte] >> (pos_ & 7)) & 1u) << i;
    }
    return v;
  }
  size_t bytes_read() const { return (pos_ + 7) >> 3; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace

bool BuildFseTable(const int16_t* counts, int num_symbols, int log, FseTable* table) {
  const int size = 1 << log;
  int high = size - 1;
  Table<uint16_t, kMaxFseSymbol + 1> next{};
  for (int s = 0; s < num_symbols; ++s) {
    if (counts[s] == -1) {
      if (high < 0)
        return false;
      table->states[high--].symbol = static_cast<uint8_t>(s);
      next[s] = 1;
    } else {
      next[s] = static_cast<uint16_t>(counts[s]);
    }
  }
  const int step = (size >> 1) + (size >> 3) + 3;
  int pos = 0;
  for (int s = 0; s < num_symbols; ++s) {
    for (int i = 0; i < counts[s]; ++i) {
      table->states[pos].symbol = static_cast<uint8_t>(s);
      do {
        pos = (pos + step) & (size - 1);
      } while (pos > high);
    }
  }
  if (pos != 0)
    return false;
  for (int u = 0; u < size; ++u) {
    FseState& st = table->states[u];
    const uint32_t n = next[st.symbol]++;
    if (n == 0)
      return false;
    st.bits = static_cast<uint8_t>(log - HighBit(n));
    st.baseline = static_cast<uint16_t>((n << st.bits) - static_cast<uint32_t>(size));
  }
  table->log = log;
  table->present = true;
  return true;
}

void BuildRleTable(int symbol, FseTable* table) {
  table->states[0] = {static_cast<uint8_t>(symbol), 0, 0};
  table->log = 0;
  table->present = true;
}

size_t ReadFseTable(const uint8_t* src, size_t size, int max_symbol, int max_log, FseTable* table) {
  ForwardBits in(src, size);
  const int log = static_cast<int>(in.Read(4)) + 5;
  if (log > max_log)
    return 0;
  Table<int16_t, kMaxFseSymbol + 1> counts{};
  int remaining = (1 << log) + 1;
  int threshold = 1 << log;
  int bits = log + 1;
  int symbol = 0;
  bool previous_zero = false;
  while (remaining > 1 && symbol <= max_symbol) {
    if (previous_zero) {
      uint32_t repeat;
      do {
        repeat = in.Read(2);
        symbol += static_cast<int>(repeat);
      } while (repeat == 3 && symbol <= max_symbol);
      if (symbol > max_symbol)
        return 0;
    }
    const int max = 2 * threshold - 1 - remaining;
    int count = static_cast<int>(in.Read(bits - 1));
    if (count >= max) {
      count |= static_cast<int>(in.Read(1)) << (bits - 1);
      if (count >= threshold)
        count -= max;
    }
    --count;  // the stored value is the probability plus one (0 stands for -1)
    remaining -= count < 0 ? -count : count;
    counts[symbol++] = static_cast<int16_t>(count);
    previous_zero = count == 0;
    while (remaining < threshold && threshold > 1) {
      --bits;
      threshold >>= 1;
    }
  }
  if (remaining != 1 || in.bytes_read() > size)
    return 0;
  if (!BuildFseTable(counts.data(), symbol, log, table))
    return 0;
  return in.bytes_read();
}

size_t ReadHuffmanTable(const uint8_t* src, size_t size, HuffmanTable* table) {
  if (size == 0)
    return 0;
  Table<uint8_t, kMaxHuffmanWeights + 1> weights{};
  int num_weights = 0;
  size_t used;
  const int header = src[0];
  if (header >= 128) {
    num_weights = header - 127;
    used = 1 + static_cast<size_t>(num_weights + 1) / 2;
    if (used > size)
      return 0;
    for (int i = 0; i < num_weights; ++i) {
      const uint8_t b = src[1 + i / 2];
      weights[i] = i % 2 == 0 ? b >> 4 : b & 15;
    }
  } else {
    used = 1 + static_cast<size_t>(header);
    if (used > size)
      return 0;
    FseTable fse;
    const auto header_bytes = static_cast<size_t>(header);
    const size_t desc =
        ReadFseTable(src + 1, header_bytes, kMaxFseSymbol, kMaxHuffmanWeightLog, &fse);
    if (desc == 0)
      return 0;
    BackwardBits in;
    if (!in.Init(src + 1 + desc, header_bytes - desc))
      return 0;
    // Two states take turns; the first read past the start ends the series after one more
    // symbol from the other state.
    int s1 = static_cast<int>(in.Read(fse.log));
    int s2 = static_cast<int>(in.Read(fse.log));
    while (true) {
      if (num_weights > kMaxHuffmanWeights - 2)
        return 0;
      weights[num_weights++] = fse.states[s1].symbol;
      s1 = fse.states[s1].baseline + static_cast<int>(in.Read(fse.states[s1].bits));
      if (in.left() < 0) {
        weights[num_weights++] = fse.states[s2].symbol;
        break;
      }
      weights[num_weights++] = fse.states[s2].symbol;
      s2 = fse.states[s2].baseline + static_cast<int>(in.Read(fse.states[s2].bits));
      if (in.left() < 0) {
        weights[num_weights++] = fse.states[s1].symbol;
        break;
      }
    }
  }
  // The last symbol's weight is implied: it completes the total to a power of two.
  Table<int, kMaxHuffmanBits + 1> per_weight{};
  uint32_t total = 0;
  for (int i = 0; i < num_weights; ++i) {
    if (weights[i] > kMaxHuffmanBits)
      return 0;
    ++per_weight[weights[i]];
    total += weights[i] == 0 ? 0 : uint32_t{1} << (weights[i] - 1);
  }
  if (total == 0)
    return 0;
  const int log = HighBit(total) + 1;
  if (log > kMaxHuffmanBits)
    return 0;
  const uint32_t rest = (uint32_t{1} << log) - total;
  if (!std::has_single_bit(rest))
    return 0;
  weights[num_weights] = static_cast<uint8_t>(HighBit(rest) + 1);
  ++per_weight[weights[num_weights]];
  if (per_weight[1] < 2 || per_weight[1] % 2 != 0)
    return 0;
  // Canonical codes: lower weights (longer codes) first, symbols in order within a weight.
  Table<uint32_t, kMaxHuffmanBits + 2> start{};
  for (int w = 1; w <= kMaxHuffmanBits; ++w)
    start[w + 1] = start[w] + (static_cast<uint32_t>(per_weight[w]) << (w - 1));
  for (int i = 0; i <= num_weights; ++i) {
    const int w = weights[i];
    if (w == 0)
      continue;
    const uint32_t len = uint32_t{1} << (w - 1);
    std::memset(table->bits.data() + start[w], log + 1 - w, len);
    start[w] += len;
  }
  table->log = log;
  table->present = true;
  return used;
}

}  // namespace patchfeed::internal_codec::zstd
