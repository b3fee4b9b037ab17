// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "common/status.h"

#include <cstdint>
#include <string>
#include <string_view>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/byte_order.h"
#include "common/result.h"
#include "common/str_cat.h"
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

Status CheckEven(int x, const char* where, int index) {
  PATCHFEED_RETURN_IF_ERROR(Half(x).status(), where, ": item ", index);
  PATCHFEED_ASSIGN_OR_RETURN(const int h, Half(x), "halving ", where);
  return h > 100 ? InvalidArgumentError("too large") : Status::Ok();
}

TEST(ResultTest, MacrosAddContextInOneLine) {
  EXPECT_OK(CheckEven(8, "a.b2nd", 2));
  EXPECT_THAT(CheckEven(7, "a.b2nd", 2),
              StatusIs(StatusCode::kInvalidArgument, "a.b2nd: item 2: odd number 7"));
  EXPECT_THAT(CheckEven(202, "a.b2nd", 2), StatusIs(StatusCode::kInvalidArgument, "too large"));
}

TEST(StrCatTest, JoinsEveryKindOfPiece) {
  const std::string name = "seg";
  EXPECT_EQ(StrCat("array '", name, "' ", std::string_view("of"), ' ', 3, " x ", int64_t{-7},
                   " bytes, ", 0.25, " ", 1e300, " ", true, " ", uint8_t{200}),
            "array 'seg' of 3 x -7 bytes, 0.25 1e+300 true 200");
  EXPECT_EQ(StrCat(), "");
  EXPECT_EQ(StrCat(INT64_MIN), "-9223372036854775808");
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
