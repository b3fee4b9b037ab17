// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "common/status.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/byte_order.h"
#include "common/result.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed {
namespace {

using ::testing::HasSubstr;

Result<int> Half(int x) {
  if (x % 2 != 0)
    return InvalidArgumentError("odd number " + std::to_string(x));
  return x / 2;
}

Status Quarter(int x, int* out) {
  PATCHFEED_ASSIGN_OR_RETURN(int h, Half(x));
  PATCHFEED_ASSIGN_OR_RETURN(*out, Half(h));
  return Status::Ok();
}

TEST(StatusTest, OkIsDefaultAndCheap) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_TRUE(s.WithContext("file x").ok());
}

TEST(StatusTest, ContextIsPrepended) {
  Status s = DataLossError("lz4 stream is corrupt").WithContext("block 3").WithContext("chunk 7");
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "chunk 7: block 3: lz4 stream is corrupt");
  EXPECT_EQ(s.ToString(), "DATA_LOSS: chunk 7: block 3: lz4 stream is corrupt");
}

TEST(ResultTest, PropagatesErrorsThroughMacros) {
  int out = 0;
  ASSERT_OK(Quarter(12, &out));
  EXPECT_EQ(out, 3);
  EXPECT_THAT(Quarter(6, &out), StatusIs(StatusCode::kInvalidArgument, HasSubstr("odd number 3")));
  ASSERT_OK_AND_ASSIGN(int h, Half(8));
  EXPECT_EQ(h, 4);
}

TEST(ByteOrderTest, LittleAndBigEndianRoundTrip) {
  unsigned char buf[8];
  StoreLE<uint32_t>(buf, 0x11223344u);
  EXPECT_EQ(buf[0], 0x44);
  EXPECT_EQ(LoadLE<uint32_t>(buf), 0x11223344u);
  StoreBE<uint64_t>(buf, 0x0102030405060708ull);
  EXPECT_EQ(buf[0], 0x01);
  EXPECT_EQ(buf[7], 0x08);
  EXPECT_EQ(LoadBE<uint64_t>(buf), 0x0102030405060708ull);
  EXPECT_EQ(LoadBE<int16_t>(buf), 0x0102);
}

}  // namespace
}  // namespace patchfeed
