// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/blosc/shuffle.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codec/blosc/internal/cpu_features.h"

namespace patchfeed::codec {
namespace {

using internal_codec::SetSimdLevelCapForTesting;
using internal_codec::SimdLevel;

constexpr SimdLevel kLevels[] = {SimdLevel::kScalar, SimdLevel::kSse2, SimdLevel::kAvx2};

// Lifts the cap when a test ends, also when an assertion returns early.
class ScopedSimdCap {
 public:
  explicit ScopedSimdCap(SimdLevel cap) { SetSimdLevelCapForTesting(cap); }
  ~ScopedSimdCap() { SetSimdLevelCapForTesting(SimdLevel::kAvx2); }
  ScopedSimdCap(const ScopedSimdCap&) = delete;
  ScopedSimdCap& operator=(const ScopedSimdCap&) = delete;
};

std::string LevelName(SimdLevel level) {
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

// Straight from the definition in shuffle.h, kept naive on purpose.
std::vector<std::byte> ReferenceShuffle(size_t typesize, const std::vector<std::byte>& in) {
  std::vector<std::byte> out(in.size());
  const size_t n = in.size() / typesize;
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < typesize; ++k)
      out[k * n + i] = in[i * typesize + k];
  }
  for (size_t b = n * typesize; b < in.size(); ++b)
    out[b] = in[b];
  return out;
}

std::vector<std::byte> RandomBytes(size_t size, std::mt19937& rng) {
  std::vector<std::byte> out(size);
  for (auto& b : out)
    b = static_cast<std::byte>(rng() & 0xff);
  return out;
}

// Runs both directions with the input and output at the given misalignments and guard bytes
// after the output, which no kernel may touch.
void CheckRoundTrip(size_t typesize, const std::vector<std::byte>& in, size_t src_offset,
                    size_t dst_offset) {
  constexpr size_t kGuard = 64;
  constexpr std::byte kCanary{0x5a};
  const size_t size = in.size();
  const int32_t ts = static_cast<int32_t>(typesize);
  const std::vector<std::byte> want = ReferenceShuffle(typesize, in);

  std::vector<std::byte> src(src_offset + size);
  std::copy(in.begin(), in.end(), src.begin() + static_cast<ptrdiff_t>(src_offset));
  std::vector<std::byte> shuffled(dst_offset + size + kGuard, kCanary);
  Shuffle(ts, src.data() + src_offset, shuffled.data() + dst_offset, size);
  for (size_t b = 0; b < size; ++b) {
    ASSERT_EQ(shuffled[dst_offset + b], want[b]) << "shuffle mismatch at byte " << b;
  }
  for (size_t b = 0; b < kGuard; ++b) {
    ASSERT_EQ(shuffled[dst_offset + size + b], kCanary) << "shuffle wrote past the end";
  }

  // An exactly sized input lets AddressSanitizer catch reads past its end.
  std::vector<std::byte> packed(dst_offset + size);
  std::copy(want.begin(), want.end(), packed.begin() + static_cast<ptrdiff_t>(dst_offset));
  std::vector<std::byte> restored(src_offset + size + kGuard, kCanary);
  Unshuffle(ts, packed.data() + dst_offset, restored.data() + src_offset, size);
  for (size_t b = 0; b < size; ++b) {
    ASSERT_EQ(restored[src_offset + b], in[b]) << "unshuffle mismatch at byte " << b;
  }
  for (size_t b = 0; b < kGuard; ++b) {
    ASSERT_EQ(restored[src_offset + size + b], kCanary) << "unshuffle wrote past the end";
  }
}

TEST(ShuffleTest, HandComputedExample) {
  // Three 4-byte elements and two trailing bytes.
  const std::vector<std::byte> in = {
      std::byte{0x00}, std::byte{0x01}, std::byte{0x02}, std::byte{0x03}, std::byte{0x10},
      std::byte{0x11}, std::byte{0x12}, std::byte{0x13}, std::byte{0x20}, std::byte{0x21},
      std::byte{0x22}, std::byte{0x23}, std::byte{0xaa}, std::byte{0xbb}};
  const std::vector<std::byte> want = {
      std::byte{0x00}, std::byte{0x10}, std::byte{0x20}, std::byte{0x01}, std::byte{0x11},
      std::byte{0x21}, std::byte{0x02}, std::byte{0x12}, std::byte{0x22}, std::byte{0x03},
      std::byte{0x13}, std::byte{0x23}, std::byte{0xaa}, std::byte{0xbb}};
  for (SimdLevel level : kLevels) {
    SCOPED_TRACE(LevelName(level));
    ScopedSimdCap cap(level);
    std::vector<std::byte> out(in.size());
    Shuffle(4, in.data(), out.data(), in.size());
    EXPECT_EQ(out, want);
    std::vector<std::byte> back(in.size());
    Unshuffle(4, out.data(), back.data(), in.size());
    EXPECT_EQ(back, in);
  }
}

TEST(ShuffleTest, EmptyBufferWithNullPointers) {
  Shuffle(4, nullptr, nullptr, 0);
  Unshuffle(4, nullptr, nullptr, 0);
}

TEST(ShuffleTest, TypesizeOneIsCopy) {
  std::mt19937 rng(1);
  const std::vector<std::byte> in = RandomBytes(1000, rng);
  std::vector<std::byte> out(in.size());
  Shuffle(1, in.data(), out.data(), in.size());
  EXPECT_EQ(out, in);
  Unshuffle(1, in.data(), out.data(), in.size());
  EXPECT_EQ(out, in);
}

// Sizes around the places where the kernels switch between vector batches and the scalar tail:
// multiples of the 16- and 32-element batches, plus or minus an element or a few bytes.
std::vector<size_t> EdgeSizes(size_t typesize) {
  std::vector<size_t> sizes = {0, 1, typesize - 1, typesize, typesize + 1, 2 * typesize - 1};
  for (size_t batch : {size_t{16}, size_t{32}, size_t{64}}) {
    for (size_t elems : {batch - 1, batch, batch + 1, 2 * batch, 3 * batch + 5}) {
      for (size_t extra : {size_t{0}, size_t{1}, typesize - 1, size_t{16} % typesize}) {
        sizes.push_back(elems * typesize + extra);
      }
      // The padded paths stop 16 bytes early.
      sizes.push_back(elems * typesize + 16);
      if (elems * typesize > 16)
        sizes.push_back(elems * typesize - 16);
    }
  }
  // Planes a multiple of 4 KiB apart, where the wide kernels switch to their staged form.
  sizes.push_back(typesize * 4096 + typesize / 2);
  sizes.push_back(typesize * 8192);
  return sizes;
}

TEST(ShuffleTest, MatchesReferenceAtEverySimdLevel) {
  std::vector<size_t> typesizes;
  for (size_t ts = 1; ts <= 20; ++ts)
    typesizes.push_back(ts);
  for (size_t ts : std::vector<size_t>{24, 32, 33, 64, 255})
    typesizes.push_back(ts);
  std::mt19937 rng(20260101);
  for (SimdLevel level : kLevels) {
    ScopedSimdCap cap(level);
    for (size_t ts : typesizes) {
      std::vector<size_t> sizes = EdgeSizes(ts);
      std::uniform_int_distribution<size_t> any_size(0, 70000);
      for (int r = 0; r < 12; ++r)
        sizes.push_back(any_size(rng));
      for (size_t size : sizes) {
        SCOPED_TRACE(LevelName(level) + " typesize " + std::to_string(ts) + " size " +
                     std::to_string(size));
        const std::vector<std::byte> in = RandomBytes(size, rng);
        CheckRoundTrip(ts, in, 0, 0);
        if (HasFatalFailure())
          return;
      }
    }
  }
}

TEST(ShuffleTest, UnalignedBuffers) {
  std::mt19937 rng(7);
  for (SimdLevel level : kLevels) {
    ScopedSimdCap cap(level);
    for (size_t ts : std::vector<size_t>{2, 3, 4, 7, 8, 12, 16, 24}) {
      for (size_t offset = 1; offset < 32; offset += 5) {
        SCOPED_TRACE(LevelName(level) + " typesize " + std::to_string(ts) + " offset " +
                     std::to_string(offset));
        const std::vector<std::byte> in = RandomBytes(ts * 300 + 3, rng);
        CheckRoundTrip(ts, in, offset, 31 - offset);
        if (HasFatalFailure())
          return;
      }
    }
  }
}

TEST(ShuffleTest, TypesizesAboveBloscLimit) {
  // Blosc stops at 255, but the functions take any positive size.
  std::mt19937 rng(11);
  for (SimdLevel level : kLevels) {
    ScopedSimdCap cap(level);
    for (size_t ts : std::vector<size_t>{256, 300, 1000}) {
      for (size_t size : {ts * 40 + 7, ts * 100}) {
        SCOPED_TRACE(LevelName(level) + " typesize " + std::to_string(ts));
        CheckRoundTrip(ts, RandomBytes(size, rng), 0, 0);
        if (HasFatalFailure())
          return;
      }
    }
  }
}

TEST(ShuffleTest, LargeBlocks) {
  // Block sizes a data loader uses: past L2 the 2-byte kernel switches its stores, and the wide
  // kernels block their elements.
  std::mt19937 rng(3);
  const std::vector<std::byte> in = RandomBytes((2 << 20) + 13, rng);
  for (SimdLevel level : kLevels) {
    ScopedSimdCap cap(level);
    for (size_t ts : std::vector<size_t>{2, 4, 12, 16, 40}) {
      SCOPED_TRACE(LevelName(level) + " typesize " + std::to_string(ts));
      CheckRoundTrip(ts, in, 0, 0);
      if (HasFatalFailure())
        return;
    }
  }
}

TEST(ShuffleTest, UnshuffleItemRowsMatchesWholeUnshuffle) {
  // Runs of items of a shuffled block, one row or several rows apart, at every SIMD level: the
  // row pieces of a patch. Short runs near either end of the block, long runs with a partial
  // last vector, and blocks smaller than a vector.
  std::mt19937 rng(11);
  struct Rows {
    size_t first, count, rows, step;
  };
  for (SimdLevel level : kLevels) {
    ScopedSimdCap cap(level);
    for (size_t ts : std::vector<size_t>{1, 2, 3, 4, 8, 12}) {
      for (size_t n : std::vector<size_t>{1000, 20}) {
        const std::vector<std::byte> items = RandomBytes(n * ts, rng);
        const std::vector<std::byte> planes = ReferenceShuffle(ts, items);
        for (const Rows& r : std::vector<Rows>{{0, n, 1, 0},
                                               {0, 1, 1, 0},
                                               {n - 1, 1, 1, 0},
                                               {n - 7, 7, 1, 0},
                                               {2, 5, 3, 6},
                                               {5, 32, 4, 100},
                                               {31, 65, 3, 200},
                                               {100, 0, 2, 1},
                                               {1, 998, 1, 0},
                                               {7, 17, 9, 100}}) {
          if (r.first + (r.rows - 1) * r.step + r.count > n)
            continue;
          SCOPED_TRACE(LevelName(level) + " typesize " + std::to_string(ts) + " n " +
                       std::to_string(n) + " items " + std::to_string(r.first) + "+" +
                       std::to_string(r.count) + " x" + std::to_string(r.rows));
          const size_t dst_step = r.count * ts + 3;  // rows apart in dst, gaps left alone
          std::vector<std::byte> out(r.rows * dst_step + 64, std::byte{0x5a});
          UnshuffleItemRows(static_cast<int32_t>(ts), planes.data(), n, r.first, r.count, r.rows,
                            r.step, out.data(), dst_step);
          std::vector<std::byte> want(out.size(), std::byte{0x5a});
          for (size_t row = 0; row < r.rows; ++row) {
            std::copy_n(items.begin() + static_cast<ptrdiff_t>((r.first + row * r.step) * ts),
                        r.count * ts, want.begin() + static_cast<ptrdiff_t>(row * dst_step));
          }
          ASSERT_EQ(out, want);
        }
      }
    }
  }
}

TEST(ShuffleTest, UnshuffleItemRowsWritesOnlyItsItemsForEveryShortRun) {
  // Every run shorter than a vector batch (32 items) at every offset of a batch, at the start,
  // inside and at the end of a block: the partial rows of a patch, written from registers
  // under masks. Bytes around each run must stay as they were.
  std::mt19937 rng(5);
  for (SimdLevel level : kLevels) {
    ScopedSimdCap cap(level);
    for (size_t ts : std::vector<size_t>{2, 4, 8}) {
      const size_t n = 200;
      const std::vector<std::byte> items = RandomBytes(n * ts, rng);
      const std::vector<std::byte> planes = ReferenceShuffle(ts, items);
      for (size_t first = 0; first < n; first += (first < 40 || first > n - 40) ? 1 : 37) {
        for (size_t count = 1; count < 32 && first + count <= n; ++count) {
          SCOPED_TRACE(LevelName(level) + " typesize " + std::to_string(ts) + " items " +
                       std::to_string(first) + "+" + std::to_string(count));
          std::vector<std::byte> out(count * ts + 128, std::byte{0x5a});
          UnshuffleItemRows(static_cast<int32_t>(ts), planes.data(), n, first, count, 2, 0,
                            out.data() + 64, 0);
          std::vector<std::byte> want(out.size(), std::byte{0x5a});
          std::copy_n(items.begin() + static_cast<ptrdiff_t>(first * ts), count * ts,
                      want.begin() + 64);
          ASSERT_EQ(out, want);
          // Into a buffer of exactly the run (under ASan: no byte outside it touched).
          std::vector<std::byte> exact(count * ts);
          UnshuffleItemRows(static_cast<int32_t>(ts), planes.data(), n, first, count, 1, 0,
                            exact.data(), 0);
          ASSERT_TRUE(std::equal(exact.begin(), exact.end(), want.begin() + 64));
        }
      }
    }
  }
}

}  // namespace
}  // namespace patchfeed::codec
