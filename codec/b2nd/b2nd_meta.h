// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_B2ND_B2ND_META_H_
#define PATCHFEED_CODEC_B2ND_B2ND_META_H_

/// \file
/// The `b2nd` metalayer (shape, chunk shape, block shape, dtype of an N-d array in a frame)
/// and the geometry derived from it: how the array maps onto chunks and blocks (section 6 of
/// ../shared/reference/blosc2-formats.md). Stateless functions; safe to call concurrently.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "codec/nd_geometry.h"
#include "common/result.h"

namespace patchfeed::codec {

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

/// The chunk and block grid of an array with metalayer `meta` and items of `itemsize` bytes:
/// chunks padded to whole blocks, as c-blosc2 stores them. kDataLoss when the sizes pass the
/// format's limits (a chunk of more than 2^31 bytes) or `itemsize` is not positive.
Result<NdGeometry> B2ndGeometry(const B2ndMeta& meta, int64_t itemsize);

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_B2ND_B2ND_META_H_
