// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/array_reader.h"

#include <new>
#include <string>
#include <utility>

#include "codec/internal/nd_copy.h"
#include "common/byte_size.h"
#include "common/str_cat.h"

namespace patchfeed::codec {

using internal_codec::FillRegion;

int64_t BoxReadScratch::compressed_bytes_read() const {
  int64_t total = 0;
  for (const ContextSlot& slot : contexts_)
    total += slot.context->compressed_bytes_read();
  return total;
}

int64_t BoxReadScratch::bytes_decoded() const {
  int64_t total = 0;
  for (const ContextSlot& slot : contexts_)
    total += slot.context->bytes_decoded();
  return total;
}

Status ArrayReader::CheckDestination(const BoxPlan& plan, const NdView& dst,
                                     std::span<const std::byte> pad_item) const {
  const int n = geom_.ndim;
  if (dst.ndim() != n || static_cast<int>(dst.byte_strides.size()) != n) {
    return InvalidArgumentError(StrCat(path_, ": box and destination need ", n, " dimensions"));
  }
  if (static_cast<int64_t>(pad_item.size()) != geom_.itemsize) {
    return InvalidArgumentError(
        StrCat("pad value of ", pad_item.size(), " bytes for items of ", geom_.itemsize));
  }
  if (!plan.Fits(geom_))
    return InvalidArgumentError(StrCat(path_, ": the read was planned for another array"));
  for (int d = 0; d < n; ++d) {
    if (dst.shape[static_cast<size_t>(d)] != plan.shape()[static_cast<size_t>(d)]) {
      return InvalidArgumentError(
          StrCat("destination shape does not match the box in dimension ", d));
    }
  }
  return Status::Ok();
}

Status ArrayReader::ReadPiece(const BoxPlan& plan, const BoxPiece& piece, const NdView& dst,
                              std::span<const std::byte> pad_item, BoxReadScratch& scratch) const {
  PATCHFEED_RETURN_IF_ERROR(CheckDestination(plan, dst, pad_item));
  if (piece.chunk < 0) {
    FillRegion(geom_.ndim, piece.lo.data(), piece.hi.data(), dst, plan.box().start.data(),
               pad_item);
    return Status::Ok();
  }
  const Status st = ReadChunkPiece(plan, piece, dst, pad_item, scratch);
  Status mapping = CheckMapping();
  return mapping.ok() ? st : mapping;
}

Status ArrayReader::ReadBox(const Box& box, const NdView& dst, std::span<const std::byte> pad_item,
                            BoxReadScratch& scratch) const {
  return ReadBox(box, dst, pad_item, scratch, BlockFilter{});
}

Status ArrayReader::ReadBox(const Box& box, const NdView& dst, std::span<const std::byte> pad_item,
                            BoxReadScratch& scratch, const BlockFilter& filter) const {
  const int n = geom_.ndim;
  if (static_cast<int>(box.start.size()) != n || static_cast<int>(box.stop.size()) != n) {
    return InvalidArgumentError(StrCat(path_, ": box and destination need ", n, " dimensions"));
  }
  // PlanBox checks the untrusted coordinates, CheckDestination that dst has their extents.
  PATCHFEED_RETURN_IF_ERROR(PlanBox(geom_, box, filter, &scratch.plan), path_);
  PATCHFEED_RETURN_IF_ERROR(CheckDestination(scratch.plan, dst, pad_item));
  const BoxPlan& plan = scratch.plan;
  Status st;
  for (int64_t i = 0; i < plan.num_pieces() && st.ok(); ++i) {
    const BoxPiece piece = plan.piece(i);
    if (piece.chunk < 0) {
      FillRegion(n, piece.lo.data(), piece.hi.data(), dst, box.start.data(), pad_item);
    } else {
      st = ReadChunkPiece(plan, piece, dst, pad_item, scratch);
    }
  }
  Status mapping = CheckMapping();
  return mapping.ok() ? st : mapping;
}

Result<std::vector<std::byte>> AllocateBox(const std::string& path, const Box& box,
                                           int64_t itemsize, std::vector<int64_t>* extents) {
  // A vector's size must fit in memory; half the address space is a generous ceiling that keeps
  // absurd boxes an error rather than an allocation failure.
  PATCHFEED_ASSIGN_OR_RETURN(*extents, BoxExtents(box, itemsize, INT64_MAX / 2));
  int64_t bytes = itemsize;
  for (int64_t e : *extents)
    bytes *= e;
  std::vector<std::byte> out;
  try {
    out.resize(static_cast<size_t>(bytes));
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError(StrCat(path, ": the box needs ", FormatBytes(bytes),
                                         " of memory, more than can be allocated"));
  }
  return out;
}

Result<std::vector<std::byte>> ArrayReader::ReadBox(const Box& box,
                                                    std::span<const std::byte> pad_item) const {
  std::vector<int64_t> extents;
  PATCHFEED_ASSIGN_OR_RETURN(std::vector<std::byte> out,
                             AllocateBox(path_, box, geom_.itemsize, &extents));
  BoxReadScratch scratch;
  PATCHFEED_RETURN_IF_ERROR(ReadBox(
      box, NdView::Contiguous(out.data(), std::move(extents), geom_.itemsize), pad_item, scratch));
  return out;
}

Result<NdGeometry> GridGeometry(const std::vector<int64_t>& shape,
                                const std::vector<int64_t>& chunks,
                                const std::vector<int64_t>& blocks, int64_t itemsize) {
  NdGeometry g;
  g.ndim = static_cast<int>(shape.size());
  g.itemsize = itemsize;
  g.nchunks = 1;
  g.chunk_nitems = 1;
  g.block_nitems = 1;
  bool empty = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    g.shape.push_back(shape[i]);
    g.chunkshape.push_back(chunks[i]);
    g.blockshape.push_back(blocks[i]);
    g.extchunk.push_back(chunks[i]);
    g.blocks_per_chunk.push_back(chunks[i] / blocks[i]);
    const int64_t per_dim = shape[i] == 0 ? 0 : (shape[i] - 1) / chunks[i] + 1;
    empty |= per_dim == 0;
    g.chunks_per_dim.push_back(per_dim);
    if (__builtin_mul_overflow(g.nchunks, std::max<int64_t>(per_dim, 1), &g.nchunks) ||
        __builtin_mul_overflow(g.chunk_nitems, chunks[i], &g.chunk_nitems) ||
        __builtin_mul_overflow(g.block_nitems, blocks[i], &g.block_nitems)) {
      return DataLossError("shape and chunks give sizes beyond 2^63");
    }
  }
  int64_t chunk_bytes = 0;
  if (__builtin_mul_overflow(g.chunk_nitems, itemsize, &chunk_bytes))
    return DataLossError("chunks of more than 2^63 bytes");
  if (empty)
    g.nchunks = 0;
  return g;
}

}  // namespace patchfeed::codec
