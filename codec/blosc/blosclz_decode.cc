// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
//
// BloscLZ decoder. Every token is bounds-checked before it touches memory; the speed comes from
// copying in fixed 8- and 16-byte pieces whenever the buffers have room for the overshoot, so the
// common tokens compile to a few unaligned moves instead of variable-length memcpy calls.

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "codec/blosc/blosclz.h"

namespace patchfeed::codec {
namespace {

// Fixed-size copies may run past the end of a token: a literal reads and writes 32 bytes, a
// match writes up to 15 bytes past its end. The fast paths are only taken when the buffers
// extend at least this far; otherwise exact copies take over.
constexpr size_t kSlack = 32;

// Matches with H == 31 and distance byte 255 carry a 16-bit distance on top of this.
constexpr size_t kFarBase = 8192;

inline void Copy8(uint8_t* d, const uint8_t* s) { std::memcpy(d, s, 8); }
inline void Copy16(uint8_t* d, const uint8_t* s) { std::memcpy(d, s, 16); }

template <typename T>
inline uint64_t Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// The `dist` bytes before `op` as a little-endian integer, read with loads no wider than needed:
// they were stored moments ago, and a wider load that straddles two pending stores cannot be
// forwarded and waits for both to reach the cache.
[[gnu::always_inline]] inline uint64_t LoadPattern(const uint8_t* op, size_t dist) {
  switch (dist) {
    case 1:
      return op[-1];
    case 2:
      return Load<uint16_t>(op - 2);
    case 3:
      return Load<uint16_t>(op - 3) | uint64_t{op[-1]} << 16;
    case 4:
      return Load<uint32_t>(op - 4);
    case 5:
      return Load<uint32_t>(op - 5) | uint64_t{op[-1]} << 32;
    case 6:
      return Load<uint32_t>(op - 6) | Load<uint16_t>(op - 2) << 32;
    default:
      return Load<uint32_t>(op - 7) | Load<uint16_t>(op - 3) << 32 | uint64_t{op[-1]} << 48;
  }
}

// Repeats the `dist`-byte pattern (1 <= dist < 8) that ends at `op` for `len` bytes, building
// it in registers: loading it back from the output just written would stall store forwarding.
// Writes up to 15 bytes past `op + len`.
[[gnu::always_inline]] inline void CopyShortPeriod(uint8_t* op, size_t dist, size_t len) {
  // Multiplying a dist-byte value by kSpread[dist] places copies of it every dist bytes.
  static constexpr uint64_t kSpread[8] = {0,
                                          0x0101010101010101,
                                          0x0001000100010001,
                                          0x0001000001000001,
                                          0x0000000100000001,
                                          0x0000010000000001,
                                          0x0001000000000001,
                                          0x0100000000000001};
  // Largest multiple of dist that is <= 16, so each 16-byte store continues the phase.
  static constexpr uint8_t kStep[8] = {0, 16, 16, 15, 16, 15, 12, 14};
  const size_t bits = dist * 8;
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  const uint64_t x = LoadPattern(op, dist);
  // The second 8 bytes start at phase 8 % dist of the pattern (a table: division is slow).
  static constexpr uint8_t kPhase8[8] = {0, 0, 0, 2, 0, 3, 2, 1};
  const size_t r = kPhase8[dist] * 8u;
  const uint64_t x2 = ((x >> r) | (x << (bits - r))) & mask;
  const uint64_t lo = x * kSpread[dist];
  const uint64_t hi = x2 * kSpread[dist];
  uint8_t pattern[16];
  std::memcpy(pattern, &lo, 8);
  std::memcpy(pattern + 8, &hi, 8);
  const size_t step = kStep[dist];
  uint8_t* const end = op + len;
  do {
    Copy16(op, pattern);
    op += step;
  } while (op < end);
}

// Copies a match of `len` bytes from `dist` back, with bytewise (overlapping) semantics, when the
// output has at least `len + kSlack` bytes of room after `op`. Plain 16-byte steps measured
// faster than unrolled or 32-byte ones: the extra stores past the end of a match make later
// loads straddle stores still in flight, which defeats store forwarding.
[[gnu::always_inline]] inline void CopyMatchWide(uint8_t* op, size_t dist, size_t len) {
  const uint8_t* ref = op - dist;
  uint8_t* const end = op + len;
  if (dist >= 16) [[likely]] {
    // Each 16-byte load only sees bytes that earlier stores have already written.
    do {
      Copy16(op, ref);
      op += 16;
      ref += 16;
    } while (op < end);
  } else if (dist >= 8) {
    do {
      Copy8(op, ref);
      op += 8;
      ref += 8;
    } while (op < end);
  } else if (dist == 1 && len >= 64) {
    std::memset(op, *ref, len);
  } else {
    CopyShortPeriod(op, dist, len);
  }
}

// Copies a match when fewer than `len + kSlack` bytes of output remain after `op`. All but the
// last kSlack bytes still go through the wide copy (its overshoot lands on bytes that the exact
// tail rewrites), so a long final run does not crawl byte by byte.
[[gnu::noinline]] void CopyMatchNearEnd(uint8_t* op, size_t dist, size_t len) {
  if (len > kSlack) {
    CopyMatchWide(op, dist, len - kSlack);
    op += len - kSlack;
    len = kSlack;
  }
  const uint8_t* ref = op - dist;
  for (size_t i = 0; i < len; ++i) {
    op[i] = ref[i];
  }
}

}  // namespace

bool BloscLZDecode(const std::byte* src, size_t src_size, std::byte* dst, size_t dst_size) {
  if (src_size == 0) {
    return dst_size == 0;
  }
  const auto* ip = reinterpret_cast<const uint8_t*>(src);
  const uint8_t* const ip_end = ip + src_size;
  auto* op = reinterpret_cast<uint8_t*>(dst);
  uint8_t* const op_begin = op;
  uint8_t* const op_end = op + dst_size;

  // The encoder marks the first byte with bit 5, so it is always read as a literal run.
  size_t ctrl = *ip++ & 31u;
  for (;;) {
    const auto in_left = static_cast<size_t>(ip_end - ip);
    const auto out_left = static_cast<size_t>(op_end - op);
    if (ctrl < 32) {
      const size_t n = ctrl + 1;
      if (in_left >= kSlack && out_left >= kSlack) [[likely]] {
        Copy16(op, ip);
        Copy16(op + 16, ip + 16);
      } else {
        if (n > in_left || n > out_left) [[unlikely]] {
          return false;
        }
        std::memcpy(op, ip, n);
      }
      ip += n;
      op += n;
      if (ip == ip_end) [[unlikely]] {
        break;
      }
      ctrl = *ip++;
      continue;
    }

    size_t len = (ctrl >> 5) + 2;
    const size_t dist_hi = (ctrl & 31) << 8;
    if (len == 9) [[unlikely]] {
      // Length extension bytes: 255 means "add 255 and keep going".
      uint8_t code;
      do {
        if (ip == ip_end) [[unlikely]] {
          return false;
        }
        code = *ip++;
        len += code;
        // Checking here also keeps a hostile run of 255s from overflowing `len`.
        if (len > out_left) [[unlikely]] {
          return false;
        }
      } while (code == 255);
    }
    // The distance byte must be followed by at least one more byte: like c-blosc2, a match is
    // never accepted as the final token (encoders always end with a literal run).
    if (ip_end - ip < 2) [[unlikely]] {
      return false;
    }
    const uint8_t code = *ip++;
    size_t dist;
    if (code == 255 && dist_hi == (31u << 8)) [[unlikely]] {
      if (ip_end - ip < 3) [[unlikely]] {
        return false;
      }
      dist = kFarBase + (static_cast<size_t>(ip[0]) << 8 | ip[1]);
      ip += 2;
    } else {
      dist = dist_hi + code + 1;
    }
    if (dist > static_cast<size_t>(op - op_begin) || len > out_left) [[unlikely]] {
      return false;
    }
    ctrl = *ip++;
    if (out_left - len >= kSlack) [[likely]] {
      CopyMatchWide(op, dist, len);
    } else {
      CopyMatchNearEnd(op, dist, len);
    }
    op += len;
  }
  return op == op_end;
}

}  // namespace patchfeed::codec
