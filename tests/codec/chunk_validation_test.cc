// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// The structural checks of a chunk, each shown on a chunk written by the real library
// (tests/codec/testdata/golden) with one field damaged: the damaged chunk must give the error
// c-blosc2 (or, for Blosc1 chunks, c-blosc 1.x) gives, or a stricter one where the comment
// says why. Block starts follow c-blosc2: they need not increase (threads store blocks as they
// finish), but each block owns the bytes up to the next larger start.

#include <sys/resource.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codec/blosc/block_decoder.h"
#include "codec/blosc/chunk_format.h"
#include "common/byte_order.h"
#include "tests/codec/test_data_files.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::codec {
namespace {

using ::testing::HasSubstr;

std::vector<std::byte> Golden(const std::string& name) {
  const auto path = testing::CodecTestDataDir() / "golden" / (name + ".chunk");
  auto bytes = testing::ReadFileBytes(path);
  EXPECT_FALSE(bytes.empty()) << path;
  return bytes;
}

std::vector<std::byte> GoldenRaw(const std::string& name) {
  return testing::ReadFileBytes(testing::CodecTestDataDir() / "golden" / (name + ".raw"));
}

int32_t BlockStart(const std::vector<std::byte>& chunk, int header_size, int b) {
  return LoadLE<int32_t>(chunk.data() + header_size + 4 * b);
}
void SetBlockStart(std::vector<std::byte>& chunk, int header_size, int b, int32_t start) {
  StoreLE<int32_t>(chunk.data() + header_size + 4 * b, start);
}

// Regular Blosc2 chunk, 5 unsplit zstd blocks of 8192 bytes, block starts increasing.
constexpr char kBlosc2Zstd[] = "blosc2_zstd_bitshuffle_ts4_n33333_c5_never_smooth";
// c-blosc 1.x chunk, 8 unsplit zstd blocks of 4096 bytes (the last one shorter).
constexpr char kBlosc1Zstd[] = "blosc1_zstd_shuffle_ts8_n30000_c5_bs4096";

TEST(ChunkValidationTest, ZerosNaNAndUninitBitsNeedTheBare32ByteHeader) {
  // c-blosc2 writes these specials as the 32-byte header alone; on a chunk with block data the
  // bits are damage (a flipped bit would otherwise turn a whole chunk into zeros).
  const auto chunk = Golden(kBlosc2Zstd);
  for (const uint8_t special : {1, 2, 4}) {
    auto bad = chunk;
    bad[0x1F] |= std::byte{static_cast<uint8_t>(special << 4)};
    EXPECT_THAT(ParseChunkHeader(bad), StatusIs(StatusCode::kDataLoss, HasSubstr("32-byte header")))
        << static_cast<int>(special);
  }
  // The real zeros chunk is accepted; with bytes appended and counted in cbytes it is not.
  auto zeros = Golden("blosc2_zeros_n5000");
  ASSERT_OK(ParseChunkHeader(zeros).status());
  zeros.resize(40);
  StoreLE<int32_t>(zeros.data() + 12, 40);
  EXPECT_THAT(ParseChunkHeader(zeros), StatusIs(StatusCode::kDataLoss, HasSubstr("40 bytes")));
}

TEST(ChunkValidationTest, RepeatedValueMustFitInNbytes) {
  // c-blosc2 (read_chunk_header): the value, cbytes - 32 bytes, is at most nbytes.
  auto chunk = Golden("blosc2_repeat_ts4_n4000");
  ASSERT_OK_AND_ASSIGN(const auto data, DecompressChunk(chunk));
  EXPECT_EQ(data, GoldenRaw("blosc2_repeat_ts4_n4000"));
  StoreLE<int32_t>(chunk.data() + 4, 0);
  EXPECT_THAT(ParseChunkHeader(chunk),
              StatusIs(StatusCode::kDataLoss, HasSubstr("larger than nbytes")));
}

TEST(ChunkValidationTest, MemcpyedAndSpecialChunksFollowCBlosc2sOrder) {
  // c-blosc2 applies the memcpy size rule before looking at special bits, and reads a
  // dictionary whenever the flag is set: neither form has room for one.
  auto memcpyed = Golden("blosc2_lz4_none_ts1_n50000_c5_never_random");
  ASSERT_OK_AND_ASSIGN(const ChunkHeader h, ParseChunkHeader(memcpyed));
  ASSERT_TRUE(h.memcpyed);
  memcpyed[0x1F] |= std::byte{0x01};
  EXPECT_THAT(ParseChunkHeader(memcpyed),
              StatusIs(StatusCode::kDataLoss, HasSubstr("memcpyed chunk with the dictionary")));
  auto zeros = Golden("blosc2_zeros_n5000");
  zeros[0x1F] |= std::byte{0x01};
  EXPECT_THAT(ParseChunkHeader(zeros),
              StatusIs(StatusCode::kDataLoss, HasSubstr("special chunk with the dictionary")));
  zeros = Golden("blosc2_zeros_n5000");
  zeros[2] |= std::byte{0x02};
  EXPECT_THAT(ParseChunkHeader(zeros), StatusIs(StatusCode::kDataLoss, HasSubstr("memcpyed")));
}

TEST(ChunkValidationTest, BlocksizeMustBePositiveEvenForSpecialChunks) {
  auto chunk = Golden("blosc2_zeros_n5000");
  StoreLE<int32_t>(chunk.data() + 8, 0);
  EXPECT_THAT(ParseChunkHeader(chunk), StatusIs(StatusCode::kDataLoss, HasSubstr("blocksize 0")));
}

TEST(ChunkValidationTest, BlockStartsMustLieInTheStreamData) {
  const auto chunk = Golden(kBlosc2Zstd);
  const int32_t data_start = 32 + 4 * 5;
  ASSERT_EQ(BlockStart(chunk, 32, 0), data_start);
  const int32_t cbytes = LoadLE<int32_t>(chunk.data() + 12);
  for (const int32_t start : {0, 33, data_start - 1, cbytes, cbytes + 100, -5}) {
    auto bad = chunk;
    SetBlockStart(bad, 32, 2, start);
    EXPECT_THAT(ParseChunkHeader(bad), StatusIs(StatusCode::kDataLoss, HasSubstr("block 2")))
        << start;
  }
  // The first block (in offset order) starts right after the block offsets: a gap there is
  // bytes no block owns.
  auto gap = chunk;
  SetBlockStart(gap, 32, 0, data_start + 4);
  EXPECT_THAT(ParseChunkHeader(gap),
              StatusIs(StatusCode::kDataLoss, HasSubstr("right after the block offsets")));
}

TEST(ChunkValidationTest, TwoBlocksCannotShareAStart) {
  auto chunk = Golden(kBlosc2Zstd);
  SetBlockStart(chunk, 32, 3, BlockStart(chunk, 32, 1));
  EXPECT_THAT(ParseChunkHeader(chunk),
              StatusIs(StatusCode::kDataLoss, HasSubstr("blocks 1 and 3 both start")));
}

TEST(ChunkValidationTest, ABlockStartMovedIntoAStreamIsDataLoss) {
  // Block 2's start moved into the middle of block 1's stream. Block 1 now owns only the bytes
  // up to there, so its stream runs past its end: an error for block 1 itself, not only for
  // block 2, and one that reading the whole chunk or just block 1's bytes gives alike.
  auto chunk = Golden(kBlosc2Zstd);
  const int32_t s1 = BlockStart(chunk, 32, 1), s2 = BlockStart(chunk, 32, 2);
  SetBlockStart(chunk, 32, 2, s1 + (s2 - s1) / 2);
  ASSERT_OK_AND_ASSIGN(const ChunkHeader h, ParseChunkHeader(chunk));
  BlockDecoder decoder;
  std::vector<std::byte> out(static_cast<size_t>(h.blocksize));
  EXPECT_THAT(decoder.DecodeBlock(chunk, h, 1, out),
              StatusIs(StatusCode::kDataLoss, HasSubstr("block 1")));
  EXPECT_THAT(DecompressChunk(chunk), StatusIs(StatusCode::kDataLoss, HasSubstr("block 1")));
}

TEST(ChunkValidationTest, UnownedBytesAfterTheLastBlockAreDataLoss) {
  // Stricter than c-blosc2, which never checks that the last block's streams reach cbytes: no
  // writer leaves bytes there, so a longer cbytes means damage.
  auto chunk = Golden(kBlosc2Zstd);
  const int32_t cbytes = LoadLE<int32_t>(chunk.data() + 12);
  chunk.resize(chunk.size() + 16);
  StoreLE<int32_t>(chunk.data() + 12, cbytes + 16);
  EXPECT_THAT(DecompressChunk(chunk),
              StatusIs(StatusCode::kDataLoss, HasSubstr("16 bytes before the block's end")));
}

TEST(ChunkValidationTest, OutOfOrderBlocksFromThreadedWritersDecode) {
  // c-blosc2 with 4 threads; the golden tests decode it, this one checks it stays a case of
  // starts that do not increase.
  const std::string name = "blosc2_lz4_shuffle_ts4_n80000_threads4_unordered";
  const auto chunk = Golden(name);
  ASSERT_OK_AND_ASSIGN(const ChunkHeader h, ParseChunkHeader(chunk));
  bool increasing = true;
  for (int b = 1; b < h.nblocks; ++b)
    increasing &= BlockStart(chunk, 32, b) > BlockStart(chunk, 32, b - 1);
  EXPECT_FALSE(increasing);
  ASSERT_OK_AND_ASSIGN(const auto data, DecompressChunk(chunk));
  EXPECT_EQ(data, GoldenRaw(name));
}

TEST(ChunkValidationTest, VersionMustBeOneAWriterUses) {
  // 16-byte headers: 2 (c-blosc 1.x), 4 and 5 (c-blosc2's Blosc1-compatible form). c-blosc 1.x
  // refuses anything but 2; c-blosc2 would decode the rest with its own rules, which is how a
  // damaged Blosc1 chunk turns into garbage.
  const auto blosc1 = Golden(kBlosc1Zstd);
  ASSERT_OK(DecompressChunk(blosc1).status());
  for (const uint8_t version : {1, 3, 6, 7, 0x42, 0x82}) {
    auto bad = blosc1;
    bad[0] = std::byte{version};
    EXPECT_THAT(ParseChunkHeader(bad),
                StatusIs(StatusCode::kUnimplemented, HasSubstr("format version")))
        << static_cast<int>(version);
  }
  // 32-byte headers: 3 to 6 (c-blosc2). Version 2 never had the extended header.
  const auto blosc2 = Golden(kBlosc2Zstd);
  for (const uint8_t version : {7, 0x45}) {
    auto bad = blosc2;
    bad[0] = std::byte{version};
    EXPECT_THAT(ParseChunkHeader(bad),
                StatusIs(StatusCode::kUnimplemented, HasSubstr("format version")))
        << static_cast<int>(version);
  }
  for (const uint8_t version : {1, 2}) {
    auto bad = blosc2;
    bad[0] = std::byte{version};
    EXPECT_THAT(ParseChunkHeader(bad), StatusIs(StatusCode::kDataLoss, HasSubstr("32-byte")))
        << static_cast<int>(version);
  }
}

TEST(ChunkValidationTest, Blosc1ChecksOfCBlosc1) {
  // What c-blosc 1.x refuses in a version-2 chunk: the reserved flag 0x08, a codec stream
  // version other than 1, a block larger than the data.
  const auto chunk = Golden(kBlosc1Zstd);
  auto flag = chunk;
  flag[2] |= std::byte{0x08};
  EXPECT_THAT(ParseChunkHeader(flag), StatusIs(StatusCode::kDataLoss, HasSubstr("0x08")));
  auto versionlz = chunk;
  versionlz[1] = std::byte{2};
  EXPECT_THAT(ParseChunkHeader(versionlz),
              StatusIs(StatusCode::kUnimplemented, HasSubstr("codec format version 2")));
  auto blocksize = chunk;
  StoreLE<int32_t>(blocksize.data() + 8, 30000 + 8);
  EXPECT_THAT(ParseChunkHeader(blocksize),
              StatusIs(StatusCode::kDataLoss, HasSubstr("larger than nbytes")));
}

TEST(ChunkValidationTest, Blosc1ChunksHaveNoRunStreams) {
  // The last block's stream replaced by a zero run (csize 0, nothing after it), the chunk cut
  // to match: a valid Blosc2 stream form, but c-blosc 1.x never writes it and refuses it.
  auto chunk = Golden(kBlosc1Zstd);
  const int32_t last = BlockStart(chunk, 16, 7);
  chunk.resize(static_cast<size_t>(last) + 4);
  StoreLE<int32_t>(chunk.data() + last, 0);
  StoreLE<int32_t>(chunk.data() + 12, last + 4);
  EXPECT_THAT(DecompressChunk(chunk),
              StatusIs(StatusCode::kDataLoss, HasSubstr("c-blosc 1.x has no runs")));
}

TEST(ChunkValidationTest, UserCodecFormatNamingABuiltInCodecIsDataLoss) {
  // Format 6 means "a registered codec, named in byte 0x16"; c-blosc2 looks the id up among
  // registered codecs only, so a built-in id there fails in c-blosc2 too.
  auto chunk = Golden(kBlosc2Zstd);
  chunk[2] = std::byte{static_cast<uint8_t>((static_cast<uint8_t>(chunk[2]) & 0x1F) | (6 << 5))};
  ASSERT_EQ(chunk[0x16], std::byte{5});
  EXPECT_THAT(ParseChunkHeader(chunk),
              StatusIs(StatusCode::kDataLoss, HasSubstr("built-in codec 5")));
}

TEST(ChunkValidationTest, DictionaryAboveTheBlosc2MaximumIsDataLoss) {
  auto chunk = Golden("blosc2_lz4_dict_ts4_n80000");
  ASSERT_OK_AND_ASSIGN(const ChunkHeader h, ParseChunkHeader(chunk));
  const int64_t dsize_at = 32 + 4 * h.nblocks;
  StoreLE<int32_t>(chunk.data() + dsize_at, kMaxDictSize + 1);
  EXPECT_THAT(ParseChunkHeader(chunk), StatusIs(StatusCode::kDataLoss, HasSubstr("dictionary")));
}

TEST(ChunkValidationTest, APartOfABlockFailsWhereTheWholeBlockFails) {
  // A reader wanting only some items of a block must not get bytes where decoding the whole
  // block fails: LZ4 stopping after the wanted items (as patchfeed did) turns a corrupt stream
  // whose damage shows only further on into silent garbage. Every single-bit flip in block 1's
  // streams of a real LZ4 chunk, split into byte planes.
  const auto chunk = Golden("blosc2_lz4_shuffle_ts4_n40003_c5_always_smooth");
  ASSERT_OK_AND_ASSIGN(const ChunkHeader h, ParseChunkHeader(chunk));
  ASSERT_EQ(h.block_nstreams(1), 4);
  const int32_t begin = BlockStart(chunk, 32, 1), end = BlockStart(chunk, 32, 2);
  BlockDecoder decoder;
  std::vector<std::byte> out(static_cast<size_t>(h.blocksize));
  int whole_failures = 0;
  for (int32_t at = begin; at < end; ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      auto bad = chunk;
      bad[static_cast<size_t>(at)] ^= std::byte{static_cast<uint8_t>(1 << bit)};
      if (decoder.DecodeBlock(bad, h, 1, out).ok())
        continue;
      ++whole_failures;
      EXPECT_FALSE(decoder.DecodeBlockForItems(bad, h, 1, 4).ok()) << at << " bit " << bit;
    }
  }
  EXPECT_GT(whole_failures, 100);
}

// Decodes `chunk` with at most 512 MiB of address space and exits with 0 for kDataLoss.
[[noreturn]] void DecompressUnderMemoryLimit(const std::vector<std::byte>& chunk) {
  const rlimit limit{512 << 20, 512 << 20};
  setrlimit(RLIMIT_AS, &limit);
  const auto r = DecompressChunk(chunk);
  std::_Exit(r.status().code() == StatusCode::kDataLoss ? 0 : 1);
}

// A 17-byte memcpyed chunk that claims 2 GB: its header is refused before anything is
// allocated. Run in a child with a small address-space limit, where allocating the claim
// would fail. (Sanitizers reserve terabytes of address space, so the limit cannot be used.)
TEST(DecompressChunkTest, ChecksTheHeaderBeforeAllocating) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "RLIMIT_AS is unusable under sanitizers";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  GTEST_SKIP() << "RLIMIT_AS is unusable under sanitizers";
#endif
#endif
  std::vector<std::byte> chunk(17);
  chunk[0] = std::byte{2};
  chunk[1] = std::byte{1};
  chunk[2] = std::byte{0x02};  // memcpyed
  chunk[3] = std::byte{1};
  StoreLE<int32_t>(chunk.data() + 4, kMaxChunkNbytes);
  StoreLE<int32_t>(chunk.data() + 8, kMaxBlockSize);
  StoreLE<int32_t>(chunk.data() + 12, 17);
  EXPECT_EXIT(DecompressUnderMemoryLimit(chunk), ::testing::ExitedWithCode(0), "");
}

TEST(DecompressChunkTest, LargeSpecialChunkAboveTheLimitIsResourceExhausted) {
  // A valid 32-byte zeros chunk may declare up to 2 GB; DecompressChunk refuses sizes above
  // the caller's limit instead of allocating them.
  auto chunk = Golden("blosc2_zeros_n5000");
  StoreLE<int32_t>(chunk.data() + 4, 1 << 30);
  StoreLE<int32_t>(chunk.data() + 8, 1 << 20);
  EXPECT_THAT(DecompressChunk(chunk, 1 << 20),
              StatusIs(StatusCode::kResourceExhausted, HasSubstr("1073741824")));
  ASSERT_OK_AND_ASSIGN(const auto small, DecompressChunk(Golden("blosc2_zeros_n5000"), 5000));
  EXPECT_EQ(small.size(), 5000u);
}

}  // namespace
}  // namespace patchfeed::codec
