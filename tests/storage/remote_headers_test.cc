// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "storage/remote/http_headers.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::storage {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Optional;
using ::testing::Pair;

TEST(HttpHeadersTest, ParsesDecimalsStrictly) {
  EXPECT_THAT(ParseDecimal("0"), Optional(0u));
  EXPECT_THAT(ParseDecimal("9999999999999999999"), Optional(9999999999999999999u));
  EXPECT_EQ(ParseDecimal("18446744073709551616"), std::nullopt);  // 2^64: 20 digits
  EXPECT_EQ(ParseDecimal(""), std::nullopt);
  EXPECT_EQ(ParseDecimal("-1"), std::nullopt);
  EXPECT_EQ(ParseDecimal("+1"), std::nullopt);
  EXPECT_EQ(ParseDecimal("12 "), std::nullopt);
  EXPECT_EQ(ParseDecimal("0x10"), std::nullopt);
}

TEST(HttpHeadersTest, SplitsHeaderAndStatusLines) {
  EXPECT_THAT(SplitHeaderLine("Content-Range:  bytes 0-9/10 \r\n"),
              Optional(Pair("content-range", "bytes 0-9/10")));
  EXPECT_THAT(SplitHeaderLine("ETag: \"a:b\"\r\n"), Optional(Pair("etag", "\"a:b\"")));
  EXPECT_EQ(SplitHeaderLine("\r\n"), std::nullopt);
  EXPECT_EQ(SplitHeaderLine("HTTP/1.1 200 OK\r\n"), std::nullopt);
  EXPECT_EQ(SplitHeaderLine(": no name\r\n"), std::nullopt);

  EXPECT_THAT(ParseStatusLine("HTTP/1.1 206 Partial Content\r\n"), Optional(206));
  EXPECT_THAT(ParseStatusLine("HTTP/2 404 \r\n"), Optional(404));
  EXPECT_EQ(ParseStatusLine("HTTP/1.1 20\r\n"), std::nullopt);
  EXPECT_EQ(ParseStatusLine("HTTP/1.1 abc\r\n"), std::nullopt);
  EXPECT_EQ(ParseStatusLine("Server: x\r\n"), std::nullopt);
}

TEST(HttpHeadersTest, ParsesContentRange) {
  auto r = ParseContentRange("bytes 10-19/100");
  ASSERT_TRUE(r.has_value());
  EXPECT_THAT(r->first, Optional(10u));
  EXPECT_THAT(r->last, Optional(19u));
  EXPECT_THAT(r->total, Optional(100u));
  r = ParseContentRange("bytes 0-0/*");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->total, std::nullopt);
  r = ParseContentRange("bytes */42");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->first, std::nullopt);
  EXPECT_THAT(r->total, Optional(42u));

  for (const char* bad : {"", "bytes", "bytes 1-2", "items 0-1/2", "bytes 5-4/10", "bytes 0-10/10",
                          "bytes -1-2/3", "bytes 0-1/-3", "bytes */*",
                          "bytes 0-99999999999999999999/1", "bytes 1-/5", "bytes -5/10"}) {
    EXPECT_EQ(ParseContentRange(bad), std::nullopt) << bad;
  }
}

TEST(HttpHeadersTest, ChecksThatTheRangeAnsweredIsTheRangeAsked) {
  EXPECT_OK(CheckContentRange("bytes 100-199/1000", 100, 100, "s3://b/k"));
  EXPECT_OK(CheckContentRange("bytes 100-199/*", 100, 100, "s3://b/k"));
  EXPECT_THAT(
      CheckContentRange("", 100, 100, "s3://b/k"),
      StatusIs(StatusCode::kDataLoss, AllOf(HasSubstr("s3://b/k"), HasSubstr("bytes 100-199"),
                                            HasSubstr("no Content-Range"))));
  EXPECT_THAT(CheckContentRange("bytes 0-99/1000", 100, 100, "s3://b/k"),
              StatusIs(StatusCode::kDataLoss, AllOf(HasSubstr("asked for bytes 100-199"),
                                                    HasSubstr("'bytes 0-99/1000'"))));
  EXPECT_THAT(CheckContentRange("bytes 100-299/1000", 100, 100, "s3://b/k"),
              StatusIs(StatusCode::kDataLoss, HasSubstr("'bytes 100-299/1000'")));
  EXPECT_THAT(CheckContentRange("bytes 100-149/150", 100, 100, "s3://b/k"),
              StatusIs(StatusCode::kDataLoss, AllOf(HasSubstr("pass the end of the object"),
                                                    HasSubstr("holds 150 bytes"))));
  EXPECT_THAT(CheckContentRange("bytes nonsense", 100, 100, "s3://b/k"),
              StatusIs(StatusCode::kDataLoss, HasSubstr("cannot mean")));
}

TEST(HttpHeadersTest, DescribesRangesAsHttpWritesThem) {
  EXPECT_EQ(DescribeRange(100, 100), "bytes 100-199");
  EXPECT_EQ(DescribeRange(7, 1), "bytes 7-7");
  EXPECT_EQ(DescribeRange(5, 0), "0 bytes at 5");
}

}  // namespace
}  // namespace patchfeed::storage
