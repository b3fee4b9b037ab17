// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/blosc/internal/zstd_frame_check.h"

#include <array>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include <zstd.h>

#include "common/byte_order.h"
#include "common/check.h"
#include "common/str_cat.h"

namespace patchfeed::internal_codec {
namespace {

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
constexpr int kMaxLiteralsLengthCode = 35;
constexpr int kMaxMatchLengthCode = 52;
constexpr int kMaxOffsetCode = 31;
constexpr int kMaxLiteralsLengthLog = 9;
constexpr int kMaxMatchLengthLog = 9;
constexpr int kMaxOffsetLog = 8;
constexpr int kMaxHuffmanWeightLog = 6;
constexpr int kMaxHuffmanBits = 12;
constexpr int kMaxHuffmanWeights = 255;
constexpr int kMaxFseSymbol = 255;

constexpr Table<uint8_t, kMaxLiteralsLengthCode + 1> kLiteralsLengthExtraBits = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0,  0,  0,  0,  1,  1,
    1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
constexpr Table<uint8_t, kMaxMatchLengthCode + 1> kMatchLengthExtraBits = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  0,  0,  0,  0,  0,  0, 0,
    0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

// The predefined distributions (RFC 8878 section 3.1.1.3.2.2).
constexpr Table<int16_t, 36> kDefaultLiteralsLength = {4, 3, 2, 2, 2, 2, 2, 2, 2,  2,  2,  2,
                                                       2, 1, 1, 1, 2, 2, 2, 2, 2,  2,  2,  2,
                                                       2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1};
constexpr Table<int16_t, 53> kDefaultMatchLength = {
    1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  1,  1,  1,  1,  1,  1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1};
constexpr Table<int16_t, 29> kDefaultOffset = {1, 1, 1, 1, 1, 1, 2, 2, 2, 1,  1,  1,  1,  1, 1,
                                               1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1};

int HighBit(uint32_t v) { return 31 - std::countl_zero(v); }

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

// Builds the decoding table of a normalized distribution (RFC 8878 section 4.1.1). False when
// the counts do not fill the table exactly.
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

// A one-symbol table: every state decodes `symbol` and reads no bits.
void BuildRleTable(int symbol, FseTable* table) {
  table->states[0] = {static_cast<uint8_t>(symbol), 0, 0};
  table->log = 0;
  table->present = true;
}

// Reads an FSE table description (RFC 8878 section 4.1.1) from the start of `src` and builds
// its table. Returns the bytes it occupies, or 0 when it is invalid.
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

// A Huffman decoding table reduced to what the walk needs: the code length at each index of
// `log` peeked bits.
struct HuffmanTable {
  bool present = false;
  int log = 0;
  Table<uint8_t, 1 << kMaxHuffmanBits> bits;
};

// Reads a Huffman tree description (RFC 8878 section 4.2.1). Returns the bytes it occupies, or
// 0 when it is invalid.
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

// One Huffman literal stream being walked: `count` literals still to decode from the `left`
// bits before the current position.
struct HuffmanCursor {
  const uint8_t* src;
  size_t size;
  size_t count;
  int64_t left;
};

// Advances all streams of a literals section while each has 4 literals and 64 bits to go:
// the 8 bytes ending at the byte that holds a stream's next unread bit, shifted so that bit is
// the top one, hold at least 57 bits, and four codes take at most 48. The streams are
// independent, so the processor overlaps their table look-ups.
void WalkHuffmanStreamsFast(std::span<HuffmanCursor> streams, const HuffmanTable& t) {
  const int shift = 64 - t.log;
  while (true) {
    for (const HuffmanCursor& c : streams) {
      if (c.count < 4 || c.left < 64)
        return;
    }
    for (HuffmanCursor& c : streams) {
      const int64_t first = ((c.left - 1) >> 3) - 7;
      uint64_t window = LoadLE<uint64_t>(c.src + first) << (8 * first + 64 - c.left);
      int64_t used = 0;
      for (int k = 0; k < 4; ++k) {
        const uint8_t bits = t.bits[window >> shift];
        window <<= bits;
        used += bits;
      }
      c.left -= used;
      c.count -= 4;
    }
  }
}

// Decodes the rest of one stream; true when its last literal ends exactly at the stream's start.
bool FinishHuffmanStream(const HuffmanCursor& c, const HuffmanTable& t) {
  BackwardBits in;
  if (!in.Init(c.src, c.size))
    return false;
  in.Skip(static_cast<int>(in.left() - c.left));
  for (size_t i = 0; i < c.count && in.left() >= 0; ++i)
    in.Skip(t.bits[in.Peek(t.log)]);
  return in.left() == 0;
}

// Starts a cursor at the end mark; false when the stream is empty or has none.
bool StartHuffmanStream(const uint8_t* src, size_t size, size_t count, HuffmanCursor* c) {
  BackwardBits in;
  if (!in.Init(src, size))
    return false;
  *c = {src, size, count, in.left()};
  return true;
}

// What carries over from block to block within a frame, seeded by the dictionary.
struct EntropyState {
  HuffmanTable huffman;
  FseTable literals_length, offset, match_length;
  Table<uint64_t, 3> reps = {1, 4, 8};
};

class FrameWalker {
 public:
  explicit FrameWalker(std::span<const std::byte> src)
      : base_(reinterpret_cast<const uint8_t*>(src.data())), size_(src.size()) {}

  Status Walk(const EntropyState& seed);

 private:
  Status Fail(size_t at, const std::string& what) const {
    return DataLossError(StrCat(what, " (byte ", at, " of the stream)"));
  }
  Status WalkFrame(size_t* pos, const EntropyState& seed);
  Status WalkBlock(size_t begin, size_t end, EntropyState* e);
  Status WalkLiterals(size_t begin, size_t end, EntropyState* e, size_t* used);
  Status WalkSequences(size_t begin, size_t end, EntropyState* e);

  const uint8_t* base_;
  size_t size_;
};

Status FrameWalker::Walk(const EntropyState& seed) {
  size_t pos = 0;
  while (pos < size_)
    PATCHFEED_RETURN_IF_ERROR(WalkFrame(&pos, seed));
  return Status::Ok();
}

Status FrameWalker::WalkFrame(size_t* pos, const EntropyState& seed) {
  const size_t start = *pos;
  if (size_ - start < 5)
    return Fail(start, "truncated frame header");
  const uint32_t magic = LoadLE<uint32_t>(base_ + start);
  if ((magic & 0xFFFFFFF0u) == 0x184D2A50u) {  // a skippable frame
    if (size_ - start < 8)
      return Fail(start, "truncated skippable frame");
    const uint64_t skip = LoadLE<uint32_t>(base_ + start + 4);
    if (skip > size_ - start - 8)
      return Fail(start, "skippable frame runs past the end");
    *pos = start + 8 + skip;
    return Status::Ok();
  }
  if (magic != 0xFD2FB528u)
    return Fail(start, "not a zstd frame");
  const uint8_t fhd = base_[start + 4];
  const bool single_segment = (fhd >> 5) & 1;
  const bool checksum = (fhd >> 2) & 1;
  static constexpr Table<size_t, 4> kDictIdBytes = {0, 1, 2, 4};
  static constexpr Table<size_t, 4> kContentSizeBytes = {0, 2, 4, 8};
  size_t p = start + 5 + (single_segment ? 0 : 1) + kDictIdBytes[fhd & 3] +
             ((fhd >> 6) == 0 ? (single_segment ? 1 : 0) : kContentSizeBytes[fhd >> 6]);
  EntropyState e = seed;
  for (int block = 0;; ++block) {
    if (p > size_ || size_ - p < 3)
      return Fail(p, StrCat("zstd block ", block, ": truncated block header"));
    const uint32_t header =
        uint32_t{base_[p]} | (uint32_t{base_[p + 1]} << 8) | (uint32_t{base_[p + 2]} << 16);
    const size_t body = p + 3;
    const uint32_t type = (header >> 1) & 3;
    const size_t stored = type == 1 ? 1 : header >> 3;
    if (type == 3 || stored > size_ - body)
      return Fail(p, StrCat("zstd block ", block, ": invalid block header"));
    if (type == 2) {
      Status st = WalkBlock(body, body + stored, &e);
      if (!st.ok())
        return st.WithContext(StrCat("zstd block ", block));
    }
    p = body + stored;
    if (header & 1)
      break;
  }
  if (checksum)
    p += 4;
  if (p > size_)
    return Fail(start, "frame checksum runs past the end");
  *pos = p;
  return Status::Ok();
}

Status FrameWalker::WalkBlock(size_t begin, size_t end, EntropyState* e) {
  size_t used = 0;
  PATCHFEED_RETURN_IF_ERROR(WalkLiterals(begin, end, e, &used));
  return WalkSequences(begin + used, end, e);
}

Status FrameWalker::WalkLiterals(size_t begin, size_t end, EntropyState* e, size_t* used) {
  const uint8_t* p = base_ + begin;
  const size_t avail = end - begin;
  if (avail < 1)
    return Fail(begin, "empty literals section");
  const int type = p[0] & 3;
  const int size_format = (p[0] >> 2) & 3;
  if (type <= 1) {  // raw or RLE literals: nothing entropy-coded
    const size_t header = size_format == 1 ? 2 : size_format == 3 ? 3 : 1;
    if (avail < header)
      return Fail(begin, "truncated literals header");
    size_t regenerated = size_format == 0 || size_format == 2 ? p[0] >> 3 : p[0] >> 4;
    if (size_format == 1)
      regenerated += static_cast<size_t>(p[1]) << 4;
    if (size_format == 3)
      regenerated += (static_cast<size_t>(p[1]) << 4) + (static_cast<size_t>(p[2]) << 12);
    *used = header + (type == 0 ? regenerated : 1);
    if (*used > avail)
      return Fail(begin, "literals run past the block");
    return Status::Ok();
  }
  static constexpr Table<size_t, 4> kHeaderBytes = {3, 3, 4, 5};
  const size_t header = kHeaderBytes[size_format];
  if (avail < header)
    return Fail(begin, "truncated literals header");
  size_t regenerated;
  size_t compressed;
  if (size_format <= 1) {
    const uint32_t v = uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16);
    regenerated = (v >> 4) & 0x3FF;
    compressed = (v >> 14) & 0x3FF;
  } else if (size_format == 2) {
    const uint32_t v = LoadLE<uint32_t>(p);
    regenerated = (v >> 4) & 0x3FFF;
    compressed = v >> 18;
  } else {
    const uint32_t v = LoadLE<uint32_t>(p);
    regenerated = (v >> 4) & 0x3FFFF;
    compressed = (v >> 22) + (static_cast<size_t>(p[4]) << 10);
  }
  if (compressed > avail - header)
    return Fail(begin, "Huffman literals run past the block");
  *used = header + compressed;
  const uint8_t* q = p + header;
  size_t left = compressed;
  if (type == 2) {
    const size_t tree = ReadHuffmanTable(q, left, &e->huffman);
    if (tree == 0)
      return Fail(begin + header, "invalid Huffman tree description");
    q += tree;
    left -= tree;
  } else if (!e->huffman.present) {
    return Fail(begin, "literals reuse a Huffman table that was never sent");
  }
  if (size_format == 0) {
    HuffmanCursor c;
    if (!StartHuffmanStream(q, left, regenerated, &c))
      return Fail(begin, "the Huffman literal stream has no end mark");
    WalkHuffmanStreamsFast({&c, 1}, e->huffman);
    if (!FinishHuffmanStream(c, e->huffman))
      return Fail(begin, "the Huffman literal stream does not end with its last literal");
    return Status::Ok();
  }
  if (left < 6 || regenerated < 6)
    return Fail(begin, "invalid 4-stream Huffman literals");
  const Table<size_t, 3> first = {LoadLE<uint16_t>(q), LoadLE<uint16_t>(q + 2),
                                  LoadLE<uint16_t>(q + 4)};
  const size_t sum = first[0] + first[1] + first[2];
  if (sum > left - 6)
    return Fail(begin, "Huffman jump table points past the literals");
  const Table<size_t, 4> sizes = {first[0], first[1], first[2], left - 6 - sum};
  const size_t segment = (regenerated + 3) / 4;
  Table<HuffmanCursor, 4> cursors;
  const uint8_t* stream = q + 6;
  for (int i = 0; i < 4; ++i) {
    const size_t count = i < 3 ? segment : regenerated - 3 * segment;
    if (!StartHuffmanStream(stream, sizes[i], count, &cursors[i])) {
      return Fail(static_cast<size_t>(stream - base_),
                  StrCat("Huffman literal stream ", i + 1, " of 4 has no end mark"));
    }
    stream += sizes[i];
  }
  WalkHuffmanStreamsFast(cursors, e->huffman);
  for (int i = 0; i < 4; ++i) {
    if (!FinishHuffmanStream(cursors[i], e->huffman)) {
      return Fail(
          static_cast<size_t>(cursors[i].src - base_),
          StrCat("Huffman literal stream ", i + 1, " of 4 does not end with its last literal"));
    }
  }
  return Status::Ok();
}

// Reads the table of one sequence symbol type as the mode bits of the sequences header say.
size_t ReadSequenceTable(int mode, const uint8_t* src, size_t size, int max_symbol, int max_log,
                         const int16_t* defaults, int num_defaults, int default_log,
                         FseTable* table, bool* ok) {
  *ok = true;
  switch (mode) {
    case 0:
      *ok = BuildFseTable(defaults, num_defaults, default_log, table);
      return 0;
    case 1:
      if (size < 1 || src[0] > max_symbol) {
        *ok = false;
        return 0;
      }
      BuildRleTable(src[0], table);
      return 1;
    case 2: {
      const size_t n = ReadFseTable(src, size, max_symbol, max_log, table);
      *ok = n != 0;
      return n;
    }
    default:
      *ok = table->present;
      return 0;
  }
}

Status FrameWalker::WalkSequences(size_t begin, size_t end, EntropyState* e) {
  const uint8_t* p = base_ + begin;
  const size_t avail = end - begin;
  if (avail < 1)
    return Fail(begin, "missing sequences section");
  size_t num_sequences;
  size_t header;
  if (p[0] < 128) {
    num_sequences = p[0];
    header = 1;
  } else if (p[0] < 255) {
    header = 2;
    num_sequences = avail < 2 ? 0 : (static_cast<size_t>(p[0] - 128) << 8) + p[1];
  } else {
    header = 3;
    num_sequences = avail < 3 ? 0 : p[1] + (static_cast<size_t>(p[2]) << 8) + 0x7F00;
  }
  if (avail < header)
    return Fail(begin, "truncated sequences header");
  if (num_sequences == 0) {
    if (avail != header)
      return Fail(begin + header, "bytes after a sequences section of 0 sequences");
    return Status::Ok();
  }
  if (avail < header + 1)
    return Fail(begin, "truncated sequences header");
  const uint8_t modes = p[header];
  if (modes & 3)
    return Fail(begin + header, "reserved bits set in the sequences header");
  size_t at = begin + header + 1;
  struct Kind {
    const char* name;
    int mode;
    int max_symbol;
    int max_log;
    const int16_t* defaults;
    int num_defaults;
    int default_log;
    FseTable* table;
  };
  const std::array<Kind, 3> kinds = {{
      {"literal length", modes >> 6, kMaxLiteralsLengthCode, kMaxLiteralsLengthLog,
       kDefaultLiteralsLength.data(), static_cast<int>(kDefaultLiteralsLength.size()), 6,
       &e->literals_length},
      {"offset", (modes >> 4) & 3, kMaxOffsetCode, kMaxOffsetLog, kDefaultOffset.data(),
       static_cast<int>(kDefaultOffset.size()), 5, &e->offset},
      {"match length", (modes >> 2) & 3, kMaxMatchLengthCode, kMaxMatchLengthLog,
       kDefaultMatchLength.data(), static_cast<int>(kDefaultMatchLength.size()), 6,
       &e->match_length},
  }};
  for (const Kind& k : kinds) {
    bool ok;
    at += ReadSequenceTable(k.mode, base_ + at, end - at, k.max_symbol, k.max_log, k.defaults,
                            k.num_defaults, k.default_log, k.table, &ok);
    if (!ok)
      return Fail(at, StrCat("invalid ", k.name, " code table"));
  }
  const FseTable& ll = e->literals_length;
  const FseTable& of = e->offset;
  const FseTable& ml = e->match_length;
  BackwardBits in;
  if (!in.Init(base_ + at, end - at))
    return Fail(at, "the sequence bitstream is empty or has no end mark");
  uint32_t ll_state = in.Read(ll.log);
  uint32_t of_state = in.Read(of.log);
  uint32_t ml_state = in.Read(ml.log);
  Table<uint64_t, 3>& rep = e->reps;
  // A sequence reads at most 31 + 16 + 16 offset and length bits and 9 + 9 + 8 state bits;
  // with 160 bits left every read of it may take the fast path.
  constexpr int64_t kFastBits = 160;
  for (size_t i = 0; i < num_sequences; ++i) {
    const bool fast = in.left() >= kFastBits;
    const auto read = [&in, fast](int n) { return fast ? in.ReadFast(n) : in.Read(n); };
    const FseState& l = ll.states[ll_state];
    const FseState& o = of.states[of_state];
    const FseState& m = ml.states[ml_state];
    const uint64_t offset_value = (uint64_t{1} << o.symbol) + read(o.symbol);
    in.Skip(kMatchLengthExtraBits[m.symbol]);
    in.Skip(kLiteralsLengthExtraBits[l.symbol]);
    if (in.left() < 0)
      break;
    // Repeat offsets (RFC 8878 section 3.1.2.5); a zero offset is corrupt.
    if (offset_value > 3) {
      rep = {offset_value - 3, rep[0], rep[1]};
    } else {
      const uint64_t index = offset_value - (l.symbol == 0 ? 0 : 1);
      if (index == 3) {
        if (rep[0] <= 1)
          return Fail(at, StrCat("sequence ", i, " has an offset of 0"));
        rep = {rep[0] - 1, rep[0], rep[1]};
      } else if (index == 1) {
        rep = {rep[1], rep[0], rep[2]};
      } else if (index == 2) {
        rep = {rep[2], rep[0], rep[1]};
      }
    }
    if (i + 1 < num_sequences) {
      ll_state = l.baseline + read(l.bits);
      ml_state = m.baseline + read(m.bits);
      of_state = o.baseline + read(o.bits);
    }
  }
  if (in.left() < 0) {
    return Fail(at, StrCat("the sequence bitstream is ", -in.left(), " bits short of its ",
                           num_sequences, " sequences"));
  }
  if (in.left() > 0) {
    return Fail(at, StrCat(in.left(), " bits of the sequence bitstream are left after its ",
                           num_sequences, " sequences"));
  }
  return Status::Ok();
}

// A zstd dictionary's entropy tables and repeat offsets (RFC 8878 section 5); a dictionary
// without the magic number is raw content and leaves the defaults.
Status ReadDictionary(std::span<const std::byte> dict, EntropyState* e) {
  const auto* p = reinterpret_cast<const uint8_t*>(dict.data());
  const size_t size = dict.size();
  if (size < 8 || LoadLE<uint32_t>(p) != 0xEC30A437u)
    return Status::Ok();
  size_t at = 8;
  const size_t huffman = ReadHuffmanTable(p + at, size - at, &e->huffman);
  if (huffman == 0)
    return DataLossError("the dictionary's Huffman table is invalid");
  at += huffman;
  struct Kind {
    int max_symbol;
    int max_log;
    FseTable* table;
  };
  for (const Kind& k : {Kind{kMaxOffsetCode, kMaxOffsetLog, &e->offset},
                        Kind{kMaxMatchLengthCode, kMaxMatchLengthLog, &e->match_length},
                        Kind{kMaxLiteralsLengthCode, kMaxLiteralsLengthLog, &e->literals_length}}) {
    const size_t n = ReadFseTable(p + at, size - at, k.max_symbol, k.max_log, k.table);
    if (n == 0)
      return DataLossError("the dictionary's code tables are invalid");
    at += n;
  }
  if (size - at < 12)
    return DataLossError("the dictionary's repeat offsets are missing");
  for (int i = 0; i < 3; ++i)
    e->reps[i] = LoadLE<uint32_t>(p + at + 4 * i);
  return Status::Ok();
}

}  // namespace

bool LinkedZstdMissesCorruption() { return ZSTD_versionNumber() < 10506; }

Status CheckZstdFrames(std::span<const std::byte> src, std::span<const std::byte> dict) {
  EntropyState seed;
  PATCHFEED_RETURN_IF_ERROR(ReadDictionary(dict, &seed));
  return FrameWalker(src).Walk(seed);
}

}  // namespace patchfeed::internal_codec
