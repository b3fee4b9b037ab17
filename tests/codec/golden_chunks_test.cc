// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Decodes chunks written by the real c-blosc2 (python-blosc2) and c-blosc 1.x (PyPI blosc),
// whole and block by block, and compares with the original bytes. The files and the script
// that made them are in tests/codec/testdata/golden/.

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codec/blosc/block_decoder.h"
#include "codec/blosc/chunk_format.h"
#include "tests/codec/test_data_files.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::codec {
namespace {

using ::patchfeed::testing::GoldenChunkFiles;
using ::patchfeed::testing::ReadFileBytes;

class GoldenChunkTest : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(GoldenChunkTest, DecodesWholeChunkExactly) {
  const auto chunk = ReadFileBytes(GetParam());
  auto raw_path = GetParam();
  const auto raw = ReadFileBytes(raw_path.replace_extension(".raw"));
  ASSERT_OK_AND_ASSIGN(const std::vector<std::byte> decoded, DecompressChunk(chunk));
  ASSERT_EQ(decoded.size(), raw.size());
  EXPECT_TRUE(decoded == raw);
}

TEST_P(GoldenChunkTest, DecodesEveryBlockAloneExactly) {
  const auto chunk = ReadFileBytes(GetParam());
  auto raw_path = GetParam();
  const auto raw = ReadFileBytes(raw_path.replace_extension(".raw"));
  ASSERT_OK_AND_ASSIGN(const ChunkHeader h, ParseChunkHeader(chunk));
  BlockDecoder decoder;
  // Visit blocks backwards so DELTA's block-0 reference is rebuilt, not left over.
  for (int32_t b = h.nblocks - 1; b >= 0; --b) {
    std::vector<std::byte> out(static_cast<size_t>(h.block_nbytes(b)));
    ASSERT_OK(decoder.DecodeBlock(chunk, h, b, out));
    const size_t offset = static_cast<size_t>(b) * static_cast<size_t>(h.blocksize);
    EXPECT_TRUE(std::equal(out.begin(), out.end(), raw.begin() + static_cast<ptrdiff_t>(offset)))
        << "block " << b;
  }
}

std::string Name(const ::testing::TestParamInfo<std::filesystem::path>& info) {
  std::string s = info.param.stem().string();
  std::replace_if(
      s.begin(), s.end(), [](char c) { return !std::isalnum(c); }, '_');
  return s;
}

INSTANTIATE_TEST_SUITE_P(Files, GoldenChunkTest, ::testing::ValuesIn(GoldenChunkFiles()), Name);

TEST(GoldenChunkSetTest, CoversBothProducers) {
  int blosc1 = 0, blosc2 = 0;
  for (const auto& f : GoldenChunkFiles()) {
    const auto chunk = ReadFileBytes(f);
    ASSERT_OK_AND_ASSIGN(const ChunkHeader h, ParseChunkHeader(chunk));
    (h.is_blosc1_format() ? blosc1 : blosc2)++;
  }
  EXPECT_GE(blosc1, 5);
  EXPECT_GE(blosc2, 15);
}

}  // namespace
}  // namespace patchfeed::codec
