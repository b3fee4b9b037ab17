// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_ZARR_ZARR_V3_META_H_
#define PATCHFEED_CODEC_ZARR_ZARR_V3_META_H_

/// \file
/// Zarr v3 array metadata: the `zarr.json` document of an array (shape, regular chunk grid,
/// data type, fill value, chunk key encoding, codec chain with optional sharding;
/// https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html) and the store key of a
/// chunk. Everything in the document is untrusted: a malformed or out-of-range field is
/// kDataLoss naming it ("zarr.json: chunk_grid.configuration.chunk_shape[2] is 0"), a valid
/// feature patchfeed does not read (an unknown codec, data type, chunk grid or chunk key
/// encoding, storage transformers, nested sharding, unknown fields to be understood) is
/// kUnimplemented naming it, and a chunk or shard index larger than kMaxZarrChunkBytes is
/// kResourceExhausted before anything is sized by it. Where the specification leaves a choice
/// open, zarr-python 3.1 decides (each such place says so). Stateless functions; safe to call
/// concurrently.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codec/zarr/zarr_meta.h"
#include "common/result.h"

namespace patchfeed::codec {

/// The bytes -> bytes codecs of a chain, in the order they appear in "codecs" (decoding runs
/// them in reverse).
enum class ZarrV3BytesCodec {
  kBlosc,   ///< "blosc": a Blosc1 chunk, self-describing (its configuration only validated)
  kZstd,    ///< "zstd": one zstd frame
  kGzip,    ///< "gzip": a gzip member
  kCrc32c,  ///< "crc32c": 4 bytes appended, the CRC-32C of what precedes them, little-endian
};

/// One codec chain: at most one "transpose", the "bytes" codec, then bytes -> bytes codecs.
/// Codecs marked `"must_understand": false` that patchfeed does not know are left out.
struct ZarrV3Codecs {
  /// The "transpose" codec's order (encoded axis i is decoded axis order[i]); empty: none.
  /// A chain with two transposes is kUnimplemented.
  std::vector<int> transpose_order;
  /// The "bytes" codec's endian; false for 1-byte types and for a "bytes" codec without
  /// configuration (zarr-python reads that as the machine's order, little-endian here).
  bool big_endian = false;
  std::vector<ZarrV3BytesCodec> bytes_codecs;
};

/// The "sharding_indexed" codec: each chunk of the grid (a shard) holds a grid of inner chunks
/// and an index of (offset, nbytes) uint64 pairs, one per inner chunk in C order.
struct ZarrV3Sharding {
  /// The inner chunk shape; divides the shard shape (the chunk grid's chunk_shape) on every
  /// axis.
  std::vector<int64_t> inner_chunks;
  /// Inner chunks per shard on each axis: the shard shape divided by `inner_chunks`.
  std::vector<int64_t> chunks_per_shard;
  /// The codecs of each inner chunk (a nested "sharding_indexed" is kUnimplemented).
  ZarrV3Codecs inner;
  /// index_location "end" (the default) or "start".
  bool index_at_end = true;
  /// index_codecs [bytes little] (false) or [bytes little, crc32c] (true, zarr-python's
  /// default when the key is absent); any other index chain is kUnimplemented.
  bool index_crc32c = false;

  /// Inner chunks per shard (product of `chunks_per_shard`).
  int64_t num_inner_chunks() const;
  /// Bytes of the encoded shard index: 16 per inner chunk, plus 4 with crc32c.
  int64_t index_nbytes() const;
};

struct ZarrV3Meta {
  std::vector<int64_t> shape;
  /// The regular chunk grid's chunk_shape: the shard shape when sharded.
  std::vector<int64_t> chunks;
  std::string data_type;    ///< "float32", "int16", "bool", ...
  std::string numpy_dtype;  ///< little-endian NumPy dtype of an item: "<f4", "<i2", "|b1", "|u1"
  int64_t itemsize = 0;
  std::vector<std::byte> fill_value;  ///< one item, little-endian
  /// The chunk key encoding's separator: '/' (the "default" encoding's default) or '.'.
  char chunk_key_separator = '/';
  /// chunk_key_encoding "v2": keys "0.1" without the "c" prefix ('.' separator by default).
  bool v2_chunk_keys = false;
  /// The array's codec chain when not sharded. When sharded, "sharding_indexed" must be the
  /// only codec (a transpose before it, which zarr-python writes but misreads for some inner
  /// chunk shapes, and bytes -> bytes codecs after it are kUnimplemented), and this is empty.
  ZarrV3Codecs codecs;
  std::optional<ZarrV3Sharding> sharding;

  int ndim() const { return static_cast<int>(shape.size()); }
  /// The shape a read decodes as one unit: the inner chunk shape when sharded, else `chunks`.
  const std::vector<int64_t>& inner_chunks() const;
  /// Bytes of one decoded unit (product of inner_chunks() times the item size), at most
  /// kMaxZarrChunkBytes.
  int64_t inner_chunk_nbytes() const;
};

/// Parses and validates the `zarr.json` document of an array. A group's document is
/// kInvalidArgument (see ZarrV3NodeType).
Result<ZarrV3Meta> ParseZarrV3Meta(std::string_view json);

/// The store key, relative to the array, of the chunk (shard, when sharded) at grid position
/// `index` (one entry per axis, within the grid): "c/1/0/3" ("c" for a 0-d array) or
/// "c.1.0.3" with the default encoding; "1.0.3" ("0" for a 0-d array) or "1/0/3" with "v2".
std::string ZarrV3ChunkKey(const ZarrV3Meta& meta, std::span<const int64_t> index);

/// The node_type of a `zarr.json` document, "array" or "group"; kDataLoss when the document
/// is not JSON, not zarr_format 3 or has no such node_type.
Result<std::string> ZarrV3NodeType(std::string_view json);

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_ZARR_ZARR_V3_META_H_
