// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// TileGrid (nnU-Net's sliding-window positions) and TileReader (every tile of a case, read
// ahead on the loader's pool). Python checks the positions against nnunetv2 itself
// (tests/python/test_tiles.py); here the reader's tiles are checked against the codec's
// single-threaded ReadBox and stitched back into the case.

#include "loader/tiles.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codec/dtype.h"
#include "codec/open_array.h"
#include "loader/tile_grid.h"
#include "tests/loader/loader_testutil.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::loader {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TempDir;

using Steps = std::vector<std::vector<int64_t>>;

TEST(SlidingWindowStepsTest, MatchesNnUNetsExample) {
  // nnU-Net's comment: image 110, patch 64, step 0.5 -> starts 0, 23, 46.
  const std::vector<int64_t> image = {110, 64};
  const std::vector<int64_t> tile = {64, 64};
  ASSERT_OK_AND_ASSIGN(Steps steps, SlidingWindowSteps(image, tile, 0.5));
  EXPECT_THAT(steps, ElementsAre(ElementsAre(0, 23, 46), ElementsAre(0)));
}

TEST(SlidingWindowStepsTest, RoundsHalfToEvenAsNumPy) {
  // 9 voxels, tile 4, step 0.75: 3 tiles 2.5 apart; np.round(2.5) is 2.
  const std::vector<int64_t> image = {9};
  const std::vector<int64_t> tile = {4};
  ASSERT_OK_AND_ASSIGN(Steps steps, SlidingWindowSteps(image, tile, 0.75));
  EXPECT_THAT(steps, ElementsAre(ElementsAre(0, 2, 5)));
}

TEST(SlidingWindowStepsTest, RefusesWhatNnUNetAsserts) {
  const std::vector<int64_t> image = {20};
  const std::vector<int64_t> tile = {8};
  const std::vector<int64_t> big = {30};
  EXPECT_THAT(SlidingWindowSteps(image, big, 0.5).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("fit in the image")));
  EXPECT_THAT(SlidingWindowSteps(image, tile, 0).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("(0, 1]")));
  EXPECT_THAT(SlidingWindowSteps(image, tile, 1.5).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("(0, 1]")));
  // A step under one voxel would repeat positions.
  EXPECT_THAT(SlidingWindowSteps(image, tile, 0.1).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("less than one voxel")));
}

TEST(TileGridTest, PadsSmallAxesSymmetricallyAsNnUNet) {
  // Axis 0: 5 voxels in a tile of 8, padded (8 - 5) // 2 = 1 before: the tile starts at -1.
  ASSERT_OK_AND_ASSIGN(TileGrid grid, TileGrid::Create({5, 30}, {8, 16}, 0.5));
  EXPECT_THAT(grid.starts(), ElementsAre(ElementsAre(-1), ElementsAre(0, 7, 14)));
  EXPECT_EQ(grid.num_tiles(), 3);
  const codec::Box last = grid.box(2);
  EXPECT_THAT(last.start, ElementsAre(-1, 14));
  EXPECT_THAT(last.stop, ElementsAre(7, 30));
}

TEST(TileGridTest, TilesEachSliceWithATileOfOneAxisFewer) {
  ASSERT_OK_AND_ASSIGN(TileGrid grid, TileGrid::Create({3, 20, 12}, {16, 16}, 0.5));
  EXPECT_TRUE(grid.slices());
  EXPECT_THAT(grid.tile_extent(), ElementsAre(1, 16, 16));
  EXPECT_THAT(grid.starts(), ElementsAre(ElementsAre(0, 1, 2), ElementsAre(0, 4), ElementsAre(-2)));
  EXPECT_EQ(grid.num_tiles(), 6);
  const codec::Box b = grid.box(3);  // slice 1, second tile along axis 1
  EXPECT_THAT(b.start, ElementsAre(1, 4, -2));
  EXPECT_THAT(b.stop, ElementsAre(2, 20, 14));
}

TEST(TileGridTest, RefusesBadOverlapAndRank) {
  EXPECT_THAT(TileGrid::Create({20, 20}, {8, 8}, 1.0).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("[0, 1)")));
  EXPECT_THAT(TileGrid::Create({20, 20}, {8, 8}, -0.25).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("[0, 1)")));
  EXPECT_THAT(TileGrid::Create({20, 20}, {8, 8}, std::nan("")).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("[0, 1)")));
  EXPECT_THAT(TileGrid::Create({20, 20, 20}, {8}, 0.5).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("as many axes")));
  EXPECT_THAT(TileGrid::Create({20, 20}, {8, 8, 8}, 0.5).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("as many axes")));
}

class TileReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SyntheticDatasetOptions o = testing::TinyDatasetOptions(2);  // (2, 20, 18, 22)
    ASSERT_OK_AND_ASSIGN(dataset_, WriteSyntheticDataset(dir_.path(), o));
  }

  TileConfig Config(std::vector<int64_t> tile, double overlap) const {
    TileConfig c;
    c.dataset = dataset_;
    c.case_index = 1;
    c.tile_size = std::move(tile);
    c.overlap = overlap;
    c.num_threads = 2;
    c.pin_memory = PinMode::kOff;
    c.min_task_bytes = 1024;  // small: a tile becomes many tasks
    return c;
  }

  // The whole array `name` of case 1, read on this thread.
  std::vector<std::byte> WholeCase(const std::string& name, std::vector<int64_t>* shape) const {
    auto reader = codec::OpenArray(dataset_.path(1, dataset_.array_index(name)));
    EXPECT_TRUE(reader.ok());
    *shape = (*reader)->geometry().shape;
    codec::Box box{std::vector<int64_t>(shape->size(), 0), *shape};
    auto bytes = (*reader)->ReadBox(box, std::vector<std::byte>((*reader)->itemsize()));
    EXPECT_TRUE(bytes.ok());
    return *bytes;
  }

  // Reads every tile; checks each against ReadBox of its box (pad -1 for seg, 0 for the
  // image) and writes its part inside the case into a stitched copy, which must equal the case.
  void ExpectTilesRebuildTheCase(const TileConfig& config) {
    ASSERT_OK_AND_ASSIGN(auto tiles, TileReader::Create(config));
    const TileGrid& grid = tiles->grid();
    std::vector<std::vector<int64_t>> shapes(2);
    const std::vector<std::byte> whole[2] = {WholeCase("image", &shapes[0]),
                                             WholeCase("seg", &shapes[1])};
    std::vector<std::byte> stitched[2] = {std::vector<std::byte>(whole[0].size()),
                                          std::vector<std::byte>(whole[1].size())};
    std::vector<uint8_t> covered(whole[1].size() / 2, 0);  // a voxel: one int16 of seg
    int64_t count = 0;
    for (;; ++count) {
      ASSERT_OK_AND_ASSIGN(Tile tile, tiles->Next());
      if (!tile) {
        break;
      }
      EXPECT_EQ(tile.index(), count);
      const codec::Box box = tile.box();
      const codec::Box want = grid.box(count);
      EXPECT_EQ(box.start, want.start);
      EXPECT_EQ(box.stop, want.stop);
      ASSERT_EQ(tile.arrays().size(), 2u);
      for (int a = 0; a < 2; ++a) {
        const ArrayView& v = tile.arrays()[static_cast<size_t>(a)];
        ASSERT_EQ(v.shape.size(), 1 + grid.tile_size().size());
        EXPECT_EQ(std::vector<int64_t>(v.shape.begin() + 1, v.shape.end()), grid.tile_size());
        auto reader = codec::OpenArray(dataset_.path(1, a));
        ASSERT_TRUE(reader.ok());
        ASSERT_OK_AND_ASSIGN(auto pad,
                             codec::ItemFromDouble(v.dtype, v.itemsize, a == 1 ? -1.0 : 0.0));
        codec::Box full{{0}, {shapes[static_cast<size_t>(a)][0]}};
        full.start.insert(full.start.end(), box.start.begin(), box.start.end());
        full.stop.insert(full.stop.end(), box.stop.begin(), box.stop.end());
        ASSERT_OK_AND_ASSIGN(std::vector<std::byte> expected, (*reader)->ReadBox(full, pad));
        ASSERT_EQ(static_cast<int64_t>(expected.size()), v.nbytes);
        EXPECT_EQ(std::memcmp(expected.data(), v.data, expected.size()), 0)
            << "tile " << count << " of array " << v.name;
        StitchInside(v, box, shapes[static_cast<size_t>(a)], stitched[a].data(),
                     a == 0 ? covered.data() : nullptr);
      }
    }
    EXPECT_EQ(count, grid.num_tiles());
    EXPECT_TRUE(std::all_of(covered.begin(), covered.end(), [](uint8_t c) { return c > 0; }));
    EXPECT_TRUE(stitched[0] == whole[0]) << "the image's tiles do not rebuild it";
    EXPECT_TRUE(stitched[1] == whole[1]) << "the seg's tiles do not rebuild it";
    // Past the end: empty tiles.
    ASSERT_OK_AND_ASSIGN(Tile after, tiles->Next());
    EXPECT_FALSE(after);
  }

  // Copies the part of tile view `v` (box `box`) inside a case of `shape` (C, Z, Y, X) into
  // `out`, marking covered voxels (of channel 0) when asked.
  static void StitchInside(const ArrayView& v, const codec::Box& box,
                           const std::vector<int64_t>& shape, std::byte* out, uint8_t* covered) {
    const auto item = static_cast<size_t>(v.itemsize);
    const int64_t zs = box.start[0], ys = box.start[1], xs = box.start[2];
    // A tile of one slice has no Z axis in its view: its Z stride is unused.
    const bool slices = v.shape.size() == 3;
    for (int64_t c = 0; c < shape[0]; ++c) {
      for (int64_t z = std::max<int64_t>(zs, 0); z < std::min(box.stop[0], shape[1]); ++z) {
        for (int64_t y = std::max<int64_t>(ys, 0); y < std::min(box.stop[1], shape[2]); ++y) {
          for (int64_t x = std::max<int64_t>(xs, 0); x < std::min(box.stop[2], shape[3]); ++x) {
            const std::byte* src = v.data + c * v.byte_strides[0] +
                                   (slices ? 0 : (z - zs) * v.byte_strides[1]) +
                                   (y - ys) * v.byte_strides[slices ? 1 : 2] +
                                   (x - xs) * v.byte_strides[slices ? 2 : 3];
            const int64_t at = ((c * shape[1] + z) * shape[2] + y) * shape[3] + x;
            std::memcpy(out + static_cast<size_t>(at) * item, src, item);
            if (covered != nullptr && c == 0) {
              covered[at] = 1;
            }
          }
        }
      }
    }
  }

  TempDir dir_;
  Dataset dataset_;
};

TEST_F(TileReaderTest, TilesRebuildTheCaseAtEveryOverlap) {
  for (const double overlap : {0.0, 0.25, 0.5}) {
    SCOPED_TRACE(overlap);
    ExpectTilesRebuildTheCase(Config({12, 8, 10}, overlap));
  }
}

TEST_F(TileReaderTest, PadsACaseSmallerThanTheTile) {
  // Case 1 is (24, 18, 26): the tile is larger along every axis but the first.
  TileConfig c = Config({16, 24, 32}, 0.5);
  c.read_ahead = 1;
  ExpectTilesRebuildTheCase(c);
}

TEST_F(TileReaderTest, TilesEachSliceWithA2dTile) {
  ExpectTilesRebuildTheCase(Config({12, 16}, 0.5));
}

TEST_F(TileReaderTest, ReadsTheConfiguredArraysWithTheirPadValues) {
  TileConfig c = Config({30, 8, 8}, 0.5);
  c.arrays = {{"seg", 7.0}};
  ASSERT_OK_AND_ASSIGN(auto tiles, TileReader::Create(c));
  ASSERT_OK_AND_ASSIGN(Tile tile, tiles->Next());
  ASSERT_EQ(tile.arrays().size(), 1u);
  const ArrayView* seg = tile.array("seg");
  ASSERT_NE(seg, nullptr);
  EXPECT_EQ(tile.array("image"), nullptr);
  // Case 1 has 24 voxels along Z; the tile of 30 starts at -3: its first slice is padding.
  EXPECT_EQ(tile.box().start[0], -3);
  int16_t first = 0;
  std::memcpy(&first, seg->data, sizeof(first));
  EXPECT_EQ(first, 7);
}

TEST_F(TileReaderTest, ACorruptChunkNamesTheFileAndTheBox) {
  const std::string image = dataset_.path(1, dataset_.array_index("image"));
  testing::CorruptEveryChunk(image);
  ASSERT_OK_AND_ASSIGN(auto tiles, TileReader::Create(Config({12, 8, 10}, 0.5)));
  auto tile = tiles->Next();
  EXPECT_THAT(tile.status(),
              StatusIs(StatusCode::kDataLoss,
                       AllOf(HasSubstr("case 'case_001'"), HasSubstr("array 'image'"),
                             HasSubstr(image), HasSubstr("tile 0 of "),
                             HasSubstr("box [0:2, 0:12, 0:8, 0:10]"), HasSubstr("chunk "))));
}

TEST_F(TileReaderTest, RefusesBadOptions) {
  TileConfig c = Config({12, 8}, 0.5);
  c.tile_size = {12, 8, 10, 4};
  EXPECT_THAT(TileReader::Create(c).status(),
              StatusIs(StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("case 'case_001'"), HasSubstr("as many axes"))));
  c = Config({12, 8, 10}, 1.0);
  EXPECT_THAT(TileReader::Create(c).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("overlap")));
  c = Config({12, 8, 10}, 0.5);
  c.case_index = 2;
  EXPECT_THAT(TileReader::Create(c).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("case index 2")));
  c = Config({12, 8, 10}, 0.5);
  c.arrays = {{"label", std::nullopt}};
  EXPECT_THAT(TileReader::Create(c).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("no array 'label'")));
  c = Config({12, 8, 10}, 0.5);
  c.read_ahead = 0;
  EXPECT_THAT(TileReader::Create(c).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("read_ahead must be >= 1")));
  c = Config({1 << 20, 1 << 20, 1 << 20}, 0.5);
  EXPECT_THAT(TileReader::Create(c).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("memory budget")));
  c = Config({64, 64, 64}, 0.5);  // 2.5 MiB a tile, 3 buffers
  c.memory_budget = 5 << 20;
  EXPECT_THAT(TileReader::Create(c).status(),
              StatusIs(StatusCode::kResourceExhausted, HasSubstr("memory budget")));
}

TEST_F(TileReaderTest, HoldingEveryBufferIsAnErrorNotAHang) {
  TileConfig c = Config({8, 8, 8}, 0.0);
  c.read_ahead = 1;
  ASSERT_OK_AND_ASSIGN(auto tiles, TileReader::Create(c));
  ASSERT_OK_AND_ASSIGN(Tile a, tiles->Next());
  ASSERT_OK_AND_ASSIGN(Tile b, tiles->Next());
  EXPECT_THAT(tiles->Next().status(),
              StatusIs(StatusCode::kResourceExhausted, HasSubstr("holds all 2 tile buffers")));
  a.Release();
  ASSERT_OK_AND_ASSIGN(Tile next, tiles->Next());
  EXPECT_EQ(next.index(), 2);
}

TEST_F(TileReaderTest, HeldTilesOutliveTheClosedReader) {
  ASSERT_OK_AND_ASSIGN(auto tiles, TileReader::Create(Config({8, 8, 8}, 0.0)));
  ASSERT_OK_AND_ASSIGN(Tile held, tiles->Next());
  const ArrayView image = held.arrays()[0];
  const std::vector<std::byte> before(image.data, image.data + image.nbytes);
  tiles->Close();
  EXPECT_THAT(tiles->Next().status(), StatusIs(StatusCode::kCancelled, ::testing::_));
  tiles.reset();
  EXPECT_EQ(std::memcmp(before.data(), held.arrays()[0].data, before.size()), 0);
  held.Release();
  EXPECT_TRUE(held.arrays().empty());
}

}  // namespace
}  // namespace patchfeed::loader
