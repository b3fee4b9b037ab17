// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Tests of the float -> binary16 rounding that decides segmentation ties.

#include "common/half_float.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

namespace patchfeed {
namespace {

TEST(HalfFloatTest, KnownValues) {
  EXPECT_EQ(FloatToHalfBits(0.0f), 0x0000);
  EXPECT_EQ(FloatToHalfBits(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalfBits(1.0f), 0x3C00);
  EXPECT_EQ(FloatToHalfBits(-2.0f), 0xC000);
  EXPECT_EQ(FloatToHalfBits(1000.0f), 0x63D0);
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7BFF);    // largest finite half
  EXPECT_EQ(FloatToHalfBits(0x1.0p-14f), 0x0400);  // smallest normal
  EXPECT_EQ(FloatToHalfBits(0x1.0p-24f), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToHalfBits(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(FloatToHalfBits(-std::numeric_limits<float>::infinity()), 0xFC00);
  EXPECT_TRUE(std::isnan(HalfBitsToFloat(FloatToHalfBits(std::nanf("")))));
}

TEST(HalfFloatTest, HalfwayCasesRoundToEven) {
  // Normal range: between 1 and 1 + 2^-10 the halfway point goes down to the even 1.
  EXPECT_EQ(FloatToHalfBits(1.0f + 0x1.0p-11f), 0x3C00);
  EXPECT_EQ(FloatToHalfBits(1.0f + 3 * 0x1.0p-11f), 0x3C02);  // odd 0x3C01 -> even 0x3C02
  EXPECT_EQ(FloatToHalfBits(std::nextafter(1.0f + 0x1.0p-11f, 2.0f)), 0x3C01);
  // The one-hot scale: half ulp is 0.25 between 512 and 1024.
  EXPECT_EQ(HalfBitsToFloat(FloatToHalfBits(1000.25f)), 1000.0f);
  EXPECT_EQ(HalfBitsToFloat(FloatToHalfBits(1000.75f)), 1001.0f);
  EXPECT_EQ(HalfBitsToFloat(FloatToHalfBits(999.75f)), 1000.0f);
  EXPECT_EQ(HalfBitsToFloat(FloatToHalfBits(500.25f)), 500.25f);  // exact below 512
  // Subnormal range: 2^-25 is halfway between 0 and 2^-24 and goes to 0; 3 * 2^-25 to 2.
  EXPECT_EQ(FloatToHalfBits(0x1.0p-25f), 0x0000);
  EXPECT_EQ(FloatToHalfBits(std::nextafter(0x1.0p-25f, 1.0f)), 0x0001);
  EXPECT_EQ(FloatToHalfBits(3 * 0x1.0p-25f), 0x0002);
  EXPECT_EQ(FloatToHalfBits(5 * 0x1.0p-25f), 0x0002);
  // Overflow: 65520 is halfway between 65504 and 2^16 and rounds to infinity.
  EXPECT_EQ(FloatToHalfBits(65519.99f), 0x7BFF);
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7C00);
  // The largest subnormal rounds up into the smallest normal.
  EXPECT_EQ(FloatToHalfBits(0x1.0p-14f - 0x1.0p-26f), 0x0400);
}

TEST(HalfFloatTest, EveryFiniteHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint16_t half = static_cast<uint16_t>(h);
    if ((half & 0x7C00) == 0x7C00) {
      continue;  // inf / NaN
    }
    EXPECT_EQ(FloatToHalfBits(HalfBitsToFloat(half)), half) << std::hex << h;
  }
}

TEST(HalfFloatTest, FastRoundingMatchesBitExactRounding) {
  // Every 97th float bit pattern in [0, 65520): covers subnormal, normal and halfway cases.
  const uint32_t end = std::bit_cast<uint32_t>(65520.0f);
  int checked = 0;
  for (uint32_t bits = 0; bits < end; bits += 97) {
    const float v = std::bit_cast<float>(bits);
    ASSERT_EQ(RoundToHalfPrecision(v), HalfBitsToFloat(FloatToHalfBits(v))) << v;
    ++checked;
  }
  // And exactly the halfway points around the one-hot scale.
  for (float v = 0.125f; v < 2000.0f; v += 0.125f) {
    ASSERT_EQ(RoundToHalfPrecision(v), HalfBitsToFloat(FloatToHalfBits(v))) << v;
  }
  EXPECT_GT(checked, 10'000'000);
}

}  // namespace
}  // namespace patchfeed
