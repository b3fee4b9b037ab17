// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/nd_reader.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <new>
#include <string>

#include "codec/internal/nd_copy.h"
#include "common/byte_size.h"

namespace patchfeed::codec {
namespace {

using internal_codec::CopyRegion;
using internal_codec::FillRegion;
using internal_codec::FillView;
using internal_codec::ForEachIndex;
using internal_codec::Index;
using internal_codec::UnshuffleRegion;

}  // namespace

Result<std::vector<int64_t>> BoxExtents(const Box& box, int64_t itemsize, int64_t max_bytes) {
  if (box.start.size() != box.stop.size()) {
    return InvalidArgumentError("box has " + std::to_string(box.start.size()) + " starts and " +
                                std::to_string(box.stop.size()) + " stops");
  }
  std::vector<int64_t> extents(box.start.size());
  int64_t bytes = itemsize;
  for (size_t d = 0; d < extents.size(); ++d) {
    if (__builtin_sub_overflow(box.stop[d], box.start[d], &extents[d]) || extents[d] < 0) {
      return InvalidArgumentError("box range " + std::to_string(box.start[d]) + ":" +
                                  std::to_string(box.stop[d]) + " in dimension " +
                                  std::to_string(d) + " is not a valid start:stop");
    }
    if (__builtin_mul_overflow(bytes, extents[d], &bytes) || bytes > max_bytes) {
      return InvalidArgumentError("box of " + std::to_string(extents.size()) +
                                  " dimensions is larger than " + std::to_string(max_bytes) +
                                  " bytes");
    }
  }
  return extents;
}

Result<NdArrayReader> NdArrayReader::Open(const std::string& path, FrameOpenOptions options) {
  PATCHFEED_ASSIGN_OR_RETURN(FrameReader frame, FrameReader::Open(path, options));
  return FromFrame(std::move(frame));
}

Result<NdArrayReader> NdArrayReader::FromFrame(FrameReader frame) {
  NdArrayReader r;
  const std::string path = frame.path();
  const auto* content = frame.info().metalayer("b2nd");
  if (content == nullptr)
    content = frame.info().metalayer("caterva");
  if (content == nullptr) {
    return InvalidArgumentError(path + ": the frame has no b2nd metalayer (not an N-d array)");
  }
  auto meta = ParseB2ndMeta(*content);
  if (!meta.ok())
    return meta.status().WithContext(path);
  r.meta_ = std::move(*meta);
  int64_t itemsize = ItemSizeOfDtype(r.meta_.dtype);
  if (itemsize == 0) {
    itemsize = frame.info().typesize;
  } else if (itemsize != frame.info().typesize) {
    // python-blosc2 writes the dtype's item size as the frame's typesize; a mismatch means one
    // of them is damaged, and either would mislay every item.
    return DataLossError(path + ": the frame's typesize " + std::to_string(frame.info().typesize) +
                         " differs from the item size " + std::to_string(itemsize) + " of dtype '" +
                         r.meta_.dtype + "'");
  }
  auto geom = NdGeometry::Make(r.meta_, itemsize);
  if (!geom.ok())
    return geom.status().WithContext(path);
  r.geom_ = std::move(*geom);
  const int64_t chunk_bytes = r.geom_.chunk_nitems * itemsize;
  if (r.geom_.nchunks != frame.nchunks() ||
      (r.geom_.nchunks > 0 && frame.info().chunksize != chunk_bytes)) {
    return DataLossError(path + ": the frame's " + std::to_string(frame.nchunks()) + " chunks of " +
                         std::to_string(frame.info().chunksize) +
                         " bytes do not match the b2nd shape (" + std::to_string(r.geom_.nchunks) +
                         " chunks of " + std::to_string(chunk_bytes) + " bytes)");
  }
  r.frame_ = std::move(frame);
  return r;
}

Status NdArrayReader::ReadChunkPart(int64_t chunk_index, const int64_t* lo, const int64_t* hi,
                                    const Box& box, const NdView& dst,
                                    std::span<const std::byte> pad_item, const BlockFilter& filter,
                                    BoxReadScratch& scratch) const {
  const NdGeometry& g = geom_;
  const int n = g.ndim;
  const int64_t itemsize = g.itemsize;
  // Origin of this chunk in array coordinates, and the blocks the region touches.
  Index corigin{}, klo{}, khi{};
  {
    int64_t rest = chunk_index;
    for (int d = n - 1; d >= 0; --d) {
      const auto i = static_cast<size_t>(d);
      corigin[i] = (rest % g.chunks_per_dim[i]) * g.chunkshape[i];
      rest /= g.chunks_per_dim[i];
    }
    for (int d = 0; d < n; ++d) {
      const auto i = static_cast<size_t>(d);
      klo[i] = (lo[d] - corigin[i]) / g.blockshape[i];
      khi[i] = (hi[d] - 1 - corigin[i]) / g.blockshape[i] + 1;
    }
  }
  const int64_t* dst_origin = box.start.data();
  // Whether the caller's filter wants block k of this chunk.
  const auto block_wanted = [&](const Index& k) {
    if (filter.wants == nullptr)
      return true;
    Index blo{}, bhi{};
    for (int d = 0; d < n; ++d) {
      const auto i = static_cast<size_t>(d);
      blo[i] = corigin[i] + k[i] * g.blockshape[i];
      bhi[i] = blo[i] + g.blockshape[i];
    }
    return filter.wants(filter.context, blo.data(), bhi.data());
  };
  // With pread, only those blocks' bytes are read from the file.
  std::vector<int32_t>& wanted = scratch.wanted_blocks;
  wanted.clear();
  (void)ForEachIndex(n, klo.data(), khi.data(), [&](const Index& k) -> Status {
    if (!block_wanted(k))
      return Status::Ok();
    int64_t b = 0;
    for (int d = 0; d < n; ++d) {
      b = b * g.blocks_per_chunk[static_cast<size_t>(d)] + k[static_cast<size_t>(d)];
    }
    wanted.push_back(static_cast<int32_t>(b));
    return Status::Ok();
  });
  if (wanted.empty()) {
    FillRegion(n, lo, hi, dst, dst_origin, pad_item);  // the caller needs none of this chunk
    return Status::Ok();
  }
  ChunkHeader& h = scratch.header;
  PATCHFEED_ASSIGN_OR_RETURN(auto chunk,
                             frame_.GetChunkBlocks(chunk_index, wanted, scratch.chunk, &h));
  const int64_t chunk_bytes = g.chunk_nitems * itemsize;
  if (h.nbytes != chunk_bytes) {
    return DataLossError(frame_.ChunkContext(chunk_index) + ": holds " + std::to_string(h.nbytes) +
                         " bytes, the array's chunks " + std::to_string(chunk_bytes));
  }

  // c-blosc2 writes the item size as every chunk's typesize (1 above 255); another value
  // would shuffle and split the items wrongly (c-blosc2's block reads refuse most of them).
  const int64_t chunk_typesize = itemsize > 255 ? 1 : itemsize;
  if (h.typesize != chunk_typesize) {
    return DataLossError(frame_.ChunkContext(chunk_index) + ": typesize " +
                         std::to_string(h.typesize) + " differs from the array's item size " +
                         std::to_string(itemsize));
  }

  // Special chunks fill their part without decoding when the value is one item.
  if (h.special == SpecialValue::kZeros || h.special == SpecialValue::kUninit ||
      (h.special == SpecialValue::kNaN && h.typesize == itemsize)) {
    std::vector<std::byte> item(static_cast<size_t>(itemsize));
    if (h.special == SpecialValue::kNaN) {
      const std::array<std::byte, 8> nan = SpecialNaNItem(h.typesize);
      std::copy_n(nan.begin(), item.size(), item.begin());
    }
    FillRegion(n, lo, hi, dst, dst_origin, item);
    return Status::Ok();
  }

  // The chunk's blocks must be the array's blocks, also when the chunk is decoded whole
  // (c-blosc2 refuses a chunk whose block count differs from the array's, repeated-value
  // chunks included).
  const int64_t block_bytes = g.block_nitems * itemsize;
  if (h.blocksize != block_bytes) {
    return DataLossError(frame_.ChunkContext(chunk_index) + ": block size " +
                         std::to_string(h.blocksize) + " differs from the b2nd block's " +
                         std::to_string(block_bytes));
  }
  // A repeated-value chunk, or DELTA, which ties each block to block 0: decode the chunk once
  // rather than block 0 per block (with all of the chunk's bytes, which GetChunkBlocks may not
  // have read).
  const bool whole_chunk = h.special != SpecialValue::kNone || h.has_filter(Filter::kDelta);
  if (whole_chunk) {
    PATCHFEED_ASSIGN_OR_RETURN(chunk, frame_.GetChunk(chunk_index, scratch.chunk));
    scratch.whole.resize(static_cast<size_t>(chunk_bytes));
    Status st = scratch.decoder.DecodeChunk(chunk, scratch.whole);
    if (!st.ok())
      return st.WithContext(frame_.ChunkContext(chunk_index));
  }

  // Whether a whole block lands contiguously in dst: each dimension where the block has more
  // than one item must have the stride the block's own C layout has.
  bool dst_matches_block = true;
  {
    int64_t s = itemsize;
    for (int d = n - 1; d >= 0; --d) {
      const auto i = static_cast<size_t>(d);
      if (g.blockshape[i] > 1 && dst.byte_strides[i] != s)
        dst_matches_block = false;
      s *= g.blockshape[i];
    }
  }
  return ForEachIndex(n, klo.data(), khi.data(), [&](const Index& k) -> Status {
    int64_t nblock = 0;
    Index blo{}, ilo{}, ihi{};
    bool full = true;
    for (int d = 0; d < n; ++d) {
      const auto i = static_cast<size_t>(d);
      nblock = nblock * g.blocks_per_chunk[i] + k[i];
      blo[i] = corigin[i] + k[i] * g.blockshape[i];
      ilo[i] = std::max(lo[d], blo[i]);
      ihi[i] = std::min(hi[d], blo[i] + g.blockshape[i]);
      full &= ilo[i] == blo[i] && ihi[i] == blo[i] + g.blockshape[i];
    }
    // `wanted` is ascending (both walks are in C order): look the block up, not the filter.
    if (filter.wants != nullptr &&
        !std::binary_search(wanted.begin(), wanted.end(), static_cast<int32_t>(nblock))) {
      FillRegion(n, ilo.data(), ihi.data(), dst, dst_origin, pad_item);
      return Status::Ok();
    }
    if (whole_chunk) {
      const std::byte* src = scratch.whole.data() + nblock * block_bytes;
      CopyRegion(n, itemsize, ilo.data(), ihi.data(), src, blo.data(), g.blockshape.data(), dst,
                 dst_origin);
      return Status::Ok();
    }
    const auto b = static_cast<int32_t>(nblock);
    if (full && dst_matches_block) {
      int64_t off = 0;
      for (int d = 0; d < n; ++d) {
        off += (blo[static_cast<size_t>(d)] - dst_origin[d]) *
               dst.byte_strides[static_cast<size_t>(d)];
      }
      Status st = scratch.decoder.DecodeBlock(
          chunk, h, b, std::span(dst.data + off, static_cast<size_t>(block_bytes)));
      if (!st.ok())
        return st.WithContext(frame_.ChunkContext(chunk_index));
      return Status::Ok();
    }
    // A piece of the block: undo a final byte shuffle only for the wanted rows, straight
    // into dst.
    auto part = scratch.decoder.DecodeBlockForItems(chunk, h, b, static_cast<int32_t>(itemsize));
    if (!part.ok())
      return part.status().WithContext(frame_.ChunkContext(chunk_index));
    if (part->shuffled) {
      UnshuffleRegion(n, itemsize, ilo.data(), ihi.data(), part->data, part->nitems, blo.data(),
                      g.blockshape.data(), dst, dst_origin);
    } else {
      CopyRegion(n, itemsize, ilo.data(), ihi.data(), part->data, blo.data(), g.blockshape.data(),
                 dst, dst_origin);
    }
    return Status::Ok();
  });
}

Status NdArrayReader::ReadBox(const Box& box, const NdView& dst,
                              std::span<const std::byte> pad_item, BoxReadScratch& scratch) const {
  return ReadBox(box, dst, pad_item, scratch, BlockFilter{});
}

Status NdArrayReader::ReadBox(const Box& box, const NdView& dst,
                              std::span<const std::byte> pad_item, BoxReadScratch& scratch,
                              const BlockFilter& filter) const {
  const NdGeometry& g = geom_;
  const int n = g.ndim;
  if (static_cast<int>(box.start.size()) != n || static_cast<int>(box.stop.size()) != n ||
      static_cast<int>(dst.shape.size()) != n || static_cast<int>(dst.byte_strides.size()) != n) {
    return InvalidArgumentError(frame_.path() + ": box and destination need " + std::to_string(n) +
                                " dimensions");
  }
  if (static_cast<int64_t>(pad_item.size()) != g.itemsize) {
    return InvalidArgumentError("pad value of " + std::to_string(pad_item.size()) +
                                " bytes for items of " + std::to_string(g.itemsize));
  }
  Index lo{}, hi{};
  bool inside = true, empty = false;
  for (int d = 0; d < n; ++d) {
    const auto i = static_cast<size_t>(d);
    // Untrusted coordinates: stop - start must not overflow (checked without allocating; this
    // runs once per chunk piece in the loader).
    int64_t extent = 0;
    if (__builtin_sub_overflow(box.stop[i], box.start[i], &extent) || extent < 0 ||
        dst.shape[i] != extent) {
      return InvalidArgumentError("destination shape does not match the box in dimension " +
                                  std::to_string(d));
    }
    lo[i] = std::max<int64_t>(box.start[i], 0);
    hi[i] = std::min(box.stop[i], g.shape[i]);
    inside &= box.start[i] >= 0 && box.stop[i] <= g.shape[i];
    empty |= box.stop[i] == box.start[i];
  }
  if (empty)
    return Status::Ok();
  bool outside = false;
  for (int d = 0; d < n; ++d)
    outside |= lo[static_cast<size_t>(d)] >= hi[static_cast<size_t>(d)];
  if (outside) {
    FillView(n, dst, pad_item);
    return Status::Ok();
  }
  if (!inside) {
    // Pad only what lies outside the array, as disjoint slabs: along dimension d, the parts
    // below and above the array, spanning the inner range in dimensions before d and the
    // whole box in dimensions after it.
    for (int d = 0; d < n; ++d) {
      const auto i = static_cast<size_t>(d);
      Index slo{}, shi{};
      for (int e = 0; e < n; ++e) {
        const auto k = static_cast<size_t>(e);
        slo[k] = e < d ? lo[k] : box.start[k];
        shi[k] = e < d ? hi[k] : box.stop[k];
      }
      if (box.start[i] < lo[i]) {
        shi[i] = lo[i];
        FillRegion(n, slo.data(), shi.data(), dst, box.start.data(), pad_item);
      }
      if (box.stop[i] > hi[i]) {
        slo[i] = hi[i];
        shi[i] = box.stop[i];
        FillRegion(n, slo.data(), shi.data(), dst, box.start.data(), pad_item);
      }
    }
  }
  Index qlo{}, qhi{};
  for (int d = 0; d < n; ++d) {
    const auto i = static_cast<size_t>(d);
    qlo[i] = lo[i] / g.chunkshape[i];
    qhi[i] = (hi[i] - 1) / g.chunkshape[i] + 1;
  }
  const Status st = ForEachIndex(n, qlo.data(), qhi.data(), [&](const Index& q) -> Status {
    int64_t nchunk = 0;
    Index clo{}, chi{};
    for (int d = 0; d < n; ++d) {
      const auto i = static_cast<size_t>(d);
      nchunk = nchunk * g.chunks_per_dim[i] + q[i];
      clo[i] = std::max(lo[i], q[i] * g.chunkshape[i]);
      chi[i] = std::min(hi[i], (q[i] + 1) * g.chunkshape[i]);
    }
    return ReadChunkPart(nchunk, clo.data(), chi.data(), box, dst, pad_item, filter, scratch);
  });
  // A file truncated under its mapping reads as zeros (mapping_fault_guard.h): whatever the
  // decoders made of them, the cause to report is the truncation.
  Status mapping = frame_.CheckMapping();
  return mapping.ok() ? st : mapping;
}

Result<std::vector<std::byte>> NdArrayReader::ReadBox(const Box& box,
                                                      std::span<const std::byte> pad_item) const {
  // A vector's size must fit in memory; half the address space is a generous ceiling that keeps
  // absurd boxes an error rather than an allocation failure.
  PATCHFEED_ASSIGN_OR_RETURN(std::vector<int64_t> extents,
                             BoxExtents(box, geom_.itemsize, INT64_MAX / 2));
  int64_t bytes = geom_.itemsize;
  for (int64_t e : extents)
    bytes *= e;
  std::vector<std::byte> out;
  try {
    out.resize(static_cast<size_t>(bytes));
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError(frame_.path() + ": the box needs " + FormatBytes(bytes) +
                                  " of memory, more than can be allocated");
  }
  BoxReadScratch scratch;
  PATCHFEED_RETURN_IF_ERROR(ReadBox(
      box, NdView::Contiguous(out.data(), std::move(extents), geom_.itemsize), pad_item, scratch));
  return out;
}

}  // namespace patchfeed::codec
