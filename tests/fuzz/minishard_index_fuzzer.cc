// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any bytes as a sharded precomputed scale's shard index entry and minishard
// index must give a range or an error, never crash or overflow (ASan/UBSan); a range found
// starts after the shard index. The first 16 bytes are the entry, the next byte the minishard
// bits, the next 8 the chunk id asked for; the rest is the (decoded) minishard index. Seed
// corpus: tests/fuzz/minishard_index_corpus (indexes tensorstore wrote). CI runs it for a
// bounded number of inputs.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "codec/precomputed/sharding.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace patchfeed::codec::precomputed;
  if (size < 25)
    return 0;
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  Sharding sharding;
  sharding.minishard_bits = data[16] % 33;
  uint64_t id = 0;
  for (int i = 0; i < 8; ++i)
    id |= static_cast<uint64_t>(data[17 + i]) << (8 * i);
  const auto range = MinishardIndexRange(std::span(bytes, 16), sharding);
  if (range.ok() && range->offset < ShardIndexBytes(sharding))
    std::abort();
  const auto found = FindChunk(std::span(bytes + 25, size - 25), sharding, id);
  if (found.ok() && found->has_value() && (*found)->offset < ShardIndexBytes(sharding))
    std::abort();
  (void)LocateChunk(sharding, id);
  return 0;
}
