// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// DELTA, BYTEDELTA and TRUNC_PREC against hand-computed values and their inverses.

#include "codec/blosc/filters.h"

#include <random>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/byte_order.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::codec {
namespace {

std::vector<std::byte> RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v)
    b = static_cast<std::byte>(rng());
  return v;
}

TEST(DeltaTest, WordSizeFollowsTypesize) {
  EXPECT_EQ(DeltaWordSize(1), 1);
  EXPECT_EQ(DeltaWordSize(2), 2);
  EXPECT_EQ(DeltaWordSize(4), 4);
  EXPECT_EQ(DeltaWordSize(8), 8);
  EXPECT_EQ(DeltaWordSize(16), 8);
  EXPECT_EQ(DeltaWordSize(12), 1);
  EXPECT_EQ(DeltaWordSize(3), 1);
}

TEST(DeltaTest, Block0XorsEachWordWithItsPredecessor) {
  std::vector<std::byte> src(8), dst(8);
  StoreLE<uint16_t>(src.data(), 0x0101);
  StoreLE<uint16_t>(src.data() + 2, 0x0303);
  StoreLE<uint16_t>(src.data() + 4, 0x0707);
  StoreLE<uint16_t>(src.data() + 6, 0x0F0F);
  DeltaEncode(2, nullptr, src.data(), dst.data(), 8);
  EXPECT_EQ(LoadLE<uint16_t>(dst.data()), 0x0101);
  EXPECT_EQ(LoadLE<uint16_t>(dst.data() + 2), 0x0202);
  EXPECT_EQ(LoadLE<uint16_t>(dst.data() + 4), 0x0404);
  EXPECT_EQ(LoadLE<uint16_t>(dst.data() + 6), 0x0808);
  DeltaDecode(2, nullptr, dst.data(), 8);
  EXPECT_EQ(dst, src);
}

TEST(DeltaTest, LaterBlocksXorWithBlock0AndRoundTrip) {
  for (int32_t typesize : {1, 2, 3, 4, 8, 12, 16}) {
    const auto block0 = RandomBytes(1000, 1);
    const auto block = RandomBytes(997, 2);
    std::vector<std::byte> enc(block.size());
    DeltaEncode(typesize, block0.data(), block.data(), enc.data(), block.size());
    const size_t w = static_cast<size_t>(DeltaWordSize(typesize));
    EXPECT_EQ(enc[0], block[0] ^ block0[0]);
    DeltaDecode(typesize, block0.data(), enc.data(), enc.size());
    // Bytes past the last whole word are copied through untouched.
    EXPECT_EQ(enc, block) << "typesize " << typesize << " word " << w;
  }
}

TEST(ByteDeltaTest, DifferencesPerStreamAndRoundTrip) {
  const std::vector<std::byte> src = {std::byte{5}, std::byte{7}, std::byte{6}, std::byte{1},
                                      std::byte{1}, std::byte{0}, std::byte{9}};
  std::vector<std::byte> dst(src.size());
  ByteDeltaEncode(2, src.data(), dst.data(), src.size());  // two streams of 3, 1 byte left
  EXPECT_EQ(dst[0], std::byte{5});
  EXPECT_EQ(dst[1], std::byte{2});
  EXPECT_EQ(dst[2], std::byte{0xFF});
  EXPECT_EQ(dst[3], std::byte{1});
  EXPECT_EQ(dst[4], std::byte{0});
  EXPECT_EQ(dst[5], std::byte{0xFF});
  EXPECT_EQ(dst[6], std::byte{9});
  ByteDeltaDecode(2, dst.data(), dst.size());
  EXPECT_EQ(dst, src);
  const auto big = RandomBytes(10001, 3);
  std::vector<std::byte> tmp(big.size());
  ByteDeltaEncode(4, big.data(), tmp.data(), big.size());
  ByteDeltaDecode(4, tmp.data(), tmp.size());
  EXPECT_EQ(tmp, big);
}

TEST(TruncPrecTest, KeepsRequestedMantissaBits) {
  std::vector<std::byte> src(8), dst(8);
  StoreLE<uint32_t>(src.data(), 0x3FFFFFFFu);
  StoreLE<uint32_t>(src.data() + 4, 0xBF800001u);
  ASSERT_OK(TruncatePrecision(4, 10, src.data(), dst.data(), 8));  // drop 13 bits
  EXPECT_EQ(LoadLE<uint32_t>(dst.data()), 0x3FFFE000u);
  EXPECT_EQ(LoadLE<uint32_t>(dst.data() + 4), 0xBF800000u);
  ASSERT_OK(TruncatePrecision(4, -4, src.data(), dst.data(), 8));  // drop 4 bits
  EXPECT_EQ(LoadLE<uint32_t>(dst.data()), 0x3FFFFFF0u);
}

TEST(TruncPrecTest, RejectsBadTypesizeAndPrecision) {
  std::vector<std::byte> buf(16);
  EXPECT_THAT(TruncatePrecision(2, 5, buf.data(), buf.data(), 16),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("typesize")));
  EXPECT_THAT(TruncatePrecision(4, 30, buf.data(), buf.data(), 16),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("mantissa")));
  EXPECT_THAT(TruncatePrecision(8, 0, buf.data(), buf.data(), 16),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("mantissa")));
}

}  // namespace
}  // namespace patchfeed::codec
