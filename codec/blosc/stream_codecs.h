// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_BLOSC_STREAM_CODECS_H_
#define PATCHFEED_CODEC_BLOSC_STREAM_CODECS_H_

/// \file
/// One compressed stream in, bytes out (and back): the thin layer over BloscLZ (ours), LZ4,
/// LZ4HC, zlib (libdeflate when available) and zstd.
///
/// StreamDecoder and StreamEncoder hold library contexts (a zstd DCtx/CCtx, a libdeflate
/// (de)compressor, a cached dictionary), so they are not thread-safe: keep one per worker and
/// reuse it; creating contexts per call is the cost they exist to avoid.

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "codec/blosc/chunk_format.h"
#include "common/status.h"

namespace patchfeed::codec {

class StreamDecoder {
 public:
  StreamDecoder();
  ~StreamDecoder();
  StreamDecoder(StreamDecoder&&) noexcept;
  StreamDecoder& operator=(StreamDecoder&&) noexcept;

  /// Decodes the stream `src` into exactly `dst.size()` bytes. `dict` is the chunk's dictionary
  /// (empty if none). Returns kDataLoss naming the codec when the stream is corrupt or does
  /// not decode to exactly `dst.size()` bytes; never writes outside `dst`.
  Status Decode(CodecFormat format, std::span<const std::byte> src, std::span<std::byte> dst,
                std::span<const std::byte> dict);

  /// Decodes one gzip member (RFC 1952, as zarr's and numcodecs' gzip codec write it) into
  /// exactly `dst.size()` bytes; kDataLoss otherwise.
  Status DecodeGzip(std::span<const std::byte> src, std::span<std::byte> dst);

 private:
  struct Contexts;
  std::unique_ptr<Contexts> ctx_;
};

class StreamEncoder {
 public:
  StreamEncoder();
  ~StreamEncoder();
  StreamEncoder(StreamEncoder&&) noexcept;
  StreamEncoder& operator=(StreamEncoder&&) noexcept;

  /// Selects the dictionary for the following Encode calls (empty: none). For zstd it must be
  /// a zstd dictionary (see TrainZstdDictionary); for LZ4/LZ4HC any bytes (a prefix).
  Status SetDictionary(Codec codec, int clevel, std::span<const std::byte> dict);

  /// Compresses `src` into `dst` at Blosc `clevel` (1..9). Returns the compressed size, or 0
  /// when the result would not fit in `dst` (the caller then stores the stream raw).
  size_t Encode(Codec codec, int clevel, std::span<const std::byte> src, std::span<std::byte> dst);

 private:
  struct Contexts;
  std::unique_ptr<Contexts> ctx_;
};

/// Trains a zstd dictionary of at most `max_size` bytes from `samples` (the concatenated
/// samples) cut at `sample_sizes`. Returns an empty vector when zstd cannot train one (too
/// little or too uniform data); the caller then writes the chunk without a dictionary.
std::vector<std::byte> TrainZstdDictionary(std::span<const std::byte> samples,
                                           std::span<const size_t> sample_sizes, size_t max_size);

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_BLOSC_STREAM_CODECS_H_
