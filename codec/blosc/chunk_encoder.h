// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_BLOSC_CHUNK_ENCODER_H_
#define PATCHFEED_CODEC_BLOSC_CHUNK_ENCODER_H_

/// \file
/// Writes Blosc2 chunks (32-byte header, format version 5) that c-blosc2 / python-blosc2 read,
/// and Blosc1 chunks (16-byte header, format version 2) that c-blosc 1.x, numcodecs and zarr v2
/// read.
///
/// A ChunkEncoder holds codec contexts and scratch: not thread-safe, keep one per worker.
/// The block size and the stream splitting follow c-blosc2's rules for the given codec, level
/// and typesize, so chunks look like the ones python-blosc2 writes.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "codec/blosc/chunk_format.h"
#include "codec/blosc/stream_codecs.h"
#include "common/result.h"

namespace patchfeed::codec {

struct EncodeOptions {
  /// Element size used by the filters and the stream split. Above 255 the header records 1
  /// and the data is filtered as bytes, as c-blosc2 does.
  int32_t typesize = 1;
  Codec codec = Codec::kLZ4;
  int clevel = 5;  ///< 0 stores the data uncompressed (a memcpyed chunk); 1..9
  /// Filter pipeline, slot 0 applied first. Blosc1 chunks allow one shuffle or bitshuffle.
  std::array<Filter, kMaxFilters> filters{};
  std::array<uint8_t, kMaxFilters> filters_meta{};
  SplitMode splitmode = SplitMode::kAuto;
  int32_t blocksize = 0;  ///< 0: chosen like c-blosc2
  bool blosc1 = false;    ///< write the 16-byte Blosc1 header (format version 2)
  bool use_dict = false;  ///< Blosc2 with zstd, lz4 or lz4hc: train and embed a dictionary
};

/// The block size c-blosc2 would choose for `nbytes` bytes with these options.
int32_t ComputeBlocksize(const EncodeOptions& options, int32_t nbytes);

/// Whether full blocks of `blocksize` bytes are split into `typesize` streams.
bool SplitsBlocks(const EncodeOptions& options, int32_t blocksize);

class ChunkEncoder {
 public:
  /// The largest chunk Encode can produce for `nbytes` input bytes.
  static size_t MaxEncodedSize(size_t nbytes) { return nbytes + kBlosc2HeaderSize; }

  /// Encodes `src` into `dst` (at least MaxEncodedSize(src.size()) bytes) and returns the
  /// chunk's size. kInvalidArgument for options the format cannot express.
  Result<size_t> Encode(const EncodeOptions& options, std::span<const std::byte> src,
                        std::span<std::byte> dst);

 private:
  Status FilterBlock(const EncodeOptions& options, int32_t typesize,
                     std::span<const std::byte> chunk_src, size_t offset, size_t size,
                     const std::byte** filtered);
  Result<std::vector<std::byte>> MakeDictionary(const EncodeOptions& options, int32_t typesize,
                                                std::span<const std::byte> src, int32_t blocksize);

  StreamEncoder streams_;
  std::vector<std::byte> scratch_a_;
  std::vector<std::byte> scratch_b_;
  std::vector<std::byte> samples_;
};

/// Convenience for tools and tests: encodes `src` into a new vector.
Result<std::vector<std::byte>> CompressChunk(const EncodeOptions& options,
                                             std::span<const std::byte> src);

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_BLOSC_CHUNK_ENCODER_H_
