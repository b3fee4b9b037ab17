// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// A chunk is untrusted bytes. Every truncation and thousands of seeded byte corruptions of
// valid chunks (written by c-blosc2, c-blosc 1.x and patchfeed) must give an error or a
// result of the header's size: never a crash or an out-of-bounds access. CI runs this binary
// under AddressSanitizer and UndefinedBehaviorSanitizer, which turn any stray access into a
// failure.

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codec/blosc/block_decoder.h"
#include "codec/blosc/chunk_encoder.h"
#include "common/byte_order.h"
#include "tests/codec/test_data_files.h"

namespace patchfeed::codec {
namespace {

std::vector<std::vector<std::byte>> Corpus() {
  std::vector<std::vector<std::byte>> corpus;
  for (const auto& f : testing::GoldenChunkFiles()) {
    auto chunk = testing::ReadFileBytes(f);
    if (chunk.size() <= 40000)
      corpus.push_back(std::move(chunk));
  }
  std::vector<std::byte> data(20000);
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = std::byte{static_cast<uint8_t>((i / 4) % 97 + (i % 4 == 3 ? 60 : 0))};
  }
  for (Codec c : {Codec::kBloscLZ, Codec::kLZ4, Codec::kLZ4HC, Codec::kZlib, Codec::kZstd}) {
    for (Filter f : {Filter::kShuffle, Filter::kBitShuffle, Filter::kDelta}) {
      EncodeOptions o;
      o.codec = c;
      o.typesize = 4;
      o.filters[0] = f;
      o.blocksize = 4096;
      o.splitmode = SplitMode::kAlways;
      corpus.push_back(*CompressChunk(o, data));
    }
  }
  EncodeOptions dict;
  dict.codec = Codec::kZstd;
  dict.use_dict = true;
  dict.blocksize = 4096;
  corpus.push_back(*CompressChunk(dict, data));
  return corpus;
}

// Decodes whole and block by block; the result must be an error or the right size, and a
// successful decode must not have touched the guard bytes after the output.
void DecodeMustNotMisbehave(const std::vector<std::byte>& chunk, BlockDecoder& decoder) {
  auto sizes = ReadChunkSizes(chunk);
  if (!sizes.ok() || sizes->nbytes > (4 << 20))
    return;  // e.g. a valid huge special chunk
  constexpr size_t kGuard = 64;
  std::vector<std::byte> out(static_cast<size_t>(sizes->nbytes) + kGuard, std::byte{0xA5});
  const Status st = decoder.DecodeChunk(chunk, std::span(out).first(out.size() - kGuard));
  if (st.ok()) {
    for (size_t i = out.size() - kGuard; i < out.size(); ++i)
      ASSERT_EQ(out[i], std::byte{0xA5});
  } else {
    ASSERT_FALSE(st.message().empty());
  }
  auto header = ParseChunkHeader(chunk);
  if (!header.ok())
    return;
  for (int32_t b = 0; b < header->nblocks; b += std::max(1, header->nblocks / 4)) {
    std::vector<std::byte> block(static_cast<size_t>(header->block_nbytes(b)));
    (void)decoder.DecodeBlock(chunk, *header, b, block);
  }
}

TEST(ChunkRobustnessTest, EveryTruncationIsAnError) {
  BlockDecoder decoder;
  for (const auto& chunk : Corpus()) {
    for (size_t len = 0; len < chunk.size(); ++len) {
      std::vector<std::byte> cut(chunk.begin(), chunk.begin() + static_cast<ptrdiff_t>(len));
      std::vector<std::byte> out(1 << 16);
      const Status st = decoder.DecodeChunk(cut, out);
      ASSERT_FALSE(st.ok()) << "length " << len << " of " << chunk.size();
    }
  }
}

TEST(ChunkRobustnessTest, TruncationWithPatchedSizeNeverMisbehaves) {
  // Cutting a chunk and fixing cbytes to match gets past the header check and into the block
  // offsets and streams.
  BlockDecoder decoder;
  for (const auto& chunk : Corpus()) {
    const size_t step = std::max<size_t>(1, chunk.size() / 300);
    for (size_t len = 16; len < chunk.size(); len += step) {
      std::vector<std::byte> cut(chunk.begin(), chunk.begin() + static_cast<ptrdiff_t>(len));
      StoreLE<int32_t>(cut.data() + 12, static_cast<int32_t>(len));
      DecodeMustNotMisbehave(cut, decoder);
    }
  }
}

TEST(ChunkRobustnessTest, RandomCorruptionsNeverMisbehave) {
  BlockDecoder decoder;
  std::mt19937 rng(20261130);
  int errors = 0, successes = 0;
  for (const auto& chunk : Corpus()) {
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<std::byte> bad = chunk;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int k = 0; k < flips; ++k) {
        // Half the flips hit the header and block offsets, where a wrong value does most harm.
        const size_t limit = (rng() % 2 == 0) ? std::min<size_t>(bad.size(), 64) : bad.size();
        bad[rng() % limit] = static_cast<std::byte>(rng());
      }
      DecodeMustNotMisbehave(bad, decoder);
      auto sizes = ReadChunkSizes(bad);
      if (sizes.ok() && sizes->nbytes > (4 << 20))
        continue;
      auto r = DecompressChunk(bad);
      (r.ok() ? successes : errors)++;
    }
  }
  // Both outcomes occur: corruptions inside raw streams decode (to other bytes), most others
  // are caught.
  EXPECT_GT(errors, 1000);
  EXPECT_GT(successes, 10);
}

}  // namespace
}  // namespace patchfeed::codec
