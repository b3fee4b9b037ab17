// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Encode -> decode round trips over codecs x filters x typesizes x split modes x header forms,
// whole chunks and single blocks, plus the chunk shapes the encoder must choose (memcpy,
// special zeros, runs, dictionaries). Differential tests against c-blosc2 and c-blosc 1.x are
// in tests/python/test_codec_differential.py.

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codec/blosc/block_decoder.h"
#include "codec/blosc/chunk_encoder.h"
#include "codec/blosc/shuffle.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::codec {
namespace {

using ::testing::HasSubstr;

enum class DataKind { kSmooth, kLabels, kRandom };

std::vector<std::byte> MakeData(DataKind kind, size_t n, uint32_t seed) {
  std::vector<std::byte> v(n);
  std::mt19937 rng(seed);
  for (size_t i = 0; i < n; ++i) {
    uint8_t b = 0;
    switch (kind) {
      case DataKind::kSmooth: {
        // Bytes of a slowly varying float32 field.
        const float f = static_cast<float>(std::sin(static_cast<double>(i / 4) / 50.0) * 100.0);
        uint8_t bytes[4];
        std::memcpy(bytes, &f, 4);
        b = bytes[i % 4];
        break;
      }
      case DataKind::kLabels:
        b = static_cast<uint8_t>((i / 700) % 5 == 2 ? 1 + (i / 3000) % 3 : 0);
        break;
      case DataKind::kRandom:
        b = static_cast<uint8_t>(rng());
        break;
    }
    v[i] = std::byte{b};
  }
  return v;
}

void ExpectRoundTrip(const EncodeOptions& o, const std::vector<std::byte>& data) {
  ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> chunk, CompressChunk(o, data));
  ASSERT_LE(chunk.size(), ChunkEncoder::MaxEncodedSize(data.size()));
  ASSERT_OK_AND_ASSIGN(const ChunkHeader h, ParseChunkHeader(chunk));
  EXPECT_EQ(h.header_size, o.blosc1 ? 16 : 32);
  EXPECT_EQ(h.nbytes, static_cast<int32_t>(data.size()));
  ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> decoded, DecompressChunk(chunk));
  ASSERT_TRUE(decoded == data);
  BlockDecoder decoder;
  for (int32_t b = h.nblocks - 1; b >= 0; --b) {
    std::vector<std::byte> out(static_cast<size_t>(h.block_nbytes(b)));
    ASSERT_OK(decoder.DecodeBlock(chunk, h, b, out));
    ASSERT_EQ(
        0, std::memcmp(out.data(), data.data() + static_cast<size_t>(b) * h.blocksize, out.size()))
        << "block " << b;
  }
}

using MatrixParam = std::tuple<Codec, Filter, int32_t, SplitMode, bool>;

class ChunkRoundTripTest : public ::testing::TestWithParam<MatrixParam> {};

TEST_P(ChunkRoundTripTest, ExactForManySizesAndKinds) {
  const auto [codec, filter, typesize, split, blosc1] = GetParam();
  EncodeOptions o;
  o.codec = codec;
  o.typesize = typesize;
  o.filters[0] = filter;
  o.splitmode = split;
  o.blosc1 = blosc1;
  uint32_t seed = 1;
  for (size_t n : {size_t{0}, size_t{1}, size_t{31}, size_t{33}, size_t{129}, size_t{4099},
                   size_t{70001}, size_t{300007}}) {
    for (DataKind kind : {DataKind::kSmooth, DataKind::kLabels, DataKind::kRandom}) {
      for (int clevel : {1, 5, 9}) {
        if (codec == Codec::kZstd && clevel == 9 && n > 100000)
          continue;  // slow and redundant
        o.clevel = clevel;
        SCOPED_TRACE("n=" + std::to_string(n) + " kind=" + std::to_string(static_cast<int>(kind)) +
                     " clevel=" + std::to_string(clevel));
        ExpectRoundTrip(o, MakeData(kind, n, seed++));
      }
    }
  }
}

std::string MatrixName(const ::testing::TestParamInfo<MatrixParam>& info) {
  const auto [codec, filter, typesize, split, blosc1] = info.param;
  std::string split_name = split == SplitMode::kAlways  ? "always"
                           : split == SplitMode::kNever ? "never"
                                                        : "auto";
  std::string name = std::string(CodecName(codec)) + "_" +
                     FilterName(static_cast<uint8_t>(filter)) + "_ts" + std::to_string(typesize) +
                     "_" + split_name + (blosc1 ? "_blosc1" : "_blosc2");
  return name;
}

const auto kAllCodecs =
    ::testing::Values(Codec::kBloscLZ, Codec::kLZ4, Codec::kLZ4HC, Codec::kZlib, Codec::kZstd);

INSTANTIATE_TEST_SUITE_P(Blosc2, ChunkRoundTripTest,
                         ::testing::Combine(kAllCodecs,
                                            ::testing::Values(Filter::kNone, Filter::kShuffle,
                                                              Filter::kBitShuffle, Filter::kDelta,
                                                              Filter::kByteDelta),
                                            ::testing::Values(1, 4, 12),
                                            ::testing::Values(SplitMode::kAuto, SplitMode::kAlways),
                                            ::testing::Values(false)),
                         MatrixName);

// Blosc1 chunks carry one shuffle or bitshuffle at most.
INSTANTIATE_TEST_SUITE_P(Blosc1, ChunkRoundTripTest,
                         ::testing::Combine(kAllCodecs,
                                            ::testing::Values(Filter::kNone, Filter::kShuffle,
                                                              Filter::kBitShuffle),
                                            ::testing::Values(1, 4, 12),
                                            ::testing::Values(SplitMode::kAuto, SplitMode::kAlways),
                                            ::testing::Values(true)),
                         MatrixName);

TEST(ChunkEncoderTest, FilterChainsRoundTrip) {
  EncodeOptions o;
  o.codec = Codec::kLZ4;
  o.typesize = 4;
  o.filters = {Filter::kDelta, Filter::kShuffle, Filter::kByteDelta,
               Filter::kNone,  Filter::kNone,    Filter::kBitShuffle};
  ExpectRoundTrip(o, MakeData(DataKind::kSmooth, 123457, 7));
  o.typesize = 2;
  o.filters = {Filter::kShuffle, Filter::kBitShuffle, Filter::kDelta,
               Filter::kNone,    Filter::kNone,       Filter::kNone};
  ExpectRoundTrip(o, MakeData(DataKind::kLabels, 65535, 8));
}

TEST(ChunkEncoderTest, ShuffleGroupSizeFromMeta) {
  EncodeOptions o;
  o.typesize = 8;
  o.filters[0] = Filter::kShuffle;
  o.filters_meta[0] = 4;  // shuffle 8-byte items as pairs of 4-byte groups
  ExpectRoundTrip(o, MakeData(DataKind::kSmooth, 50001, 9));
}

TEST(ChunkEncoderTest, TruncPrecIsLossyButDecodesToTheTruncatedValues) {
  EncodeOptions o;
  o.typesize = 4;
  o.filters = {Filter::kTruncPrec, Filter::kShuffle};
  o.filters_meta = {10, 0};
  auto data = MakeData(DataKind::kSmooth, 40000, 10);
  ASSERT_OK_AND_ASSIGN(const auto chunk, CompressChunk(o, data));
  ASSERT_OK_AND_ASSIGN(const auto decoded, DecompressChunk(chunk));
  for (size_t i = 0; i < data.size(); i += 4) {
    uint32_t in, out;
    std::memcpy(&in, data.data() + i, 4);
    std::memcpy(&out, decoded.data() + i, 4);
    ASSERT_EQ(out, in & ~uint32_t{0x1FFF}) << i;
  }
  o.filters = {Filter::kTruncPrec, Filter::kDelta};
  EXPECT_THAT(CompressChunk(o, data), StatusIs(StatusCode::kInvalidArgument, HasSubstr("delta")));
}

TEST(ChunkEncoderTest, ClevelZeroAndTinyInputsAreStoredRaw) {
  EncodeOptions o;
  o.clevel = 0;
  auto data = MakeData(DataKind::kLabels, 10000, 1);
  ASSERT_OK_AND_ASSIGN(auto chunk, CompressChunk(o, data));
  ASSERT_OK_AND_ASSIGN(auto h, ParseChunkHeader(chunk));
  EXPECT_TRUE(h.memcpyed);
  EXPECT_EQ(h.cbytes, 10000 + 32);
  o.clevel = 5;
  o.blosc1 = true;
  ASSERT_OK_AND_ASSIGN(chunk, CompressChunk(o, MakeData(DataKind::kLabels, 127, 1)));
  ASSERT_OK_AND_ASSIGN(h, ParseChunkHeader(chunk));
  EXPECT_TRUE(h.memcpyed);  // c-blosc 1.x stores buffers under 128 bytes raw
}

TEST(ChunkEncoderTest, IncompressibleDataFallsBackToMemcpy) {
  EncodeOptions o;
  o.codec = Codec::kZstd;
  auto data = MakeData(DataKind::kRandom, 100000, 3);
  ASSERT_OK_AND_ASSIGN(auto chunk, CompressChunk(o, data));
  ASSERT_OK_AND_ASSIGN(auto h, ParseChunkHeader(chunk));
  EXPECT_TRUE(h.memcpyed);
  EXPECT_EQ(chunk.size(), data.size() + 32);
}

TEST(ChunkEncoderTest, AllZerosBecomesASpecialChunkAndRunsAreCoded) {
  EncodeOptions o;
  o.typesize = 4;
  ASSERT_OK_AND_ASSIGN(auto chunk, CompressChunk(o, std::vector<std::byte>(1 << 20)));
  EXPECT_EQ(chunk.size(), 32u);
  ASSERT_OK_AND_ASSIGN(auto h, ParseChunkHeader(chunk));
  EXPECT_EQ(h.special, SpecialValue::kZeros);
  std::vector<std::byte> sevens(1 << 20, std::byte{7});
  ASSERT_OK_AND_ASSIGN(chunk, CompressChunk(o, sevens));
  EXPECT_LT(chunk.size(), 32u + 4 * 200);  // a 5-byte run per stream
  ASSERT_OK_AND_ASSIGN(auto decoded, DecompressChunk(chunk));
  EXPECT_EQ(decoded, sevens);
}

TEST(ChunkEncoderTest, DictionariesForZstdAndLz4) {
  for (Codec codec : {Codec::kZstd, Codec::kLZ4, Codec::kLZ4HC}) {
    EncodeOptions o;
    o.codec = codec;
    o.typesize = 4;
    o.filters[0] = Filter::kShuffle;
    o.use_dict = true;
    o.blocksize = 16384;
    const auto data = MakeData(DataKind::kSmooth, 400000, 4);
    ASSERT_OK_AND_ASSIGN(auto chunk, CompressChunk(o, data));
    ASSERT_OK_AND_ASSIGN(auto h, ParseChunkHeader(chunk));
    EXPECT_TRUE(h.has_dict) << CodecName(codec);
    ExpectRoundTrip(o, data);
  }
  // One block gains nothing from a dictionary: none is written.
  EncodeOptions one;
  one.codec = Codec::kZstd;
  one.use_dict = true;
  ASSERT_OK_AND_ASSIGN(auto chunk, CompressChunk(one, MakeData(DataKind::kSmooth, 4096, 5)));
  ASSERT_OK_AND_ASSIGN(auto h, ParseChunkHeader(chunk));
  EXPECT_FALSE(h.has_dict);
  EncodeOptions o;
  o.codec = Codec::kZlib;
  o.use_dict = true;
  EXPECT_THAT(CompressChunk(o, MakeData(DataKind::kSmooth, 1000, 1)),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("dictionaries")));
}

TEST(ChunkEncoderTest, BlocksizeFollowsCBlosc2Rules) {
  EncodeOptions o;
  o.codec = Codec::kLZ4;
  o.typesize = 4;
  o.filters[0] = Filter::kShuffle;
  o.clevel = 5;
  // Split LZ4 at clevel 5: 64 KiB per stream x typesize.
  EXPECT_EQ(ComputeBlocksize(o, 1 << 20), 256 * 1024);
  o.clevel = 7;
  o.typesize = 2;
  EXPECT_EQ(ComputeBlocksize(o, 1 << 20), 256 * 1024);  // 128 KiB per stream at clevel 7
  o.clevel = 5;
  o.typesize = 4;
  o.splitmode = SplitMode::kNever;
  EXPECT_EQ(ComputeBlocksize(o, 1 << 20), 128 * 1024);  // L1 x 4 at clevel 5
  o.codec = Codec::kZstd;
  o.clevel = 8;
  EXPECT_EQ(ComputeBlocksize(o, 8 << 20), 512 * 1024);  // 2 x L1 x 8 for high-ratio codecs
  EXPECT_EQ(ComputeBlocksize(o, 1001), 1000);           // whole input, a multiple of typesize
  o.blocksize = 10001;
  EXPECT_EQ(ComputeBlocksize(o, 1 << 20), 10000);  // user blocks are rounded to typesize
}

TEST(ChunkEncoderTest, RejectsOptionsTheFormatCannotHold) {
  EncodeOptions o;
  o.blosc1 = true;
  o.filters[0] = Filter::kDelta;
  EXPECT_THAT(CompressChunk(o, MakeData(DataKind::kSmooth, 1000, 1)),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("Blosc1")));
  o = EncodeOptions();
  o.clevel = 10;
  EXPECT_THAT(CompressChunk(o, MakeData(DataKind::kSmooth, 1000, 1)),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("clevel")));
}

TEST(ChunkEncoderTest, TypesizeAbove255IsRecordedAsBytes) {
  EncodeOptions o;
  o.typesize = 300;
  o.filters[0] = Filter::kShuffle;
  const auto data = MakeData(DataKind::kSmooth, 300 * 200, 5);
  ASSERT_OK_AND_ASSIGN(auto chunk, CompressChunk(o, data));
  ASSERT_OK_AND_ASSIGN(auto h, ParseChunkHeader(chunk));
  EXPECT_EQ(h.typesize, 1);
  ExpectRoundTrip(o, data);
}

TEST(BlockDecoderTest, DecodeBlockForItemsGivesTheWantedItems) {
  // Shuffled blocks come back as byte planes, other settings decoded whole. Either way the
  // items are right.
  const std::vector<std::byte> data = MakeData(DataKind::kSmooth, 4 * 40000, 21);
  struct Case {
    Codec codec;
    SplitMode split;
    Filter filter;
    bool shuffled;
  };
  for (const Case& c : {Case{Codec::kLZ4, SplitMode::kAlways, Filter::kShuffle, true},
                        Case{Codec::kLZ4, SplitMode::kNever, Filter::kShuffle, true},
                        Case{Codec::kZstd, SplitMode::kAlways, Filter::kShuffle, true},
                        Case{Codec::kLZ4, SplitMode::kAlways, Filter::kBitShuffle, false},
                        Case{Codec::kLZ4, SplitMode::kAlways, Filter::kNone, false}}) {
    EncodeOptions o;
    o.codec = c.codec;
    o.typesize = 4;
    o.splitmode = c.split;
    o.filters[5] = c.filter;
    o.blocksize = 4 * 4096;
    ASSERT_OK_AND_ASSIGN(std::vector<std::byte> chunk, CompressChunk(o, data));
    ASSERT_OK_AND_ASSIGN(ChunkHeader h, ParseChunkHeader(chunk));
    BlockDecoder decoder;
    for (int32_t b : {0, 3, h.nblocks - 1}) {
      const size_t nitems = static_cast<size_t>(h.block_nbytes(b)) / 4;
      for (size_t needed : {size_t{1}, size_t{777}, nitems}) {
        SCOPED_TRACE("block " + std::to_string(b) + " needed " + std::to_string(needed));
        ASSERT_OK_AND_ASSIGN(PartlyDecodedBlock part, decoder.DecodeBlockForItems(chunk, h, b, 4));
        EXPECT_EQ(part.shuffled, c.shuffled);
        ASSERT_EQ(part.nitems, nitems);
        std::vector<std::byte> items(needed * 4);
        if (part.shuffled) {
          UnshuffleItemRows(4, part.data, part.nitems, 0, needed, 1, 0, items.data(), 0);
        } else {
          std::memcpy(items.data(), part.data, items.size());
        }
        const auto offset = static_cast<ptrdiff_t>(b) * o.blocksize;
        ASSERT_TRUE(std::equal(items.begin(), items.end(), data.begin() + offset));
      }
    }
  }
}

TEST(BlockDecoderTest, CountsTheBytesItReadsAndProduces) {
  // A whole chunk: every stream byte after the header and block offsets is read once, and
  // nbytes come out; a stored-raw (clevel 0) chunk counts its data in both.
  const std::vector<std::byte> data = MakeData(DataKind::kSmooth, 4 * 30000, 5);
  EncodeOptions o;
  o.typesize = 4;
  o.filters[5] = Filter::kShuffle;
  o.blocksize = 4 * 4096;
  for (int clevel : {5, 0}) {
    o.clevel = clevel;
    ASSERT_OK_AND_ASSIGN(std::vector<std::byte> chunk, CompressChunk(o, data));
    ASSERT_OK_AND_ASSIGN(ChunkHeader h, ParseChunkHeader(chunk));
    BlockDecoder decoder;
    std::vector<std::byte> out(data.size());
    ASSERT_OK(decoder.DecodeChunk(chunk, out));
    const int64_t overhead = h.memcpyed ? h.header_size : h.header_size + 4 * h.nblocks;
    EXPECT_EQ(decoder.compressed_bytes_read(), h.cbytes - overhead) << "clevel " << clevel;
    EXPECT_EQ(decoder.bytes_decoded(), h.nbytes) << "clevel " << clevel;
  }
}

}  // namespace
}  // namespace patchfeed::codec
