// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/blosc/chunk_format.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <string>

#include "codec/blosc/internal/chunk_flags.h"
#include "common/byte_order.h"
#include "common/check.h"
#include "common/str_cat.h"

namespace patchfeed::codec {
namespace {

using internal_codec::kB2FlagDict;
using internal_codec::kB2FlagInstrumented;
using internal_codec::kB2FlagLazy;
using internal_codec::kB2Flags2VarBlocks;
using internal_codec::kFlagBitShuffle;
using internal_codec::kFlagDelta;
using internal_codec::kFlagDontSplit;
using internal_codec::kFlagExtendedHeader;
using internal_codec::kFlagMemcpyed;
using internal_codec::kFlagShuffle;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Status CheckFilters(const ChunkHeader& h) {
  for (int slot = 0; slot < kMaxFilters; ++slot) {
    const uint8_t id = h.filters[static_cast<size_t>(slot)];
    switch (id) {
      case static_cast<uint8_t>(Filter::kNone):
      case static_cast<uint8_t>(Filter::kShuffle):
      case static_cast<uint8_t>(Filter::kBitShuffle):
      case static_cast<uint8_t>(Filter::kDelta):
      case static_cast<uint8_t>(Filter::kTruncPrec):
      case static_cast<uint8_t>(Filter::kByteDelta):
        break;
      default:
        return UnimplementedError(StrCat("filter slot ", slot, " holds ", FilterName(id),
                                         ", which patchfeed does not decode"));
    }
  }
  return Status::Ok();
}

// Which codec wrote the streams: the format bits, refined by byte 0x16 in Blosc2 headers
// (it tells LZ4HC from LZ4 and names user codecs).
Status ResolveCodec(const std::byte* p, ChunkHeader& h) {
  const uint8_t format = static_cast<uint8_t>(h.flags >> 5);
  const uint8_t udcodec = h.header_size == kBlosc2HeaderSize ? static_cast<uint8_t>(p[0x16]) : 0;
  switch (format) {
    case 0:
      h.format = CodecFormat::kBloscLZ;
      h.compcode = static_cast<uint8_t>(Codec::kBloscLZ);
      return Status::Ok();
    case 1:
      h.format = CodecFormat::kLZ4;
      h.compcode = udcodec == static_cast<uint8_t>(Codec::kLZ4HC)
                       ? static_cast<uint8_t>(Codec::kLZ4HC)
                       : static_cast<uint8_t>(Codec::kLZ4);
      return Status::Ok();
    case 2:
      return UnimplementedError("codec Snappy (format 2) is not supported");
    case 3:
      h.format = CodecFormat::kZlib;
      h.compcode = static_cast<uint8_t>(Codec::kZlib);
      return Status::Ok();
    case 4:
      h.format = CodecFormat::kZstd;
      h.compcode = static_cast<uint8_t>(Codec::kZstd);
      return Status::Ok();
    case 6:
      // A registered codec, named in byte 0x16. c-blosc2 looks the id up among registered
      // codecs only and writes built-in codecs with their own format code, so a built-in id
      // here is damage.
      if (udcodec <= static_cast<uint8_t>(Codec::kZstd)) {
        return DataLossError(StrCat("codec format 6 (a registered codec) names built-in codec ",
                                    udcodec, ", which c-blosc2 refuses"));
      }
      return UnimplementedError(
          StrCat("codec id ", udcodec, " (a registered or user codec) is not supported"));
    default:
      return UnimplementedError(
          StrCat("codec format ", format, " in the chunk flags is not supported"));
  }
}

std::string_view SpecialName(SpecialValue v) {
  switch (v) {
    case SpecialValue::kZeros:
      return "zeros";
    case SpecialValue::kNaN:
      return "NaN";
    case SpecialValue::kRepeat:
      return "repeated-value";
    case SpecialValue::kUninit:
      return "uninitialized";
    case SpecialValue::kNone:
      break;
  }
  return "special";
}

// The checks c-blosc2 makes (read_chunk_header), plus the size such chunks always have: the
// bare 32-byte header, or the header and the value. Special bits on a chunk with block data
// are damage; decoding them would turn the whole chunk into one value.
Status CheckSpecial(const ChunkHeader& h) {
  const std::string name(SpecialName(h.special));
  switch (h.special) {
    case SpecialValue::kZeros:
    case SpecialValue::kNaN:
    case SpecialValue::kUninit:
      if (h.cbytes != kBlosc2HeaderSize) {
        return DataLossError(StrCat(name, " special chunk of ", h.cbytes,
                                    " bytes: these chunks are the bare 32-byte header"));
      }
      if (h.special == SpecialValue::kNaN && h.typesize != 4 && h.typesize != 8) {
        return DataLossError(
            StrCat("NaN special chunk with typesize ", h.typesize, " (only 4 and 8 exist)"));
      }
      if (h.special != SpecialValue::kZeros && h.nbytes % h.typesize != 0) {
        return DataLossError(StrCat(name, " special chunk: nbytes ", h.nbytes,
                                    " is not a multiple of typesize ", h.typesize));
      }
      return Status::Ok();
    case SpecialValue::kRepeat: {
      const int32_t value_size = h.cbytes - kBlosc2HeaderSize;
      if (value_size <= 0) {
        return DataLossError("repeated-value special chunk carries no value (cbytes 32)");
      }
      if (value_size > h.nbytes || value_size > kMaxBlockSize) {
        return DataLossError(
            StrCat("repeated value of ", value_size, " bytes is larger than nbytes ", h.nbytes));
      }
      if (h.nbytes % value_size != 0) {
        return DataLossError(StrCat("repeated-value special chunk: nbytes ", h.nbytes,
                                    " is not a multiple of the value size ", value_size));
      }
      return Status::Ok();
    }
    case SpecialValue::kNone:
      break;
  }
  return DataLossError(StrCat("reserved special value ", static_cast<int>(h.special)));
}

// Which writer uses which format version (reference section 1.4): c-blosc 1.x writes 2 with
// the 16-byte header; c-blosc2 writes 3 to 6 with the 32-byte header, and 4 or 5 with the
// 16-byte one (its Blosc1-compatible form). Any other value is damage or a format from the
// future; decoding it by either library's rules would be a guess (c-blosc2 would apply its
// own, c-blosc 1.x refuses all but 2).
Status CheckVersion(uint8_t version, bool extended) {
  if (version == 0)
    return DataLossError("chunk format version 0 is invalid");
  if (extended) {
    if (version <= 2) {
      return DataLossError(StrCat("chunk format version ", version,
                                  " with the 32-byte Blosc2 header (c-blosc 1.x writes 16 bytes)"));
    }
    if (version > 6) {
      return UnimplementedError(
          StrCat("chunk format version ", version, " (patchfeed reads 2 to 6)"));
    }
  } else if (version != 2 && version != 4 && version != 5) {
    return UnimplementedError(
        StrCat("chunk format version ", version,
               " with a 16-byte header (c-blosc 1.x writes 2, c-blosc2 4 or 5)"));
  }
  return Status::Ok();
}

// What c-blosc 1.x refuses in a version-2 chunk (blosc_run_decompression_with_context); an
// empty chunk it accepts without looking further. Runs before the block size is clamped.
Status CheckBlosc1(const ChunkHeader& h) {
  if (h.nbytes == 0)
    return Status::Ok();
  if (h.flags & kFlagDelta)
    return DataLossError("flag 0x08 is reserved in c-blosc 1.x chunks");
  if (h.blocksize > h.nbytes) {
    return DataLossError(StrCat("blocksize ", h.blocksize, " is larger than nbytes ", h.nbytes,
                                " (c-blosc 1.x never writes that)"));
  }
  if (!h.memcpyed && h.versionlz != 1) {
    return UnimplementedError(
        StrCat("codec format version ", h.versionlz, " (c-blosc 1.x knows only 1)"));
  }
  return Status::Ok();
}

// Block starts, checked once per chunk so that the decoder can trust them. c-blosc2 stores
// blocks in the order its threads finish them, so starts need not increase; each block owns
// the bytes up to the next larger start, or cbytes. The blocks cover the stream data: the
// first starts right where it starts, no two share a start. (c-blosc2 checks only that a start
// lies in the chunk; no writer leaves a gap or shares a start, so either is damage.)
Status CheckBlockStarts(const std::byte* p, ChunkHeader& h) {
  const std::byte* starts = p + h.header_size;
  bool increasing = true;
  int32_t previous = -1, first = h.cbytes;
  for (int32_t b = 0; b < h.nblocks; ++b) {
    const int32_t s = LoadLE<int32_t>(starts + 4 * b);
    if (s < h.data_start || s >= h.cbytes) {
      return DataLossError(StrCat("block ", b, " starts at ", s, ", outside the stream data [",
                                  h.data_start, ", ", h.cbytes, ")"));
    }
    increasing &= s > previous;
    previous = s;
    first = std::min(first, s);
  }
  if (h.nblocks > 0 && first != h.data_start) {
    return DataLossError(StrCat("the first block starts at ", first,
                                ", not right after the block offsets",
                                (h.has_dict ? " and dictionary" : ""), " at ", h.data_start));
  }
  if (increasing)
    return Status::Ok();
  // Each block ends at the next larger start. The block numbers are sorted by (start, block)
  // in the upper half of block_ends, whose storage a reused header keeps (no allocation per
  // chunk), and the ends written into the lower half.
  const auto n = static_cast<size_t>(h.nblocks);
  std::vector<int32_t>& ends = h.block_ends;
  ends.resize(2 * n);
  int32_t* order = ends.data() + n;
  std::iota(order, order + n, 0);
  const auto start_of = [&](int32_t b) { return LoadLE<int32_t>(starts + 4 * b); };
  std::sort(order, order + n, [&](int32_t a, int32_t b) {
    const int32_t sa = start_of(a), sb = start_of(b);
    return sa != sb ? sa < sb : a < b;
  });
  for (size_t i = 0; i < n; ++i) {
    const int32_t block = order[i];
    const int32_t next = i + 1 < n ? start_of(order[i + 1]) : h.cbytes;
    if (next == start_of(block)) {
      return DataLossError(
          StrCat("blocks ", block, " and ", order[i + 1], " both start at ", next));
    }
    ends[static_cast<size_t>(block)] = next;
  }
  ends.resize(n);
  return Status::Ok();
}

}  // namespace

std::string_view CodecName(Codec codec) {
  switch (codec) {
    case Codec::kBloscLZ:
      return "blosclz";
    case Codec::kLZ4:
      return "lz4";
    case Codec::kLZ4HC:
      return "lz4hc";
    case Codec::kZlib:
      return "zlib";
    case Codec::kZstd:
      return "zstd";
  }
  return "unknown";
}

Result<Codec> ParseCodecName(std::string_view name) {
  const std::string n = Lower(name);
  for (Codec c : {Codec::kBloscLZ, Codec::kLZ4, Codec::kLZ4HC, Codec::kZlib, Codec::kZstd}) {
    if (n == CodecName(c))
      return c;
  }
  return InvalidArgumentError(
      StrCat("unknown codec '", name, "' (expected blosclz, lz4, lz4hc, zlib or zstd)"));
}

CodecFormat FormatOf(Codec codec) {
  switch (codec) {
    case Codec::kBloscLZ:
      return CodecFormat::kBloscLZ;
    case Codec::kLZ4:
    case Codec::kLZ4HC:
      return CodecFormat::kLZ4;
    case Codec::kZlib:
      return CodecFormat::kZlib;
    case Codec::kZstd:
      return CodecFormat::kZstd;
  }
  return CodecFormat::kBloscLZ;
}

std::string FilterName(uint8_t filter_id) {
  switch (filter_id) {
    case 0:
      return "none";
    case 1:
      return "shuffle";
    case 2:
      return "bitshuffle";
    case 3:
      return "delta";
    case 4:
      return "trunc_prec";
    case 32:
      return "filter 32 (NDCELL plugin)";
    case 33:
      return "filter 33 (NDMEAN plugin)";
    case 34:
      return "filter 34 (the old BYTEDELTA of c-blosc2 2.8-2.9, not reliably decodable)";
    case 35:
      return "bytedelta";
    case 36:
      return "filter 36 (INT_TRUNC plugin)";
    default:
      return StrCat("filter ", filter_id);
  }
}

Result<Filter> ParseFilterName(std::string_view name) {
  const std::string n = Lower(name);
  if (n == "none" || n == "nofilter" || n == "noshuffle")
    return Filter::kNone;
  if (n == "shuffle")
    return Filter::kShuffle;
  if (n == "bitshuffle")
    return Filter::kBitShuffle;
  if (n == "delta")
    return Filter::kDelta;
  if (n == "trunc_prec")
    return Filter::kTruncPrec;
  if (n == "bytedelta")
    return Filter::kByteDelta;
  return InvalidArgumentError(StrCat("unknown filter '", name,
                                     "' (expected none, shuffle, bitshuffle, delta, trunc_prec or "
                                     "bytedelta)"));
}

Result<SplitMode> ParseSplitModeName(std::string_view name) {
  const std::string n = Lower(name);
  if (n == "auto")
    return SplitMode::kAuto;
  if (n == "always")
    return SplitMode::kAlways;
  if (n == "never")
    return SplitMode::kNever;
  if (n == "forward_compat")
    return SplitMode::kForwardCompat;
  return InvalidArgumentError(
      StrCat("unknown split mode '", name, "' (expected auto, always, never or forward_compat)"));
}

Result<ChunkSizes> ReadChunkSizes(std::span<const std::byte> chunk) {
  if (chunk.size() < static_cast<size_t>(kBlosc1HeaderSize)) {
    return DataLossError(
        StrCat("chunk is ", chunk.size(), " bytes, shorter than the 16-byte Blosc header"));
  }
  ChunkSizes s;
  s.nbytes = LoadLE<int32_t>(chunk.data() + 4);
  s.blocksize = LoadLE<int32_t>(chunk.data() + 8);
  s.cbytes = LoadLE<int32_t>(chunk.data() + 12);
  if (s.nbytes < 0 || s.blocksize < 0 || s.cbytes < kBlosc1HeaderSize) {
    return DataLossError(StrCat("chunk header sizes are invalid (nbytes ", s.nbytes, ", blocksize ",
                                s.blocksize, ", cbytes ", s.cbytes, ")"));
  }
  return s;
}

std::array<std::byte, 8> SpecialNaNItem(int32_t typesize) {
  std::array<std::byte, 8> item{};
  if (typesize == 4) {
    StoreLE<uint32_t>(item.data(), 0x7FC00000u);
  } else {
    StoreLE<uint64_t>(item.data(), 0x7FF8000000000000ull);
  }
  return item;
}

int32_t ChunkHeader::block_nstreams(int32_t index) const {
  // Only the flag counts, also with a dictionary: c-blosc2 3.x splits dictionary chunks.
  if (dont_split || (leftover > 0 && index == nblocks - 1))
    return 1;
  if (is_blosc1_format()) {
    // c-blosc 1.x also demands these, which keeps pre-1.11 buffers (written before the
    // dont-split flag existed) readable.
    if (typesize > 16 || blocksize / typesize < 128)
      return 1;
  }
  return typesize;
}

Status ParseChunkHeaderFields(std::span<const std::byte> head, size_t chunk_size,
                              ChunkHeader* header) {
  PATCHFEED_ASSIGN_OR_RETURN(ChunkSizes sizes, ReadChunkSizes(head));
  const std::byte* p = head.data();
  // A fresh header that keeps the block-end table's storage.
  std::vector<int32_t> block_ends = std::move(header->block_ends);
  block_ends.clear();
  ChunkHeader& h = *header;
  h = ChunkHeader{};
  h.block_ends = std::move(block_ends);
  h.version = static_cast<uint8_t>(p[0]);
  h.versionlz = static_cast<uint8_t>(p[1]);
  h.flags = static_cast<uint8_t>(p[2]);
  h.typesize = static_cast<uint8_t>(p[3]);
  h.nbytes = sizes.nbytes;
  h.blocksize = sizes.blocksize;
  h.cbytes = sizes.cbytes;

  const bool extended = (h.flags & kFlagExtendedHeader) == kFlagExtendedHeader;
  PATCHFEED_RETURN_IF_ERROR(CheckVersion(h.version, extended));
  if (h.typesize == 0)
    return DataLossError("chunk typesize is 0");
  h.header_size = extended ? kBlosc2HeaderSize : kBlosc1HeaderSize;
  if (h.cbytes < h.header_size) {
    return DataLossError(
        StrCat("cbytes ", h.cbytes, " is smaller than the ", h.header_size, "-byte header"));
  }
  if (static_cast<size_t>(h.cbytes) > chunk_size) {
    return DataLossError(StrCat("chunk is truncated: the header says ", h.cbytes, " bytes, only ",
                                chunk_size, " are there"));
  }
  if (head.size() < static_cast<size_t>(h.header_size))
    return DataLossError("chunk is truncated in its header");
  if (h.nbytes > kMaxChunkNbytes) {
    return DataLossError(StrCat("nbytes ", h.nbytes, " exceeds the Blosc maximum"));
  }
  // c-blosc2 demands a block size in (0, max] of every chunk, empty and special ones included.
  if (h.blocksize <= 0) {
    return DataLossError(StrCat("blocksize ", h.blocksize, " is not positive"));
  }
  if (h.blocksize > kMaxBlockSize) {
    return DataLossError(StrCat("blocksize ", h.blocksize, " exceeds the Blosc maximum"));
  }

  h.memcpyed = (h.flags & kFlagMemcpyed) != 0;
  h.dont_split = (h.flags & kFlagDontSplit) != 0;
  if (h.is_blosc1_format())
    PATCHFEED_RETURN_IF_ERROR(CheckBlosc1(h));
  if (extended) {
    for (int i = 0; i < kMaxFilters; ++i) {
      h.filters[static_cast<size_t>(i)] = static_cast<uint8_t>(p[0x10 + i]);
      h.filters_meta[static_cast<size_t>(i)] = static_cast<uint8_t>(p[0x18 + i]);
    }
    if (h.version == 3) {
      // Version 3 (c-blosc2 2.0 alpha) had five meaningful slots; c-blosc2 ignores the sixth.
      h.filters[5] = 0;
      h.filters_meta[5] = 0;
    }
    h.compcode_meta = static_cast<uint8_t>(p[0x17]);
    h.blosc2_flags2 = static_cast<uint8_t>(p[0x1E]);
    h.blosc2_flags = static_cast<uint8_t>(p[0x1F]);
    if (h.blosc2_flags2 & kB2Flags2VarBlocks) {
      return UnimplementedError(
          "chunks with variable-length blocks (format version 6) are not "
          "supported");
    }
    if (h.blosc2_flags2 != 0) {
      return UnimplementedError(
          StrCat("unknown blosc2_flags2 bits 0x", static_cast<int>(h.blosc2_flags2)));
    }
    if (h.blosc2_flags & kB2FlagInstrumented) {
      return UnimplementedError("instrumented chunk (holds timing records, not data)");
    }
    if (h.blosc2_flags & kB2FlagLazy) {
      return DataLossError("lazy chunk flag set: lazy chunks exist only in c-blosc2's memory");
    }
    h.special = static_cast<SpecialValue>((h.blosc2_flags >> 4) & 0x7);
  } else {
    // Blosc1: filters implied by the flags, shuffle in slot 5 and delta in slot 4.
    if (h.flags & kFlagShuffle)
      h.filters[5] = static_cast<uint8_t>(Filter::kShuffle);
    if (h.flags & kFlagBitShuffle)
      h.filters[5] = static_cast<uint8_t>(Filter::kBitShuffle);
    if (h.flags & kFlagDelta)
      h.filters[4] = static_cast<uint8_t>(Filter::kDelta);
  }

  if (h.blocksize > h.nbytes && h.nbytes > 0)
    h.blocksize = h.nbytes;
  if (h.nbytes > 0) {
    h.nblocks =
        static_cast<int32_t>((static_cast<int64_t>(h.nbytes) + h.blocksize - 1) / h.blocksize);
    h.leftover = h.nbytes % h.blocksize;
  }
  // In c-blosc2's order (initialize_context_decompression): the memcpy flag's size rule holds
  // for special chunks too, and neither form has room for a dictionary.
  if (h.memcpyed && static_cast<int64_t>(h.nbytes) + h.header_size != h.cbytes) {
    return DataLossError(
        StrCat("memcpyed chunk: cbytes ", h.cbytes, " is not nbytes ", h.nbytes, " + header"));
  }
  if ((h.memcpyed || h.special != SpecialValue::kNone) && (h.blosc2_flags & kB2FlagDict)) {
    return DataLossError(
        StrCat(h.memcpyed ? "a memcpyed" : "a special", " chunk with the dictionary flag"));
  }
  if (h.special != SpecialValue::kNone)
    return CheckSpecial(h);
  if (h.memcpyed)
    return Status::Ok();

  PATCHFEED_RETURN_IF_ERROR(ResolveCodec(p, h));
  PATCHFEED_RETURN_IF_ERROR(CheckFilters(h));
  h.has_dict = extended && (h.blosc2_flags & kB2FlagDict) != 0;
  if (h.has_dict && h.format != CodecFormat::kZstd && h.format != CodecFormat::kLZ4) {
    return UnimplementedError(StrCat("a dictionary with codec format ", static_cast<int>(h.format),
                                     " (only zstd and lz4 have dictionaries)"));
  }
  return Status::Ok();
}

Status ParseChunkHeader(std::span<const std::byte> chunk, ChunkHeader* header) {
  PATCHFEED_RETURN_IF_ERROR(ParseChunkHeaderFields(chunk, chunk.size(), header));
  ChunkHeader& h = *header;
  if (!h.is_regular())
    return Status::Ok();
  const std::byte* p = chunk.data();
  const int64_t bstarts_end = h.block_offsets_end();
  if (bstarts_end > h.cbytes) {
    return DataLossError(StrCat("chunk is truncated: ", h.nblocks,
                                " block offsets do not fit in cbytes ", h.cbytes));
  }
  int64_t data_start = bstarts_end;
  if (h.has_dict) {
    if (bstarts_end + 4 > h.cbytes)
      return DataLossError("chunk is truncated in the dictionary");
    const int32_t dsize = LoadLE<int32_t>(p + bstarts_end);
    if (dsize <= 0 || dsize > kMaxDictSize || bstarts_end + 4 + dsize > h.cbytes) {
      return DataLossError(
          StrCat("dictionary size ", dsize, " is not in [1, 32768] or does not fit in the chunk"));
    }
    data_start += 4 + dsize;
  }
  h.data_start = static_cast<int32_t>(data_start);
  // A split block holds `typesize` streams of blocksize/typesize bytes; with a blocksize that
  // is not a multiple of typesize its last bytes would belong to no stream.
  const bool has_full_block = h.nblocks > (h.leftover > 0 ? 1 : 0);
  if (has_full_block && h.block_nstreams(0) > 1 && h.blocksize % h.typesize != 0) {
    return DataLossError(StrCat("split blocks of ", h.blocksize,
                                " bytes are not a multiple of typesize ", h.typesize));
  }
  return CheckBlockStarts(p, h);
}

Result<ChunkHeader> ParseChunkHeader(std::span<const std::byte> chunk) {
  ChunkHeader h;
  PATCHFEED_RETURN_IF_ERROR(ParseChunkHeader(chunk, &h));
  return h;
}

ByteRange BlockStreamRange(std::span<const std::byte> chunk, const ChunkHeader& h, int32_t index) {
  PATCHFEED_DCHECK(h.is_regular() && index >= 0 && index < h.nblocks);
  const std::byte* starts = chunk.data() + h.header_size;
  ByteRange r;
  r.begin = LoadLE<int32_t>(starts + 4 * index);
  if (!h.block_ends.empty()) {
    r.end = h.block_ends[static_cast<size_t>(index)];
  } else {
    r.end = index + 1 < h.nblocks ? LoadLE<int32_t>(starts + 4 * (index + 1)) : h.cbytes;
  }
  return r;
}

}  // namespace patchfeed::codec
