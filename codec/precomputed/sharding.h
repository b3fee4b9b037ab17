// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_PRECOMPUTED_SHARDING_H_
#define PATCHFEED_CODEC_PRECOMPUTED_SHARDING_H_

/// \file
/// Where a chunk of a sharded precomputed scale lives (`neuroglancer_uint64_sharded_v1`,
/// https://github.com/google/neuroglancer/blob/master/src/datasource/precomputed/sharded.md):
/// the chunk's id is the compressed Morton code of its grid position; its hash (identity or
/// MurmurHash3_x86_128 of the id shifted right by preshift_bits) picks the minishard (low
/// minishard_bits) and the shard file (the next shard_bits). A shard file starts with its shard
/// index, 16 bytes per minishard: where that minishard's index lies. A minishard index lists its
/// chunks: ids, offsets and sizes, each column delta-coded. Offsets count from the shard index's
/// end. Stateless; safe to call concurrently.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "codec/precomputed/info.h"
#include "common/result.h"

namespace patchfeed::codec::precomputed {

/// The compressed Morton code of grid position `position` in a grid of `grid` chunks (x, y, z):
/// the bits of the three coordinates interleaved, each axis giving only as many bits as its
/// grid size needs.
uint64_t CompressedMortonCode(const Vec3& position, const Vec3& grid);

struct ShardLocation {
  std::string shard_file;  ///< "<shard number in hex>.shard"
  uint64_t minishard = 0;
};
ShardLocation LocateChunk(const Sharding& sharding, uint64_t chunk_id);

/// Bytes [offset, offset + size) of a shard file.
struct ShardRange {
  uint64_t offset = 0;
  uint64_t size = 0;
};

/// The bytes of the shard index a minishard's entry occupies.
inline ShardRange ShardIndexEntry(uint64_t minishard) { return {16 * minishard, 16}; }
/// The shard index's length, where the offsets in it and in minishard indexes count from.
inline uint64_t ShardIndexBytes(const Sharding& sharding) {
  return uint64_t{16} << sharding.minishard_bits;
}

/// The minishard index's range from the 16 bytes of its shard index entry; size 0 for an
/// empty minishard. kDataLoss when the entry's end precedes its start.
Result<ShardRange> MinishardIndexRange(std::span<const std::byte> entry, const Sharding& sharding);

/// The range of chunk `chunk_id` in a shard file, from its (decoded) minishard index; nullopt
/// when the minishard does not list it (a chunk never written). kDataLoss for an index that is
/// not whole 24-byte entries or whose offsets overflow.
Result<std::optional<ShardRange>> FindChunk(std::span<const std::byte> minishard_index,
                                            const Sharding& sharding, uint64_t chunk_id);

}  // namespace patchfeed::codec::precomputed

#endif  // PATCHFEED_CODEC_PRECOMPUTED_SHARDING_H_
