// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/blosc/partial_chunk_read.h"

#include <algorithm>
#include <cstring>

namespace patchfeed::codec {

Result<std::optional<std::span<const std::byte>>> ReadChunkBlocksAt(
    const storage::ByteSource& source, uint64_t pos, int64_t avail, const BlockPicker& pick,
    std::vector<int32_t>* blocks, std::vector<std::byte>& scratch, ChunkHeader* header) {
  using Whole = std::optional<std::span<const std::byte>>;
  if (avail < kBlosc2HeaderSize || source.Data(pos, kBlosc2HeaderSize) != nullptr)
    return Whole();
  // The header first: its fields say where the block offsets and dictionary end.
  std::byte head[kBlosc2HeaderSize];
  PATCHFEED_RETURN_IF_ERROR(source.ReadAt(pos, head));
  if (!ParseChunkHeaderFields(head, static_cast<size_t>(avail), header).ok() ||
      !header->is_regular() || header->block_table_end() > header->cbytes) {
    return Whole();
  }
  const ChunkHeader& h = *header;
  const auto in_file = [&](int64_t from, int64_t to) {
    return storage::FileRange{pos + static_cast<uint64_t>(from), static_cast<uint64_t>(to - from)};
  };
  const uint64_t cbytes = static_cast<uint64_t>(h.cbytes);
  // A source that fetched the chunk ahead as an image (the loader's reads in flight) is
  // decoded in place; otherwise the parts needed are read into a scratch image.
  const storage::FileRange table = in_file(0, h.block_table_end());
  const std::byte* in_place = source.ChunkImage(pos, cbytes, std::span(&table, 1));
  const auto read = [&](int64_t from, int64_t to) -> Status {
    if (from >= to)
      return Status::Ok();
    return source.ReadAt(pos + static_cast<uint64_t>(from),
                         std::span(scratch.data() + from, static_cast<size_t>(to - from)));
  };
  if (in_place == nullptr) {
    scratch.resize(static_cast<size_t>(h.cbytes));
    // A Blosc1 chunk (16-byte header) may be shorter than the 32 bytes read.
    const int64_t have = std::min<int64_t>(kBlosc2HeaderSize, h.cbytes);
    std::memcpy(scratch.data(), head, static_cast<size_t>(have));
    PATCHFEED_RETURN_IF_ERROR(read(have, h.block_table_end()));
  }
  // Header, block offsets and dictionary size are in: the checks the whole chunk would get, and
  // the block ranges the decoder keeps to (it reads nothing else of the chunk).
  const std::span<const std::byte> image(in_place != nullptr ? in_place : scratch.data(),
                                         static_cast<size_t>(h.cbytes));
  if (!ParseChunkHeader(image, header).ok())
    return Whole();
  // What else the decoder reads: the dictionary, and the wanted blocks' streams, neighbours
  // merged into one read.
  std::vector<ByteRange> parts;
  if (h.has_dict)
    parts.push_back(h.dict_range());
  pick(h, blocks);
  for (const int32_t b : *blocks) {
    if (b < 0 || b >= h.nblocks)
      continue;
    const ByteRange range = BlockStreamRange(image, h, b);
    if (!parts.empty() && parts.back().end == range.begin) {
      parts.back().end = range.end;
    } else {
      parts.push_back(range);
    }
  }
  std::vector<storage::FileRange> file_parts(parts.size());
  for (size_t i = 0; i < parts.size(); ++i)
    file_parts[i] = in_file(parts[i].begin, parts[i].end);
  if (in_place != nullptr) {
    // An image without all of them (not what its source fetched for): the whole chunk.
    if (source.ChunkImage(pos, cbytes, file_parts) == nullptr)
      return Whole();
    return Whole(image);
  }
  source.WillRead({pos, cbytes}, file_parts);
  for (const ByteRange& part : parts)
    PATCHFEED_RETURN_IF_ERROR(read(part.begin, part.end));
  return Whole(image);
}

}  // namespace patchfeed::codec
