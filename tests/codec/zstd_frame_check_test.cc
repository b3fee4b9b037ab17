// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// The zstd frame check: it refuses the corrupt frames older libzstd decodes without an error,
// and accepts every frame zstd writes (levels, multi-block frames, dictionaries).

#include "codec/blosc/internal/zstd_frame_check.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zstd.h>

#include "codec/blosc/block_decoder.h"
#include "codec/blosc/stream_codecs.h"
#include "tests/codec/test_data_files.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::internal_codec {
namespace {

using ::patchfeed::StatusIs;
using ::patchfeed::testing::CodecTestDataDir;
using ::patchfeed::testing::ReadFileBytes;
using ::testing::AllOf;
using ::testing::HasSubstr;

// The chunk's only stream: one zstd frame after the 16-byte header, the block start and the
// stream's 4-byte size.
constexpr size_t kFrameAt = 24;
constexpr size_t kFrameSize = 447;

std::vector<std::byte> Chunk(const char* name) {
  return ReadFileBytes(CodecTestDataDir() / "zstd" / name);
}

std::span<const std::byte> Frame(const std::vector<std::byte>& chunk) {
  return std::span<const std::byte>(chunk).subspan(kFrameAt, kFrameSize);
}

TEST(ZstdFrameCheckTest, RefusesTheSequenceBitstreamOverflow) {
  const auto clean = Chunk("zstd_clean_chunk.blosc");
  const auto flip = Chunk("zstd_flip_chunk.blosc");
  ASSERT_EQ(flip.size(), kFrameAt + kFrameSize);
  EXPECT_OK(CheckZstdFrames(Frame(clean), {}));
  EXPECT_THAT(CheckZstdFrames(Frame(flip), {}),
              StatusIs(StatusCode::kDataLoss,
                       AllOf(HasSubstr("zstd block 0"), HasSubstr("sequence bitstream"))));
}

TEST(ZstdFrameCheckTest, ChunkDecodeRefusesTheFlipNamingBlockAndStream) {
  const auto clean = Chunk("zstd_clean_chunk.blosc");
  const auto flip = Chunk("zstd_flip_chunk.blosc");
  ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> good, codec::DecompressChunk(clean));
  EXPECT_EQ(good.size(), 4096u);
  EXPECT_THAT(codec::DecompressChunk(flip).status(),
              StatusIs(StatusCode::kDataLoss, AllOf(HasSubstr("block 0"), HasSubstr("stream 0"),
                                                    HasSubstr("zstd stream is corrupt"))));
}

TEST(ZstdFrameCheckTest, StreamDecoderRefusesTheFlipWhicheverLibzstdIsLinked) {
  const auto flip = Chunk("zstd_flip_chunk.blosc");
  std::vector<std::byte> out(4096);
  codec::StreamDecoder decoder;
  EXPECT_THAT(decoder.Decode(codec::CodecFormat::kZstd, Frame(flip), out, {}),
              StatusIs(StatusCode::kDataLoss, HasSubstr("zstd stream is corrupt")));
}

TEST(ZstdFrameCheckTest, LinkedVersionDecidesWhetherTheCheckRuns) {
  EXPECT_EQ(LinkedZstdMissesCorruption(), ZSTD_versionNumber() < 10506);
}

// Data with literals (Huffman, 1 and 4 streams), matches and long runs, several 128 KiB
// blocks, so every table mode and both literal layouts occur across the levels.
std::vector<std::byte> MixedData(size_t n, uint32_t seed) {
  std::vector<std::byte> out(n);
  uint32_t x = seed;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    const size_t region = (i / 4096) % 4;
    uint32_t v = region == 0   ? (x >> 24) % 4                       // skewed literals
                 : region == 1 ? static_cast<uint32_t>(i * 7 % 251)  // periodic
                 : region == 2 ? 0                                   // a run
                               : (x >> 16) & 0xFF;                   // noise
    out[i] = static_cast<std::byte>(v);
  }
  return out;
}

std::vector<std::byte> Compress(std::span<const std::byte> src, int level,
                                std::span<const std::byte> dict) {
  std::vector<std::byte> dst(ZSTD_compressBound(src.size()));
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  const size_t n =
      dict.empty() ? ZSTD_compressCCtx(cctx, dst.data(), dst.size(), src.data(), src.size(), level)
                   : ZSTD_compress_usingDict(cctx, dst.data(), dst.size(), src.data(), src.size(),
                                             dict.data(), dict.size(), level);
  ZSTD_freeCCtx(cctx);
  EXPECT_FALSE(ZSTD_isError(n));
  dst.resize(ZSTD_isError(n) ? 0 : n);
  return dst;
}

TEST(ZstdFrameCheckTest, AcceptsEveryFrameZstdWrites) {
  for (size_t size : {size_t{100}, size_t{5000}, size_t{70000}, size_t{400000}}) {
    const auto data = MixedData(size, static_cast<uint32_t>(size));
    for (int level : {-5, 1, 3, 9, 15, 19, 22}) {
      const auto frame = Compress(data, level, {});
      SCOPED_TRACE(::testing::Message() << "size " << size << " level " << level);
      EXPECT_OK(CheckZstdFrames(frame, {}));
    }
  }
}

TEST(ZstdFrameCheckTest, AcceptsFramesBackToBackAndSkippableFrames) {
  const auto data = MixedData(9000, 3);
  auto frames = Compress(data, 3, {});
  const std::vector<std::byte> skippable = {
      std::byte{0x50}, std::byte{0x2A}, std::byte{0x4D}, std::byte{0x18}, std::byte{2},
      std::byte{0},    std::byte{0},    std::byte{0},    std::byte{7},    std::byte{7}};
  frames.insert(frames.end(), skippable.begin(), skippable.end());
  const auto second = Compress(data, 19, {});
  frames.insert(frames.end(), second.begin(), second.end());
  EXPECT_OK(CheckZstdFrames(frames, {}));
  frames.push_back(std::byte{0});
  EXPECT_THAT(CheckZstdFrames(frames, {}), StatusIs(StatusCode::kDataLoss, ::testing::_));
}

TEST(ZstdFrameCheckTest, AcceptsFramesWrittenWithADictionary) {
  std::vector<std::byte> samples;
  std::vector<size_t> sizes;
  for (uint32_t s = 0; s < 64; ++s) {
    const auto part = MixedData(2048, s);
    samples.insert(samples.end(), part.begin(), part.end());
    sizes.push_back(part.size());
  }
  const auto dict = codec::TrainZstdDictionary(samples, sizes, 4096);
  ASSERT_FALSE(dict.empty());
  for (int level : {1, 5, 19}) {
    const auto data = MixedData(20000, 99);
    const auto frame = Compress(data, level, dict);
    SCOPED_TRACE(::testing::Message() << "level " << level);
    EXPECT_OK(CheckZstdFrames(frame, dict));
  }
}

TEST(ZstdFrameCheckTest, RefusesReservedBitsAndBytesAfterZeroSequences) {
  // A hand-made frame: single segment, content size 4, one compressed last block holding
  // raw literals "abcd" and a sequences header of 0 sequences in its 2-byte form (0x80 0x00).
  const auto frame = [](std::vector<uint8_t> seq) {
    std::vector<uint8_t> block = {0x20, 'a', 'b', 'c', 'd'};  // raw literals, 4 bytes
    block.insert(block.end(), seq.begin(), seq.end());
    const uint32_t bh = 1u | (2u << 1) | (static_cast<uint32_t>(block.size()) << 3);
    std::vector<uint8_t> f = {0x28,
                              0xB5,
                              0x2F,
                              0xFD,
                              0x20,
                              4,
                              static_cast<uint8_t>(bh),
                              static_cast<uint8_t>(bh >> 8),
                              static_cast<uint8_t>(bh >> 16)};
    f.insert(f.end(), block.begin(), block.end());
    std::vector<std::byte> out(f.size());
    for (size_t i = 0; i < f.size(); ++i)
      out[i] = static_cast<std::byte>(f[i]);
    return out;
  };
  EXPECT_OK(CheckZstdFrames(frame({0x80, 0x00}), {}));
  EXPECT_THAT(CheckZstdFrames(frame({0x80, 0x00, 0x00}), {}),
              StatusIs(StatusCode::kDataLoss, HasSubstr("after a sequences section of 0")));
  // One sequence, all tables RLE (code 0 each), reserved bits set.
  EXPECT_THAT(CheckZstdFrames(frame({0x01, 0x55, 0x00, 0x00, 0x00, 0x01}), {}),
              StatusIs(StatusCode::kDataLoss, HasSubstr("reserved bits")));
}

}  // namespace
}  // namespace patchfeed::internal_codec
