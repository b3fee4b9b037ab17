// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0

#include "codec/blosc/blosclz.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace patchfeed::codec {
namespace {

using Bytes = std::vector<uint8_t>;

const std::byte* P(const Bytes& v) { return reinterpret_cast<const std::byte*>(v.data()); }
std::byte* P(Bytes& v) { return reinterpret_cast<std::byte*>(v.data()); }

enum class Kind { kZeros, kRandom, kText, kShortPeriods, kSmoothFloat, kLabels };
constexpr Kind kKinds[] = {Kind::kZeros,        Kind::kRandom,      Kind::kText,
                           Kind::kShortPeriods, Kind::kSmoothFloat, Kind::kLabels};

Bytes MakeData(Kind kind, size_t size, std::mt19937::result_type seed) {
  std::mt19937 rng(seed);
  Bytes v(size);
  switch (kind) {
    case Kind::kZeros:
      break;
    case Kind::kRandom:
      std::generate(v.begin(), v.end(), [&] { return static_cast<uint8_t>(rng()); });
      break;
    case Kind::kText: {
      static const char* kWords[] = {"blosc ", "chunk ", "patch ", "feed ", "the ", "of "};
      for (size_t i = 0; i < size;) {
        for (const char* w = kWords[rng() % 6]; *w != '\0' && i < size; ++w) {
          v[i++] = static_cast<uint8_t>(*w);
        }
      }
      break;
    }
    case Kind::kShortPeriods:  // runs with periods 1..9, which exercise the small-distance copies
      for (size_t i = 0; i < size;) {
        const size_t period = 1 + rng() % 9, run = 1 + rng() % 300;
        const auto pat = static_cast<uint64_t>(rng()) << 32 | rng();
        for (size_t k = 0; k < run && i < size; ++k) {
          v[i++] = static_cast<uint8_t>(pat >> (k % period * 7));
        }
      }
      break;
    case Kind::kSmoothFloat: {  // float32 field, byte-shuffled as Blosc does before the codec
      const size_t n = (size + 3) / 4;
      Bytes raw(n * 4);
      for (size_t i = 0; i < n; ++i) {
        const auto f = static_cast<float>(100 * std::sin(static_cast<double>(i % 64) / 7.0) +
                                          50 * std::cos(static_cast<double>(i / 64) / 5.0));
        std::memcpy(&raw[i * 4], &f, 4);
      }
      for (size_t i = 0; i < size; ++i) {
        v[i] = raw[(i % n) * 4 + i / n];
      }
      break;
    }
    case Kind::kLabels:  // rows of 64 voxels crossing a few discs
      for (size_t i = 0; i < size; ++i) {
        const int x = static_cast<int>(i % 64) - 30, y = static_cast<int>(i / 64 % 64) - 30;
        const int r2 = x * x + y * y;
        v[i] = r2 < 100 ? 2 : (r2 < 400 ? 1 : 0);
      }
      break;
  }
  return v;
}

// Encodes with room to spare; the result is empty when the encoder declines.
Bytes Encode(int clevel, const Bytes& in) {
  Bytes out(in.size() + 64);
  out.resize(BloscLZEncode(clevel, P(in), in.size(), P(out), out.size()));
  return out;
}

// Decodes from an exactly sized copy into an exactly sized buffer, so ASan sees any overrun.
bool Decode(const Bytes& stream, size_t dst_size, Bytes* out) {
  const Bytes src(stream);
  out->assign(dst_size, 0xAA);
  return BloscLZDecode(P(src), src.size(), P(*out), out->size());
}

// Writes token streams by hand, independently of the encoder under test.
class StreamBuilder {
 public:
  StreamBuilder& Literal(const Bytes& bytes) {
    for (size_t i = 0; i < bytes.size(); i += 32) {
      const size_t k = std::min<size_t>(32, bytes.size() - i);
      s_.push_back(static_cast<uint8_t>(k - 1));
      s_.insert(s_.end(), bytes.begin() + static_cast<ptrdiff_t>(i),
                bytes.begin() + static_cast<ptrdiff_t>(i + k));
    }
    return *this;
  }
  StreamBuilder& Match(size_t len, size_t dist) {
    const bool far = dist >= 8192;
    const size_t code = far ? 0x1FFF : dist - 1;
    s_.push_back(static_cast<uint8_t>((len >= 9 ? 7 : len - 2) << 5 | code >> 8));
    if (len >= 9) {
      size_t rem = len - 9;
      for (; rem >= 255; rem -= 255) {
        s_.push_back(255);
      }
      s_.push_back(static_cast<uint8_t>(rem));
    }
    s_.push_back(static_cast<uint8_t>(code & 255));
    if (far) {
      s_.push_back(static_cast<uint8_t>((dist - 8192) >> 8));
      s_.push_back(static_cast<uint8_t>((dist - 8192) & 255));
    }
    return *this;
  }
  Bytes Build() const {
    Bytes s = s_;
    s[0] |= 0x20;
    return s;
  }

 private:
  Bytes s_;
};

// The format of blosc2-formats.md 2.3, byte by byte: the model the fast decoder must match.
// Also reports the longest match and the largest distance, to see what an encoder chose.
bool ReferenceDecode(const Bytes& src, size_t dst_size, Bytes* out, size_t* max_len = nullptr,
                     size_t* max_dist = nullptr) {
  out->clear();
  size_t i = 0, longest = 0, farthest = 0;
  while (i < src.size()) {
    const size_t c = i == 0 ? src[i] & 31u : src[i];
    ++i;
    if (c < 32) {
      if (i + c + 1 > src.size() || out->size() + c + 1 > dst_size) {
        return false;
      }
      out->insert(out->end(), src.begin() + static_cast<ptrdiff_t>(i),
                  src.begin() + static_cast<ptrdiff_t>(i + c + 1));
      i += c + 1;
      continue;
    }
    size_t len = (c >> 5) + 2;
    if (len == 9) {
      do {
        if (i >= src.size()) {
          return false;
        }
        len += src[i];
      } while (src[i++] == 255);
    }
    if (i >= src.size()) {
      return false;
    }
    const size_t d = src[i++];
    size_t dist = ((c & 31) << 8) + d + 1;
    if ((c & 31) == 31 && d == 255) {
      if (i + 2 > src.size()) {
        return false;
      }
      dist = 8192 + (size_t{src[i]} << 8 | src[i + 1]);
      i += 2;
    }
    // A match may not be the last token.
    if (i >= src.size() || dist > out->size() || out->size() + len > dst_size) {
      return false;
    }
    for (size_t k = 0; k < len; ++k) {
      out->push_back((*out)[out->size() - dist]);
    }
    longest = std::max(longest, len);
    farthest = std::max(farthest, dist);
  }
  if (max_len != nullptr) {
    *max_len = longest;
    *max_dist = farthest;
  }
  return out->size() == dst_size;
}

TEST(BloscLZTest, RoundTripsAllSizesKindsAndLevels) {
  std::vector<size_t> sizes;
  for (size_t s = 0; s <= 40; ++s) {
    sizes.push_back(s);
  }
  for (int s : {63, 64, 65, 100, 255, 256, 1000, 4096, 8191, 8192, 8193, 10000, 65536, 100000}) {
    sizes.push_back(static_cast<size_t>(s));
  }
  for (Kind kind : kKinds) {
    for (size_t size : sizes) {
      const Bytes in = MakeData(kind, size, size);
      for (int clevel = 1; clevel <= 9; ++clevel) {
        SCOPED_TRACE(testing::Message() << "kind " << static_cast<int>(kind) << " size " << size
                                        << " clevel " << clevel);
        const Bytes stream = Encode(clevel, in);
        if (stream.empty()) {
          // Declining is allowed, but not for plainly compressible blocks of some size.
          EXPECT_TRUE(size < 256 || kind == Kind::kRandom);
          continue;
        }
        ASSERT_LT(stream.size(), size);
        Bytes out;
        ASSERT_TRUE(Decode(stream, size, &out));
        ASSERT_EQ(out, in);
        ASSERT_TRUE(ReferenceDecode(stream, size, &out));
        EXPECT_FALSE(Decode(stream, size - 1, &out));
        EXPECT_FALSE(Decode(stream, size + 1, &out));
      }
    }
  }
}

TEST(BloscLZTest, EncoderHonoursCapacityAndLevelBounds) {
  const Bytes in = MakeData(Kind::kText, 5000, 1);
  const size_t n = Encode(5, in).size();
  ASSERT_GT(n, 0u);
  for (size_t cap = 0; cap <= n; cap += (cap < 80 || cap + 80 > n) ? 1 : 37) {
    Bytes out(cap + 64, 0x5A);
    EXPECT_EQ(BloscLZEncode(5, P(in), in.size(), P(out), cap), cap == n ? n : 0) << cap;
    EXPECT_EQ(std::count(out.begin() + static_cast<ptrdiff_t>(cap), out.end(), 0x5A), 64) << cap;
  }
  Bytes out(in.size());
  EXPECT_EQ(BloscLZEncode(0, P(in), in.size(), P(out), out.size()), 0u);
  EXPECT_EQ(BloscLZEncode(-3, P(in), in.size(), P(out), out.size()), 0u);
  EXPECT_EQ(BloscLZEncode(12, P(in), in.size(), P(out), out.size()), Encode(9, in).size());
  EXPECT_EQ(BloscLZEncode(5, P(in), 0, P(out), out.size()), 0u);
}

TEST(BloscLZTest, EncoderUsesLengthExtensionsAndFarDistances) {
  Bytes out;
  size_t max_len, max_dist;
  Bytes zeros(100000);
  zeros.back() = 1;
  for (int clevel : {1, 9}) {
    const Bytes stream = Encode(clevel, zeros);
    EXPECT_LT(stream.size(), 500u);
    ASSERT_TRUE(ReferenceDecode(stream, zeros.size(), &out, &max_len, &max_dist));
    EXPECT_GT(max_len, 90000u);
    ASSERT_TRUE(Decode(stream, zeros.size(), &out));
    EXPECT_EQ(out, zeros);
  }
  const Bytes a = MakeData(Kind::kRandom, 9000, 7), b = MakeData(Kind::kRandom, 60000, 8);
  for (ptrdiff_t gap : {0, 4000, 60000}) {  // distances 9000, 13000 and 69000
    Bytes in = a;
    in.insert(in.end(), b.begin(), b.begin() + gap);
    in.insert(in.end(), a.begin(), a.end());
    in.push_back(0);
    const Bytes stream = Encode(5, in);
    ASSERT_TRUE(ReferenceDecode(stream, in.size(), &out, &max_len, &max_dist));
    EXPECT_EQ(max_dist, a.size() + static_cast<size_t>(gap));
    ASSERT_TRUE(Decode(stream, in.size(), &out));
    EXPECT_EQ(out, in);
  }
}

TEST(BloscLZTest, DecodesHandBuiltStreams) {
  Bytes out;
  // A literal whose control byte carries the marker (and any top bits): 0xE2 & 31 = 2.
  ASSERT_TRUE(Decode({0xE2, 'a', 'b', 'c'}, 3, &out));
  EXPECT_EQ(out, Bytes({'a', 'b', 'c'}));
  // Distance 1 with a length extension, then a pattern of period 3, then a literal.
  ASSERT_TRUE(Decode(
      StreamBuilder().Literal({'x', 'y', 'z'}).Match(10, 1).Match(7, 3).Literal({'!'}).Build(), 21,
      &out));
  EXPECT_EQ(out, Bytes({'x', 'y', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z',
                        'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', 'z', '!'}));
  // Length extension of exactly 255 (continued by a 0 byte) and a far distance.
  Bytes head(8200);
  for (size_t i = 0; i < head.size(); ++i) {
    head[i] = static_cast<uint8_t>(i * 7 + i / 256);
  }
  const Bytes far =
      StreamBuilder().Literal(head).Match(264, 8192).Match(5, 8200).Literal({1}).Build();
  ASSERT_TRUE(Decode(far, 8200 + 264 + 5 + 1, &out));
  Bytes ref;
  ASSERT_TRUE(ReferenceDecode(far, out.size(), &ref));
  EXPECT_EQ(out, ref);
  EXPECT_EQ(out[8200], out[8]);
  for (size_t n = far.size() - 40; n < far.size(); ++n) {  // cut inside the far tokens
    EXPECT_FALSE(Decode(Bytes(far.begin(), far.begin() + static_cast<ptrdiff_t>(n)), 8470, &out));
  }
  // Empty stream: only an empty output.
  EXPECT_TRUE(BloscLZDecode(nullptr, 0, nullptr, 0));
  EXPECT_FALSE(Decode(Bytes(), 1, &out));
}

TEST(BloscLZTest, RejectsMalformedStreams) {
  Bytes out;
  const Bytes abc = {'a', 'b', 'c', 'd'};
  // A match as the last token is refused, as c-blosc2 does, even if the size would fit.
  EXPECT_FALSE(Decode(StreamBuilder().Literal(abc).Match(5, 4).Build(), 9, &out));
  EXPECT_FALSE(Decode(StreamBuilder().Literal(abc).Match(20, 1).Build(), 24, &out));
  // Distance reaching before the output.
  EXPECT_FALSE(Decode(StreamBuilder().Literal(abc).Match(3, 5).Literal({0}).Build(), 8, &out));
  EXPECT_FALSE(Decode(StreamBuilder().Literal(abc).Match(9, 9000).Literal({0}).Build(), 14, &out));
  // Output too small for a literal or a match, or left short.
  EXPECT_FALSE(Decode(StreamBuilder().Literal(abc).Build(), 3, &out));
  EXPECT_FALSE(Decode(StreamBuilder().Literal(abc).Match(6, 1).Literal({0}).Build(), 10, &out));
  EXPECT_FALSE(Decode(StreamBuilder().Literal(abc).Build(), 5, &out));
  // Bytes after the output is complete.
  EXPECT_FALSE(Decode(StreamBuilder().Literal(abc).Literal({1}).Build(), 4, &out));
  // A hostile run of length extensions.
  Bytes ext = {0x20, 'a', 0xE0};
  ext.insert(ext.end(), 100000, 255);
  EXPECT_FALSE(Decode(ext, 1 << 20, &out));
}

TEST(BloscLZTest, MatchesReferenceOnRandomValidStreams) {
  std::mt19937 rng(42);
  for (int iter = 0; iter < 3000; ++iter) {
    StreamBuilder sb;
    size_t produced = 0;
    for (int t = 0, n = 1 + static_cast<int>(rng() % 30); t < n; ++t) {
      if (t == 0 || rng() % 3 == 0) {
        const Bytes lit = MakeData(Kind::kRandom, 1 + rng() % 70, rng());
        sb.Literal(lit);
        produced += lit.size();
      } else {
        const size_t dist =
            rng() % 4 ? 1 + rng() % std::min<size_t>(produced, 40) : 1 + rng() % produced;
        const size_t len = rng() % 4 ? 3 + rng() % 40 : 3 + rng() % 700;
        sb.Match(len, dist);
        produced += len;
      }
    }
    sb.Literal({static_cast<uint8_t>(rng())});
    const Bytes stream = sb.Build();
    Bytes out, ref;
    ASSERT_TRUE(ReferenceDecode(stream, produced + 1, &ref));
    ASSERT_TRUE(Decode(stream, produced + 1, &out)) << iter;
    ASSERT_EQ(out, ref) << iter;
  }
}

// Valid streams of several kinds, from our encoder.
std::vector<std::pair<Bytes, size_t>> SampleStreams() {
  std::vector<std::pair<Bytes, size_t>> v;
  for (Kind kind : {Kind::kText, Kind::kShortPeriods, Kind::kSmoothFloat, Kind::kLabels}) {
    for (int clevel : {1, 9}) {
      const Bytes in = MakeData(kind, 3000, 3);
      v.emplace_back(Encode(clevel, in), in.size());
    }
  }
  return v;
}

TEST(BloscLZTest, EveryTruncationFails) {
  for (const auto& [stream, size] : SampleStreams()) {
    ASSERT_FALSE(stream.empty());
    Bytes out;
    for (size_t n = 0; n < stream.size(); ++n) {
      EXPECT_FALSE(
          Decode(Bytes(stream.begin(), stream.begin() + static_cast<ptrdiff_t>(n)), size, &out))
          << n;
    }
  }
}

TEST(BloscLZTest, SurvivesCorruptionAndRandomInput) {
  std::mt19937 rng(7);
  Bytes out, ref;
  for (const auto& [stream, size] : SampleStreams()) {
    for (int iter = 0; iter < 2000; ++iter) {
      Bytes bad = stream;
      for (int k = 0, n = 1 + static_cast<int>(rng() % 4); k < n; ++k) {
        bad[rng() % bad.size()] = static_cast<uint8_t>(rng());
      }
      const size_t dst_size = rng() % 8 ? size : rng() % (2 * size);
      // Whatever the verdict, it must be the reference's, and the output must match it.
      const bool ok = Decode(bad, dst_size, &out);
      ASSERT_EQ(ok, ReferenceDecode(bad, dst_size, &ref));
      if (ok) {
        ASSERT_EQ(out, ref);
      }
    }
  }
  for (int iter = 0; iter < 3000; ++iter) {
    const Bytes junk = MakeData(Kind::kRandom, rng() % 300, rng());
    const size_t dst_size = rng() % 2000;
    const bool ok = Decode(junk, dst_size, &out);
    ASSERT_EQ(ok, ReferenceDecode(junk, dst_size, &ref));
  }
}

// Streams written by c-blosc2 3.3.5 (python-blosc2 4.14.1), extracted from one-block chunks by
// tests/codec/testdata/make_blosclz_streams.py.
TEST(BloscLZTest, DecodesCBlosc2GoldenStreams) {
  const char* root = std::getenv("PATCHFEED_TESTDATA");
#ifdef PATCHFEED_SOURCE_TESTS_DIR
  if (root == nullptr) {
    root = PATCHFEED_SOURCE_TESTS_DIR;
  }
#endif
  if (root == nullptr) {
    GTEST_SKIP() << "PATCHFEED_TESTDATA is not set";
  }
  const std::string dir = std::string(root) + "/codec/testdata/blosclz/";
  auto read = [](const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    EXPECT_TRUE(f.good()) << path;
    return Bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  };
  const std::pair<const char*, std::vector<int>> cases[] = {{"labels_u8", {1, 9}},
                                                            {"smooth_f32_shuffled", {1, 5}},
                                                            {"far_u8", {9}},
                                                            {"runs_u8", {1, 9}},
                                                            {"small_u8", {5}}};
  for (const auto& [name, levels] : cases) {
    const Bytes raw = read(dir + name + ".raw");
    ASSERT_FALSE(raw.empty()) << name;
    for (int clevel : levels) {
      SCOPED_TRACE(testing::Message() << name << " cl" << clevel);
      const Bytes stream = read(dir + name + ".cl" + std::to_string(clevel) + ".blosclz");
      Bytes out;
      ASSERT_TRUE(Decode(stream, raw.size(), &out));
      EXPECT_EQ(out, raw);
      const Bytes ours = Encode(clevel, raw);
      ASSERT_FALSE(ours.empty());
      ASSERT_TRUE(Decode(ours, raw.size(), &out));
      EXPECT_EQ(out, raw);
    }
  }
}

}  // namespace
}  // namespace patchfeed::codec
