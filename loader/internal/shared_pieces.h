// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_SHARED_PIECES_H_
#define PATCHFEED_LOADER_INTERNAL_SHARED_PIECES_H_

/// \file
/// How an augmented sample's pieces (augment::PieceRunner) run on the loader's pool: the
/// thread that owns the sample claims pieces from a shared counter, and helper tasks spawned
/// into the round's task group claim from the same counter.
///
/// Why not a task group of the sample's own, waited on in isolation (as before): the thread
/// that runs a round waits for the round's tasks in the round's isolation, and TBB lets an
/// isolated waiter take only tasks spawned in the same isolation. The pieces of a sample a
/// second thread ran were spawned in that sample's isolation, so the round's thread, done with
/// its own sample, could not help and spun until the other sample finished (2.5 % of a
/// 4-channel sample's CPU). Helpers spawned from a round task carry the round's isolation, so
/// the round's thread takes them. The owner itself never waits inside TBB: after the counter
/// runs out it blocks until the pieces in flight on other threads return, so it never starts a
/// second sample on its staging while the first one's pieces still use it.
///
/// A helper that starts after the pieces ran out claims nothing and returns; the state it
/// reads lives in the round, which outlives every task of its group.

#include <atomic>
#include <cstdint>

#include "augment/piece_runner.h"

namespace patchfeed::loader::internal_loader {

class ReadRound;

/// The counter the owner and the helpers of one PieceRunner::ForEach share.
struct PieceShare {
  std::atomic<int64_t> next{0};  ///< the next piece to claim
  std::atomic<int> active{0};    ///< helpers between their first and last claim
  int64_t count = 0;
  const augment::PieceRunner::Body* body = nullptr;
};

/// Runs body over [0, count) on this thread and up to `helpers` tasks of `round`'s group
/// (which must be running one of the round's tasks, or the round itself); returns when every
/// piece has returned.
void RunSharedPieces(ReadRound& round, int helpers, int64_t count,
                     const augment::PieceRunner::Body& body);

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_SHARED_PIECES_H_
