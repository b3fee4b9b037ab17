// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_COMMON_RANDOM_H_
#define PATCHFEED_COMMON_RANDOM_H_

/// \file
/// A counter-based random generator: every draw is a pure function of a key and a counter,
/// so draws need no state shared between threads and any one of them can be recomputed alone
/// (the loader recomputes a batch from `(seed, epoch, batch index, rank)` and nothing else).
///
/// The block function is Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers:
/// as easy as 1, 2, 3", SC 2011; the Random123 library), which passes TestU01's BigCrush for
/// any key and counter pattern. A CounterRng names one stream of draws; it is a small value
/// type, cheap to create per draw site, thread-compatible (one per thread), never shared.
///
/// Example:
/// \code
///   CounterRng rng(StreamId{.seed = seed, .epoch = e, .batch = b, .position = j, .stream = 3});
///   int64_t corner = rng.UniformInt(lb, ub);  // inclusive, no modulo bias
/// \endcode

#include <array>
#include <cstdint>

namespace patchfeed {

/// One Philox4x32-10 block: 4 random words from a 128-bit counter and a 64-bit key.
constexpr std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> counter,
                                             std::array<uint32_t, 2> key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // Weyl key schedule
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kW0;
      key[1] += kW1;
    }
    const uint64_t p0 = uint64_t{kM0} * counter[0];
    const uint64_t p1 = uint64_t{kM1} * counter[2];
    counter = {static_cast<uint32_t>(p1 >> 32) ^ counter[1] ^ key[0], static_cast<uint32_t>(p1),
               static_cast<uint32_t>(p0 >> 32) ^ counter[3] ^ key[1], static_cast<uint32_t>(p0)};
  }
  return counter;
}

/// SplitMix64's finaliser (Steele, Lea, Flood 2014): a bijective 64-bit mixer. Used only to
/// fold the seed, epoch and batch into Philox's 64-bit key.
constexpr uint64_t Mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Names a stream of draws. Two distinct StreamIds give independent streams, except with
/// probability ~2^-64 per pair of (seed, epoch, batch) triples, which fold into the 64-bit key.
/// `position` and `stream` go into the counter unchanged: stream ids keep different kinds of
/// draw (case, box, class, ...) of the same sample apart.
struct StreamId {
  uint64_t seed = 0;
  int64_t epoch = 0;
  int64_t batch = 0;
  uint32_t rank = 0;
  uint32_t position = 0;
  uint32_t stream = 0;
};

class CounterRng {
 public:
  explicit constexpr CounterRng(const StreamId& id) {
    const uint64_t k = Mix64(Mix64(Mix64(id.seed) ^ static_cast<uint64_t>(id.epoch)) ^
                             static_cast<uint64_t>(id.batch));
    key_ = {static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32)};
    // counter_[0] counts blocks within the stream; the other words identify the stream.
    counter_ = {0, id.stream, id.position, id.rank};
  }

  /// The next 32 random bits.
  constexpr uint32_t NextU32() {
    if (used_ == 4) {
      block_ = Philox4x32(counter_, key_);
      ++counter_[0];  // 2^32 blocks (2^34 words) per stream before the counter wraps
      used_ = 0;
    }
    return block_[used_++];
  }

  /// The next 64 random bits.
  constexpr uint64_t NextU64() {
    const uint64_t lo = NextU32();
    return (uint64_t{NextU32()} << 32) | lo;
  }

  /// Uniform over [lo, hi], both inclusive; requires lo <= hi. Rejection sampling (the
  /// OpenBSD arc4random_uniform method) removes the modulo bias: draws below 2^64 mod range
  /// are redrawn, so each residue class has exactly floor(2^64 / range) preimages.
  constexpr int64_t UniformInt(int64_t lo, int64_t hi) {
    const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
    if (range == 0) {  // [INT64_MIN, INT64_MAX]: every 64-bit value is fine
      return static_cast<int64_t>(NextU64());
    }
    const uint64_t threshold = (0 - range) % range;
    uint64_t x = NextU64();
    while (x < threshold) {
      x = NextU64();
    }
    return static_cast<int64_t>(static_cast<uint64_t>(lo) + x % range);
  }

  /// Uniform over [0, 1) with 53 random bits (every double k * 2^-53).
  constexpr double UniformDouble() { return static_cast<double>(NextU64() >> 11) * 0x1.0p-53; }

 private:
  std::array<uint32_t, 2> key_{};
  std::array<uint32_t, 4> counter_{};
  std::array<uint32_t, 4> block_{};
  int used_ = 4;
};

}  // namespace patchfeed

#endif  // PATCHFEED_COMMON_RANDOM_H_
