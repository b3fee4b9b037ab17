// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_BLOSC_BLOCK_DECODER_H_
#define PATCHFEED_CODEC_BLOSC_BLOCK_DECODER_H_

/// \file
/// Decodes Blosc1/Blosc2 chunks, whole or one block at a time, into caller-owned memory.
///
/// A BlockDecoder holds scratch space and codec contexts, so it is not thread-safe: keep one
/// per worker and reuse it; allocating per call is the cost we avoid. Scratch grows to the
/// largest block seen and stays.
///
/// Example:
///   BlockDecoder decoder;
///   PATCHFEED_ASSIGN_OR_RETURN(ChunkHeader header, ParseChunkHeader(chunk));
///   for (int32_t b : blocks_the_patch_touches)
///     PATCHFEED_RETURN_IF_ERROR(decoder.DecodeBlock(chunk, header, b, dst_for(b)));

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "codec/blosc/chunk_format.h"
#include "codec/blosc/stream_codecs.h"
#include "common/result.h"

namespace patchfeed::codec {

/// A block decoded but for its final byte shuffle (see BlockDecoder::DecodeBlockForItems).
struct PartlyDecodedBlock {
  const std::byte* data = nullptr;  ///< in the decoder's scratch: valid until its next call
  size_t nitems = 0;                ///< whole items in the block
  int32_t itemsize = 0;
  /// True: `data` holds byte planes (plane k at data + k * nitems), to be unshuffled with
  /// UnshuffleItemRows; false: `data` holds the items themselves.
  bool shuffled = false;
};

class BlockDecoder {
 public:
  BlockDecoder() = default;
  BlockDecoder(BlockDecoder&&) noexcept = default;
  BlockDecoder& operator=(BlockDecoder&&) noexcept = default;

  /// Decodes the whole `chunk` into `out`, which must hold at least the chunk's nbytes.
  /// Returns kDataLoss naming the block and stream when the chunk is corrupt, kUnimplemented
  /// for features patchfeed does not decode; never reads or writes out of bounds.
  Status DecodeChunk(std::span<const std::byte> chunk, std::span<std::byte> out);

  /// Decodes block `index` of `chunk` into `out`, which may be pinned memory or a slice of the
  /// final array; `out.size()` must equal `header.block_nbytes(index)`. `header` must come from
  /// ParseChunkHeader(chunk). A chunk whose filters include DELTA needs its block 0 as well;
  /// it is decoded into scratch, so prefer DecodeChunk when most blocks are wanted.
  Status DecodeBlock(std::span<const std::byte> chunk, const ChunkHeader& header, int32_t index,
                     std::span<std::byte> out);

  /// Decodes block `index` into scratch for a caller that wants only some of its items, of
  /// `itemsize` bytes, scattered. When the last filter is a byte shuffle of `itemsize`, it is
  /// left undone (the caller unshuffles just its items, into their destination, in one pass
  /// instead of unshuffle-then-copy). Every stream is decoded to its end, also when the wanted
  /// items sit at its front: stopping early would let damage further on go unnoticed and the
  /// front come back as garbage. Errors as DecodeBlock.
  Result<PartlyDecodedBlock> DecodeBlockForItems(std::span<const std::byte> chunk,
                                                 const ChunkHeader& header, int32_t index,
                                                 int32_t itemsize);

  /// Running totals of this decoder's work, for metrics: the compressed stream bytes it
  /// read and the bytes it produced from them (blocks stored raw count in both; special
  /// chunks in neither). Callers take differences.
  int64_t compressed_bytes_read() const { return compressed_bytes_read_; }
  int64_t bytes_decoded() const { return bytes_decoded_; }

 private:
  // `block0` is the decoded block 0 that DELTA refers to (null if none or if index == 0).
  Status DecodeBlockWithRef(std::span<const std::byte> chunk, const ChunkHeader& header,
                            int32_t index, std::span<std::byte> out, const std::byte* block0);
  Status DecodeStreams(std::span<const std::byte> chunk, const ChunkHeader& header, int32_t index,
                       std::byte* dst, size_t size);
  // Grown on demand and never zeroed: a zero fill of the block-sized buffer cost about 3 % of
  // a whole-chunk LZ4 + SHUFFLE decode, and every byte handed out is written before it is read
  // (a block's streams cover it exactly; ParseChunkHeader checks that).
  struct ScratchBuffer {
    std::unique_ptr<std::byte[]> data;
    size_t size = 0;
  };
  static std::byte* Scratch(ScratchBuffer& buf, size_t size);

  StreamDecoder streams_;
  ScratchBuffer scratch_;
  ScratchBuffer block0_;
  ScratchBuffer partial_;  // DecodeBlockForItems' output
  int64_t compressed_bytes_read_ = 0;
  int64_t bytes_decoded_ = 0;
};

/// The most bytes DecompressChunk allocates unless told otherwise. A valid 32-byte special
/// chunk may declare up to 2 GB, so the size a chunk claims is no reason to allocate it.
inline constexpr int64_t kDefaultMaxDecompressedBytes = int64_t{1} << 30;

/// The uncompressed size of `chunk`, for a caller about to allocate it: the header is
/// validated first (ParseChunkHeader: a memcpyed chunk cannot claim more than it holds), then
/// the size must be at most `max_nbytes`, else kResourceExhausted naming both sizes.
Result<int32_t> DecompressedSize(std::span<const std::byte> chunk,
                                 int64_t max_nbytes = kDefaultMaxDecompressedBytes);

/// Convenience for tools and tests: parses and decodes `chunk` into a new vector, allocated
/// only after DecompressedSize(chunk, max_nbytes) accepted the chunk.
Result<std::vector<std::byte>> DecompressChunk(std::span<const std::byte> chunk,
                                               int64_t max_nbytes = kDefaultMaxDecompressedBytes);

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_BLOSC_BLOCK_DECODER_H_
