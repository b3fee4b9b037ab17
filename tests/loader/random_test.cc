// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// CounterRng: Random123's known answers for Philox4x32-10, streams recomputable and distinct
// in every field of their id, unbiased integers over awkward ranges, doubles in [0, 1).

#include "common/random.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/loader/distribution_checks.h"

namespace patchfeed::loader {
namespace {

using ::testing::ElementsAre;

TEST(CounterRngTest, PhiloxKnownAnswers) {  // Random123 kat_vectors, philox4x32 10 rounds
  EXPECT_THAT(Philox4x32({0, 0, 0, 0}, {0, 0}),
              ElementsAre(0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u));
  const uint32_t f = 0xffffffffu;
  EXPECT_THAT(Philox4x32({f, f, f, f}, {f, f}),
              ElementsAre(0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu));
  EXPECT_THAT(
      Philox4x32({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}),
      ElementsAre(0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u));
}

TEST(CounterRngTest, StreamsAreRecomputableAndDistinct) {
  const StreamId base{.seed = 7, .epoch = 2, .batch = 9, .rank = 1, .position = 3, .stream = 4};
  CounterRng a(base), b(base);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(a.NextU64(), b.NextU64());
  }
  const uint64_t first = CounterRng(base).NextU64();
  for (int field = 0; field < 6; ++field) {
    StreamId id = base;
    switch (field) {
      case 0:
        ++id.seed;
        break;
      case 1:
        ++id.epoch;
        break;
      case 2:
        ++id.batch;
        break;
      case 3:
        ++id.rank;
        break;
      case 4:
        ++id.position;
        break;
      default:
        ++id.stream;
        break;
    }
    EXPECT_NE(CounterRng(id).NextU64(), first) << "field " << field;
  }
}

TEST(CounterRngTest, UniformIntIsUnbiasedAndInRange) {
  CounterRng rng(StreamId{.seed = 1});
  std::vector<int64_t> bins(7);
  for (int i = 0; i < 70000; ++i) {
    const int64_t v = rng.UniformInt(-3, 3);
    ASSERT_TRUE(v >= -3 && v <= 3);
    ++bins[v + 3];
  }
  ExpectChiSquareOk(bins, std::vector<double>(7, 1.0 / 7));
  EXPECT_EQ(rng.UniformInt(5, 5), 5);
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  (void)rng.UniformInt(lo, hi);                                   // full range: no rejection loop
  const int64_t big = rng.UniformInt(0, (int64_t{1} << 62) + 1);  // threshold near 2^62
  EXPECT_LE(big, (int64_t{1} << 62) + 1);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const double u = rng.UniformDouble();
    ASSERT_TRUE(u >= 0 && u < 1);
    sum += u;
  }
  EXPECT_NEAR(sum / 100000, 0.5, 6 * std::sqrt(1.0 / 12 / 100000));
}

}  // namespace
}  // namespace patchfeed::loader
