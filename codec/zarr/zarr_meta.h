// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_ZARR_ZARR_META_H_
#define PATCHFEED_CODEC_ZARR_ZARR_META_H_

/// \file
/// Zarr v2 array metadata: the `.zarray` document of a directory store (shape, chunk grid,
/// NumPy dtype, fill value, compressor; https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html)
/// and the store key of a chunk. Everything in the document is untrusted: a malformed or
/// out-of-range field is kDataLoss naming it, a valid feature patchfeed does not read (F order,
/// filters, an unknown compressor, string, object or structured dtypes) is kUnimplemented
/// naming it, and a chunk larger than kMaxZarrChunkBytes is refused before anything is sized
/// by it. Stateless functions; safe to call concurrently.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace patchfeed::codec {

/// Largest chunk, in bytes, a zarr array may declare (numcodecs' Blosc refuses larger buffers).
inline constexpr int64_t kMaxZarrChunkBytes = (int64_t{1} << 31) - 1;

/// The compressors of zarr v2 stores patchfeed decodes, by numcodecs id.
enum class ZarrCompressor {
  kNone,   ///< "compressor": null, chunks stored raw
  kBlosc,  ///< "blosc": Blosc1 chunks (c-blosc 1.x)
  kZstd,   ///< "zstd": one zstd frame
  kLz4,    ///< "lz4": numcodecs' LZ4, a 4-byte little-endian size then one LZ4 block
  kGzip,   ///< "gzip": a gzip member
  kZlib,   ///< "zlib": a zlib stream
};

struct ZarrV2Meta {
  std::vector<int64_t> shape;
  std::vector<int64_t> chunks;
  std::string dtype;  ///< NumPy dtype string as stored: "<f4", ">i2", "|b1", "|u1", ...
  int64_t itemsize = 0;
  char dimension_separator = '.';  ///< '.' ("1.0.3") or '/' ("1/0/3")
  /// One item in the dtype's byte order; nullopt for a null fill value (missing chunks are
  /// then undefined in zarr; readers use zeros).
  std::optional<std::vector<std::byte>> fill_value;
  ZarrCompressor compressor = ZarrCompressor::kNone;

  int ndim() const { return static_cast<int>(shape.size()); }
  /// Bytes of one (whole, unclipped) chunk: product of `chunks` times the item size.
  int64_t chunk_nbytes() const;
};

/// Parses and validates a `.zarray` document.
Result<ZarrV2Meta> ParseZarrV2Meta(std::string_view json);

/// The store key of the chunk at grid position `index` (one entry per axis, within the grid):
/// the indices joined by the separator, "0" for a 0-d array.
std::string ZarrV2ChunkKey(const ZarrV2Meta& meta, std::span<const int64_t> index);

/// "blosc", "zstd", ... (null for kNone).
const char* ZarrCompressorName(ZarrCompressor compressor);

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_ZARR_ZARR_META_H_
