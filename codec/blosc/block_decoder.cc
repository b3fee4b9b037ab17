// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/blosc/block_decoder.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "codec/blosc/bitshuffle.h"
#include "codec/blosc/filters.h"
#include "codec/blosc/shuffle.h"
#include "common/byte_order.h"
#include "common/str_cat.h"

namespace patchfeed::codec {
namespace {

std::string BlockContext(int32_t index) { return StrCat("block ", index); }

// One step of the backward filter pipeline. Shuffles move data between buffers; the rest work
// in place.
struct FilterStep {
  Filter filter;
  int32_t param;  // shuffle group size, bytedelta stream count
};

// The filters to undo for a block of `size` bytes, last applied first. No-ops are dropped here
// so the hot loop never runs them: a byte shuffle of 1-byte groups, TRUNC_PREC (lossy, nothing
// to undo), and a Blosc1 bitshuffle of a block whose element count is not a multiple of 8
// (c-blosc 1.x left those blocks untransformed).
int PlanBackward(const ChunkHeader& h, size_t size, FilterStep (&steps)[kMaxFilters],
                 int* out_of_place) {
  int n = 0;
  *out_of_place = 0;
  for (int slot = kMaxFilters - 1; slot >= 0; --slot) {
    const auto id = static_cast<Filter>(h.filters[static_cast<size_t>(slot)]);
    const int32_t meta = h.filters_meta[static_cast<size_t>(slot)];
    switch (id) {
      case Filter::kShuffle: {
        const int32_t group = (meta != 0 && !h.is_blosc1_format()) ? meta : h.typesize;
        if (group <= 1)
          break;
        steps[n++] = {id, group};
        ++*out_of_place;
        break;
      }
      case Filter::kBitShuffle: {
        const size_t elements = size / static_cast<size_t>(h.typesize);
        if (h.is_blosc1_format() && (elements == 0 || elements % 8 != 0))
          break;
        steps[n++] = {id, h.typesize};
        ++*out_of_place;
        break;
      }
      case Filter::kDelta:
        steps[n++] = {id, h.typesize};
        break;
      case Filter::kByteDelta:
        steps[n++] = {id, meta != 0 ? meta : h.typesize};
        break;
      case Filter::kNone:
      case Filter::kTruncPrec:
        break;
    }
  }
  return n;
}

// Writes `size` bytes of `value` repeated from the chunk's first byte, starting `offset` bytes
// into the chunk: a block need not begin on a value boundary (its size need not be a multiple
// of the value's). One value, then doubling copies of the whole periods already written.
void FillRepeating(std::span<const std::byte> value, size_t offset, std::byte* dst, size_t size) {
  const size_t vsize = value.size();
  const size_t phase = offset % vsize;
  size_t done = std::min(vsize - phase, size);
  std::memcpy(dst, value.data() + phase, done);
  if (done == size)
    return;
  const size_t period_start = done;
  const size_t first = std::min(vsize, size - done);
  std::memcpy(dst + done, value.data(), first);
  done += first;
  while (done < size) {
    const size_t n = std::min(done - period_start, size - done);
    std::memcpy(dst + done, dst + period_start, n);
    done += n;
  }
}

void FillSpecial(const ChunkHeader& h, std::span<const std::byte> chunk, size_t offset,
                 std::byte* dst, size_t size) {
  switch (h.special) {
    case SpecialValue::kNaN: {
      const std::array<std::byte, 8> nan = SpecialNaNItem(h.typesize);
      FillRepeating(std::span(nan).first(static_cast<size_t>(h.typesize)), offset, dst, size);
      return;
    }
    case SpecialValue::kRepeat:
      FillRepeating(
          chunk.subspan(kBlosc2HeaderSize, static_cast<size_t>(h.cbytes - kBlosc2HeaderSize)),
          offset, dst, size);
      return;
    case SpecialValue::kZeros:
    case SpecialValue::kUninit:  // undefined in c-blosc2; zeros keep reads deterministic
    case SpecialValue::kNone:
      std::memset(dst, 0, size);
      return;
  }
}

}  // namespace

std::byte* BlockDecoder::Scratch(ScratchBuffer& buf, size_t size) {
  if (buf.size < size) {
    buf.data = std::make_unique_for_overwrite<std::byte[]>(size);
    buf.size = size;
  }
  return buf.data.get();
}

Status BlockDecoder::DecodeStreams(std::span<const std::byte> chunk, const ChunkHeader& h,
                                   int32_t index, std::byte* dst, size_t size) {
  std::span<const std::byte> dict;
  if (h.has_dict) {  // bounded by ParseChunkHeader
    const ByteRange range = h.dict_range();
    dict = chunk.subspan(static_cast<size_t>(range.begin),
                         static_cast<size_t>(range.end - range.begin));
  }
  // Only the block's own bytes: a reader that fetched just this block has no others, so a
  // decoder reading past them would give a different result from the same file.
  const ByteRange range = BlockStreamRange(chunk, h, index);
  const std::byte* base = chunk.data() + range.begin;
  const int64_t end = range.end - range.begin;
  int64_t pos = 0;
  const int32_t nstreams = h.block_nstreams(index);
  const size_t ne = size / static_cast<size_t>(nstreams);
  if (ne == 0)
    return DataLossError("block is smaller than its stream count");
  for (int32_t s = 0; s < nstreams; ++s) {
    std::byte* out = dst + static_cast<size_t>(s) * ne;
    if (pos + 4 > end) {
      return DataLossError(
          StrCat("stream ", s, ": size word runs past the block's ", end, " bytes"));
    }
    const int32_t csize = LoadLE<int32_t>(base + pos);
    pos += 4;
    if (csize <= 0 && h.is_blosc1_format()) [[unlikely]] {
      return DataLossError(
          StrCat("stream ", s, ": size ", csize, " announces a run, but c-blosc 1.x has no runs"));
    }
    if (csize == 0) {  // a run of zeros
      std::memset(out, 0, ne);
      continue;
    }
    if (csize < 0) {  // a run of one non-zero byte, announced by a token
      if (pos + 1 > end)
        return DataLossError(StrCat("stream ", s, ": no token"));
      const auto token = static_cast<uint8_t>(base[pos]);
      pos += 1;
      if ((token & 0x1) == 0 || csize < -255) {
        return DataLossError(
            StrCat("stream ", s, ": invalid run token ", token, " with size ", csize));
      }
      std::memset(out, -csize, ne);
      continue;
    }
    if (static_cast<size_t>(csize) > ne || pos + csize > end) {
      return DataLossError(StrCat("stream ", s, ": ", csize,
                                  " compressed bytes exceed the stream's ", ne,
                                  " bytes or the block's end"));
    }
    const std::span<const std::byte> src(base + pos, static_cast<size_t>(csize));
    pos += csize;
    if (static_cast<size_t>(csize) == ne) {  // stored raw: the codec could not shrink it
      std::memcpy(out, src.data(), ne);
      continue;
    }
    Status st = streams_.Decode(h.format, src, std::span<std::byte>(out, ne), dict);
    if (!st.ok()) [[unlikely]]
      return st.WithContext(StrCat("stream ", s));
  }
  // The streams fill the block's bytes exactly; a shorter walk means a block start was moved.
  if (pos != end) [[unlikely]] {
    return DataLossError(
        StrCat("the streams end ", end - pos,
               " bytes before the block's end (the next block's start or the chunk's "
               "end)"));
  }
  compressed_bytes_read_ += pos;
  bytes_decoded_ += static_cast<int64_t>(ne * static_cast<size_t>(nstreams));
  return Status::Ok();
}

Status BlockDecoder::DecodeBlockWithRef(std::span<const std::byte> chunk, const ChunkHeader& h,
                                        int32_t index, std::span<std::byte> out,
                                        const std::byte* block0) {
  const size_t size = out.size();
  if (h.special != SpecialValue::kNone) {
    FillSpecial(h, chunk, static_cast<size_t>(index) * static_cast<size_t>(h.blocksize), out.data(),
                size);
    return Status::Ok();
  }
  if (h.memcpyed) {
    const size_t offset = static_cast<size_t>(h.header_size) +
                          static_cast<size_t>(index) * static_cast<size_t>(h.blocksize);
    std::memcpy(out.data(), chunk.data() + offset, size);
    compressed_bytes_read_ += static_cast<int64_t>(size);
    bytes_decoded_ += static_cast<int64_t>(size);
    return Status::Ok();
  }

  FilterStep steps[kMaxFilters];
  int out_of_place = 0;
  const int nsteps = PlanBackward(h, size, steps, &out_of_place);
  // Decode where the shuffles' ping-pong between scratch and `out` ends in `out`: straight
  // into `out` when no shuffle is left to undo.
  std::byte* cur = out_of_place % 2 == 1 ? Scratch(scratch_, size) : out.data();
  PATCHFEED_RETURN_IF_ERROR(DecodeStreams(chunk, h, index, cur, size));
  for (int i = 0; i < nsteps; ++i) {
    const FilterStep& step = steps[i];
    switch (step.filter) {
      case Filter::kShuffle:
      case Filter::kBitShuffle: {
        std::byte* next = cur == out.data() ? Scratch(scratch_, size) : out.data();
        if (step.filter == Filter::kShuffle) {
          Unshuffle(step.param, cur, next, size);
        } else {
          BitUnshuffle(step.param, cur, next, size);
        }
        cur = next;
        break;
      }
      case Filter::kDelta:
        DeltaDecode(step.param, index == 0 ? nullptr : block0, cur, size);
        break;
      case Filter::kByteDelta:
        ByteDeltaDecode(step.param, cur, size);
        break;
      case Filter::kNone:
      case Filter::kTruncPrec:
        break;
    }
  }
  return Status::Ok();
}

Status BlockDecoder::DecodeBlock(std::span<const std::byte> chunk, const ChunkHeader& h,
                                 int32_t index, std::span<std::byte> out) {
  if (index < 0 || index >= h.nblocks) {
    return InvalidArgumentError(StrCat("block index ", index, " is outside [0, ", h.nblocks, ")"));
  }
  if (out.size() != static_cast<size_t>(h.block_nbytes(index))) {
    return InvalidArgumentError(StrCat("output of ", out.size(), " bytes for ", BlockContext(index),
                                       " of ", h.block_nbytes(index), " bytes"));
  }
  const std::byte* block0 = nullptr;
  if (index > 0 && h.is_regular() && h.has_filter(Filter::kDelta)) {
    const size_t b0 = static_cast<size_t>(h.block_nbytes(0));
    std::byte* ref = Scratch(block0_, b0);
    Status st = DecodeBlockWithRef(chunk, h, 0, std::span<std::byte>(ref, b0), nullptr);
    if (!st.ok())
      return st.WithContext(StrCat(BlockContext(0), " (DELTA reference)"));
    block0 = ref;
  }
  Status st = DecodeBlockWithRef(chunk, h, index, out, block0);
  if (!st.ok()) [[unlikely]]
    return st.WithContext(BlockContext(index));
  return st;
}

Result<PartlyDecodedBlock> BlockDecoder::DecodeBlockForItems(std::span<const std::byte> chunk,
                                                             const ChunkHeader& h, int32_t index,
                                                             int32_t itemsize) {
  if (index < 0 || index >= h.nblocks) {
    return InvalidArgumentError(StrCat("block index ", index, " is outside [0, ", h.nblocks, ")"));
  }
  const size_t size = static_cast<size_t>(h.block_nbytes(index));
  const auto isize = static_cast<size_t>(itemsize);
  PartlyDecodedBlock r{nullptr, size / isize, itemsize, false};
  FilterStep steps[kMaxFilters];
  int out_of_place = 0;
  const int nsteps = h.special == SpecialValue::kNone && !h.memcpyed
                         ? PlanBackward(h, size, steps, &out_of_place)
                         : -1;
  if (nsteps == 1 && steps[0].filter == Filter::kShuffle && steps[0].param == itemsize &&
      size % isize == 0) {
    std::byte* planes = Scratch(partial_, size);
    Status st = DecodeStreams(chunk, h, index, planes, size);
    if (!st.ok()) [[unlikely]]
      return st.WithContext(BlockContext(index));
    r.data = planes;
    r.shuffled = true;
    return r;
  }
  std::byte* out = Scratch(partial_, size);
  PATCHFEED_RETURN_IF_ERROR(DecodeBlock(chunk, h, index, std::span<std::byte>(out, size)));
  r.data = out;
  return r;
}

Status BlockDecoder::DecodeChunk(std::span<const std::byte> chunk, std::span<std::byte> out) {
  PATCHFEED_ASSIGN_OR_RETURN(const ChunkHeader h, ParseChunkHeader(chunk));
  if (out.size() < static_cast<size_t>(h.nbytes)) {
    return InvalidArgumentError(
        StrCat("output of ", out.size(), " bytes is smaller than the chunk's ", h.nbytes));
  }
  if (h.nbytes == 0)
    return Status::Ok();
  if (h.memcpyed && h.special == SpecialValue::kNone) {
    std::memcpy(out.data(), chunk.data() + h.header_size, static_cast<size_t>(h.nbytes));
    compressed_bytes_read_ += h.nbytes;
    bytes_decoded_ += h.nbytes;
    return Status::Ok();
  }
  if (h.special != SpecialValue::kNone) {
    FillSpecial(h, chunk, 0, out.data(), static_cast<size_t>(h.nbytes));
    return Status::Ok();
  }
  // Block 0 first: it is the DELTA reference of every other block.
  const std::byte* block0 = out.data();
  for (int32_t b = 0; b < h.nblocks; ++b) {
    const size_t offset = static_cast<size_t>(b) * static_cast<size_t>(h.blocksize);
    const auto dst = out.subspan(offset, static_cast<size_t>(h.block_nbytes(b)));
    Status st = DecodeBlockWithRef(chunk, h, b, dst, block0);
    if (!st.ok()) [[unlikely]]
      return st.WithContext(BlockContext(b));
  }
  return Status::Ok();
}

Result<int32_t> DecompressedSize(std::span<const std::byte> chunk, int64_t max_nbytes) {
  PATCHFEED_ASSIGN_OR_RETURN(const ChunkHeader h, ParseChunkHeader(chunk));
  if (h.nbytes > max_nbytes) {
    return ResourceExhaustedError(StrCat("the chunk decompresses to ", h.nbytes,
                                         " bytes, more than the limit of ", max_nbytes));
  }
  return h.nbytes;
}

Result<std::vector<std::byte>> DecompressChunk(std::span<const std::byte> chunk,
                                               int64_t max_nbytes) {
  PATCHFEED_ASSIGN_OR_RETURN(const int32_t nbytes, DecompressedSize(chunk, max_nbytes));
  std::vector<std::byte> out(static_cast<size_t>(nbytes));
  BlockDecoder decoder;
  PATCHFEED_RETURN_IF_ERROR(decoder.DecodeChunk(chunk, out));
  return out;
}

}  // namespace patchfeed::codec
