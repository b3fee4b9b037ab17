// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Fixed format bytes: the c-blosc2 frame of the format reference's worked example (section
// 4.10) read box by box; the b2nd metalayer (section 6.1): SerializeB2ndMeta / ParseB2ndMeta
// round trips for ranks 0-16, c-blosc2's bytes, every truncation, invalid contents; the dtype
// item size and ItemFromDouble (pad values in the dtype's byte order, refused when they do not
// fit).

#include <string>
#include <tuple>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codec/b2nd/b2nd_meta.h"
#include "codec/b2nd/frame_reader.h"
#include "codec/b2nd/nd_reader.h"
#include "codec/dtype.h"
#include "storage/byte_source.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::codec {
namespace {

using ::testing::HasSubstr;

// The c-blosc2 3.3.3 frame of the format reference, section 4.10: `<u2` (5, 7), chunks
// (3, 4), blocks (2, 3), zstd, values 1..35; memcpyed and zero-stream chunks.
constexpr char kWorkedExampleHex[] =
    "9ea862326672616d6500d2000000a5cf0000000000000244a412005503d300000000000000c0d30000000000"
    "00013cd200000002d20000000cd200000030d10001d10001c2d8060000000000010500000000000000000093"
    "cd0011de0001a462326e64d20000006bdc0001c60000003597000292d30000000000000005d3000000000000"
    "000792d200000003d20000000492d200000002d20000000300db000000033c753205019702300000000c0000"
    "005000000000000000000105000000000000000000010002000300080009000a000400000000000b00000000"
    "000f001000110000000000000012000000000000000000000005019702300000000c00000050000000000000"
    "000001050000000000000000000500060007000c000d000e0000000000000000000000000013001400150000"
    "000000000000000000000000000000000005019702300000000c000000500000000000000000010500000000"
    "00000000001600170018001d001e001f00190000000000200000000000000000000000000000000000000000"
    "00000000000000000005019502300000000c0000004c00000000000000000105000000000000000000300000"
    "004000000044000000480000000c0000001a1b1c212223000000000000000000000000000000000000050117"
    "0820000000200000004000000000000000000100000000000000000000000000000000000050000000000000"
    "00a000000000000000f000000000000000940193cd0006de0000dc0000ce00000023d8000000000000000000"
    "0000000000000000";

std::vector<std::byte> WorkedExample() {
  std::vector<std::byte> out;
  for (size_t i = 0; kWorkedExampleHex[i] != '\0'; i += 2) {
    out.push_back(
        static_cast<std::byte>(std::stoi(std::string(kWorkedExampleHex + i, 2), nullptr, 16)));
  }
  return out;
}

TEST(FrameGolden, CBlosc2WorkedExample) {
  const auto frame = WorkedExample();
  ASSERT_EQ(frame.size(), 580u);
  ASSERT_OK_AND_ASSIGN(FrameReader fr,
                       FrameReader::FromSource(storage::MemorySource(frame, "example")));
  ASSERT_OK_AND_ASSIGN(const NdArrayReader r, NdArrayReader::FromFrame(std::move(fr)));
  const FrameInfo& f = r.frame().info();
  EXPECT_EQ(f.header_len, 165);
  EXPECT_EQ(f.nchunks, 4);
  EXPECT_EQ(f.chunksize, 48);
  EXPECT_EQ(f.compcode, 5);
  EXPECT_EQ(f.clevel, 5);
  EXPECT_EQ(r.meta().shape, (std::vector<int64_t>{5, 7}));
  EXPECT_EQ(r.meta().dtype, "<u2");
  // Every box within [-2, 7) x [-2, 9): items (y, x) inside hold 7y + x + 1, pad 0xFFFF.
  const std::vector<std::byte> pad = {std::byte{0xFF}, std::byte{0xFF}};
  for (int y0 = -2; y0 < 7; ++y0) {
    for (int x0 = -2; x0 < 9; ++x0) {
      for (int y1 = y0; y1 <= 7; y1 += 2) {
        for (int x1 = x0; x1 <= 9; x1 += 3) {
          ASSERT_OK_AND_ASSIGN(const auto got, r.ReadBox(Box{{y0, x0}, {y1, x1}}, pad));
          ASSERT_EQ(got.size(), static_cast<size_t>((y1 - y0) * (x1 - x0) * 2));
          size_t k = 0;
          for (int y = y0; y < y1; ++y) {
            for (int x = x0; x < x1; ++x, k += 2) {
              const bool in = y >= 0 && y < 5 && x >= 0 && x < 7;
              const int want = in ? 7 * y + x + 1 : 0xFFFF;
              const int value = static_cast<int>(got[k]) | static_cast<int>(got[k + 1]) << 8;
              ASSERT_EQ(value, want) << "box " << y0 << ":" << y1 << "," << x0 << ":" << x1;
            }
          }
        }
      }
    }
  }
}

TEST(B2ndMeta, SerializeParseRoundTrip) {
  // Ranks 0-16; for 16 c-blosc2 writes the array markers as 0x90 + 16 = 0xA0 (b2nd.c
  // b2nd_serialize_meta) and skips them when reading.
  for (int ndim = 0; ndim <= kMaxDims; ++ndim) {
    SCOPED_TRACE("ndim " + std::to_string(ndim));
    B2ndMeta m;
    for (int d = 0; d < ndim; ++d) {
      m.shape.push_back(int64_t{1} << (d + 20));
      m.chunkshape.push_back(7 + d);
      m.blockshape.push_back(1 + d % 7);
    }
    m.dtype = ndim % 2 ? "<f4" : "[('a', '<i4'), ('b', '<f8')]";
    const auto bytes = SerializeB2ndMeta(m);
    EXPECT_EQ(bytes.size(), 3 + (1 + 9 * ndim) + 2 * (1 + 5 * ndim) + 2 + 4 + m.dtype.size());
    ASSERT_OK_AND_ASSIGN(const B2ndMeta back, ParseB2ndMeta(bytes));
    EXPECT_EQ(back.shape, m.shape);
    EXPECT_EQ(back.chunkshape, m.chunkshape);
    EXPECT_EQ(back.blockshape, m.blockshape);
    EXPECT_EQ(back.dtype, m.dtype);
    // Every prefix is truncated, except the legacy (Caterva) content that ends after the
    // block shape: it parses with no dtype.
    const size_t legacy = 3 + (1 + 9 * ndim) + 2 * (1 + 5 * ndim);
    for (size_t n = 0; n < bytes.size(); ++n) {
      const auto parsed = ParseB2ndMeta(std::span(bytes).first(n));
      if (n == legacy) {
        ASSERT_OK(parsed.status());
        EXPECT_EQ(parsed->dtype, "");
        EXPECT_EQ(parsed->blockshape, m.blockshape);
        continue;
      }
      EXPECT_THAT(parsed, StatusIs(StatusCode::kDataLoss, HasSubstr("b2nd")))
          << "prefix " << n << " of ndim " << ndim;
    }
  }
  // The example's content (53 bytes at 0x70) is what SerializeB2ndMeta writes.
  const auto frame = WorkedExample();
  const std::vector<std::byte> golden(frame.begin() + 0x70, frame.begin() + 0x70 + 53);
  EXPECT_EQ(SerializeB2ndMeta(B2ndMeta{0, {5, 7}, {3, 4}, {2, 3}, "<u2"}), golden);
}

TEST(B2ndMeta, InvalidContent) {
  B2ndMeta m{0, {10, 10}, {5, 5}, {2, 6}, "<f4"};  // block above chunk
  EXPECT_THAT(ParseB2ndMeta(SerializeB2ndMeta(m)),
              StatusIs(StatusCode::kDataLoss, HasSubstr("dimension 1")));
  m.blockshape = {2, 0};
  EXPECT_THAT(ParseB2ndMeta(SerializeB2ndMeta(m)),
              StatusIs(StatusCode::kDataLoss, HasSubstr("dimension 1")));
  m.blockshape = {2, 2};
  auto bytes = SerializeB2ndMeta(m);
  bytes[2] = std::byte{17};
  EXPECT_THAT(ParseB2ndMeta(bytes), StatusIs(StatusCode::kDataLoss, HasSubstr("ndim 17")));
  m.shape = {10, -1};
  EXPECT_THAT(ParseB2ndMeta(SerializeB2ndMeta(m)),
              StatusIs(StatusCode::kDataLoss, HasSubstr("negative")));
}

TEST(B2ndMeta, ItemSizeAndItemFromDouble) {
  EXPECT_EQ(ItemSizeOfDtype("<f4"), 4);
  EXPECT_EQ(ItemSizeOfDtype("|u1"), 1);
  EXPECT_EQ(ItemSizeOfDtype("<U10"), 40);
  EXPECT_EQ(ItemSizeOfDtype("<M8[ns]"), 8);
  EXPECT_EQ(ItemSizeOfDtype("[('a', '<i4')]"), 0);
  EXPECT_EQ(ItemSizeOfDtype("f4"), 0);
  auto bytes = [](std::initializer_list<int> v) {
    std::vector<std::byte> out;
    for (int b : v) {
      out.push_back(static_cast<std::byte>(b));
    }
    return out;
  };
  EXPECT_THAT(*ItemFromDouble("<i2", 2, -1), ::testing::Eq(bytes({0xFF, 0xFF})));
  EXPECT_THAT(*ItemFromDouble("<u2", 2, 258), ::testing::Eq(bytes({0x02, 0x01})));
  EXPECT_THAT(*ItemFromDouble(">u2", 2, 258), ::testing::Eq(bytes({0x01, 0x02})));
  EXPECT_THAT(*ItemFromDouble("<f4", 4, -7.25), ::testing::Eq(bytes({0, 0, 0xE8, 0xC0})));
  EXPECT_THAT(*ItemFromDouble(">f4", 4, -7.25), ::testing::Eq(bytes({0xC0, 0xE8, 0, 0})));
  EXPECT_THAT(*ItemFromDouble("<f8", 8, 1.5), ::testing::Eq(bytes({0, 0, 0, 0, 0, 0, 0xF8, 0x3F})));
  EXPECT_THAT(*ItemFromDouble("|b1", 1, 1), ::testing::Eq(bytes({1})));
  // float16 (zarr arrays have them): -1 is 0xBC00, 65504 the largest finite half.
  EXPECT_THAT(*ItemFromDouble("<f2", 2, -1), ::testing::Eq(bytes({0x00, 0xBC})));
  EXPECT_THAT(*ItemFromDouble(">f2", 2, 65504), ::testing::Eq(bytes({0x7B, 0xFF})));
  EXPECT_THAT(*ItemFromDouble("<i8", 8, -9223372036854775808.0),
              ::testing::Eq(bytes({0, 0, 0, 0, 0, 0, 0, 0x80})));
  EXPECT_THAT(*ItemFromDouble("<c8", 8, 0), ::testing::Eq(std::vector<std::byte>(8)));
  EXPECT_THAT(*ItemFromDouble("[('a', '<i4')]", 12, 0), ::testing::Eq(std::vector<std::byte>(12)));
  for (const auto& [dtype, size, value] :
       std::vector<std::tuple<std::string, int, double>>{{"|u1", 1, -1},
                                                         {"|u1", 1, 256},
                                                         {"<i2", 2, 32768},
                                                         {"<i4", 4, 0.5},
                                                         {"|b1", 1, 2},
                                                         {"<c8", 8, 1},
                                                         {"<i8", 8, 9223372036854775808.0}}) {
    EXPECT_THAT(ItemFromDouble(dtype, size, value),
                StatusIs(StatusCode::kInvalidArgument, HasSubstr(dtype)))
        << dtype << " " << value;
  }
}

TEST(BoxExtentsTest, ChecksUntrustedCoordinates) {
  ASSERT_OK_AND_ASSIGN(const auto extents, BoxExtents(Box{{-3, 0}, {5, 7}}, 4));
  EXPECT_EQ(extents, (std::vector<int64_t>{8, 7}));
  EXPECT_THAT(BoxExtents(Box{{0}, {1, 2}}, 4),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("1 starts and 2 stops")));
  EXPECT_THAT(BoxExtents(Box{{5}, {3}}, 4),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("not a valid start:stop")));
  EXPECT_THAT(BoxExtents(Box{{INT64_MIN}, {INT64_MAX}}, 1),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("not a valid start:stop")));
  EXPECT_THAT(BoxExtents(Box{{0, 0}, {int64_t{1} << 40, int64_t{1} << 40}}, 2),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("larger than")));
  EXPECT_THAT(BoxExtents(Box{{0}, {1000}}, 4, 3999),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("larger than 3999 bytes")));
}

}  // namespace
}  // namespace patchfeed::codec
