// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/read_tasks.h"

#include <algorithm>

namespace patchfeed::loader::internal_loader {
namespace {

// Appends the runs of block rows of piece `index`: each at least `min_bytes`, growing to the
// next row boundary, and the rest joins the last run when it would be smaller than that.
void SplitAtBlockRows(const codec::BoxPlan& plan, int64_t index, const codec::BoxPiece& piece,
                      int64_t min_bytes, std::vector<PieceRun>* runs) {
  const int64_t rows = plan.num_block_rows(piece);
  int64_t start = 0;
  for (int64_t stop = 1; stop <= rows; ++stop) {
    if (stop < rows && (plan.BlockRows(piece, start, stop).nbytes < min_bytes ||
                        plan.BlockRows(piece, stop, rows).nbytes < min_bytes)) {
      continue;
    }
    runs->push_back({index, index + 1, start, stop});
    start = stop;
  }
}

}  // namespace

std::vector<PieceRun> GroupPieces(const codec::BoxPlan& plan, int64_t min_bytes) {
  std::vector<PieceRun> runs;
  const int64_t split_above = 2 * std::max<int64_t>(min_bytes, 1);
  int64_t begin = 0, bytes = 0;
  for (int64_t i = 0; i < plan.num_pieces(); ++i) {
    const codec::BoxPiece piece = plan.piece(i);
    if (piece.nbytes > split_above && plan.num_block_rows(piece) > 1) {
      if (begin < i)
        runs.push_back({begin, i, 0, 0});
      SplitAtBlockRows(plan, i, piece, min_bytes, &runs);
      begin = i + 1;
      bytes = 0;
      continue;
    }
    bytes += piece.nbytes;
    if (bytes >= min_bytes) {
      runs.push_back({begin, i + 1, 0, 0});
      begin = i + 1;
      bytes = 0;
    }
  }
  if (begin < plan.num_pieces())
    runs.push_back({begin, plan.num_pieces(), 0, 0});
  return runs;
}

}  // namespace patchfeed::loader::internal_loader
