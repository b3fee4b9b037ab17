// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_READ_TASKS_H_
#define PATCHFEED_LOADER_INTERNAL_READ_TASKS_H_

/// \file
/// Groups the pieces of a planned read (codec::PlanBox: one piece per chunk the box touches,
/// plus pad regions) into tasks, so the pieces of all samples of all batches in flight are read
/// by independent tasks into disjoint parts of the batch slot. The codec works out which chunks
/// and blocks a box needs; this file only decides how many go into one task. Pure functions;
/// thread-safe.

#include <cstdint>
#include <vector>

#include "codec/box_plan.h"

namespace patchfeed::loader::internal_loader {

/// One task's share of a planned read: pieces [begin, end) of the plan or, when rows_end > 0,
/// block rows [rows_begin, rows_end) of the one piece `begin` (codec::BoxPlan::BlockRows).
struct PieceRun {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t rows_begin = 0;
  int64_t rows_end = 0;

  /// Piece `index` (in [begin, end)) of `plan` as this run reads it.
  codec::BoxPiece Piece(const codec::BoxPlan& plan, int64_t index) const {
    const codec::BoxPiece piece = plan.piece(index);
    return rows_end > 0 ? plan.BlockRows(piece, rows_begin, rows_end) : piece;
  }
};

/// All of `plan` in one run.
inline PieceRun WholePlan(const codec::BoxPlan& plan) { return {0, plan.num_pieces(), 0, 0}; }

/// Cuts `plan` into runs of consecutive pieces of at least `min_bytes` each (a run may be
/// smaller before a split piece, and the last may be). A chunk piece of more than
/// 2 x `min_bytes` that spans several rows of blocks is split into its own runs of whole block
/// rows, each at least `min_bytes` (a remainder smaller than that joins the last one), so one
/// large chunk does not become one long task; each such run decodes only its own blocks.
/// The runs cover every piece once, in order.
std::vector<PieceRun> GroupPieces(const codec::BoxPlan& plan, int64_t min_bytes);

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_READ_TASKS_H_
