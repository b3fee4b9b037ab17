// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/blosc/bitshuffle.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "codec/blosc/internal/cpu_features.h"

namespace patchfeed::codec {
namespace {

using internal_codec::SetSimdLevelCapForTesting;
using internal_codec::SimdLevel;

using Bytes = std::vector<std::byte>;

constexpr SimdLevel kLevels[] = {SimdLevel::kScalar, SimdLevel::kSse2, SimdLevel::kAvx2};

// Restores the uncapped SIMD level even when an assertion returns early.
class ScopedSimdCap {
 public:
  explicit ScopedSimdCap(SimdLevel cap) { SetSimdLevelCapForTesting(cap); }
  ~ScopedSimdCap() { SetSimdLevelCapForTesting(SimdLevel::kAvx2); }
  ScopedSimdCap(const ScopedSimdCap&) = delete;
  ScopedSimdCap& operator=(const ScopedSimdCap&) = delete;
};

const char* LevelName(SimdLevel level) {
  switch (level) {
    case SimdLevel::kScalar:
      return "scalar";
    case SimdLevel::kSse2:
      return "sse2";
    case SimdLevel::kAvx2:
      return "avx2";
  }
  return "?";
}

Bytes RandomBytes(size_t size, std::mt19937_64& rng) {
  Bytes out(size);
  for (auto& b : out) {
    b = static_cast<std::byte>(rng() & 0xFF);
  }
  return out;
}

// Straight from the definition (reference doc, section 3.3): output bit (8k+b)*n + i is bit b
// of input byte i*t + k, bits numbered LSB first; the Blosc2 rule transforms the first
// n = m - m%8 of the m = size/t elements and leaves every later byte where it was.
Bytes ReferenceBitShuffle(size_t t, const Bytes& in) {
  const size_t m = in.size() / t;
  const size_t n = m - m % 8;
  Bytes out = in;
  for (size_t p = 0; p < n * t; ++p) {
    out[p] = std::byte{0};
  }
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < t; ++k) {
      const auto byte = std::to_integer<unsigned>(in[i * t + k]);
      for (size_t b = 0; b < 8; ++b) {
        const size_t bit = (8 * k + b) * n + i;
        out[bit / 8] |= static_cast<std::byte>(((byte >> b) & 1U) << (bit % 8));
      }
    }
  }
  return out;
}

// Reports the first differing offset instead of dumping kilobytes of bytes.
testing::AssertionResult SameBytes(const Bytes& actual, const Bytes& expected) {
  if (actual.size() != expected.size()) {
    return testing::AssertionFailure()
           << "size " << actual.size() << " != expected " << expected.size();
  }
  const auto [a, e] = std::mismatch(actual.begin(), actual.end(), expected.begin());
  if (a == actual.end()) {
    return testing::AssertionSuccess();
  }
  return testing::AssertionFailure()
         << "first difference at offset " << (a - actual.begin()) << ": got "
         << std::to_integer<int>(*a) << ", expected " << std::to_integer<int>(*e);
}

Bytes RunBitShuffle(size_t t, const Bytes& in) {
  Bytes out(in.size());  // exact size, so ASan sees any overrun
  BitShuffle(static_cast<int32_t>(t), in.data(), out.data(), in.size());
  return out;
}

Bytes RunBitUnshuffle(size_t t, const Bytes& in) {
  Bytes out(in.size());
  BitUnshuffle(static_cast<int32_t>(t), in.data(), out.data(), in.size());
  return out;
}

// Sizes that hit the edges of each kernel: the SSE2/AVX2 blocks are 16/32 groups of 8
// elements, shorter inputs fall back, longer ones end in an overlapping block; plus leftover
// elements (m % 8) and leftover bytes (size % t), and a few random sizes up to ~70000.
std::vector<size_t> SizesFor(size_t t, std::mt19937_64& rng) {
  std::vector<size_t> sizes = {0, 1, 7, 8, t - 1, t, 8 * t - 1, 8 * t, 8 * t + 1};
  for (size_t groups :
       std::initializer_list<size_t>{1, 2, 15, 16, 17, 31, 32, 33, 47, 48, 64, 65, 100}) {
    const size_t extra_elements = rng() % 8;
    const size_t extra_bytes = rng() % t;
    sizes.push_back((8 * groups + extra_elements) * t + extra_bytes);
    sizes.push_back(8 * groups * t);
  }
  for (int i = 0; i < 3; ++i) {
    sizes.push_back(static_cast<size_t>(rng() % 70000));
  }
  return sizes;
}

std::vector<size_t> TestTypesizes() {
  std::vector<size_t> out;
  for (size_t t = 1; t <= 20; ++t) {
    out.push_back(t);
  }
  for (size_t t : std::initializer_list<size_t>{24, 32, 64, 255}) {
    out.push_back(t);
  }
  return out;
}

TEST(BitShuffleTest, MatchesReferenceAndRoundTripsAtEverySimdLevel) {
  std::mt19937_64 rng(42);
  for (size_t t : TestTypesizes()) {
    for (size_t size : SizesFor(t, rng)) {
      const Bytes in = RandomBytes(size, rng);
      const Bytes expected = ReferenceBitShuffle(t, in);
      for (SimdLevel level : kLevels) {
        SCOPED_TRACE(testing::Message()
                     << "typesize " << t << ", size " << size << ", " << LevelName(level));
        ScopedSimdCap cap(level);
        const Bytes shuffled = RunBitShuffle(t, in);
        ASSERT_TRUE(SameBytes(shuffled, expected));
        ASSERT_TRUE(SameBytes(RunBitUnshuffle(t, shuffled), in));
      }
    }
  }
}

TEST(BitShuffleTest, LongRowsAtAnyBufferAlignment) {
  // Rows of >= 2048 bytes make the SIMD kernels align their blocks to the cache lines of the
  // row side, so the result must not depend on where the buffers start.
  std::mt19937_64 rng(11);
  for (size_t t : std::initializer_list<size_t>{1, 2, 3, 8, 16, 24}) {
    const size_t size = (8 * 2048 + 8 * 3 + 5) * t + t / 2;
    const Bytes in = RandomBytes(size, rng);
    const Bytes expected = ReferenceBitShuffle(t, in);
    for (size_t offset : std::initializer_list<size_t>{0, 1, 16, 33, 63}) {
      // Each buffer ends exactly at its data, so ASan still sees overruns.
      Bytes src(offset + size);
      Bytes dst(offset + size);
      for (SimdLevel level : kLevels) {
        SCOPED_TRACE(testing::Message()
                     << "typesize " << t << ", offset " << offset << ", " << LevelName(level));
        ScopedSimdCap cap(level);
        std::copy(in.begin(), in.end(), src.begin() + static_cast<std::ptrdiff_t>(offset));
        std::fill(dst.begin(), dst.end(), std::byte{0xA5});  // no stale results from other levels
        BitShuffle(static_cast<int32_t>(t), src.data() + offset, dst.data() + offset, size);
        ASSERT_TRUE(SameBytes(Bytes(dst.begin() + static_cast<std::ptrdiff_t>(offset), dst.end()),
                              expected));
        std::fill(src.begin(), src.end(), std::byte{0xA5});
        BitUnshuffle(static_cast<int32_t>(t), dst.data() + offset, src.data() + offset, size);
        ASSERT_TRUE(
            SameBytes(Bytes(src.begin() + static_cast<std::ptrdiff_t>(offset), src.end()), in));
      }
    }
  }
}

TEST(BitShuffleTest, TrailingElementsAndBytesAreCopiedInPlace) {
  // 4-byte elements, 8 whole groups' worth plus 5 elements and 3 bytes: the first 64*4 bytes
  // are transformed, the last 5*4 + 3 are verbatim at their own offsets.
  std::mt19937_64 rng(7);
  const size_t t = 4;
  const size_t size = (64 + 5) * t + 3;
  const Bytes in = RandomBytes(size, rng);
  for (SimdLevel level : kLevels) {
    SCOPED_TRACE(LevelName(level));
    ScopedSimdCap cap(level);
    const Bytes out = RunBitShuffle(t, in);
    EXPECT_TRUE(std::equal(in.begin() + 64 * t, in.end(), out.begin() + 64 * t));
    EXPECT_TRUE(SameBytes(RunBitUnshuffle(t, out), in));
  }
}

TEST(BitShuffleTest, SingleSetBitLandsAtDocumentedPosition) {
  // n = 16 elements of 3 bytes; set bit 5 of byte 2 of element 9: it must appear at output bit
  // (8*2 + 5) * 16 + 9 and nowhere else.
  const size_t t = 3;
  const size_t n = 16;
  Bytes in(n * t);
  in[9 * t + 2] = std::byte{1 << 5};
  const size_t bit = (8 * 2 + 5) * n + 9;
  for (SimdLevel level : kLevels) {
    SCOPED_TRACE(LevelName(level));
    ScopedSimdCap cap(level);
    Bytes expected(n * t);
    expected[bit / 8] = static_cast<std::byte>(1U << (bit % 8));
    EXPECT_TRUE(SameBytes(RunBitShuffle(t, in), expected));
  }
}

Bytes ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    ADD_FAILURE() << "cannot open " << path;
    return {};
  }
  std::vector<char> chars((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  Bytes out(chars.size());
  for (size_t i = 0; i < chars.size(); ++i) {
    out[i] = static_cast<std::byte>(chars[i]);
  }
  return out;
}

// Outputs of c-blosc2 3.3.5 (python-blosc2 4.14.1), written by
// tests/codec/testdata/make_bitshuffle_golden.py.
TEST(BitShuffleTest, MatchesCBlosc2Golden) {
  const char* root = std::getenv("PATCHFEED_TESTDATA");
  if (root == nullptr) {
    GTEST_SKIP() << "PATCHFEED_TESTDATA is not set";
  }
  const std::string dir = std::string(root) + "/codec/testdata/bitshuffle/";
  const std::pair<size_t, size_t> cases[] = {
      {1, 64},  {1, 1029}, {2, 515},   {3, 771},   {4, 4096},  {4, 2071},
      {7, 583}, {8, 2047}, {12, 1000}, {16, 4103}, {24, 3000}, {255, 255 * 16 + 37}};
  for (const auto& [t, size] : cases) {
    const std::string stem = dir + "t" + std::to_string(t) + "_s" + std::to_string(size);
    const Bytes in = ReadFile(stem + ".in");
    const Bytes golden = ReadFile(stem + ".bitshuffled");
    ASSERT_EQ(in.size(), size) << stem;
    ASSERT_EQ(golden.size(), size) << stem;
    for (SimdLevel level : kLevels) {
      SCOPED_TRACE(testing::Message() << stem << " " << LevelName(level));
      ScopedSimdCap cap(level);
      EXPECT_TRUE(SameBytes(RunBitShuffle(t, in), golden));
      EXPECT_TRUE(SameBytes(RunBitUnshuffle(t, golden), in));
    }
  }
}

}  // namespace
}  // namespace patchfeed::codec
