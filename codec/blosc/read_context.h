// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_BLOSC_READ_CONTEXT_H_
#define PATCHFEED_CODEC_BLOSC_READ_CONTEXT_H_

/// \file
/// The Blosc decoders an array reader keeps per worker (`.b2nd` frames, zarr arrays of Blosc
/// or plainly compressed chunks): one per BoxReadScratch, got with
/// `scratch.Context<BloscReadContext>()`. Not thread-safe, as the decoders it holds.

#include <cstdint>

#include "codec/array_reader.h"
#include "codec/blosc/block_decoder.h"
#include "codec/blosc/chunk_format.h"
#include "codec/blosc/stream_codecs.h"

namespace patchfeed::codec {

struct BloscReadContext final : ReadContext {
  BlockDecoder decoder;
  StreamDecoder streams;  ///< zarr chunks compressed as one stream
  ChunkHeader header;     ///< the header of the chunk being read

  /// The block decoder's totals (streams decoded whole are not counted).
  int64_t compressed_bytes_read() const override { return decoder.compressed_bytes_read(); }
  int64_t bytes_decoded() const override { return decoder.bytes_decoded(); }
};

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_BLOSC_READ_CONTEXT_H_
