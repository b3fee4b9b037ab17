// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_READ_PLAN_H_
#define PATCHFEED_LOADER_INTERNAL_READ_PLAN_H_

/// \file
/// Splits one sample's box of one array into cells that each touch at most one chunk, so the
/// cells of all samples of all batches in flight can be read by independent tasks into
/// disjoint parts of the batch slot, and an error names the one chunk it came from.
///
/// The box is cut at the chunk boundaries that lie strictly inside both the box and the array.
/// Parts of the box outside the array stay attached to the border cells (NdArrayReader::ReadBox
/// pads them), and a box entirely outside along some axis is one pad-only cell. Pure
/// functions; thread-safe.

#include <cstdint>
#include <span>
#include <vector>

#include "codec/b2nd_meta.h"
#include "codec/nd_reader.h"

namespace patchfeed::loader::internal_loader {

struct ReadCell {
  codec::Box box;              ///< array coordinates, may cross the border
  std::vector<int64_t> shape;  ///< box extents
  int64_t dst_offset = 0;      ///< bytes from the sample's destination origin
  int64_t chunk = -1;          ///< the chunk read; -1 when the cell is all padding
  int64_t nbytes = 0;          ///< bytes the cell fills in the destination
  int64_t decoded_bytes = 0;   ///< bytes of the Blosc blocks the cell touches
};

/// Cells of `box` (whose extents are the destination's shape) for an array of `geometry`,
/// in C order of their positions. `dst_strides` are the destination's byte strides.
std::vector<ReadCell> SplitBoxAtChunks(const codec::Box& box, const codec::NdGeometry& geometry,
                                       std::span<const int64_t> dst_strides);

/// Splits every cell of more than 2 x `min_bytes` at block boundaries of its chunk, along the
/// outermost axis on which it touches more than one block, into slabs of at least `min_bytes`
/// (the last may be smaller): tasks of a few blocks each, so one large chunk does not become
/// one long task. A slab decodes only its own blocks. Order and coverage are kept.
std::vector<ReadCell> SplitCellsAtBlocks(std::vector<ReadCell> cells,
                                         const codec::NdGeometry& geometry,
                                         std::span<const int64_t> dst_strides, int64_t min_bytes);

/// Partitions `cells` into consecutive runs of at least `min_bytes` each (the last may be
/// smaller): returns the end index of every run.
std::vector<size_t> GroupCells(std::span<const ReadCell> cells, int64_t min_bytes);

/// "[0:1, -3:13, 2:18]", for messages.
std::string BoxToString(const codec::Box& box);

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_READ_PLAN_H_
