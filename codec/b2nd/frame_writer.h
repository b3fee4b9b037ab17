// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_B2ND_FRAME_WRITER_H_
#define PATCHFEED_CODEC_B2ND_FRAME_WRITER_H_

/// \file
/// Writes N-d arrays as `.b2nd` frames that python-blosc2 and c-blosc2 open: contiguous frame
/// files and sparse frame directories, with the `b2nd` metalayer, any chunk and block shape,
/// and the codec, level and filters given. Single pass: every size is known before writing.
/// Chunks that are all zeros are stored as special offsets, as c-blosc2 does.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "codec/blosc/chunk_encoder.h"
#include "common/result.h"

namespace patchfeed::codec {

struct B2ndWriteOptions {
  std::vector<int32_t> chunkshape;  ///< per dimension; empty: the whole array is one chunk
  std::vector<int32_t> blockshape;  ///< per dimension; empty: equal to the chunk shape
  /// Codec, level, filters, split mode. typesize and blocksize are set from the dtype and the
  /// block shape.
  EncodeOptions encode;
  bool sparse = false;  ///< a directory of chunk files instead of one file
  /// Item size in bytes; 0 derives it from the dtype string (needed for structured dtypes,
  /// whose string is a field list).
  int64_t itemsize = 0;
};

/// Encodes `data` (C order, `shape`, NumPy `dtype` such as "<f4") as a contiguous frame.
Result<std::vector<std::byte>> EncodeB2ndFrame(std::span<const std::byte> data,
                                               const std::vector<int64_t>& shape,
                                               const std::string& dtype,
                                               const B2ndWriteOptions& options);

/// Writes the array to `path`: a frame file, or a sparse frame directory (created) when
/// `options.sparse`. Errors name the path.
Status WriteB2nd(const std::string& path, std::span<const std::byte> data,
                 const std::vector<int64_t>& shape, const std::string& dtype,
                 const B2ndWriteOptions& options);

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_B2ND_FRAME_WRITER_H_
