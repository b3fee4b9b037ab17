// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
//
// BloscLZ encoder: a greedy LZ77 in the FastLZ/LZ4-fast family, probing three candidates per
// position (the last match distance, an 8-byte hash and, at high levels, a 4-byte hash) and, at
// high levels, one position ahead. Blosc decodes far more often than it encodes, so the tuning
// favours streams that decode quickly: short matches, which cost a token for little gain, are
// only taken at high levels.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "codec/blosc/blosclz.h"
#include "common/byte_order.h"

namespace patchfeed::codec {
namespace {

constexpr size_t kMaxLiteralRun = 32;
constexpr size_t kMaxNearDistance = 8191;
constexpr size_t kFarBase = 8192;
constexpr size_t kMaxDistance = kFarBase + 65535;
constexpr int kMaxHashLog = 12;  // two tables of 16 KiB on the stack

struct LevelParams {
  int hash_log;
  size_t min_match;      // shortest match worth a token at a near distance
  size_t min_far_match;  // ... at a far distance, whose token is two bytes longer
  int skip_shift;        // misses before the scan starts to stride (larger: searches harder)
  bool lazy;             // also try the next position before taking a match
};

// Index 0 is unused (clevel 0 means "store raw" in Blosc and never reaches the encoder). Low
// levels only take long matches: fewer tokens decode faster (about 11 GB/s instead of 5 on
// shuffled float32) at some cost in ratio. Lazy matching keeps short matches from breaking up
// long ones (without it, label maps lose 15% of their ratio at minimum lengths below 10).
constexpr LevelParams kLevels[10] = {
    {0, 0, 0, 0, false},    {11, 16, 18, 6, false}, {11, 14, 16, 6, false}, {12, 12, 14, 6, false},
    {12, 11, 13, 6, false}, {12, 10, 12, 7, false}, {12, 9, 11, 7, true},   {12, 8, 10, 7, true},
    {12, 6, 8, 8, true},    {12, 4, 7, 9, true},
};

inline uint32_t Hash4(uint32_t seq, int hash_log) { return (seq * 2654435761u) >> (32 - hash_log); }

inline uint32_t Hash8(uint64_t seq, int hash_log) {
  return static_cast<uint32_t>((seq * 0x9E3779B185EBCA87ull) >> (64 - hash_log));
}

// Returns the first position in [p, limit) where p and ref disagree (limit if none).
inline const uint8_t* ExtendMatch(const uint8_t* p, const uint8_t* ref, const uint8_t* limit) {
  // Two words per step: long runs (label maps are mostly background) dominate the time here.
  while (limit - p >= 16) {
    const uint64_t d0 = LoadLE<uint64_t>(p) ^ LoadLE<uint64_t>(ref);
    const uint64_t d1 = LoadLE<uint64_t>(p + 8) ^ LoadLE<uint64_t>(ref + 8);
    if ((d0 | d1) != 0) {
      return d0 != 0 ? p + (std::countr_zero(d0) >> 3) : p + 8 + (std::countr_zero(d1) >> 3);
    }
    p += 16;
    ref += 16;
  }
  while (p < limit && *p == *ref) {
    ++p;
    ++ref;
  }
  return p;
}

class Writer {
 public:
  Writer(uint8_t* begin, size_t capacity) : op_(begin), end_(begin + capacity) {}

  // Emits `n` literal bytes as runs of at most 32; false if they do not fit.
  bool Literals(const uint8_t* p, size_t n) {
    if (n + (n + kMaxLiteralRun - 1) / kMaxLiteralRun > Room()) {
      return false;
    }
    while (n > 0) {
      const size_t k = std::min(n, kMaxLiteralRun);
      *op_++ = static_cast<uint8_t>(k - 1);
      std::memcpy(op_, p, k);
      op_ += k;
      p += k;
      n -= k;
    }
    return true;
  }

  // Emits a match of `len` >= 3 bytes at `dist` in [1, kMaxDistance]; false if it does not fit.
  bool Match(size_t len, size_t dist) {
    const bool far = dist > kMaxNearDistance;
    const size_t ext = len >= 9 ? (len - 9) / 255 + 1 : 0;
    if (1 + ext + (far ? 3 : 1) > Room()) {
      return false;
    }
    const size_t code = far ? (31u << 8) | 255u : dist - 1;
    const size_t len_bits = len >= 9 ? 7 : len - 2;
    *op_++ = static_cast<uint8_t>(len_bits << 5 | code >> 8);
    if (ext != 0) {
      size_t rem = len - 9;
      for (; rem >= 255; rem -= 255) {
        *op_++ = 255;
      }
      *op_++ = static_cast<uint8_t>(rem);
    }
    *op_++ = static_cast<uint8_t>(code & 255);
    if (far) {
      const size_t d = dist - kFarBase;
      *op_++ = static_cast<uint8_t>(d >> 8);
      *op_++ = static_cast<uint8_t>(d & 255);
    }
    return true;
  }

  size_t Room() const { return static_cast<size_t>(end_ - op_); }
  uint8_t* op() const { return op_; }

 private:
  uint8_t* op_;
  uint8_t* const end_;
};

}  // namespace

size_t BloscLZEncode(int clevel, const std::byte* src, size_t src_size, std::byte* dst,
                     size_t dst_capacity) {
  // Table entries are 32-bit offsets; Blosc blocks are far below that anyway.
  if (clevel < 1 || src_size < 2 || src_size > UINT32_MAX) {
    return 0;
  }
  const LevelParams& lv = kLevels[std::min(clevel, 9)];
  // A table much larger than the input only costs time to clear.
  const int hash_log = std::clamp(static_cast<int>(std::bit_width(src_size)) - 1, 8, lv.hash_log);
  // Two tables, as in zstd's "double fast": an 8-byte hash finds long matches that the most
  // recent 4-byte occurrence (often a nearby, short one) would hide.
  uint32_t tab4[size_t{1} << kMaxHashLog];
  uint32_t tab8[size_t{1} << kMaxHashLog];
  // Matches of 8+ bytes are all found through tab8, so levels that want no shorter ones skip
  // tab4 (and its cache misses) entirely.
  const bool use_tab4 = lv.min_match < 8;
  if (use_tab4) {
    std::memset(tab4, 0, sizeof(uint32_t) << hash_log);
  }
  std::memset(tab8, 0, sizeof(uint32_t) << hash_log);

  const auto* const in = reinterpret_cast<const uint8_t*>(src);
  const uint8_t* const in_end = in + src_size;
  // The stream must end with a literal run, so no match may cover the last byte; and the scan
  // stops early enough for its 8-byte loads to stay in bounds.
  const uint8_t* const match_limit = in_end - 1;
  const uint8_t* const scan_limit = src_size > 12 ? in_end - 12 : in;
  auto* const out = reinterpret_cast<uint8_t*>(dst);
  // Output that is not smaller than the input is useless to the caller.
  Writer w(out, std::min(dst_capacity, src_size - 1));

  auto insert = [&](const uint8_t* p) {
    const uint64_t seq = LoadLE<uint64_t>(p);
    const auto pos = static_cast<uint32_t>(p - in);
    if (use_tab4) {
      tab4[Hash4(static_cast<uint32_t>(seq), hash_log)] = pos;
    }
    tab8[Hash8(seq, hash_log)] = pos;
  };
  // Length of the match at `p` from `dist` back, or 0 if it has fewer than 4 bytes or cannot beat
  // `best` (checked first by the byte just past `best`, which saves extending long runs twice).
  auto match_len = [&](const uint8_t* p, size_t dist, size_t best) -> size_t {
    if (dist - 1 >= kMaxDistance || dist > static_cast<size_t>(p - in)) {
      return 0;
    }
    const uint8_t* ref = p - dist;
    if (LoadLE<uint32_t>(ref) != LoadLE<uint32_t>(p) ||
        (best != 0 && (p + best >= match_limit || ref[best] != p[best]))) {
      return 0;
    }
    return static_cast<size_t>(ExtendMatch(p + 4, ref + 4, match_limit) - p);
  };
  // Far tokens are two bytes longer, so they must beat near ones by that much.
  auto score = [](size_t len, size_t dist) {
    return dist <= kMaxNearDistance ? len : (len > 2 ? len - 2 : 0);
  };

  const uint8_t* anchor = in;  // first byte not yet emitted
  const uint8_t* ip = in + 1;
  size_t misses = 0;
  size_t rep = 1;  // distance of the last match: rows of an image repeat at a fixed stride
  while (ip < scan_limit) {
    const uint64_t seq = LoadLE<uint64_t>(ip);
    const uint32_t h8 = Hash8(seq, hash_log);
    const auto pos = static_cast<uint32_t>(ip - in);
    const size_t d8 = pos - tab8[h8];
    tab8[h8] = pos;
    size_t d4 = 0;
    if (use_tab4) {
      const uint32_t h4 = Hash4(static_cast<uint32_t>(seq), hash_log);
      d4 = pos - tab4[h4];
      tab4[h4] = pos;
    }

    size_t len = match_len(ip, rep, 0);
    size_t dist = rep;
    if (d8 != rep) {
      const size_t l8 = match_len(ip, d8, len);
      if (score(l8, d8) > score(len, dist)) {
        len = l8;
        dist = d8;
      }
    }
    if (use_tab4 && len < 8 && d4 != rep && d4 != d8) {
      const size_t l4 = match_len(ip, d4, len);
      if (score(l4, d4) > score(len, dist)) {
        len = l4;
        dist = d4;
      }
    }
    if (len == 0) {
      ++misses;
      ip += 1 + (misses >> lv.skip_shift);
      continue;
    }
    if (lv.lazy && ip + 1 < scan_limit) {
      // A longer match one byte later is worth a literal.
      const uint8_t* next = ip + 1;
      const uint64_t nseq = LoadLE<uint64_t>(next);
      const uint32_t nh8 = Hash8(nseq, hash_log);
      const size_t nd = static_cast<size_t>(next - in) - tab8[nh8];
      const size_t nl = match_len(next, nd, len + 1);
      if (score(nl, nd) > score(len, dist) + 1) {
        insert(next);
        ip = next;
        len = nl;
        dist = nd;
      }
    }
    const uint8_t* start = ip;
    while (start > anchor && start - dist > in && start[-1] == *(start - dist - 1)) {
      --start;
    }
    const uint8_t* const end = ip + len;
    len = static_cast<size_t>(end - start);
    if (len < (dist > kMaxNearDistance ? lv.min_far_match : lv.min_match)) {
      ++misses;
      ++ip;
      continue;
    }
    if (!w.Literals(anchor, static_cast<size_t>(start - anchor)) || !w.Match(len, dist)) {
      return 0;
    }
    anchor = ip = end;
    rep = dist;
    misses = 0;
    // Seed the tables inside the match so that what follows can refer back to it.
    if (ip < scan_limit) {
      insert(start + 1);
      insert(ip - 2);
    }
  }
  if (!w.Literals(anchor, static_cast<size_t>(in_end - anchor))) {
    return 0;
  }
  // The marker bit: decoders mask it off the first control byte, which is always a literal run.
  out[0] |= 0x20;
  return static_cast<size_t>(w.op() - out);
}

}  // namespace patchfeed::codec
