// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_B2ND_ND_READER_H_
#define PATCHFEED_CODEC_B2ND_ND_READER_H_

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
/// its own BoxReadScratch. The reader spawns no thread. Reads go through ArrayReader
/// (array_reader.h), which zarr arrays share.

#include <string>

#include "codec/array_reader.h"
#include "codec/b2nd/b2nd_meta.h"
#include "codec/b2nd/frame_reader.h"
#include "common/result.h"

namespace patchfeed::codec {

class NdArrayReader final : public ArrayReader {
 public:
  /// Opens a `.b2nd` file (or sparse directory) and checks that its chunks can hold the array.
  static Result<NdArrayReader> Open(const std::string& path, FrameOpenOptions options = {});
  static Result<NdArrayReader> FromFrame(FrameReader frame);

  const B2ndMeta& meta() const { return meta_; }
  const FrameReader& frame() const { return frame_; }
  const char* format() const override { return "b2nd"; }
  ArrayFootprint Footprint() const override;
  Status CheckMapping() const override { return frame_.CheckMapping(); }
  const storage::ByteSource* file() const override {
    return frame_.info().sparse ? nullptr : &frame_.source();
  }

 private:
  Status ReadChunkPiece(const BoxPlan& plan, const BoxPiece& piece, const NdView& dst,
                        std::span<const std::byte> pad_item,
                        BoxReadScratch& scratch) const override;

  FrameReader frame_;
  B2ndMeta meta_;
};

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_B2ND_ND_READER_H_
