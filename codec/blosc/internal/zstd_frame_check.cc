// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/blosc/internal/zstd_frame_check.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include <zstd.h>

#include "codec/blosc/internal/zstd_entropy.h"
#include "common/byte_order.h"
#include "common/str_cat.h"

namespace patchfeed::internal_codec {
namespace {

using zstd::BackwardBits;
using zstd::BuildFseTable;
using zstd::BuildRleTable;
using zstd::FseState;
using zstd::FseTable;
using zstd::HighBit;
using zstd::HuffmanTable;
using zstd::kMaxLiteralsLengthCode;
using zstd::kMaxLiteralsLengthLog;
using zstd::kMaxMatchLengthCode;
using zstd::kMaxMatchLengthLog;
using zstd::kMaxOffsetCode;
using zstd::kMaxOffsetLog;
using zstd::ReadFseTable;
using zstd::ReadHuffmanTable;
using zstd::Table;

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
