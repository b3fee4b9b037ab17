// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// PlanBox: the pieces of a box tile it exactly and disjointly, each chunk piece lies in the
// chunk it names and touches exactly the blocks it lists, a box outside the array is one pad
// piece; block rows of a piece decode only their own blocks; reading the pieces one by one
// (ReadPiece) equals ReadBox.

#include "codec/box_plan.h"

#include <numeric>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codec/b2nd/frame_writer.h"
#include "codec/b2nd/nd_reader.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"

namespace patchfeed::codec {
namespace {

using ::testing::HasSubstr;

NdGeometry Geometry(std::vector<int64_t> shape, std::vector<int32_t> chunk,
                    std::vector<int32_t> block) {
  B2ndMeta meta;
  meta.shape = std::move(shape);
  meta.chunkshape = std::move(chunk);
  meta.blockshape = std::move(block);
  meta.dtype = "<i2";
  auto g = B2ndGeometry(meta, 2);
  EXPECT_TRUE(g.ok());
  return *g;
}

// Counts, for every item of a 2-D box, how many pieces cover it; checks each chunk piece
// against its chunk and its blocks.
void ExpectPiecesTileTheBox(const BoxPlan& plan, const NdGeometry& g) {
  const Box& box = plan.box();
  const int64_t rows = box.stop[0] - box.start[0], cols = box.stop[1] - box.start[1];
  std::vector<int> covered(static_cast<size_t>(rows * cols), 0);
  int64_t bytes = 0;
  for (int64_t i = 0; i < plan.num_pieces(); ++i) {
    const BoxPiece p = plan.piece(i);
    bytes += p.nbytes;
    EXPECT_EQ(p.nbytes, (p.hi[0] - p.lo[0]) * (p.hi[1] - p.lo[1]) * 2);
    for (int64_t r = p.lo[0]; r < p.hi[0]; ++r) {
      for (int64_t c = p.lo[1]; c < p.hi[1]; ++c) {
        ++covered[static_cast<size_t>((r - box.start[0]) * cols + c - box.start[1])];
        const bool inside = r >= 0 && r < g.shape[0] && c >= 0 && c < g.shape[1];
        EXPECT_EQ(inside, p.chunk >= 0) << "piece " << i << " at " << r << "," << c;
      }
    }
    if (p.chunk < 0) {
      continue;
    }
    // The chunk it names holds all of it, and its blocks are exactly the ones it touches.
    EXPECT_EQ(p.chunk, p.lo[0] / g.chunkshape[0] * g.chunks_per_dim[1] + p.lo[1] / g.chunkshape[1]);
    for (size_t d = 0; d < 2; ++d) {
      EXPECT_EQ(p.origin[d], p.lo[d] / g.chunkshape[d] * g.chunkshape[d]);
      EXPECT_LE(p.hi[d], p.origin[d] + g.chunkshape[d]);
      EXPECT_EQ(p.block_lo[d], (p.lo[d] - p.origin[d]) / g.blockshape[d]);
      EXPECT_EQ(p.block_hi[d], (p.hi[d] - 1 - p.origin[d]) / g.blockshape[d] + 1);
    }
  }
  EXPECT_EQ(bytes, rows * cols * 2);
  for (size_t k = 0; k < covered.size(); ++k) {
    ASSERT_EQ(covered[k], 1) << "item " << k;
  }
}

TEST(BoxPlanTest, PiecesTileTheBoxOneChunkEach) {
  const NdGeometry g = Geometry({10, 20}, {4, 8}, {2, 4});
  const Box box{{-3, 5}, {7, 30}};  // crosses the lower border of axis 0, upper of axis 1
  BoxPlan plan;
  ASSERT_OK(PlanBox(g, box, {}, &plan));
  // Inside: rows [0,4) [4,7) x columns [5,8) [8,16) [16,20); then the pads: rows [-3,0) and
  // columns [20,30) of rows [0,7).
  ASSERT_EQ(plan.num_pieces(), 6 + 2);
  const BoxPiece first = plan.piece(0);
  EXPECT_EQ(first.chunk, 0);
  EXPECT_EQ(RegionToString(2, first.lo, first.hi), "[0:4, 5:8]");
  EXPECT_EQ(plan.piece(2).chunk, 2);
  EXPECT_EQ(plan.piece(3).chunk, 3);  // chunks_per_dim = (3, 3)
  EXPECT_EQ(plan.piece(6).chunk, -1);
  EXPECT_EQ(plan.shape(), (std::vector<int64_t>{10, 25}));
  ExpectPiecesTileTheBox(plan, g);
  // Seeded boxes around and across the array.
  for (int64_t a = -9; a < 14; a += 3) {
    for (int64_t b = -7; b < 26; b += 5) {
      ASSERT_OK(PlanBox(g, {{a, b}, {a + 8, b + 11}}, {}, &plan));
      ExpectPiecesTileTheBox(plan, g);
    }
  }
}

TEST(BoxPlanTest, BoxesOutsideTheArrayAreOnePadPiece) {
  const NdGeometry g = Geometry({10, 20}, {4, 8}, {2, 4});
  BoxPlan plan;
  ASSERT_OK(PlanBox(g, {{12, 0}, {16, 8}}, {}, &plan));
  ASSERT_EQ(plan.num_pieces(), 1);
  EXPECT_EQ(plan.piece(0).chunk, -1);
  EXPECT_EQ(plan.piece(0).nbytes, 4 * 8 * 2);
  EXPECT_EQ(plan.block_row_axis(plan.piece(0)), -1);
  ASSERT_OK(PlanBox(g, {{3, 3}, {3, 9}}, {}, &plan));  // empty
  EXPECT_EQ(plan.num_pieces(), 0);
}

TEST(BoxPlanTest, RejectsBadBoxes) {
  const NdGeometry g = Geometry({10, 20}, {4, 8}, {2, 4});
  BoxPlan plan;
  EXPECT_THAT(PlanBox(g, {{0}, {3}}, {}, &plan),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("2 dimensions")));
  EXPECT_THAT(PlanBox(g, {{0, 5}, {3, 4}}, {}, &plan),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("dimension 1")));
  EXPECT_THAT(PlanBox(g, {{0, INT64_MIN}, {3, INT64_MAX}}, {}, &plan),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("dimension 1")));
}

TEST(BoxPlanTest, BlockRowsAreWholeBlocksOfThePiece) {
  // Chunks 16x20, blocks 4x5: the piece [0, 13) x [0, 20) of chunk 0 has 4 rows of blocks on
  // axis 0: [0,4) [4,8) [8,12) [12,13).
  const NdGeometry g = Geometry({40, 20}, {16, 20}, {4, 5});
  BoxPlan plan;
  ASSERT_OK(PlanBox(g, {{-2, 0}, {13, 20}}, {}, &plan));
  ASSERT_EQ(plan.num_pieces(), 2);  // the chunk, then the pad rows [-2, 0)
  const BoxPiece p = plan.piece(0);
  EXPECT_EQ(plan.block_row_axis(p), 0);
  ASSERT_EQ(plan.num_block_rows(p), 4);
  const BoxPiece middle = plan.BlockRows(p, 1, 3);
  EXPECT_EQ(RegionToString(2, middle.lo, middle.hi), "[4:12, 0:20]");
  EXPECT_EQ(middle.block_lo[0], 1);
  EXPECT_EQ(middle.block_hi[0], 3);
  EXPECT_EQ(middle.nbytes, 8 * 20 * 2);
  EXPECT_EQ(plan.BlockRows(p, 3, 4).nbytes, 1 * 20 * 2);
  // A piece inside one block has no rows to split.
  ASSERT_OK(PlanBox(g, {{1, 0}, {3, 5}}, {}, &plan));
  EXPECT_EQ(plan.block_row_axis(plan.piece(0)), -1);
  EXPECT_EQ(plan.num_block_rows(plan.piece(0)), 1);
  // The axis is the outermost one with more than one block.
  ASSERT_OK(PlanBox(g, {{1, 0}, {3, 20}}, {}, &plan));
  EXPECT_EQ(plan.block_row_axis(plan.piece(0)), 1);
}

TEST(BoxPlanTest, FilterMarksTheBlocksItDeclines) {
  const NdGeometry g = Geometry({10, 20}, {4, 8}, {2, 4});
  BlockFilter filter;
  filter.wants = [](const void*, const int64_t* lo, const int64_t*) { return lo[1] % 8 == 0; };
  BoxPlan plan;
  ASSERT_OK(PlanBox(g, {{-1, 2}, {9, 19}}, filter, &plan));
  EXPECT_TRUE(plan.filtered());
  int wanted = 0, declined = 0;
  for (int64_t i = 0; i < plan.num_pieces(); ++i) {
    const BoxPiece p = plan.piece(i);
    if (p.chunk < 0) {
      continue;
    }
    NdIndex k{};
    for (k[0] = p.block_lo[0]; k[0] < p.block_hi[0]; ++k[0]) {
      for (k[1] = p.block_lo[1]; k[1] < p.block_hi[1]; ++k[1]) {
        const bool expect = (p.origin[1] + k[1] * 4) % 8 == 0;
        EXPECT_EQ(plan.wants(p, k), expect);
        (expect ? wanted : declined) += 1;
      }
    }
  }
  EXPECT_GT(wanted, 0);
  EXPECT_GT(declined, 0);
  ASSERT_OK(PlanBox(g, {{-1, 2}, {9, 19}}, {}, &plan));
  EXPECT_FALSE(plan.filtered());
}

// The padding is asked about in tiles of the block grid continued past the border: a pad
// item is covered (once) exactly when its tile is wanted, and wanted tiles next to each other
// along the last axis are one piece.
TEST(BoxPlanTest, FilterDeclinesPaddingTilesToo) {
  const NdGeometry g = Geometry({10, 20}, {4, 8}, {2, 4});
  const Box box{{-5, -7}, {13, 26}};
  const auto floor_div = [](int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); };
  for (const bool join : {false, true}) {
    BlockFilter filter;
    filter.wants = join ? [](const void*, const int64_t* lo, const int64_t*) { return lo[0] < 0; }
                        : [](const void*, const int64_t*, const int64_t* hi) {
                            return (hi[1] / 4 + hi[0] / 2) % 2 == 0;  // a checkerboard
                          };
    BoxPlan plan;
    ASSERT_OK(PlanBox(g, box, filter, &plan));
    std::vector<int> cover(18 * 33, 0);
    int pads = 0;
    for (int64_t i = 0; i < plan.num_pieces(); ++i) {
      const BoxPiece p = plan.piece(i);
      if (p.chunk >= 0) {
        continue;
      }
      ++pads;
      for (int64_t y = p.lo[0]; y < p.hi[0]; ++y) {
        for (int64_t x = p.lo[1]; x < p.hi[1]; ++x) {
          ASSERT_TRUE(y < 0 || y >= 10 || x < 0 || x >= 20) << y << "," << x;
          cover[static_cast<size_t>((y + 5) * 33 + (x + 7))] += 1;
        }
      }
    }
    for (int64_t y = -5; y < 13; ++y) {
      for (int64_t x = -7; x < 26; ++x) {
        if (y >= 0 && y < 10 && x >= 0 && x < 20) {
          continue;
        }
        const int64_t lo[2] = {floor_div(y, 2) * 2, floor_div(x, 4) * 4};
        const int64_t hi[2] = {lo[0] + 2, lo[1] + 4};
        EXPECT_EQ(cover[static_cast<size_t>((y + 5) * 33 + (x + 7))],
                  filter.wants(nullptr, lo, hi) ? 1 : 0)
            << y << "," << x;
      }
    }
    // Below the array: tile rows -3..-1 (items -5..-1), each one run from x = -7 to 26.
    if (join) {
      EXPECT_EQ(pads, 3);
    }
  }
}

// Blocks of one item make a grid too fine to ask about tile by tile: past the cap the padding
// stays whole slabs, every pad item filled once, as without a filter.
TEST(BoxPlanTest, PaddingOnAVeryFineGridStaysWhole) {
  const NdGeometry g = Geometry({4, 4}, {2, 2}, {1, 1});
  BlockFilter filter;
  filter.wants = [](const void*, const int64_t*, const int64_t*) { return false; };
  BoxPlan plan;
  ASSERT_OK(PlanBox(g, {{-300, -300}, {304, 304}}, filter, &plan));
  int64_t pad_items = 0;
  int pads = 0;
  for (int64_t i = 0; i < plan.num_pieces(); ++i) {
    const BoxPiece p = plan.piece(i);
    if (p.chunk < 0) {
      ++pads;
      pad_items += (p.hi[0] - p.lo[0]) * (p.hi[1] - p.lo[1]);
    }
  }
  EXPECT_LE(pads, 4);
  EXPECT_EQ(pad_items, 604 * 604 - 4 * 4);
}

class BoxPlanReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<int16_t> data(7 * 13 * 11);
    std::iota(data.begin(), data.end(), int16_t{1});
    B2ndWriteOptions w;
    w.chunkshape = {3, 5, 4};
    w.blockshape = {2, 3, 2};
    ASSERT_OK(WriteB2nd(dir_ / "a.b2nd", std::as_bytes(std::span(data)), {7, 13, 11}, "<i2", w));
    ASSERT_OK_AND_ASSIGN(reader_, NdArrayReader::Open(dir_ / "a.b2nd"));
  }

  testing::TempDir dir_;
  NdArrayReader reader_;
  const std::vector<std::byte> pad_{std::byte{0xFF}, std::byte{0xFF}};
};

TEST_F(BoxPlanReadTest, ReadingPieceByPieceEqualsReadingTheBox) {
  const Box box{{-2, 3, 6}, {6, 16, 15}};
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> whole, reader_.ReadBox(box, pad_));
  std::vector<std::byte> pieces(whole.size(), std::byte{0x5A});
  const NdView dst = NdView::Contiguous(pieces.data(), {8, 13, 9}, 2);
  BoxPlan plan;
  ASSERT_OK(PlanBox(reader_.geometry(), box, {}, &plan));
  BoxReadScratch scratch;
  // Backwards: no piece depends on another.
  for (int64_t i = plan.num_pieces(); i-- > 0;) {
    ASSERT_OK(reader_.ReadPiece(plan, plan.piece(i), dst, pad_, scratch));
  }
  EXPECT_EQ(pieces, whole);
  EXPECT_EQ(BoxToString(box), "[-2:6, 3:16, 6:15]");
}

TEST_F(BoxPlanReadTest, BlockRowsDecodeOnlyTheirOwnBlocks) {
  // One chunk piece, [0,3) x [0,5) x [0,4) of chunk 0: 2 x 2 x 2 blocks of 2x3x2 int16 (24
  // bytes), of which the block rows on axis 0 are [0,2) and [2,3).
  const Box box{{0, 0, 0}, {3, 5, 4}};
  BoxPlan plan;
  ASSERT_OK(PlanBox(reader_.geometry(), box, {}, &plan));
  ASSERT_EQ(plan.num_pieces(), 1);
  const BoxPiece piece = plan.piece(0);
  ASSERT_EQ(plan.num_block_rows(piece), 2);
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> whole, reader_.ReadBox(box, pad_));
  std::vector<std::byte> got(whole.size(), std::byte{0x5A});
  const NdView dst = NdView::Contiguous(got.data(), {3, 5, 4}, 2);
  for (int64_t row = 0; row < 2; ++row) {
    BoxReadScratch scratch;  // a fresh decoder counts this row's blocks only
    ASSERT_OK(reader_.ReadPiece(plan, plan.BlockRows(piece, row, row + 1), dst, pad_, scratch));
    EXPECT_EQ(scratch.bytes_decoded(), 4 * 24) << "row " << row;
  }
  EXPECT_EQ(got, whole);
}

TEST_F(BoxPlanReadTest, ReadPieceRefusesAPlanOfAnotherArray) {
  BoxPlan plan;
  const NdGeometry other = Geometry({7, 13, 11}, {3, 5, 4}, {1, 3, 2});
  ASSERT_OK(PlanBox(other, {{0, 0, 0}, {2, 2, 2}}, {}, &plan));
  std::vector<std::byte> out(16);
  BoxReadScratch scratch;
  EXPECT_THAT(reader_.ReadPiece(plan, plan.piece(0), NdView::Contiguous(out.data(), {2, 2, 2}, 2),
                                pad_, scratch),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("another array")));
}

}  // namespace
}  // namespace patchfeed::codec
