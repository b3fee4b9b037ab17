// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_ND_READER_H_
#define PATCHFEED_CODEC_ND_READER_H_

/// \file
/// Reads arbitrary N-d boxes out of a `.b2nd` array, decoding only the blocks the box touches.
///
/// A read is a plan (codec/box_plan.h: the chunks, blocks and pad regions of the box) and its
/// execution piece by piece: ReadBox does both; the loader plans once and spreads the pieces
/// over its tasks (ReadPiece). A block whose piece of the box is the whole block, and lands
/// contiguously in the destination, is decoded straight into it; other blocks decode into
/// per-thread scratch and only the rows needed are copied. Parts of the box outside the array
/// are filled with a caller-given pad value (nnU-Net pads with 0 for images, -1 for
/// segmentations).
///
/// An NdArrayReader is immutable after Open: any number of threads may read at once, each with
/// its own BoxReadScratch. The reader spawns no thread.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "codec/b2nd_meta.h"
#include "codec/block_decoder.h"
#include "codec/box_plan.h"
#include "codec/frame_reader.h"
#include "common/result.h"
#include "common/strided_view.h"

namespace patchfeed::codec {

/// A strided N-d destination: the codec's name for common's StridedView.
using NdView = StridedView;

/// Per-worker scratch for box reads: keep one per thread and reuse it.
struct BoxReadScratch {
  BlockDecoder decoder;
  BoxPlan plan;                        ///< ReadBox's plan
  ChunkHeader header;                  ///< the header of the chunk being read
  std::vector<std::byte> chunk;        ///< chunks read with pread, synthesized special chunks
  std::vector<int32_t> wanted_blocks;  ///< the blocks of the chunk being read
  std::vector<std::byte> whole;        ///< whole chunks, when DELTA ties blocks to block 0
};

class NdArrayReader {
 public:
  /// Opens a `.b2nd` file (or sparse directory) and checks that its chunks can hold the array.
  static Result<NdArrayReader> Open(const std::string& path, FrameOpenOptions options = {});
  static Result<NdArrayReader> FromFrame(FrameReader frame);

  const B2ndMeta& meta() const { return meta_; }
  const NdGeometry& geometry() const { return geom_; }
  const FrameReader& frame() const { return frame_; }
  int64_t itemsize() const { return geom_.itemsize; }

  /// Reads `box` into `dst`, whose shape must equal the box's extents. `pad_item` (itemsize
  /// bytes) fills the parts outside the array. Errors name the file, the chunk and the block.
  Status ReadBox(const Box& box, const NdView& dst, std::span<const std::byte> pad_item,
                 BoxReadScratch& scratch) const;

  /// ReadBox for a caller that needs only some of the box: blocks that `filter` declines are
  /// not read or decoded, and their part of `dst` gets `pad_item` instead (or the array's
  /// value where it costs nothing, as in chunks of one repeated value).
  Status ReadBox(const Box& box, const NdView& dst, std::span<const std::byte> pad_item,
                 BoxReadScratch& scratch, const BlockFilter& filter) const;

  /// Convenience: the box in C order in a new vector.
  Result<std::vector<std::byte>> ReadBox(const Box& box, std::span<const std::byte> pad_item) const;

  /// Reads one piece of `plan` (PlanBox over this array's geometry) into `dst`, the destination
  /// of the whole planned box (its shape is plan.shape()): the piece's chunk, only its blocks
  /// (only their bytes with pread), or its pad region. Pieces are disjoint: threads may read
  /// different pieces into one `dst` at once, each with its own scratch. Errors name the file,
  /// the chunk and the block; kInvalidArgument when plan, piece, `dst` or `pad_item` do not
  /// fit this array.
  Status ReadPiece(const BoxPlan& plan, const BoxPiece& piece, const NdView& dst,
                   std::span<const std::byte> pad_item, BoxReadScratch& scratch) const;

 private:
  Status CheckDestination(const BoxPlan& plan, const NdView& dst,
                          std::span<const std::byte> pad_item) const;
  Status ReadChunkPiece(const BoxPlan& plan, const BoxPiece& piece, const NdView& dst,
                        std::span<const std::byte> pad_item, BoxReadScratch& scratch) const;

  FrameReader frame_;
  B2ndMeta meta_;
  NdGeometry geom_;
};

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_ND_READER_H_
