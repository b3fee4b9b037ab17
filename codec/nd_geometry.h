// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_ND_GEOMETRY_H_
#define PATCHFEED_CODEC_ND_GEOMETRY_H_

/// \file
/// The chunk-and-block grid every array format describes itself as (a `.b2nd` frame from its
/// metalayer, b2nd/b2nd_meta.h; zarr and precomputed arrays from their chunk shapes,
/// GridGeometry in array_reader.h), and the dimension limit shared by all of them. Plain data.

#include <cstdint>
#include <vector>

namespace patchfeed::codec {

/// patchfeed's dimension limit (c-blosc2 >= 2.21.3 allows 16, older 8).
inline constexpr int kMaxDims = 16;

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
};

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_ND_GEOMETRY_H_
