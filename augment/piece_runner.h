// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_PIECE_RUNNER_H_
#define PATCHFEED_AUGMENT_PIECE_RUNNER_H_

/// \file
/// PieceRunner: how the caller runs the independent pieces of one sample's work. augment/
/// starts no threads. A kernel whose work splits (the resampler: columns of output tiles) hands
/// its pieces to the runner it was given; the default runs them one after another on the
/// calling thread, the loader's runs them as tasks on its pool, so one expensive sample no
/// longer holds a batch back on a single core. Pieces write disjoint parts of the output and
/// only read what they share, so the result is the same, bit for bit, however they run.

#include <cstdint>
#include <functional>
#include <utility>

namespace patchfeed::augment {

class PieceRunner {
 public:
  using Body = std::function<void(int64_t piece)>;
  /// Calls body(0) ... body(count - 1), each once, in any order, possibly at the same time,
  /// and returns when all of them have returned.
  using Run = std::function<void(int64_t count, const Body& body)>;

  /// One piece after another, on the calling thread.
  PieceRunner() = default;
  explicit PieceRunner(Run run) : run_(std::move(run)) {}

  /// Runs body over [0, count). `body` must not throw.
  void ForEach(int64_t count, const Body& body) const {
    if (!run_ || count <= 1) {
      for (int64_t i = 0; i < count; ++i) {
        body(i);
      }
      return;
    }
    run_(count, body);
  }

 private:
  Run run_;
};

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_PIECE_RUNNER_H_
