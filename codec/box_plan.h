// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_BOX_PLAN_H_
#define PATCHFEED_CODEC_BOX_PLAN_H_

/// \file
/// The read plan of an N-d box: the chunks it touches, the blocks of each, the piece of the
/// box each chunk fills, and the parts of the box outside the array (filled with a pad value).
/// Worked out once, from the array's geometry alone, by PlanBox; NdArrayReader::ReadPiece
/// executes one piece (ReadBox is PlanBox plus ReadPiece over all pieces), and the loader
/// only groups pieces into tasks. Nothing else derives chunk or block ranges.
///
/// The plan is a tensor product: the chunks a box touches along one axis do not depend on the
/// other axes, so the plan keeps, per axis, the box's interval in each chunk it crosses, and a
/// piece is one interval per axis. Its size is the sum, not the product, of the chunks per
/// axis: a box over many small chunks costs no memory per chunk. Pieces come in C order of
/// their chunks, then the pad regions. Pieces are disjoint and tile the box (without a filter), so
/// different threads may read different pieces into one destination at once.
///
/// PlanBox is a pure function; a BoxPlan is plain data (copy it, read it from any thread).

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "codec/nd_geometry.h"
#include "common/result.h"

namespace patchfeed::codec {

/// Coordinates or extents of up to kMaxDims dimensions; entries past the array's rank unused.
using NdIndex = std::array<int64_t, kMaxDims>;

/// Half-open box [start, stop) per dimension, in array coordinates; may cross the border.
struct Box {
  std::vector<int64_t> start;
  std::vector<int64_t> stop;
};

/// Which blocks of a box a reader needs: `wants(context, lo, hi)` gets a block's box [lo, hi)
/// in array coordinates (all dimensions). No function: every block. Items of the destination
/// in blocks it does not want are left unwritten, the padding outside the array included
/// (asked about in tiles of the block grid continued past the array's border).
struct BlockFilter {
  bool (*wants)(const void* context, const int64_t* lo, const int64_t* hi) = nullptr;
  const void* context = nullptr;
};

/// The extents of `box` (stop - start per dimension) into `*extents`, checked as untrusted
/// input: as many stops as starts, no negative extent, no overflow, and at most `max_bytes`
/// bytes of `itemsize`-byte items. kInvalidArgument says which rule failed.
Status BoxExtents(const Box& box, int64_t itemsize, int64_t max_bytes,
                  std::vector<int64_t>* extents);
/// The same, returned.
Result<std::vector<int64_t>> BoxExtents(const Box& box, int64_t itemsize,
                                        int64_t max_bytes = INT64_MAX);

/// One piece of a planned box: the part one chunk fills, or a region outside the array.
struct BoxPiece {
  int64_t chunk = -1;     ///< the chunk's number in the frame; -1: outside the array (padding)
  NdIndex lo{}, hi{};     ///< the piece, array coordinates
  NdIndex origin{};       ///< the chunk's first item, array coordinates
  NdIndex block_lo{};     ///< the blocks it touches, [block_lo, block_hi) per dimension, in
  NdIndex block_hi{};     ///< the chunk's grid of blocks
  NdIndex mask_origin{};  ///< block k's position in the plan's filter mask is mask_origin + k
  int64_t nbytes = 0;     ///< bytes it fills in the destination
};

class BoxPlan {
 public:
  int ndim() const { return ndim_; }
  int64_t itemsize() const { return itemsize_; }
  /// The planned box and its extents (the destination's shape).
  const Box& box() const { return box_; }
  const std::vector<int64_t>& shape() const { return shape_; }

  /// Chunk pieces first (C order of their chunks), then pad regions.
  int64_t num_pieces() const { return num_chunk_pieces_ + static_cast<int64_t>(pads_.size()); }
  BoxPiece piece(int64_t index) const;

  /// Whether block `k` (in the chunk's grid of blocks) of chunk piece `p` was wanted by the
  /// plan's BlockFilter (true for every block when the plan has no filter).
  bool wants(const BoxPiece& p, const NdIndex& k) const;
  bool filtered() const { return !wanted_.empty(); }

  /// Whether the plan was made for an array of `geometry` (shape, chunks, blocks, item size):
  /// a reader checks before it trusts the plan's chunks and blocks.
  bool Fits(const NdGeometry& geometry) const;

  /// A chunk piece is cut into rows of whole blocks along its outermost dimension that spans
  /// more than one block: the unit a reader can split a large piece into, each row decoding
  /// only its own blocks. The dimension, or -1 when the piece lies in one block (or is a pad).
  int block_row_axis(const BoxPiece& p) const;
  /// The number of block rows of `p` (1 when block_row_axis is -1).
  int64_t num_block_rows(const BoxPiece& p) const;
  /// Rows [row_begin, row_end) of `p` as a piece of their own: its part of the box, its
  /// blocks and its bytes.
  BoxPiece BlockRows(const BoxPiece& p, int64_t row_begin, int64_t row_end) const;
  /// The part of chunk piece `p` in its block `k` (block_lo <= k < block_hi, in the chunk's
  /// grid of blocks): a piece of one block.
  BoxPiece Block(const BoxPiece& p, const NdIndex& k) const;

 private:
  friend Status PlanBox(const NdGeometry& geometry, const Box& box, const BlockFilter& filter,
                        BoxPlan* plan);

  // The box's interval inside one chunk, along one dimension.
  struct AxisSpan {
    int64_t chunk = 0;                   // the chunk's coordinate along this dimension
    int64_t lo = 0, hi = 0;              // array coordinates
    int64_t origin = 0;                  // the chunk's first coordinate
    int64_t block_lo = 0, block_hi = 0;  // blocks touched, in the chunk's grid
    int64_t mask_lo = 0;                 // block_lo's position along this axis of the mask
  };
  struct Region {
    NdIndex lo{}, hi{};
  };
  static void KeepWantedPadTiles(int n, const NdIndex& blockshape, const BlockFilter& filter,
                                 std::vector<Region>* pads);

  int ndim_ = 0;
  int64_t itemsize_ = 0;
  Box box_;
  std::vector<int64_t> shape_;
  NdIndex array_shape_{}, chunkshape_{}, blockshape_{};
  NdIndex chunk_stride_{};  // chunk number = sum of chunk coordinate * chunk_stride_
  std::vector<std::vector<AxisSpan>> spans_;  // per dimension
  int64_t num_chunk_pieces_ = 0;
  std::vector<Region> pads_;
  // With a filter: one flag per block the box touches inside the array, in C order over the
  // box's grid of touched blocks; empty without a filter.
  NdIndex mask_stride_{};
  std::vector<uint8_t> wanted_;
};

/// Plans the read of `box` (of as many dimensions as `geometry`) from an array of `geometry`,
/// asking `filter` about every block the box touches. Reuses `plan`'s storage. A box wholly
/// outside the array is one pad region; an empty box has no pieces. kInvalidArgument for a
/// box of the wrong rank or one BoxExtents refuses; `*plan` is unspecified after an error.
Status PlanBox(const NdGeometry& geometry, const Box& box, const BlockFilter& filter,
               BoxPlan* plan);

/// "[0:1, -3:13, 2:18]", for messages.
std::string BoxToString(const Box& box);
/// The same for the first `ndim` dimensions of [lo, hi).
std::string RegionToString(int ndim, const NdIndex& lo, const NdIndex& hi);

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_BOX_PLAN_H_
