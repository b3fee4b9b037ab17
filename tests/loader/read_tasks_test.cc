// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// GroupPieces: runs cover every piece of a plan once, in order, each of at least min_bytes;
// large chunk pieces become runs of whole block rows; reading run by run equals reading the box.
// (The plan itself, PlanBox, is tested in tests/codec/box_plan_test.cc.)

#include "loader/internal/read_tasks.h"

#include <numeric>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codec/b2nd/frame_writer.h"
#include "codec/b2nd/nd_reader.h"
#include "tests/loader/loader_testutil.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::loader::internal_loader {
namespace {

codec::NdGeometry Geometry(std::vector<int64_t> shape, std::vector<int32_t> chunk,
                           std::vector<int32_t> block) {
  codec::B2ndMeta meta;
  meta.shape = std::move(shape);
  meta.chunkshape = std::move(chunk);
  meta.blockshape = std::move(block);
  meta.dtype = "<i2";
  auto g = codec::B2ndGeometry(meta, 2);
  EXPECT_TRUE(g.ok());
  return *g;
}

codec::BoxPlan Plan(const codec::NdGeometry& g, const codec::Box& box) {
  codec::BoxPlan plan;
  EXPECT_OK(codec::PlanBox(g, box, {}, &plan));
  return plan;
}

std::vector<int64_t> Ends(const std::vector<PieceRun>& runs) {
  std::vector<int64_t> ends;
  for (const PieceRun& r : runs) {
    ends.push_back(r.end);
  }
  return ends;
}

TEST(ReadTasksTest, GroupsPiecesIntoRunsOfAtLeastMinBytes) {
  // One block per chunk (nothing to split): pieces of 10, then 8 x 20, then 10 bytes.
  const codec::NdGeometry g = Geometry({100}, {10}, {10});
  const codec::BoxPlan plan = Plan(g, {{5}, {95}});
  ASSERT_EQ(plan.num_pieces(), 10);
  EXPECT_EQ(Ends(GroupPieces(plan, 30)), (std::vector<int64_t>{2, 4, 6, 8, 10}));
  EXPECT_EQ(Ends(GroupPieces(plan, 0)), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(Ends(GroupPieces(plan, 1000)), (std::vector<int64_t>{10}));
  EXPECT_TRUE(GroupPieces(Plan(g, {{5}, {5}}), 10).empty());
  for (const PieceRun& r : GroupPieces(plan, 30)) {
    EXPECT_EQ(r.rows_end, 0);
  }
}

TEST(ReadTasksTest, LargePiecesSplitIntoRunsOfWholeBlockRows) {
  // Chunks 16x20, blocks 4x5 of int16: the box [-2, 13) x [0, 20) is the piece [0, 13) of
  // chunk 0 and the pad rows [-2, 0). Planes are 40 bytes; block rows [0,4) 160 B, [4,8) 160 B,
  // [8,12) 160 B and [12,13) 40 B, which joins the row before it (too small on its own).
  const codec::NdGeometry g = Geometry({40, 20}, {16, 20}, {4, 5});
  const codec::BoxPlan plan = Plan(g, {{-2, 0}, {13, 20}});
  const std::vector<PieceRun> runs = GroupPieces(plan, 100);
  ASSERT_EQ(runs.size(), 4u);
  const int64_t starts[] = {0, 4, 8}, stops[] = {4, 8, 13};
  int64_t bytes = 0;
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(runs[k].begin, 0);
    EXPECT_EQ(runs[k].end, 1);
    const codec::BoxPiece p = runs[k].Piece(plan, 0);
    EXPECT_EQ(p.chunk, 0);
    EXPECT_EQ(p.lo[0], starts[k]);
    EXPECT_EQ(p.hi[0], stops[k]);
    bytes += p.nbytes;
  }
  EXPECT_EQ(bytes, plan.piece(0).nbytes);
  EXPECT_EQ(runs[3].begin, 1);  // the pad piece
  EXPECT_EQ(runs[3].rows_end, 0);
  // Small pieces, pad-only plans and pieces inside one block stay whole.
  EXPECT_EQ(GroupPieces(plan, 1000).size(), 1u);
  EXPECT_EQ(GroupPieces(Plan(g, {{50, 0}, {60, 20}}), 1).size(), 1u);
  EXPECT_EQ(GroupPieces(Plan(g, {{1, 0}, {3, 5}}), 1).size(), 1u);
}

TEST(ReadTasksTest, ReadingRunByRunEqualsReadingTheBox) {
  testing::TempDir dir;
  std::vector<int16_t> data(7 * 13 * 11);
  std::iota(data.begin(), data.end(), int16_t{1});
  codec::B2ndWriteOptions w;
  w.chunkshape = {3, 5, 4};
  w.blockshape = {2, 3, 2};
  const std::string path = dir.path() + "/a.b2nd";
  ASSERT_OK(codec::WriteB2nd(path, std::as_bytes(std::span(data)), {7, 13, 11}, "<i2", w));
  ASSERT_OK_AND_ASSIGN(auto reader, codec::NdArrayReader::Open(path));
  const std::vector<std::byte> pad{std::byte{0xFF}, std::byte{0xFF}};
  const codec::Box box{{-2, 3, 6}, {6, 16, 15}};
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> whole, reader.ReadBox(box, pad));
  const codec::BoxPlan plan = Plan(reader.geometry(), box);
  for (const int64_t min_bytes : {1, 40, 200, 1 << 20}) {
    std::vector<std::byte> got(whole.size(), std::byte{0x5A});
    const StridedView dst = StridedView::Contiguous(got.data(), {8, 13, 9}, 2);
    codec::BoxReadScratch scratch;
    int64_t pieces = 0;
    for (const PieceRun& run : GroupPieces(plan, min_bytes)) {
      EXPECT_EQ(run.begin, pieces - (run.rows_begin > 0 ? 1 : 0));
      pieces = run.end;
      for (int64_t i = run.begin; i < run.end; ++i) {
        ASSERT_OK(reader.ReadPiece(plan, run.Piece(plan, i), dst, pad, scratch));
      }
    }
    EXPECT_EQ(pieces, plan.num_pieces());
    EXPECT_EQ(got, whole) << "min_bytes " << min_bytes;
  }
}

}  // namespace
}  // namespace patchfeed::loader::internal_loader
