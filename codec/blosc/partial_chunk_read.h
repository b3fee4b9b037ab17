// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_BLOSC_PARTIAL_CHUNK_READ_H_
#define PATCHFEED_CODEC_BLOSC_PARTIAL_CHUNK_READ_H_

/// \file
/// Reading only the blocks of a Blosc chunk a box needs, from wherever the chunk is stored: a
/// `.b2nd` frame (b2nd/frame_reader.h), a zarr chunk file or a shard's inner chunk
/// (zarr/zarr_reader.h). Stateless; safe to call concurrently with distinct scratch.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "codec/blosc/chunk_format.h"
#include "common/result.h"
#include "storage/byte_source.h"

namespace patchfeed::codec {

/// Which blocks of a chunk a reader wants, once its header is known: ascending block indices
/// into `*blocks` (cleared first).
using BlockPicker = std::function<void(const ChunkHeader& header, std::vector<int32_t>* blocks)>;

/// The partial read behind FrameReader::GetChunkBlocks, for any Blosc chunk at `pos` in `source`
/// that spans at most `avail` bytes there (a frame's chunk, a zarr chunk file, a shard's inner
/// chunk): reads the header, the block offsets, the dictionary and then the streams of the blocks
/// `pick` chooses (neighbouring blocks in one read) into a `scratch` image of the whole chunk,
/// parsed into `header`. The streams' ranges go to `source.WillRead` before they are read; a
/// source that holds the chunk's image (`ByteSource::ChunkImage`) is decoded in place instead.
/// Returns nullopt when the chunk should be read whole instead: the
/// source is mapped (nothing to save), the chunk is special or memcpyed, or its header or
/// block offsets fail ParseChunkHeader (so the caller reports what a whole read reports).
/// `*blocks` holds the blocks read. I/O errors are returned as they are (callers add context).
Result<std::optional<std::span<const std::byte>>> ReadChunkBlocksAt(
    const storage::ByteSource& source, uint64_t pos, int64_t avail, const BlockPicker& pick,
    std::vector<int32_t>* blocks, std::vector<std::byte>& scratch, ChunkHeader* header);

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_BLOSC_PARTIAL_CHUNK_READ_H_
