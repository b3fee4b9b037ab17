// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// NnUNetChunkBlockShapes against values computed with nnU-Net 2.8.0's own comp_blosc2_params
// (nnunetv2/training/dataloading/nnunet_dataset.py, default caps). The Python test
// tests/python/test_nnunet_layout.py compares many more random cases differentially.

#include "loader/nnunet_layout.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace patchfeed::loader {
namespace {

using ::testing::ElementsAreArray;

struct LayoutCase {
  std::vector<int64_t> shape;
  std::vector<int64_t> patch;
  int64_t itemsize;
  std::vector<int32_t> chunks;
  std::vector<int32_t> blocks;
};

class NnUNetLayoutTest : public ::testing::TestWithParam<LayoutCase> {};

TEST_P(NnUNetLayoutTest, MatchesNnUNet) {
  const LayoutCase& c = GetParam();
  const ChunkBlockShapes r = NnUNetChunkBlockShapes(c.shape, c.patch, c.itemsize);
  EXPECT_THAT(r.chunkshape, ElementsAreArray(c.chunks));
  EXPECT_THAT(r.blockshape, ElementsAreArray(c.blocks));
}

// {shape, patch, itemsize, chunks, blocks}, outputs from nnunetv2 2.8.0.
INSTANTIATE_TEST_SUITE_P(
    FromNnUNet, NnUNetLayoutTest,
    ::testing::Values(
        // The default 3-D configuration: float32 image and int16 segmentation.
        LayoutCase{{1, 256, 256, 256}, {128, 128, 128}, 4, {1, 128, 128, 96}, {1, 32, 32, 32}},
        LayoutCase{{1, 256, 256, 256}, {128, 128, 128}, 2, {1, 192, 128, 128}, {1, 64, 32, 32}},
        // Anisotropic images; chunk growth tie-breaks towards the larger image axis.
        LayoutCase{{2, 123, 423, 645}, {96, 160, 160}, 4, {1, 96, 128, 128}, {1, 32, 32, 32}},
        LayoutCase{{1, 123, 423, 645}, {96, 160, 160}, 2, {1, 96, 192, 160}, {1, 32, 64, 32}},
        LayoutCase{{3, 40, 300, 300}, {40, 224, 224}, 4, {1, 32, 256, 192}, {1, 8, 64, 64}},
        LayoutCase{{1, 60, 512, 512}, {28, 256, 256}, 4, {1, 24, 256, 256}, {1, 8, 64, 64}},
        LayoutCase{{1, 500, 80, 90}, {192, 64, 64}, 4, {1, 256, 64, 90}, {1, 64, 16, 32}},
        LayoutCase{{5, 150, 200, 200}, {80, 192, 160}, 4, {1, 96, 128, 128}, {1, 32, 32, 32}},
        LayoutCase{{1, 1000, 1000, 1000}, {160, 160, 160}, 1, {1, 192, 192, 160}, {1, 64, 64, 32}},
        // 2-D configurations (x = 1) with 2-value patches; x never grows.
        LayoutCase{{4, 1, 512, 512}, {512, 512}, 4, {1, 1, 512, 512}, {1, 1, 256, 128}},
        LayoutCase{{1, 1, 512, 512}, {512, 512}, 2, {1, 1, 512, 512}, {1, 1, 256, 256}},
        LayoutCase{{1, 300, 300, 300}, {1, 256, 256}, 4, {1, 1, 300, 300}, {1, 1, 256, 128}},
        // A singleton patch axis is never grown.
        LayoutCase{{1, 300, 300, 300}, {64, 1, 64}, 8, {1, 96, 1, 96}, {1, 64, 1, 64}},
        // Image smaller than the patch: everything clamps to the image.
        LayoutCase{{1, 17, 19, 23}, {128, 128, 128}, 4, {1, 17, 19, 23}, {1, 17, 19, 23}},
        LayoutCase{{1, 100, 100, 100}, {100, 100, 100}, 4, {1, 100, 100, 100}, {1, 32, 32, 32}},
        // Non-power-of-two extents, growth clamped to floor(1.5 * patch).
        LayoutCase{{1, 7, 9, 11}, {3, 5, 7}, 16, {1, 4, 8, 10}, {1, 4, 8, 8}},
        LayoutCase{{1, 64, 64, 64}, {10, 20, 30}, 2, {1, 16, 32, 45}, {1, 16, 32, 32}},
        // Huge items: blocks shrink to single items, chunks stop at the 6 MiB cap.
        LayoutCase{{1, 1, 64, 64}, {64, 64}, 131072, {1, 1, 8, 6}, {1, 1, 1, 1}},
        LayoutCase{{1, 2, 2, 2}, {2, 2, 2}, 32768, {1, 2, 2, 2}, {1, 2, 2, 1}}),
    [](const ::testing::TestParamInfo<LayoutCase>& case_info) {
      return "Case" + std::to_string(case_info.index);
    });

TEST(NnUNetLayoutErrorsTest, ReturnsEmptyWhereNnUNetRaises) {
  const auto empty = [](const ChunkBlockShapes& r) {
    return r.chunkshape.empty() && r.blockshape.empty();
  };
  EXPECT_TRUE(empty(NnUNetChunkBlockShapes({1, 1, 64, 64}, {64, 64}, 131073)));  // item > cap
  EXPECT_TRUE(empty(NnUNetChunkBlockShapes({1, 2, 3}, {4, 4, 4}, 4)));           // not 4-D
  EXPECT_TRUE(empty(NnUNetChunkBlockShapes({1, 0, 2, 2}, {2, 2, 2}, 4)));        // zero extent
  EXPECT_TRUE(empty(NnUNetChunkBlockShapes({1, 2, 2, 2}, {2, 0}, 4)));           // zero patch
  EXPECT_TRUE(empty(NnUNetChunkBlockShapes({1, 2, 2, 2}, {2, 2, 2, 2}, 4)));     // 4-D patch
  EXPECT_TRUE(empty(NnUNetChunkBlockShapes({1, 2, 2, 2}, {2, 2, 2}, 0)));        // itemsize 0
}

TEST(NnUNetLayoutErrorsTest, HugeExtentsDoNotOverflow) {
  // Byte counts saturate instead of overflowing; values from nnU-Net (Python integers).
  const int64_t t = int64_t{1} << 40;
  const ChunkBlockShapes r = NnUNetChunkBlockShapes({1, t, t, t}, {t, t, t}, 8);
  EXPECT_THAT(r.chunkshape, ElementsAreArray({1, 96, 96, 80}));
  EXPECT_THAT(r.blockshape, ElementsAreArray({1, 32, 32, 16}));
}

}  // namespace
}  // namespace patchfeed::loader
