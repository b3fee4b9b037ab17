// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_NNUNET_LAYOUT_H_
#define PATCHFEED_LOADER_NNUNET_LAYOUT_H_

/// \file
/// The chunk and block shapes nnU-Net 2.8 chooses when it writes a preprocessed case as
/// `.b2nd` (nnunetv2's `comp_blosc2_params`), so patchfeed writes files laid out as nnU-Net's.
/// Rule: ../shared/reference/blosc2-formats.md section 7.3, "Current rule". Stateless.

#include <cstdint>
#include <vector>

namespace patchfeed::loader {

struct ChunkBlockShapes {
  std::vector<int32_t> chunkshape;
  std::vector<int32_t> blockshape;
};

/// For an array of shape (C, X, Y, Z) (a 2-D case as (C, 1, Y, Z)), the spatial training patch
/// size (3 values; 2 for 2-D patches) and the item size in bytes: blocks up to 128 KiB, chunks
/// up to 6 MiB and 1.5 patches per axis, channel axis 1, exactly as nnU-Net 2.8 computes them.
ChunkBlockShapes NnUNetChunkBlockShapes(const std::vector<int64_t>& shape,
                                        const std::vector<int64_t>& patch_size, int64_t itemsize);

}  // namespace patchfeed::loader

#endif  // PATCHFEED_LOADER_NNUNET_LAYOUT_H_
