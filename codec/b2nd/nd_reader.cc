// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/b2nd/nd_reader.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "codec/blosc/read_context.h"
#include "codec/blosc/shuffle.h"
#include "codec/dtype.h"
#include "codec/internal/nd_copy.h"
#include "common/str_cat.h"

namespace patchfeed::codec {
namespace {

using internal_codec::CopyRegion;
using internal_codec::FillRegion;
using internal_codec::ForEachIndex;
using internal_codec::ForEachRow;
using internal_codec::Index;
using internal_codec::MakeRegionWalk;
using internal_codec::RowWalk;

// CopyRegion from a block still byte-shuffled: `planes` holds byte plane k of the block's
// `nitems` items at planes + k * nitems. Each row is unshuffled straight into dst, so the
// block is never unshuffled as a whole nor copied a second time.
inline void UnshuffleRegion(int n, int64_t itemsize, const int64_t* lo, const int64_t* hi,
                            const std::byte* planes, size_t nitems, const int64_t* src_origin,
                            const int64_t* src_shape, const NdView& dst,
                            const int64_t* dst_origin) {
  const auto ts = static_cast<int32_t>(itemsize);
  if (n == 0) {
    codec::UnshuffleItemRows(ts, planes, nitems, 0, 1, 1, 0, dst.data, 0);
    return;
  }
  RowWalk w;
  int64_t so = 0, dof = 0;
  if (!MakeRegionWalk(n, itemsize, lo, hi, src_origin, src_shape, dst, dst_origin, &w, &so, &dof))
    return;
  std::byte* d0 = dst.data + dof;
  const auto first0 = static_cast<size_t>(so / itemsize);
  if (!w.dst_row_contiguous) {
    ForEachRow(w, [&](int64_t src_off, int64_t dst_off) {
      const auto first = first0 + static_cast<size_t>(src_off / itemsize);
      for (int64_t k = 0; k < w.row_items; ++k) {
        codec::UnshuffleItemRows(ts, planes, nitems, first + static_cast<size_t>(k), 1, 1, 0,
                                 d0 + dst_off + k * w.dst_item_stride, 0);
      }
    });
    return;
  }
  // The innermost outer dimension goes to the kernel as a run of rows, so the dispatch is paid
  // once per plane of the region rather than once per row.
  RowWalk outer = w;
  size_t nrows = 1, src_step = 0, dst_step = 0;
  if (w.outer > 0) {
    const auto i = static_cast<size_t>(w.outer - 1);
    nrows = static_cast<size_t>(w.extent[i]);
    src_step = static_cast<size_t>(w.src_stride[i] / itemsize);
    dst_step = static_cast<size_t>(w.dst_stride[i]);
    outer.outer = w.outer - 1;
  }
  ForEachRow(outer, [&](int64_t src_off, int64_t dst_off) {
    codec::UnshuffleItemRows(ts, planes, nitems, first0 + static_cast<size_t>(src_off / itemsize),
                             static_cast<size_t>(w.row_items), nrows, src_step, d0 + dst_off,
                             dst_step);
  });
}

}  // namespace

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
    return InvalidArgumentError(
        StrCat(path, ": the frame has no b2nd metalayer (not an N-d array)"));
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
    return DataLossError(StrCat(path, ": the frame's typesize ", frame.info().typesize,
                                " differs from the item size ", itemsize, " of dtype '",
                                r.meta_.dtype, "'"));
  }
  auto geom = B2ndGeometry(r.meta_, itemsize);
  if (!geom.ok())
    return geom.status().WithContext(path);
  r.geom_ = std::move(*geom);
  const int64_t chunk_bytes = r.geom_.chunk_nitems * itemsize;
  if (r.geom_.nchunks != frame.nchunks() ||
      (r.geom_.nchunks > 0 && frame.info().chunksize != chunk_bytes)) {
    return DataLossError(StrCat(path, ": the frame's ", frame.nchunks(), " chunks of ",
                                frame.info().chunksize, " bytes do not match the b2nd shape (",
                                r.geom_.nchunks, " chunks of ", chunk_bytes, " bytes)"));
  }
  r.path_ = frame.path();
  r.dtype_ = r.meta_.dtype;
  r.frame_ = std::move(frame);
  return r;
}

Status NdArrayReader::ReadChunkPiece(const BoxPlan& plan, const BoxPiece& piece, const NdView& dst,
                                     std::span<const std::byte> pad_item,
                                     BoxReadScratch& scratch) const {
  BloscReadContext& blosc = scratch.Context<BloscReadContext>();
  const NdGeometry& g = geom_;
  const int n = g.ndim;
  const int64_t itemsize = g.itemsize;
  const int64_t chunk_index = piece.chunk;
  const int64_t* dst_origin = plan.box().start.data();
  const int64_t* klo = piece.block_lo.data();
  const int64_t* khi = piece.block_hi.data();
  // The block's number in its chunk (C order over the chunk's grid of blocks).
  const auto block_number = [&](const Index& k) {
    int64_t b = 0;
    for (int d = 0; d < n; ++d)
      b = b * g.blocks_per_chunk[static_cast<size_t>(d)] + k[static_cast<size_t>(d)];
    return b;
  };
  // The blocks to read (with pread, only their bytes are read from the file).
  std::vector<int32_t>& wanted = scratch.wanted_blocks;
  wanted.clear();
  (void)ForEachIndex(n, klo, khi, [&](const Index& k) -> Status {
    if (plan.wants(piece, k))
      wanted.push_back(static_cast<int32_t>(block_number(k)));
    return Status::Ok();
  });
  if (wanted.empty()) {
    // The caller needs none of this chunk.
    FillRegion(n, piece.lo.data(), piece.hi.data(), dst, dst_origin, pad_item);
    return Status::Ok();
  }
  ChunkHeader& h = blosc.header;
  PATCHFEED_ASSIGN_OR_RETURN(
      auto chunk, frame_.GetChunkBlocks(chunk_index, wanted, scratch.chunk, &h, scratch.source));
  const int64_t chunk_bytes = g.chunk_nitems * itemsize;
  if (h.nbytes != chunk_bytes) {
    return DataLossError(StrCat(frame_.ChunkContext(chunk_index), ": holds ", h.nbytes,
                                " bytes, the array's chunks ", chunk_bytes));
  }

  // c-blosc2 writes the item size as every chunk's typesize (1 above 255); another value
  // would shuffle and split the items wrongly (c-blosc2's block reads refuse most of them).
  const int64_t chunk_typesize = itemsize > 255 ? 1 : itemsize;
  if (h.typesize != chunk_typesize) {
    return DataLossError(StrCat(frame_.ChunkContext(chunk_index), ": typesize ", h.typesize,
                                " differs from the array's item size ", itemsize));
  }

  // Special chunks fill their part without decoding when the value is one item.
  if (h.special == SpecialValue::kZeros || h.special == SpecialValue::kUninit ||
      (h.special == SpecialValue::kNaN && h.typesize == itemsize)) {
    std::vector<std::byte> item(static_cast<size_t>(itemsize));
    if (h.special == SpecialValue::kNaN) {
      const std::array<std::byte, 8> nan = SpecialNaNItem(h.typesize);
      std::copy_n(nan.begin(), item.size(), item.begin());
    }
    FillRegion(n, piece.lo.data(), piece.hi.data(), dst, dst_origin, item);
    return Status::Ok();
  }

  // The chunk's blocks must be the array's blocks, also when the chunk is decoded whole
  // (c-blosc2 refuses a chunk whose block count differs from the array's, repeated-value
  // chunks included).
  const int64_t block_bytes = g.block_nitems * itemsize;
  if (h.blocksize != block_bytes) {
    return DataLossError(StrCat(frame_.ChunkContext(chunk_index), ": block size ", h.blocksize,
                                " differs from the b2nd block's ", block_bytes));
  }
  // A repeated-value chunk, or DELTA, which ties each block to block 0: decode the chunk once
  // rather than block 0 per block (with all of the chunk's bytes, which GetChunkBlocks may not
  // have read).
  const bool whole_chunk = h.special != SpecialValue::kNone || h.has_filter(Filter::kDelta);
  if (whole_chunk) {
    PATCHFEED_ASSIGN_OR_RETURN(chunk, frame_.GetChunk(chunk_index, scratch.chunk, scratch.source));
    scratch.whole.resize(static_cast<size_t>(chunk_bytes));
    PATCHFEED_RETURN_IF_ERROR(blosc.decoder.DecodeChunk(chunk, scratch.whole),
                              frame_.ChunkContext(chunk_index));
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
  const bool filtered = plan.filtered();
  return ForEachIndex(n, klo, khi, [&](const Index& k) -> Status {
    Index blo{}, ilo{}, ihi{};
    bool full = true;
    for (int d = 0; d < n; ++d) {
      const auto i = static_cast<size_t>(d);
      blo[i] = piece.origin[i] + k[i] * g.blockshape[i];
      ilo[i] = std::max(piece.lo[i], blo[i]);
      ihi[i] = std::min(piece.hi[i], blo[i] + g.blockshape[i]);
      full &= ilo[i] == blo[i] && ihi[i] == blo[i] + g.blockshape[i];
    }
    if (filtered && !plan.wants(piece, k)) {
      FillRegion(n, ilo.data(), ihi.data(), dst, dst_origin, pad_item);
      return Status::Ok();
    }
    const int64_t nblock = block_number(k);
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
      PATCHFEED_RETURN_IF_ERROR(
          blosc.decoder.DecodeBlock(chunk, h, b,
                                    std::span(dst.data + off, static_cast<size_t>(block_bytes))),
          frame_.ChunkContext(chunk_index));
      return Status::Ok();
    }
    // A piece of the block: undo a final byte shuffle only for the wanted rows, straight
    // into dst.
    PATCHFEED_ASSIGN_OR_RETURN(
        const PartlyDecodedBlock part,
        blosc.decoder.DecodeBlockForItems(chunk, h, b, static_cast<int32_t>(itemsize)),
        frame_.ChunkContext(chunk_index));
    if (part.shuffled) {
      UnshuffleRegion(n, itemsize, ilo.data(), ihi.data(), part.data, part.nitems, blo.data(),
                      g.blockshape.data(), dst, dst_origin);
    } else {
      CopyRegion(n, itemsize, ilo.data(), ihi.data(), part.data, blo.data(), g.blockshape.data(),
                 dst, dst_origin);
    }
    return Status::Ok();
  });
}

ArrayFootprint NdArrayReader::Footprint() const {
  ArrayFootprint f;
  const FrameInfo& info = frame_.info();
  f.compression_ratio =
      info.nbytes > 0 ? static_cast<double>(info.cbytes) / static_cast<double>(info.nbytes) : 1.0;
  // Decoded offsets, the header with its metalayers, and the object itself.
  f.open_state_bytes = 8 * frame_.nchunks() + info.header_len + 512;
  f.block_bytes = geom_.block_nitems * geom_.itemsize;
  f.chunk_bytes = geom_.chunk_nitems * geom_.itemsize;
  f.whole_chunks = info.has_filter(Filter::kDelta);
  return f;
}

}  // namespace patchfeed::codec
