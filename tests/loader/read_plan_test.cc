// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// SplitBoxAtChunks / GroupCells: cells tile the box exactly, each touches one chunk (or none,
// when all padding), and reading the cells one by one equals reading the box whole.

#include "loader/internal/read_plan.h"

#include <numeric>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codec/frame_writer.h"
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
  auto g = codec::NdGeometry::Make(meta, 2);
  EXPECT_TRUE(g.ok());
  return *g;
}

TEST(ReadPlanTest, CellsTileTheBoxAlongChunkBoundaries) {
  const codec::NdGeometry g = Geometry({10, 20}, {4, 8}, {2, 4});
  const codec::Box box{{-3, 5}, {7, 30}};  // crosses the lower border of axis 0, upper of 1
  const std::vector<int64_t> strides{25 * 2, 2};
  const auto cells = SplitBoxAtChunks(box, g, strides);
  // Axis 0 cut at 4: [-3,4) [4,7); axis 1 at 8, 16: [5,8) [8,16) [16,30).
  ASSERT_EQ(cells.size(), 6u);
  EXPECT_EQ(cells[0].box.start, (std::vector<int64_t>{-3, 5}));
  EXPECT_EQ(cells[0].box.stop, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(cells[0].chunk, 0);
  EXPECT_EQ(cells[0].dst_offset, 0);
  EXPECT_EQ(cells[2].box.stop, (std::vector<int64_t>{4, 30}));
  EXPECT_EQ(cells[2].chunk, 2);
  EXPECT_EQ(cells[3].chunk, 3);  // chunks_per_dim = (3, 3)
  EXPECT_EQ(cells[4].dst_offset, 7 * 50 + 3 * 2);
  int64_t bytes = 0;
  for (const auto& c : cells) {
    bytes += c.nbytes;
  }
  EXPECT_EQ(bytes, 10 * 25 * 2);
  // [-3,4) x [5,8): inside rows 0..3 (blocks 0, 1), columns 5..7 (block 1 of chunk 0).
  EXPECT_EQ(cells[0].decoded_bytes, 2 * 1 * 8 * 2);
}

TEST(ReadPlanTest, BoxesOutsideTheArrayArePaddingCells) {
  const codec::NdGeometry g = Geometry({10, 20}, {4, 8}, {2, 4});
  const auto cells = SplitBoxAtChunks({{12, 0}, {16, 8}}, g, std::vector<int64_t>{16, 2});
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].chunk, -1);
  EXPECT_EQ(cells[0].decoded_bytes, 0);
}

TEST(ReadPlanTest, LargeCellsSplitIntoSlabsOfWholeBlocks) {
  // Chunks 16x20, blocks 4x5 of int16: the cell [-2, 13) x [0, 20) of chunk 0 (part padding)
  // is cut on axis 0 at block boundaries 4, 8, 12 into slabs of at least 100 bytes.
  const codec::NdGeometry g = Geometry({40, 20}, {16, 20}, {4, 5});
  const std::vector<int64_t> strides{20 * 2, 2};
  const codec::Box box{{-2, 0}, {13, 20}};
  const auto cells = SplitBoxAtChunks(box, g, strides);
  ASSERT_EQ(cells.size(), 1u);
  const auto slabs = SplitCellsAtBlocks(cells, g, strides, 100);
  // Planes are 40 bytes: [-2,4) 240 B, [4,8) 160 B, [8,13) 200 B (the rest, 40 B, joins it).
  ASSERT_EQ(slabs.size(), 3u);
  EXPECT_EQ(slabs[0].box.start, (std::vector<int64_t>{-2, 0}));
  EXPECT_EQ(slabs[0].box.stop, (std::vector<int64_t>{4, 20}));
  EXPECT_EQ(slabs[1].box.start[0], 4);
  EXPECT_EQ(slabs[1].box.stop[0], 8);
  EXPECT_EQ(slabs[1].dst_offset, 6 * 40);
  EXPECT_EQ(slabs[2].box.start[0], 8);
  EXPECT_EQ(slabs[2].box.stop[0], 13);
  int64_t bytes = 0;
  for (const auto& c : slabs) {
    EXPECT_EQ(c.chunk, 0);
    bytes += c.nbytes;
  }
  EXPECT_EQ(bytes, cells[0].nbytes);
  // Small cells, padding-only cells and cells inside one block stay whole.
  EXPECT_EQ(SplitCellsAtBlocks(cells, g, strides, 1000).size(), 1u);
  EXPECT_EQ(
      SplitCellsAtBlocks(SplitBoxAtChunks({{50, 0}, {60, 20}}, g, strides), g, strides, 1).size(),
      1u);
  EXPECT_EQ(
      SplitCellsAtBlocks(SplitBoxAtChunks({{1, 0}, {3, 5}}, g, strides), g, strides, 1).size(), 1u);
}

TEST(ReadPlanTest, GroupsCellsIntoRunsOfAtLeastMinBytes) {
  std::vector<ReadCell> cells(5);
  const int64_t sizes[] = {10, 30, 5, 5, 50};
  for (size_t i = 0; i < 5; ++i) {
    cells[i].nbytes = sizes[i];
  }
  EXPECT_EQ(GroupCells(cells, 20), (std::vector<size_t>{2, 5}));
  EXPECT_EQ(GroupCells(cells, 0), (std::vector<size_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(GroupCells(cells, 1000), (std::vector<size_t>{5}));
  EXPECT_TRUE(GroupCells({}, 10).empty());
}

TEST(ReadPlanTest, ReadingCellByCellEqualsReadingTheBox) {
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
  std::vector<std::byte> pieces(whole.size(), std::byte{0x5A});
  const std::vector<int64_t> strides{13 * 9 * 2, 9 * 2, 2};
  codec::BoxReadScratch scratch;
  for (const ReadCell& cell : SplitBoxAtChunks(box, reader.geometry(), strides)) {
    ASSERT_OK(reader.ReadBox(cell.box, {pieces.data() + cell.dst_offset, cell.shape, strides}, pad,
                             scratch));
  }
  EXPECT_EQ(pieces, whole);
  EXPECT_EQ(BoxToString(box), "[-2:6, 3:16, 6:15]");
}

}  // namespace
}  // namespace patchfeed::loader::internal_loader
