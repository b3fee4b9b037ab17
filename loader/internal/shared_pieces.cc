// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/shared_pieces.h"

#include <algorithm>

#include "loader/internal/read_round.h"
#include "loader/internal/task_spawn.h"

namespace patchfeed::loader::internal_loader {
namespace {

// The counters are sequentially consistent: a helper raises `active` before its first claim,
// and the owner reads `active` after its own claim found the pieces gone, so a helper holding
// a piece is always counted (the owner's read comes after the helper's raise in the single
// total order).
void Help(PieceShare* share) {
  share->active.fetch_add(1);
  for (int64_t i; (i = share->next.fetch_add(1)) < share->count;) {
    (*share->body)(i);
  }
  if (share->active.fetch_sub(1) == 1) {
    share->active.notify_all();
  }
}

}  // namespace

void RunSharedPieces(ReadRound& round, int helpers, int64_t count,
                     const augment::PieceRunner::Body& body) {
  PieceShare* share = round.NewPieceShare();
  share->count = count;
  share->body = &body;
  const auto spawned = static_cast<int>(std::min<int64_t>(helpers, count - 1));
  for (int h = 0; h < spawned; ++h) {
    RunTask(*round.group(), round.tasks_done(), [share] { Help(share); });
  }
  for (int64_t i; (i = share->next.fetch_add(1)) < count;) {
    body(i);
  }
  for (int a; (a = share->active.load()) != 0;) {
    share->active.wait(a);
  }
}

}  // namespace patchfeed::loader::internal_loader
