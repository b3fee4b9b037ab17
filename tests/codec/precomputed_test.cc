// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Neuroglancer precomputed's parts that stand alone: the compressed Morton code and shard
// location of a chunk, minishard index decoding, compressed_segmentation with two channels (a
// layout cloud-volume does not write), and the errors damaged ones give. The formats' writers
// (cloud-volume, tensorstore) are exercised end to end in tests/python/test_precomputed.py.

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codec/open_array.h"
#include "codec/precomputed/compressed_segmentation.h"
#include "codec/precomputed/info.h"
#include "codec/precomputed/sharding.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"

namespace patchfeed::codec::precomputed {
namespace {

using ::testing::HasSubstr;

std::vector<std::byte> Words(std::initializer_list<uint64_t> values, int bytes_each) {
  std::vector<std::byte> out;
  for (const uint64_t v : values) {
    for (int i = 0; i < bytes_each; ++i)
      out.push_back(static_cast<std::byte>(v >> (8 * i)));
  }
  return out;
}

TEST(PrecomputedShardingTest, MortonCodesInterleaveOnlyTheBitsEachAxisNeeds) {
  EXPECT_EQ(CompressedMortonCode({1, 0, 0}, {4, 4, 4}), 1u);
  EXPECT_EQ(CompressedMortonCode({0, 1, 0}, {4, 4, 4}), 2u);
  EXPECT_EQ(CompressedMortonCode({0, 0, 1}, {4, 4, 4}), 4u);
  EXPECT_EQ(CompressedMortonCode({1, 1, 1}, {4, 4, 4}), 7u);
  EXPECT_EQ(CompressedMortonCode({2, 0, 0}, {4, 4, 4}), 8u);
  // x needs 1 bit, y 2, z none: x0 y0 y1.
  EXPECT_EQ(CompressedMortonCode({1, 3, 0}, {2, 4, 1}), 7u);
  EXPECT_EQ(CompressedMortonCode({0, 2, 0}, {2, 4, 1}), 4u);
}

TEST(PrecomputedShardingTest, ChunksGoToTheShardAndMinishardTheirHashSays) {
  Sharding s;
  s.preshift_bits = 1;
  s.minishard_bits = 2;
  s.shard_bits = 3;
  // Identity hash: key 0b101101 (the id without its low bit): minishard 0b01, shard 0b011.
  ShardLocation loc = LocateChunk(s, 0b1011011);
  EXPECT_EQ(loc.minishard, 1u);
  EXPECT_EQ(loc.shard_file, "3.shard");
  s.shard_bits = 9;  // three hex digits, zero-padded
  loc = LocateChunk(s, 0b1011011);
  EXPECT_EQ(loc.shard_file, "00b.shard");
  EXPECT_EQ(ShardIndexBytes(s), 64u);
}

TEST(PrecomputedShardingTest, MinishardIndexesAreDeltaCoded) {
  Sharding s;
  s.minishard_bits = 1;  // the shard index is 32 bytes: offsets count from there
  // Chunks 3, 7 and 20 of 10, 5 and 8 bytes; chunk 7 starts 4 bytes after chunk 3 ends.
  const std::vector<std::byte> index = Words({3, 4, 13, 0, 4, 0, 10, 5, 8}, 8);
  ASSERT_OK_AND_ASSIGN(auto found, FindChunk(index, s, 3));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->offset, 32u);
  EXPECT_EQ(found->size, 10u);
  ASSERT_OK_AND_ASSIGN(found, FindChunk(index, s, 7));
  EXPECT_EQ(found->offset, 32u + 14);
  EXPECT_EQ(found->size, 5u);
  ASSERT_OK_AND_ASSIGN(found, FindChunk(index, s, 20));
  EXPECT_EQ(found->offset, 32u + 19);
  ASSERT_OK_AND_ASSIGN(found, FindChunk(index, s, 5));
  EXPECT_FALSE(found.has_value());

  EXPECT_THAT(FindChunk(std::span(index).first(23), s, 3),
              StatusIs(StatusCode::kDataLoss, HasSubstr("not whole 24-byte entries")));
  const std::vector<std::byte> overflowing = Words({1, ~uint64_t{0}, 10}, 8);
  EXPECT_THAT(FindChunk(overflowing, s, 1),
              StatusIs(StatusCode::kDataLoss, HasSubstr("passes 2^64")));

  ASSERT_OK_AND_ASSIGN(const ShardRange range, MinishardIndexRange(Words({100, 172}, 8), s));
  EXPECT_EQ(range.offset, 132u);
  EXPECT_EQ(range.size, 72u);
  EXPECT_THAT(MinishardIndexRange(Words({100, 99}, 8), s),
              StatusIs(StatusCode::kDataLoss, HasSubstr("before its start")));
}

TEST(PrecomputedInfoTest, ScalesAreFoundByKeyOrResolution) {
  ASSERT_OK_AND_ASSIGN(const Info info, ParseInfo(R"({
    "data_type": "uint8", "num_channels": 1, "type": "image",
    "scales": [
      {"key": "4_4_40", "size": [64, 64, 16], "chunk_sizes": [[32, 32, 8]],
       "encoding": "raw", "resolution": [4, 4, 40], "voxel_offset": [0, 0, 0]},
      {"key": "8_8_40", "size": [32, 32, 16], "chunk_sizes": [[32, 32, 8]],
       "encoding": "raw", "resolution": [8, 8, 40.0], "voxel_offset": [0, 0, 0]}]})"));
  int index = -1;
  ASSERT_OK_AND_ASSIGN(index, FindScale(info, "8_8_40"));
  EXPECT_EQ(index, 1);
  ASSERT_OK_AND_ASSIGN(index, FindScale(info, "4,4,40"));
  EXPECT_EQ(index, 0);
  ASSERT_OK_AND_ASSIGN(index, FindScale(info, "8.0,8,40.00001"));
  EXPECT_EQ(index, 1);
  EXPECT_THAT(FindScale(info, "16,16,40"),
              StatusIs(StatusCode::kNotFound, HasSubstr("'4_4_40', '8_8_40'")));
  EXPECT_THAT(FindScale(info, "8,8"), StatusIs(StatusCode::kNotFound, HasSubstr("8,8")));
}

// Two channels of a 2 x 2 x 1 uint32 chunk in one block of 2 x 2 x 1: channel 0 with 1-bit
// indexes into the table [5, 9], channel 1 all 42 (0 bits).
std::vector<std::byte> TwoChannelChunk(uint32_t bits0 = 1) {
  return Words({2, 7,                            // channel offsets (words)
                3 | (uint64_t{bits0} << 24), 2,  // channel 0: table at +3, values at +2
                0b0110, 5, 9,                    // indexes 0 1 1 0, table
                2, 2, 42},                       // channel 1: table at +2, no indexes
               4);
}

std::vector<uint32_t> Decode(const std::vector<std::byte>& chunk, int64_t channel, Status* status) {
  std::vector<uint32_t> out(4, 0);
  VoxelsOut view;
  view.data = reinterpret_cast<std::byte*>(out.data());
  view.stride = {4, 8, 16};
  *status = DecodeCompressedSegmentation(chunk, 4, {2, 2, 1}, {2, 2, 1}, channel, {0, 0, 0},
                                         {2, 2, 1}, view);
  return out;
}

TEST(CompressedSegmentationTest, DecodesEachChannelThroughItsTable) {
  Status status;
  EXPECT_THAT(Decode(TwoChannelChunk(), 0, &status), ::testing::ElementsAre(5, 9, 9, 5));
  EXPECT_OK(status);
  EXPECT_THAT(Decode(TwoChannelChunk(), 1, &status), ::testing::ElementsAre(42, 42, 42, 42));
  EXPECT_OK(status);
}

TEST(CompressedSegmentationTest, DamagedChunksAreNamedErrors) {
  Status status;
  (void)Decode(TwoChannelChunk(3), 0, &status);
  EXPECT_THAT(status, StatusIs(StatusCode::kDataLoss, HasSubstr("3 bits per index")));
  std::vector<std::byte> cut = TwoChannelChunk();
  cut.resize(4 * 8);  // channel 1's table is gone
  (void)Decode(cut, 1, &status);
  EXPECT_THAT(status, StatusIs(StatusCode::kDataLoss, HasSubstr("pass")));
  (void)Decode(TwoChannelChunk(), 5, &status);
  EXPECT_THAT(status, StatusIs(StatusCode::kDataLoss, HasSubstr("channel 5")));
  // An index past the table: channel 0's table shortened to one entry by the chunk's end.
  std::vector<std::byte> short_table = TwoChannelChunk();
  short_table.resize(4 * 6);
  (void)Decode(short_table, 0, &status);
  EXPECT_THAT(status, StatusIs(StatusCode::kDataLoss, HasSubstr("passes its table")));
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// A uint8 layer of 4 x 2 x 1 voxels at voxel_offset (10, 20, 30), chunks of 2 x 2 x 1: chunk
// "10-12_20-22_30-31" holds 0..3, chunk "12-14_20-22_30-31" is never written.
void WriteTinyLayer(const testing::TempDir& dir) {
  std::filesystem::create_directories(dir / "layer/1_1_1");
  WriteText(dir / "layer/info",
            R"({"type": "image", "data_type": "uint8", "num_channels": 1, "scales": [
               {"key": "1_1_1", "size": [4, 2, 1], "voxel_offset": [10, 20, 30],
                "chunk_sizes": [[2, 2, 1]], "encoding": "raw", "resolution": [1, 1, 1]}]})");
  WriteText(dir / "layer/1_1_1/10-12_20-22_30-31", std::string("\x00\x01\x02\x03", 4));
}

TEST(PrecomputedReaderTest, AScaleOpensByItsFolderWithItsVoxelOffsetAsOrigin) {
  const testing::TempDir dir;
  WriteTinyLayer(dir);
  ASSERT_OK_AND_ASSIGN(const auto array, OpenArray(dir / "layer/1_1_1"));
  EXPECT_EQ(array->format(), std::string("precomputed"));
  EXPECT_EQ(array->geometry().shape, (std::vector<int64_t>{1, 1, 2, 4}));
  EXPECT_EQ(array->origin(), (std::vector<int64_t>{0, 30, 20, 10}));
  const std::vector<std::byte> pad(1, std::byte{9});
  ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> read,
                       array->ReadBox(Box{{0, 0, 0, 0}, {1, 1, 2, 4}}, pad));
  // The unwritten chunk reads as zeros.
  EXPECT_EQ(read, (std::vector<std::byte>{std::byte{0}, std::byte{1}, std::byte{0}, std::byte{0},
                                          std::byte{2}, std::byte{3}, std::byte{0}, std::byte{0}}));
  EXPECT_THAT(OpenArray(dir / "layer/2_2_2").status(),
              StatusIs(StatusCode::kNotFound, HasSubstr("'1_1_1'")));
}

TEST(PrecomputedReaderTest, UnwrittenChunksCanBeRefused) {
  const testing::TempDir dir;
  WriteTinyLayer(dir);
  ASSERT_OK_AND_ASSIGN(const auto array, OpenArray(dir / "layer", {.fill_missing = false}));
  const std::vector<std::byte> pad(1, std::byte{0});
  EXPECT_OK(array->ReadBox(Box{{0, 0, 0, 0}, {1, 1, 2, 2}}, pad).status());
  EXPECT_THAT(
      array->ReadBox(Box{{0, 0, 0, 0}, {1, 1, 2, 4}}, pad).status(),
      StatusIs(StatusCode::kNotFound, HasSubstr("12-14_20-22_30-31: this chunk was never")));
}

TEST(PrecomputedReaderTest, AnInfoThatIsNotALayersLeavesAMissingFileNotFound) {
  const testing::TempDir dir;
  WriteText(dir / "info", "release notes");
  EXPECT_THAT(OpenArray(dir / "case.b2nd").status(),
              StatusIs(StatusCode::kNotFound, HasSubstr("case.b2nd")));
}

}  // namespace
}  // namespace patchfeed::codec::precomputed
