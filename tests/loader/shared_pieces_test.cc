// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// RunSharedPieces: every piece runs exactly once and has returned when the call returns, and
// the thread that waits for the round (in the round's isolation, as BatchProducer::RunRound
// waits) takes the helpers of a sample another thread runs.

#include "loader/internal/shared_pieces.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include "loader/internal/read_round.h"
#include "loader/internal/task_spawn.h"

namespace patchfeed::loader::internal_loader {
namespace {

// Runs `sample` as a task of a round whose waiter is this thread, isolated like RunRound:
// this thread holds back (as it would run a sample of its own) until the other thread has
// taken the task, then waits for the round.
template <typename F>
void RunAsRoundTask(ReadRound& round, tbb::task_group& group, TsanToken& done, F& sample) {
  tbb::this_task_arena::isolate([&] {
    std::atomic<bool> started{false};
    RunTask(group, &done, [&sample, &round, &started] {
      started = true;
      sample(round);
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!started.load() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    group.wait();
  });
  TsanAcquire(&done);
}

TEST(SharedPiecesTest, EveryPieceRunsOnceBeforeTheCallReturns) {
  if (tbb::info::default_concurrency() < 2) {
    GTEST_SKIP() << "needs a second thread";
  }
  tbb::task_arena arena(2);
  arena.execute([] {
    for (int rep = 0; rep < 200; ++rep) {
      tbb::task_group group;
      TsanToken done;
      ReadRound round(0, BatchId{}, 1, 1, false, false, &group, &done);
      const int64_t count = 1 + rep % 40;  // 1 piece (no helper) to more than the helpers
      std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
      bool complete = true;
      auto sample = [&](ReadRound& r) {
        RunSharedPieces(r, 3, count, [&](int64_t i) { hits[static_cast<size_t>(i)] += 1; });
        for (const auto& h : hits) {
          complete &= h.load() == 1;
        }
      };
      RunAsRoundTask(round, group, done, sample);
      EXPECT_TRUE(complete) << "rep " << rep;
      for (const auto& h : hits) {
        EXPECT_EQ(h.load(), 1) << "rep " << rep;
      }
    }
  });
}

TEST(SharedPiecesTest, TheRoundsWaiterHelps) {
  // Piece 0 holds its thread until another thread has run a piece: only the round's waiter,
  // blocked in the round's isolation, can be that thread (the arena has two). Pieces spawned
  // in an isolation of their own would leave piece 0 waiting out its deadline.
  if (tbb::info::default_concurrency() < 2) {
    GTEST_SKIP() << "needs a second thread";
  }
  tbb::task_arena arena(2);
  arena.execute([] {
    tbb::task_group group;
    TsanToken done;
    ReadRound round(0, BatchId{}, 1, 1, false, false, &group, &done);
    constexpr int64_t kCount = 16;
    std::vector<std::atomic<std::thread::id>> ran(kCount);
    bool helped = false;
    auto sample = [&](ReadRound& r) {
      RunSharedPieces(r, 1, kCount, [&](int64_t i) {
        const std::thread::id me = std::this_thread::get_id();
        ran[static_cast<size_t>(i)] = me;
        if (i != 0) {
          return;
        }
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (!helped && std::chrono::steady_clock::now() < deadline) {
          for (size_t j = 1; j < ran.size(); ++j) {
            const std::thread::id other = ran[j].load();
            helped |= other != std::thread::id{} && other != me;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      });
    };
    RunAsRoundTask(round, group, done, sample);
    EXPECT_TRUE(helped) << "no other thread ran a piece while piece 0 waited";
  });
}

}  // namespace
}  // namespace patchfeed::loader::internal_loader
