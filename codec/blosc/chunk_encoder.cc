// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/blosc/chunk_encoder.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "codec/blosc/bitshuffle.h"
#include "codec/blosc/filters.h"
#include "codec/blosc/internal/chunk_flags.h"
#include "codec/blosc/shuffle.h"
#include "common/byte_order.h"
#include "common/str_cat.h"

namespace patchfeed::codec {
namespace {

constexpr int32_t kL1 = 32 * 1024;         // c-blosc2's block-size unit
constexpr int32_t kBlosc2MinBuffer = 32;   // smaller chunks are stored raw (c-blosc2 >= 2.4)
constexpr int32_t kBlosc1MinBuffer = 128;  // the same threshold in c-blosc 1.x
constexpr int32_t kMaxSplits = 16;         // wider types are never split into streams
using internal_codec::kB2FlagDict;
using internal_codec::kB2SpecialZeros;
using internal_codec::kFlagDontSplit;
using internal_codec::kFlagMemcpyed;

int32_t HeaderTypesize(const EncodeOptions& o) { return o.typesize > 255 ? 1 : o.typesize; }

bool HasFilter(const EncodeOptions& o, Filter f) {
  return std::find(o.filters.begin(), o.filters.end(), f) != o.filters.end();
}

// Codecs meant for high ratios get twice the block (c-blosc2's is_HCR).
bool IsHighRatioCodec(Codec c) {
  return c == Codec::kLZ4HC || c == Codec::kZlib || c == Codec::kZstd;
}

bool AllBytesEqual(const std::byte* p, size_t n) {
  const std::byte first = p[0];
  // Compare in 8-byte words: this runs over every stream before compressing it.
  uint64_t pattern;
  std::memset(&pattern, static_cast<int>(first), sizeof(pattern));
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    if (LoadLE<uint64_t>(p + i) != pattern)
      return false;
  }
  for (; i < n; ++i) {
    if (p[i] != first)
      return false;
  }
  return true;
}

Status ValidateOptions(const EncodeOptions& o, size_t nbytes) {
  if (o.typesize < 1)
    return InvalidArgumentError("typesize must be at least 1");
  if (o.clevel < 0 || o.clevel > 9) {
    return InvalidArgumentError(StrCat("clevel ", o.clevel, " is outside 0..9"));
  }
  if (o.blocksize < 0)
    return InvalidArgumentError("blocksize must not be negative");
  if (o.blocksize > kMaxBlockSize)
    return InvalidArgumentError("blocksize exceeds the maximum");
  if (nbytes > static_cast<size_t>(kMaxChunkNbytes)) {
    return InvalidArgumentError("a chunk holds at most 2 GiB - 33 bytes");
  }
  if (o.blosc1) {
    int filters = 0;
    for (Filter f : o.filters) {
      if (f == Filter::kNone)
        continue;
      if (f != Filter::kShuffle && f != Filter::kBitShuffle) {
        return InvalidArgumentError(StrCat("Blosc1 chunks support only shuffle or bitshuffle, not ",
                                           FilterName(static_cast<uint8_t>(f))));
      }
      ++filters;
    }
    if (filters > 1)
      return InvalidArgumentError("Blosc1 chunks hold one filter at most");
    if (o.use_dict)
      return InvalidArgumentError("Blosc1 chunks have no dictionaries");
  }
  if (o.use_dict && o.codec != Codec::kZstd && o.codec != Codec::kLZ4 && o.codec != Codec::kLZ4HC) {
    return InvalidArgumentError("dictionaries need zstd, lz4 or lz4hc");
  }
  if (HasFilter(o, Filter::kTruncPrec) && o.typesize != 4 && o.typesize != 8) {
    return InvalidArgumentError("trunc_prec needs typesize 4 or 8");
  }
  // DELTA refers to block 0 as the encoder saw it but the decoder rebuilds it after every
  // filter is undone; a lossy filter in front would make the two differ.
  const auto trunc = std::find(o.filters.begin(), o.filters.end(), Filter::kTruncPrec);
  if (trunc != o.filters.end() &&
      std::find(trunc, o.filters.end(), Filter::kDelta) != o.filters.end()) {
    return InvalidArgumentError("put delta before trunc_prec in the filter pipeline");
  }
  return Status::Ok();
}

void WriteHeader(const EncodeOptions& o, uint8_t flags, int32_t nbytes, int32_t blocksize,
                 int32_t cbytes, uint8_t blosc2_flags, std::byte* dst) {
  const int32_t header_size = o.blosc1 ? kBlosc1HeaderSize : kBlosc2HeaderSize;
  std::memset(dst, 0, static_cast<size_t>(header_size));
  dst[0] = std::byte{static_cast<uint8_t>(o.blosc1 ? 2 : 5)};
  dst[1] = std::byte{1};  // versionlz: every built-in codec's stream format is version 1
  dst[2] = std::byte{flags};
  dst[3] = std::byte{static_cast<uint8_t>(HeaderTypesize(o))};
  StoreLE<int32_t>(dst + 4, nbytes);
  StoreLE<int32_t>(dst + 8, blocksize);
  StoreLE<int32_t>(dst + 12, cbytes);
  if (o.blosc1)
    return;
  for (int i = 0; i < kMaxFilters; ++i) {
    const auto slot = static_cast<size_t>(i);
    uint8_t meta = o.filters_meta[slot];
    // c-blosc2 reads a BYTEDELTA stream count of 0 literally; record the typesize meant.
    if (o.filters[slot] == Filter::kByteDelta && meta == 0) {
      meta = static_cast<uint8_t>(HeaderTypesize(o));
    }
    dst[0x10 + i] = std::byte{static_cast<uint8_t>(o.filters[slot])};
    dst[0x18 + i] = std::byte{meta};
  }
  dst[0x16] = std::byte{static_cast<uint8_t>(o.codec)};
  dst[0x1F] = std::byte{blosc2_flags};
}

uint8_t BaseFlags(const EncodeOptions& o, bool split) {
  uint8_t flags = static_cast<uint8_t>(static_cast<uint8_t>(FormatOf(o.codec)) << 5);
  if (!split)
    flags |= kFlagDontSplit;
  if (o.blosc1) {
    if (HasFilter(o, Filter::kShuffle))
      flags |= 0x01;
    if (HasFilter(o, Filter::kBitShuffle))
      flags |= 0x04;
  } else {
    flags |= 0x05;  // the extended-header marker; filters live in bytes 0x10-0x15
  }
  return flags;
}

}  // namespace

bool SplitsBlocks(const EncodeOptions& o, int32_t blocksize) {
  const int32_t t = HeaderTypesize(o);
  if (blocksize < t || blocksize % t != 0)
    return false;
  if (o.blosc1) {
    // c-blosc 1.x decoders split only under these conditions, whatever the flag says.
    const bool splittable = t <= kMaxSplits && blocksize / t >= kBlosc1MinBuffer;
    switch (o.splitmode) {
      case SplitMode::kAlways:
        return splittable;
      case SplitMode::kNever:
        return false;
      case SplitMode::kAuto:
      case SplitMode::kForwardCompat:
        return splittable && o.codec != Codec::kZstd;  // c-blosc 1.x FORWARD_COMPAT
    }
  }
  switch (o.splitmode) {
    case SplitMode::kAlways:
      return true;
    case SplitMode::kNever:
      return false;
    case SplitMode::kAuto:
    case SplitMode::kForwardCompat:
      break;
  }
  const bool fast_codec = o.codec == Codec::kBloscLZ || o.codec == Codec::kLZ4 ||
                          (o.codec == Codec::kZstd && o.clevel <= 5);
  return fast_codec && HasFilter(o, Filter::kShuffle) && t <= kMaxSplits &&
         blocksize / t >= kBlosc2MinBuffer;
}

int32_t ComputeBlocksize(const EncodeOptions& o, int32_t nbytes) {
  const int32_t typesize = o.typesize;
  if (nbytes < typesize)
    return std::max(nbytes, 1);
  int32_t bs = nbytes;
  if (o.blocksize > 0) {
    bs = o.blocksize;
  } else {
    if (nbytes >= kL1) {
      bs = kL1;
      if (IsHighRatioCodec(o.codec))
        bs *= 2;
      switch (o.clevel) {
        case 0:
          bs /= 4;
          break;
        case 1:
          bs /= 2;
          break;
        case 2:
          break;
        case 3:
          bs *= 2;
          break;
        case 4:
        case 5:
          bs *= 4;
          break;
        case 6:
        case 7:
        case 8:
          bs *= 8;
          break;
        default:
          bs *= IsHighRatioCodec(o.codec) ? 16 : 8;
          break;
      }
    }
    if (o.clevel > 0 && SplitsBlocks(o, bs / typesize * typesize)) {
      // Split blocks are sized per stream so each stream stays cache-sized.
      // c-blosc2 3.3 (python-blosc2 4.x) per level; its older stune.c gave clevel 7 256 KiB.
      int64_t per_stream = o.clevel <= 3   ? 32 * 1024
                           : o.clevel <= 6 ? 64 * 1024
                           : o.clevel == 7 ? 128 * 1024
                           : o.clevel == 8 ? 256 * 1024
                                           : 512 * 1024;
      int64_t split_bs = per_stream * typesize;
      split_bs = std::clamp<int64_t>(split_bs, 32 * 1024, 4 * 1024 * 1024);
      bs = static_cast<int32_t>(split_bs);
    }
  }
  bs = std::min(bs, nbytes);
  if (bs > typesize)
    bs = bs / typesize * typesize;
  return bs;
}

Status ChunkEncoder::FilterBlock(const EncodeOptions& o, int32_t typesize,
                                 std::span<const std::byte> chunk_src, size_t offset, size_t size,
                                 const std::byte** filtered) {
  const std::byte* cur = chunk_src.data() + offset;
  auto next_buffer = [&]() {
    std::vector<std::byte>& buf = cur == scratch_a_.data() ? scratch_b_ : scratch_a_;
    if (buf.size() < size)
      buf.resize(size);
    return buf.data();
  };
  const std::byte* delta_ref = chunk_src.data();
  for (int slot = 0; slot < kMaxFilters; ++slot) {
    const Filter f = o.filters[static_cast<size_t>(slot)];
    const uint8_t meta = o.filters_meta[static_cast<size_t>(slot)];
    std::byte* next;
    switch (f) {
      case Filter::kNone:
        continue;
      case Filter::kShuffle: {
        const int32_t group = (o.blosc1 || meta == 0) ? typesize : meta;
        if (group <= 1)
          continue;
        next = next_buffer();
        Shuffle(group, cur, next, size);
        break;
      }
      case Filter::kBitShuffle: {
        const size_t elements = size / static_cast<size_t>(typesize);
        // c-blosc 1.x leaves blocks whose element count is not a multiple of 8 untouched.
        if (o.blosc1 && (elements == 0 || elements % 8 != 0))
          continue;
        next = next_buffer();
        BitShuffle(typesize, cur, next, size);
        break;
      }
      case Filter::kDelta:
        next = next_buffer();
        DeltaEncode(typesize, offset == 0 ? nullptr : delta_ref, cur, next, size);
        break;
      case Filter::kTruncPrec:
        next = next_buffer();
        PATCHFEED_RETURN_IF_ERROR(
            TruncatePrecision(typesize, static_cast<int8_t>(meta), cur, next, size));
        break;
      case Filter::kByteDelta:
        next = next_buffer();
        ByteDeltaEncode(meta != 0 ? meta : typesize, cur, next, size);
        break;
      default:
        return InvalidArgumentError(StrCat("cannot encode ", FilterName(static_cast<uint8_t>(f))));
    }
    cur = next;
  }
  *filtered = cur;
  return Status::Ok();
}

Result<std::vector<std::byte>> ChunkEncoder::MakeDictionary(const EncodeOptions& o,
                                                            int32_t typesize,
                                                            std::span<const std::byte> src,
                                                            int32_t blocksize) {
  // Dictionaries are learnt from what the codec will see: the filtered blocks.
  const size_t nbytes = src.size();
  samples_.resize(nbytes);
  for (size_t off = 0; off < nbytes; off += static_cast<size_t>(blocksize)) {
    const size_t size = std::min(static_cast<size_t>(blocksize), nbytes - off);
    const std::byte* filtered = nullptr;
    PATCHFEED_RETURN_IF_ERROR(FilterBlock(o, typesize, src, off, size, &filtered));
    std::memcpy(samples_.data() + off, filtered, size);
  }
  // As c-blosc2: at most 5% of the chunk, trained with ZDICT on eight equal samples of the
  // filtered chunk. LZ4 uses the same bytes as a prefix dictionary.
  const size_t max_dict = std::min<size_t>(kMaxDictSize, nbytes / 20);
  if (max_dict < 256)
    return std::vector<std::byte>{};
  constexpr size_t kSamples = 8;  // the fewest zstd's trainer accepts
  const size_t sample = nbytes / kSamples;
  const std::vector<size_t> sizes(kSamples, sample);
  return TrainZstdDictionary(std::span(samples_).first(kSamples * sample), sizes, max_dict);
}

Result<size_t> ChunkEncoder::Encode(const EncodeOptions& options, std::span<const std::byte> src,
                                    std::span<std::byte> dst) {
  PATCHFEED_RETURN_IF_ERROR(ValidateOptions(options, src.size()));
  EncodeOptions o = options;
  // c-blosc2 drops BYTEDELTA over single-byte streams; doing the same keeps chunks identical
  // in layout (and smaller: on 1-byte items it rarely helps).
  for (size_t i = 0; i < o.filters.size(); ++i) {
    const int32_t streams = o.filters_meta[i] != 0 ? o.filters_meta[i] : HeaderTypesize(o);
    if (o.filters[i] == Filter::kByteDelta && streams <= 1) {
      o.filters[i] = Filter::kNone;
      o.filters_meta[i] = 0;
    }
  }
  if (dst.size() < MaxEncodedSize(src.size())) {
    return InvalidArgumentError("output buffer is smaller than MaxEncodedSize");
  }
  const auto nbytes = static_cast<int32_t>(src.size());
  const int32_t typesize = HeaderTypesize(o);
  const int32_t header_size = o.blosc1 ? kBlosc1HeaderSize : kBlosc2HeaderSize;
  const int32_t blocksize = ComputeBlocksize(o, nbytes);
  const bool split = SplitsBlocks(o, blocksize);
  const uint8_t flags = BaseFlags(o, split);

  auto store_raw = [&]() -> Result<size_t> {
    const int32_t cbytes = nbytes + header_size;
    WriteHeader(o, static_cast<uint8_t>(flags | kFlagMemcpyed), nbytes, blocksize, cbytes, 0,
                dst.data());
    if (nbytes > 0)
      std::memcpy(dst.data() + header_size, src.data(), src.size());
    return static_cast<size_t>(cbytes);
  };
  const int32_t min_buffer = o.blosc1 ? kBlosc1MinBuffer : kBlosc2MinBuffer;
  if (o.clevel == 0 || nbytes < min_buffer)
    return store_raw();

  const int32_t nblocks = (nbytes + blocksize - 1) / blocksize;
  const int32_t leftover = nbytes % blocksize;
  const int64_t limit =
      std::min<int64_t>(static_cast<int64_t>(dst.size()), int64_t{nbytes} + header_size);
  int64_t pos = header_size + int64_t{4} * nblocks;
  uint8_t blosc2_flags = 0;

  std::vector<std::byte> dict;
  if (o.use_dict) {
    PATCHFEED_ASSIGN_OR_RETURN(dict, MakeDictionary(o, typesize, src, blocksize));
    if (!dict.empty() && pos + 4 + static_cast<int64_t>(dict.size()) < limit) {
      StoreLE<int32_t>(dst.data() + pos, static_cast<int32_t>(dict.size()));
      std::memcpy(dst.data() + pos + 4, dict.data(), dict.size());
      pos += 4 + static_cast<int64_t>(dict.size());
      blosc2_flags |= kB2FlagDict;
    } else {
      dict.clear();
    }
  }
  PATCHFEED_RETURN_IF_ERROR(streams_.SetDictionary(o.codec, o.clevel, dict));

  bool only_zero_runs = true;
  for (int32_t b = 0; b < nblocks; ++b) {
    const bool is_leftover = leftover > 0 && b == nblocks - 1;
    const size_t size = static_cast<size_t>(is_leftover ? leftover : blocksize);
    const size_t offset = static_cast<size_t>(b) * static_cast<size_t>(blocksize);
    StoreLE<int32_t>(dst.data() + header_size + 4 * b, static_cast<int32_t>(pos));
    const std::byte* filtered = nullptr;
    PATCHFEED_RETURN_IF_ERROR(FilterBlock(o, typesize, src, offset, size, &filtered));
    const int32_t nstreams = (split && !is_leftover) ? typesize : 1;
    const size_t ne = size / static_cast<size_t>(nstreams);
    for (int32_t s = 0; s < nstreams; ++s) {
      const std::byte* stream = filtered + static_cast<size_t>(s) * ne;
      if (pos + 5 > limit)
        return store_raw();
      // Constant streams cost a size word (and a token) in Blosc2; c-blosc 1.x cannot read it.
      if (!o.blosc1 && AllBytesEqual(stream, ne)) {
        const auto value = static_cast<uint8_t>(stream[0]);
        StoreLE<int32_t>(dst.data() + pos, -static_cast<int32_t>(value));
        pos += 4;
        if (value != 0) {
          dst[static_cast<size_t>(pos)] = std::byte{1};  // token: a run of one byte value
          pos += 1;
          only_zero_runs = false;
        }
        continue;
      }
      only_zero_runs = false;
      const int64_t room = std::min<int64_t>(static_cast<int64_t>(ne) - 1, limit - pos - 4);
      size_t csize = 0;
      if (room > 0) {
        csize =
            streams_.Encode(o.codec, o.clevel, std::span(stream, ne),
                            dst.subspan(static_cast<size_t>(pos + 4), static_cast<size_t>(room)));
      }
      if (csize == 0 || csize >= ne) {  // incompressible: store the stream raw
        if (pos + 4 + static_cast<int64_t>(ne) > limit)
          return store_raw();
        std::memcpy(dst.data() + pos + 4, stream, ne);
        csize = ne;
      }
      StoreLE<int32_t>(dst.data() + pos, static_cast<int32_t>(csize));
      pos += 4 + static_cast<int64_t>(csize);
    }
  }
  if (!o.blosc1 && only_zero_runs && nblocks > 0 && dict.empty()) {
    // All zeros: c-blosc2 writes the header alone, marked as a special zeros chunk.
    WriteHeader(o, flags, nbytes, blocksize, kBlosc2HeaderSize, kB2SpecialZeros, dst.data());
    return static_cast<size_t>(kBlosc2HeaderSize);
  }
  WriteHeader(o, flags, nbytes, blocksize, static_cast<int32_t>(pos), blosc2_flags, dst.data());
  return static_cast<size_t>(pos);
}

Result<std::vector<std::byte>> CompressChunk(const EncodeOptions& options,
                                             std::span<const std::byte> src) {
  std::vector<std::byte> out(ChunkEncoder::MaxEncodedSize(src.size()));
  ChunkEncoder encoder;
  PATCHFEED_ASSIGN_OR_RETURN(const size_t n, encoder.Encode(options, src, out));
  out.resize(n);
  return out;
}

}  // namespace patchfeed::codec
