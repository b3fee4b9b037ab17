// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_BLOSC_CHUNK_FORMAT_H_
#define PATCHFEED_CODEC_BLOSC_CHUNK_FORMAT_H_

/// \file
/// The Blosc chunk header: identifiers of codecs and filters, and the parser that validates a
/// header of either form (16-byte Blosc1, 32-byte Blosc2) before any other code trusts it.
///
/// A chunk is untrusted bytes. `ParseChunkHeader` checks every size, count and identifier it
/// can check from the header and the chunk length, so the block decoder only has to bound the
/// per-block offsets and stream sizes. Stateless: safe to call concurrently.
///
/// Layout facts: ../shared/reference/blosc2-formats.md, section 1.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace patchfeed::codec {

inline constexpr int32_t kBlosc1HeaderSize = 16;
inline constexpr int32_t kBlosc2HeaderSize = 32;
inline constexpr int kMaxFilters = 6;
/// Largest block c-blosc2 accepts (BLOSC2_MAXBLOCKSIZE).
inline constexpr int32_t kMaxBlockSize = 536866816;
/// Largest chunk payload: an int32 `cbytes` must still hold it plus the header.
inline constexpr int32_t kMaxChunkNbytes = INT32_MAX - kBlosc2HeaderSize;
/// Largest dictionary c-blosc2 writes or accepts.
inline constexpr int32_t kMaxDictSize = 32 * 1024;

/// Codec identifiers as in the API and chunk byte 0x16 ("compcode").
enum class Codec : uint8_t {
  kBloscLZ = 0,
  kLZ4 = 1,
  kLZ4HC = 2,
  kZlib = 4,
  kZstd = 5,
};

/// Stream formats, the codec field in chunk flags bits 5-7. LZ4 and LZ4HC share one.
enum class CodecFormat : uint8_t {
  kBloscLZ = 0,
  kLZ4 = 1,
  kSnappy = 2,
  kZlib = 3,
  kZstd = 4,
  kUserDefined = 6,
};

/// Filter identifiers (chunk bytes 0x10-0x15).
enum class Filter : uint8_t {
  kNone = 0,
  kShuffle = 1,
  kBitShuffle = 2,
  kDelta = 3,
  kTruncPrec = 4,
  kByteDelta = 35,
};

/// Value of a whole special chunk (blosc2_flags bits 4-6).
enum class SpecialValue : uint8_t {
  kNone = 0,
  kZeros = 1,
  kNaN = 2,
  kRepeat = 3,
  kUninit = 4,
};

/// Stream-splitting policy when writing (the decoder reads the chunk's flag instead).
enum class SplitMode : uint8_t {
  kAlways = 1,
  kNever = 2,
  kAuto = 3,
  kForwardCompat = 4,
};

std::string_view CodecName(Codec codec);
/// Accepts "blosclz", "lz4", "lz4hc", "zlib", "zstd" (case-insensitive).
Result<Codec> ParseCodecName(std::string_view name);
CodecFormat FormatOf(Codec codec);
std::string FilterName(uint8_t filter_id);
/// Accepts "auto", "always", "never", "forward_compat".
Result<SplitMode> ParseSplitModeName(std::string_view name);
/// Accepts "none", "nofilter", "shuffle", "bitshuffle", "delta", "trunc_prec", "bytedelta".
Result<Filter> ParseFilterName(std::string_view name);

/// A byte range [begin, end) of a chunk.
struct ByteRange {
  int64_t begin = 0;
  int64_t end = 0;
};

/// Whether a filter pipeline (a chunk's or a frame's default) holds `filter`.
inline bool PipelineHasFilter(const std::array<uint8_t, kMaxFilters>& filters, Filter filter) {
  for (const uint8_t f : filters) {
    if (f == static_cast<uint8_t>(filter))
      return true;
  }
  return false;
}

/// The item a NaN special chunk repeats: a quiet NaN of `typesize` bytes, float32 for 4 and
/// float64 for 8 (ParseChunkHeader accepts no other size), little-endian.
std::array<std::byte, 8> SpecialNaNItem(int32_t typesize);

/// The sizes in the first 16 bytes, for callers that need no more (frames, planners).
struct ChunkSizes {
  int32_t nbytes = 0;     ///< uncompressed payload
  int32_t cbytes = 0;     ///< compressed size, header included
  int32_t blocksize = 0;  ///< as recorded (not clamped)
};

/// Reads nbytes/cbytes/blocksize from the first 16 bytes; checks only that they are there
/// and non-negative.
Result<ChunkSizes> ReadChunkSizes(std::span<const std::byte> chunk);

/// A parsed and validated chunk header plus the quantities derived from it.
struct ChunkHeader {
  uint8_t version = 0;
  uint8_t versionlz = 0;
  uint8_t flags = 0;
  int32_t typesize = 1;  ///< header byte, 1..255
  int32_t nbytes = 0;
  int32_t blocksize = 0;  ///< clamped to nbytes when larger
  int32_t cbytes = 0;
  int32_t header_size = kBlosc1HeaderSize;

  /// Filter pipeline, slot 0 applied first when compressing; from the flags for Blosc1.
  std::array<uint8_t, kMaxFilters> filters{};
  std::array<uint8_t, kMaxFilters> filters_meta{};
  CodecFormat format = CodecFormat::kBloscLZ;
  uint8_t compcode = 0;  ///< codec id, derived from the format for Blosc1 headers
  uint8_t compcode_meta = 0;
  uint8_t blosc2_flags = 0;
  uint8_t blosc2_flags2 = 0;

  SpecialValue special = SpecialValue::kNone;
  bool memcpyed = false;
  bool has_dict = false;
  bool dont_split = false;

  int32_t nblocks = 0;
  int32_t leftover = 0;  ///< bytes in the short last block, 0 if all blocks are full

  /// Regular chunks: where the streams begin, after the header, block offsets and dictionary.
  int32_t data_start = 0;
  /// Regular chunks whose block starts do not increase (c-blosc2 with several threads stores
  /// blocks in the order they finish): where each block's streams end. Empty when the starts
  /// increase, as serial writers store them; block b then ends where block b + 1 starts.
  std::vector<int32_t> block_ends;

  bool is_blosc1_format() const { return version <= 2; }
  bool is_regular() const { return special == SpecialValue::kNone && !memcpyed; }
  /// Whether `filter` is in the pipeline (DELTA, for one, ties every block to block 0).
  bool has_filter(Filter filter) const { return PipelineHasFilter(filters, filter); }

  /// Regular chunks: where the table of block starts ends (it follows the header).
  int64_t block_offsets_end() const { return int64_t{header_size} + int64_t{4} * nblocks; }
  /// Regular chunks: the bytes ParseChunkHeader reads past the header: the block starts and,
  /// with a dictionary, the dictionary's size word. A reader fetching parts of a chunk needs
  /// them before it can parse the header.
  int64_t block_table_end() const { return block_offsets_end() + (has_dict ? 4 : 0); }
  /// Regular chunks with a dictionary: where its bytes lie (after its size word, up to
  /// data_start).
  ByteRange dict_range() const { return {block_table_end(), data_start}; }

  /// Uncompressed size of block `index` (< nblocks).
  int32_t block_nbytes(int32_t index) const {
    return (leftover > 0 && index == nblocks - 1) ? leftover : blocksize;
  }
  /// Number of streams block `index` is stored in: 1 or typesize (section 1.10).
  int32_t block_nstreams(int32_t index) const;
};

/// Parses and validates the header of `chunk` (the whole chunk, or at least its first
/// `cbytes` bytes), making every check c-blosc2 makes on a header (and c-blosc 1.x on its
/// version-2 chunks). For regular chunks it also checks the block starts: each inside the
/// stream data, none shared, the first right after the block offsets and dictionary. It reads
/// nothing beyond the header, block offsets and dictionary. Errors: kDataLoss when the bytes
/// cannot be a valid chunk (truncated, inconsistent sizes, reserved values), kUnimplemented for
/// valid features patchfeed does not decode (naming them: Snappy, user codecs, plugin filters,
/// variable-length blocks, ...).
Result<ChunkHeader> ParseChunkHeader(std::span<const std::byte> chunk);

/// ParseChunkHeader into `*header`, reusing its storage (the block-end table of chunks whose
/// blocks are stored out of order): a reader that parses chunk after chunk into one header
/// allocates nothing once that table has grown. `*header` is unspecified after an error.
Status ParseChunkHeader(std::span<const std::byte> chunk, ChunkHeader* header);

/// The part of ParseChunkHeader that reads nothing past the header (the first 16 or 32 bytes,
/// in `head`), for a reader that fetches a chunk in parts: `chunk_size` is how many bytes the
/// whole chunk may have (its cbytes must fit). Every check that needs only the header is made;
/// a regular chunk then still needs ParseChunkHeader over the bytes up to block_table_end().
Status ParseChunkHeaderFields(std::span<const std::byte> head, size_t chunk_size,
                              ChunkHeader* header);

/// Where block `index`'s streams lie in a regular `chunk` whose header `h` came from
/// ParseChunkHeader(chunk): from the block's start to the next larger block start, or to
/// cbytes (the extent c-blosc2's own partial reads use). The decoder reads no byte outside it,
/// so a reader that fetched only these bytes of the chunk decodes the block alike.
ByteRange BlockStreamRange(std::span<const std::byte> chunk, const ChunkHeader& h, int32_t index);

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_BLOSC_CHUNK_FORMAT_H_
