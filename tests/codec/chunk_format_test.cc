// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Header parsing: the fields of both header forms, and a clear error for each kind of bad or
// unsupported header.

#include "codec/blosc/chunk_format.h"

#include <algorithm>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codec/blosc/block_decoder.h"
#include "common/byte_order.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::codec {
namespace {

using ::testing::HasSubstr;

// A Blosc2 header with no bstarts behind it; tests adjust fields.
std::vector<std::byte> Blosc2Header(int32_t nbytes, int32_t blocksize, int32_t cbytes,
                                    uint8_t flags = 0x05 | (1 << 5)) {
  std::vector<std::byte> h(static_cast<size_t>(std::max(cbytes, kBlosc2HeaderSize)));
  h[0] = std::byte{5};
  h[1] = std::byte{1};
  h[2] = std::byte{flags};
  h[3] = std::byte{4};
  StoreLE<int32_t>(h.data() + 4, nbytes);
  StoreLE<int32_t>(h.data() + 8, blocksize);
  StoreLE<int32_t>(h.data() + 12, cbytes);
  h[0x16] = std::byte{1};
  return h;
}

TEST(ChunkFormatTest, ParsesSpecialZerosChunk) {
  auto chunk = Blosc2Header(4096, 1024, 32);
  chunk[0x1F] = std::byte{0x10};
  ASSERT_OK_AND_ASSIGN(const ChunkHeader h, ParseChunkHeader(chunk));
  EXPECT_EQ(h.header_size, 32);
  EXPECT_EQ(h.special, SpecialValue::kZeros);
  EXPECT_EQ(h.nblocks, 4);
  ASSERT_OK_AND_ASSIGN(const auto data, DecompressChunk(chunk));
  EXPECT_EQ(data, std::vector<std::byte>(4096));
}

TEST(ChunkFormatTest, RepeatedValueTakesItsSizeFromCbytes) {
  auto chunk = Blosc2Header(24, 24, 32 + 3);
  chunk[0x1F] = std::byte{0x30};
  chunk[32] = std::byte{1};
  chunk[33] = std::byte{2};
  chunk[34] = std::byte{3};
  ASSERT_OK_AND_ASSIGN(const auto data, DecompressChunk(chunk));
  for (size_t i = 0; i < data.size(); ++i)
    EXPECT_EQ(data[i], std::byte(1 + i % 3)) << i;
}

TEST(ChunkFormatTest, NaNChunkOfFloat32) {
  auto chunk = Blosc2Header(16, 16, 32);
  chunk[0x1F] = std::byte{0x20};
  ASSERT_OK_AND_ASSIGN(const auto data, DecompressChunk(chunk));
  for (size_t i = 0; i < 16; i += 4)
    EXPECT_EQ(LoadLE<uint32_t>(data.data() + i), 0x7FC00000u);
}

TEST(ChunkFormatTest, SpecialBlocksOffTheItemGridMatchTheWholeChunk) {
  // Blocks of 10 bytes over 4- and 3-byte values: block 1 starts in the middle of a value.
  // Each block decoded alone must equal its slice of the whole chunk, every byte written.
  // (The fuzzer's block-vs-chunk check found NaN blocks restarting the value at the block
  // and leaving the bytes after the last whole value unwritten.)
  auto nan = Blosc2Header(40, 10, 32);
  nan[0x1F] = std::byte{0x20};
  auto repeat = Blosc2Header(30, 10, 32 + 3);
  repeat[0x1F] = std::byte{0x30};
  repeat[32] = std::byte{1};
  repeat[33] = std::byte{2};
  repeat[34] = std::byte{3};
  for (const auto& chunk : {nan, repeat}) {
    ASSERT_OK_AND_ASSIGN(const auto whole, DecompressChunk(chunk));
    ASSERT_OK_AND_ASSIGN(const ChunkHeader h, ParseChunkHeader(chunk));
    BlockDecoder decoder;
    for (int32_t b = 0; b < h.nblocks; ++b) {
      std::vector<std::byte> block(static_cast<size_t>(h.block_nbytes(b)), std::byte{0xEE});
      ASSERT_OK(decoder.DecodeBlock(chunk, h, b, block));
      EXPECT_TRUE(std::equal(block.begin(), block.end(), whole.begin() + 10 * b)) << b;
    }
  }
}

TEST(ChunkFormatTest, UninitializedChunkDecodesToZeros) {
  auto chunk = Blosc2Header(100, 100, 32);
  chunk[0x1F] = std::byte{0x40};
  ASSERT_OK_AND_ASSIGN(const auto data, DecompressChunk(chunk));
  EXPECT_EQ(data, std::vector<std::byte>(100));
}

TEST(ChunkFormatTest, RejectsShortAndTruncatedInput) {
  EXPECT_THAT(ParseChunkHeader({}), StatusIs(StatusCode::kDataLoss, HasSubstr("shorter")));
  auto chunk = Blosc2Header(100, 100, 200);
  chunk.resize(150);
  EXPECT_THAT(ParseChunkHeader(chunk), StatusIs(StatusCode::kDataLoss, HasSubstr("truncated")));
}

TEST(ChunkFormatTest, RejectsZeroTypesizeAndBadSizes) {
  auto chunk = Blosc2Header(100, 100, 100);
  chunk[3] = std::byte{0};
  EXPECT_THAT(ParseChunkHeader(chunk), StatusIs(StatusCode::kDataLoss, HasSubstr("typesize")));
  chunk = Blosc2Header(-5, 100, 100);
  EXPECT_THAT(ParseChunkHeader(chunk), StatusIs(StatusCode::kDataLoss, HasSubstr("nbytes")));
  chunk = Blosc2Header(100, 0, 100);
  EXPECT_THAT(ParseChunkHeader(chunk), StatusIs(StatusCode::kDataLoss, HasSubstr("blocksize")));
}

TEST(ChunkFormatTest, NamesUnsupportedCodecsAndFilters) {
  auto chunk = Blosc2Header(100, 100, 100, 0x05 | (6 << 5));
  chunk[0x16] = std::byte{33};
  EXPECT_THAT(ParseChunkHeader(chunk),
              StatusIs(StatusCode::kUnimplemented, HasSubstr("codec id 33")));
  chunk = Blosc2Header(100, 100, 100, 0x05 | (2 << 5));
  EXPECT_THAT(ParseChunkHeader(chunk), StatusIs(StatusCode::kUnimplemented, HasSubstr("Snappy")));
  chunk = Blosc2Header(100, 100, 100);
  chunk[0x12] = std::byte{160};
  EXPECT_THAT(ParseChunkHeader(chunk),
              StatusIs(StatusCode::kUnimplemented, HasSubstr("filter 160")));
  chunk = Blosc2Header(100, 100, 100);
  chunk[0x1E] = std::byte{0x01};
  EXPECT_THAT(ParseChunkHeader(chunk),
              StatusIs(StatusCode::kUnimplemented, HasSubstr("variable-length blocks")));
}

TEST(ChunkFormatTest, Blosc1FlagsImplyTheFilters) {
  std::vector<std::byte> chunk(16 + 100);
  chunk[0] = std::byte{2};
  chunk[2] = std::byte{0x04 | 0x02};  // bitshuffle, memcpyed
  chunk[3] = std::byte{4};
  StoreLE<int32_t>(chunk.data() + 4, 100);
  StoreLE<int32_t>(chunk.data() + 8, 100);
  StoreLE<int32_t>(chunk.data() + 12, 116);
  ASSERT_OK_AND_ASSIGN(const ChunkHeader h, ParseChunkHeader(chunk));
  EXPECT_EQ(h.header_size, 16);
  EXPECT_TRUE(h.memcpyed);
  EXPECT_EQ(h.filters[5], static_cast<uint8_t>(Filter::kBitShuffle));
  EXPECT_TRUE(h.is_blosc1_format());
}

TEST(ChunkFormatTest, MemcpyedChunkMustHoldExactlyItsBytes) {
  auto chunk = Blosc2Header(100, 100, 120, 0x05 | 0x02);
  EXPECT_THAT(ParseChunkHeader(chunk), StatusIs(StatusCode::kDataLoss, HasSubstr("memcpyed")));
}

TEST(ChunkFormatTest, BlockOffsetsMustFit) {
  auto chunk = Blosc2Header(1000, 10, 40);  // 100 blocks need 400 bytes of offsets
  EXPECT_THAT(ParseChunkHeader(chunk),
              StatusIs(StatusCode::kDataLoss, HasSubstr("block offsets do not fit")));
}

TEST(ChunkFormatTest, Blosc1SplitRuleNeedsEnoughElements) {
  ChunkHeader h;
  h.version = 2;
  h.typesize = 4;
  h.blocksize = 256;  // 64 elements < 128: c-blosc 1.x does not split
  h.nblocks = 2;
  EXPECT_EQ(h.block_nstreams(0), 1);
  h.blocksize = 4096;
  EXPECT_EQ(h.block_nstreams(0), 4);
  h.version = 5;
  h.blocksize = 256;
  EXPECT_EQ(h.block_nstreams(0), 4);
  h.dont_split = true;
  EXPECT_EQ(h.block_nstreams(0), 1);
}

TEST(ChunkFormatTest, CodecAndFilterNamesRoundTrip) {
  for (Codec c : {Codec::kBloscLZ, Codec::kLZ4, Codec::kLZ4HC, Codec::kZlib, Codec::kZstd}) {
    ASSERT_OK_AND_ASSIGN(const Codec parsed, ParseCodecName(CodecName(c)));
    EXPECT_EQ(parsed, c);
  }
  EXPECT_THAT(ParseCodecName("snappy"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("snappy")));
  ASSERT_OK_AND_ASSIGN(const Filter f, ParseFilterName("BitShuffle"));
  EXPECT_EQ(f, Filter::kBitShuffle);
}

}  // namespace
}  // namespace patchfeed::codec
