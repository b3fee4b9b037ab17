// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/precomputed/sharding.h"

#include <murmurhash.h>

#include <algorithm>
#include <cstdio>

#include "common/str_cat.h"

namespace patchfeed::codec::precomputed {
namespace {

uint64_t LoadLe64(const std::byte* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | static_cast<uint64_t>(p[i]);
  return v;
}

// Bits needed for coordinates 0 .. n-1.
int BitsFor(int64_t n) {
  int bits = 0;
  while (bits < 63 && (int64_t{1} << bits) < n)
    ++bits;
  return bits;
}

uint64_t Hash(const Sharding& sharding, uint64_t key) {
  if (!sharding.murmurhash)
    return key;
  // MurmurHash3_x86_128 of the key's 8 little-endian bytes, seed 0; the low 64 bits.
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<unsigned char>(key >> (8 * i));
  uint32_t out[4];
  lmmh_x86_128(bytes, 8, 0, out);
  return static_cast<uint64_t>(out[0]) | static_cast<uint64_t>(out[1]) << 32;
}

uint64_t LowBits(uint64_t v, int bits) { return bits >= 64 ? v : v & ((uint64_t{1} << bits) - 1); }

}  // namespace

uint64_t CompressedMortonCode(const Vec3& position, const Vec3& grid) {
  const int bits[3] = {BitsFor(grid[0]), BitsFor(grid[1]), BitsFor(grid[2])};
  const int most = std::max({bits[0], bits[1], bits[2]});
  uint64_t code = 0;
  int out = 0;
  for (int i = 0; i < most; ++i) {
    for (size_t d = 0; d < 3; ++d) {
      if (i < bits[d] && out < 64) {
        code |= ((static_cast<uint64_t>(position[d]) >> i) & 1) << out;
        ++out;
      }
    }
  }
  return code;
}

ShardLocation LocateChunk(const Sharding& sharding, uint64_t chunk_id) {
  const uint64_t key = sharding.preshift_bits >= 64 ? 0 : chunk_id >> sharding.preshift_bits;
  const uint64_t hash = Hash(sharding, key);
  ShardLocation loc;
  loc.minishard = LowBits(hash, sharding.minishard_bits);
  const uint64_t shard = sharding.minishard_bits >= 64
                             ? 0
                             : LowBits(hash >> sharding.minishard_bits, sharding.shard_bits);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%0*llx", (sharding.shard_bits + 3) / 4,
                static_cast<unsigned long long>(shard));
  loc.shard_file = StrCat(hex, ".shard");
  return loc;
}

Result<ShardRange> MinishardIndexRange(std::span<const std::byte> entry, const Sharding& sharding) {
  const uint64_t start = LoadLe64(entry.data());
  const uint64_t end = LoadLe64(entry.data() + 8);
  if (end < start) {
    return DataLossError(StrCat("the shard index says a minishard index ends at ", end,
                                ", before its start at ", start));
  }
  const uint64_t base = ShardIndexBytes(sharding);
  if (start > UINT64_MAX - base)
    return DataLossError(StrCat("a minishard index at ", start, " passes 2^64"));
  return ShardRange{base + start, end - start};
}

Result<std::optional<ShardRange>> FindChunk(std::span<const std::byte> index,
                                            const Sharding& sharding, uint64_t chunk_id) {
  if (index.size() % 24 != 0) {
    return DataLossError(
        StrCat("a minishard index of ", index.size(), " bytes (not whole 24-byte entries)"));
  }
  const size_t n = index.size() / 24;
  const std::byte* ids = index.data();
  const std::byte* offsets = ids + 8 * n;
  const std::byte* sizes = offsets + 8 * n;
  uint64_t id = 0, end = 0;
  for (size_t i = 0; i < n; ++i) {
    id += LoadLe64(ids + 8 * i);
    const uint64_t delta = LoadLe64(offsets + 8 * i);
    const uint64_t size = LoadLe64(sizes + 8 * i);
    uint64_t start = 0;
    if (__builtin_add_overflow(end, delta, &start) || __builtin_add_overflow(start, size, &end))
      return DataLossError(StrCat("a minishard index's entry ", i, " passes 2^64"));
    if (id == chunk_id) {
      const uint64_t base = ShardIndexBytes(sharding);
      if (start > UINT64_MAX - base)
        return DataLossError(StrCat("a minishard index's entry ", i, " passes 2^64"));
      return std::optional<ShardRange>(ShardRange{base + start, size});
    }
  }
  return std::optional<ShardRange>();
}

}  // namespace patchfeed::codec::precomputed
