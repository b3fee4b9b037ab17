// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_B2ND_META_H_
#define PATCHFEED_CODEC_B2ND_META_H_

/// \file
/// The `b2nd` metalayer (shape, chunk shape, block shape, dtype of an N-d array in a frame)
/// and the geometry derived from it: how the array maps onto chunks and blocks (section 6 of
/// ../shared/reference/blosc2-formats.md). Stateless functions; safe to call concurrently.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"

namespace patchfeed::codec {

/// patchfeed's dimension limit (c-blosc2 >= 2.21.3 allows 16, older 8).
inline constexpr int kMaxDims = 16;

struct B2ndMeta {
  int version = 0;
  std::vector<int64_t> shape;
  std::vector<int32_t> chunkshape;
  std::vector<int32_t> blockshape;
  std::string dtype;  ///< NumPy dtype string, e.g. "<f4"; empty if the metalayer has none

  int ndim() const { return static_cast<int>(shape.size()); }
};

/// Parses and validates the metalayer content: shapes positive (or a zero-size array), blocks
/// no larger than chunks, per-chunk sizes within int32. kDataLoss names what is wrong.
Result<B2ndMeta> ParseB2ndMeta(std::span<const std::byte> content);

/// Writes the metalayer content as c-blosc2 does (fixed-width msgpack).
std::vector<std::byte> SerializeB2ndMeta(const B2ndMeta& meta);

/// The item size a NumPy dtype string implies ("<f4" -> 4, "|u1" -> 1, "<U10" -> 40); 0 when
/// it cannot tell (structured dtypes: use the frame's typesize).
int64_t ItemSizeOfDtype(const std::string& dtype);

/// One item of NumPy `dtype` holding `value` (e.g. a pad value: 0 for images, -1 for labels),
/// in the dtype's byte order. Bool, signed/unsigned integers and floats of 2, 4 or 8 bytes;
/// kInvalidArgument for other dtypes unless `value` is 0 (all-zero bytes), or when `value` does
/// not fit (e.g. -1 for an unsigned type).
Result<std::vector<std::byte>> ItemFromDouble(const std::string& dtype, int64_t itemsize,
                                              double value);

/// Chunk and block grid of an array.
struct NdGeometry {
  int ndim = 0;
  int64_t itemsize = 0;
  std::vector<int64_t> shape, chunkshape, blockshape;
  std::vector<int64_t> chunks_per_dim;    ///< C_d = ceil(shape / chunk)
  std::vector<int64_t> extchunk;          ///< chunk padded to whole blocks
  std::vector<int64_t> blocks_per_chunk;  ///< B_d = extchunk / block
  int64_t nchunks = 0;
  int64_t chunk_nitems = 0;  ///< items per (padded) chunk
  int64_t block_nitems = 0;  ///< items per block

  static Result<NdGeometry> Make(const B2ndMeta& meta, int64_t itemsize);
};

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_B2ND_META_H_
