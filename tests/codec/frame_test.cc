// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// The frame layer in C++: EncodeB2ndFrame / WriteB2nd -> FrameReader -> NdArrayReader round
// trips over ranks 0-5 with seeded random boxes (inside, across the border, outside) checked
// against a naive element-by-element reference; strided destinations; mmap and pread files;
// sparse frames; corrupt frames; and one reader shared by four threads, each with its own
// scratch (CI runs this binary under ThreadSanitizer). Fixed c-blosc2 bytes (the reference's
// worked example) and the b2nd metalayer alone: frame_format_test.cc.
// Reads of files written by python-blosc2 are in tests/python/test_frames_read.py.

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codec/b2nd/b2nd_meta.h"
#include "codec/b2nd/frame_reader.h"
#include "codec/b2nd/frame_writer.h"
#include "codec/b2nd/nd_reader.h"
#include "codec/dtype.h"
#include "storage/byte_source.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"

namespace patchfeed::codec {
namespace {

namespace fs = std::filesystem;
using ::patchfeed::testing::TempDir;
using ::testing::HasSubstr;

struct Array {
  std::vector<int64_t> shape;
  std::string dtype;
  int64_t itemsize = 0;
  std::vector<std::byte> data;  // C order
};

// Seeded, compressible items: a random walk stored little-endian in `itemsize` bytes.
Array MakeArray(std::vector<int64_t> shape, std::string dtype, uint32_t seed) {
  Array a{std::move(shape), std::move(dtype), 0, {}};
  a.itemsize = ItemSizeOfDtype(a.dtype);
  int64_t n = 1;
  for (int64_t s : a.shape) {
    n *= s;
  }
  a.data.resize(static_cast<size_t>(n * a.itemsize));
  std::mt19937 rng(seed);
  uint64_t v = rng();
  for (int64_t i = 0; i < n; ++i) {
    v += rng() % 5;
    for (int64_t b = 0; b < a.itemsize; ++b) {
      a.data[static_cast<size_t>(i * a.itemsize + b)] =
          std::byte{static_cast<uint8_t>(v >> (8 * (b % 8)))};
    }
  }
  return a;
}

// The box read element by element: items inside the array copied, `pad` elsewhere.
std::vector<std::byte> Reference(const Array& a, const Box& box, std::span<const std::byte> pad) {
  const size_t n = a.shape.size();
  int64_t total = 1;
  for (size_t d = 0; d < n; ++d) {
    total *= std::max<int64_t>(0, box.stop[d] - box.start[d]);
  }
  std::vector<std::byte> out(static_cast<size_t>(total * a.itemsize));
  std::vector<int64_t> idx(box.start);
  for (int64_t k = 0; k < total; ++k) {
    int64_t src = 0;
    bool inside = true;
    for (size_t d = 0; d < n; ++d) {
      inside &= idx[d] >= 0 && idx[d] < a.shape[d];
      src = src * a.shape[d] + idx[d];
    }
    const std::byte* from = inside ? a.data.data() + src * a.itemsize : pad.data();
    std::memcpy(out.data() + k * a.itemsize, from, static_cast<size_t>(a.itemsize));
    for (size_t d = n; d-- > 0;) {
      if (++idx[d] < box.stop[d])
        break;
      idx[d] = box.start[d];
    }
  }
  return out;
}

// A random box: extents up to about half the shape, starting up to a third before the array
// and a few items after it (so many cross the border and some lie outside).
Box RandomBox(const std::vector<int64_t>& shape, std::mt19937& rng) {
  Box box;
  for (int64_t s : shape) {
    const int64_t a =
        static_cast<int64_t>(rng() % static_cast<uint32_t>(s + s / 3 + 6)) - s / 3 - 3;
    box.start.push_back(a);
    box.stop.push_back(a + static_cast<int64_t>(rng() % static_cast<uint32_t>(s / 2 + 4)));
  }
  return box;
}

std::vector<Box> FixedBoxes(const std::vector<int64_t>& shape) {
  std::vector<Box> boxes;
  Box whole{std::vector<int64_t>(shape.size(), 0), shape};
  boxes.push_back(whole);
  Box margin = whole;
  for (size_t d = 0; d < shape.size(); ++d) {
    margin.start[d] = -2;
    margin.stop[d] += 3;
  }
  boxes.push_back(margin);
  for (size_t d = 0; d < shape.size(); ++d) {
    Box before = whole, after = whole;
    before.start[d] = -4;
    before.stop[d] = 0;
    after.start[d] = shape[d];
    after.stop[d] = shape[d] + 2;
    boxes.push_back(before);
    boxes.push_back(after);
  }
  return boxes;
}

std::string BoxString(const Box& b) {
  std::string s;
  for (size_t d = 0; d < b.start.size(); ++d) {
    s += std::to_string(b.start[d]) + ":" + std::to_string(b.stop[d]) + " ";
  }
  return s;
}

// Every fixed box and `n_random` random ones read through `reader` equal the reference.
void ExpectBoxesMatch(const NdArrayReader& reader, const Array& a, double pad_value, uint32_t seed,
                      int n_random = 24) {
  ASSERT_OK_AND_ASSIGN(const auto pad, ItemFromDouble(a.dtype, a.itemsize, pad_value));
  std::vector<Box> boxes = FixedBoxes(a.shape);
  std::mt19937 rng(seed);
  for (int i = 0; i < n_random; ++i) {
    boxes.push_back(RandomBox(a.shape, rng));
  }
  for (const Box& box : boxes) {
    ASSERT_OK_AND_ASSIGN(const auto got, reader.ReadBox(box, pad));
    ASSERT_TRUE(got == Reference(a, box, pad)) << "box " << BoxString(box);
  }
}

struct Geometry {
  std::vector<int64_t> shape;
  std::vector<int32_t> chunks, blocks;
};

// Shapes not divisible by chunks, chunks not divisible by blocks, per rank 1-5.
Geometry GeometryOfRank(int ndim) {
  switch (ndim) {
    case 1:
      return {{1000}, {300}, {64}};
    case 2:
      return {{37, 29}, {10, 12}, {4, 5}};
    case 3:
      return {{13, 11, 9}, {6, 5, 4}, {4, 3, 3}};
    case 4:
      return {{5, 7, 6, 9}, {3, 4, 4, 5}, {2, 3, 3, 2}};
    default:
      return {{3, 4, 5, 6, 7}, {2, 3, 4, 4, 5}, {1, 2, 3, 3, 2}};
  }
}

B2ndWriteOptions Options(const Geometry& g, Codec codec, Filter filter, int clevel = 5) {
  B2ndWriteOptions o;
  o.chunkshape = g.chunks;
  o.blockshape = g.blocks;
  o.encode.codec = codec;
  o.encode.clevel = clevel;
  o.encode.filters[0] = filter;
  o.encode.filters[1] = filter == Filter::kDelta ? Filter::kShuffle : Filter::kNone;
  return o;
}

Result<NdArrayReader> ReaderFromBytes(std::vector<std::byte> frame, std::string name = "mem") {
  PATCHFEED_ASSIGN_OR_RETURN(
      FrameReader f, FrameReader::FromSource(storage::MemorySource(std::move(frame), name)));
  return NdArrayReader::FromFrame(std::move(f));
}

class RankTest : public ::testing::TestWithParam<int> {};

// Each rank with four dtypes (item sizes 1, 2, 4, 8), every codec, four filter pipelines.
TEST_P(RankTest, RandomBoxesMatchReference) {
  const int ndim = GetParam();
  const Geometry g = GeometryOfRank(ndim);
  const char* dtypes[] = {"|u1", "<i2", "<f4", "<u8"};
  const Codec codecs[] = {Codec::kBloscLZ, Codec::kLZ4, Codec::kLZ4HC, Codec::kZlib, Codec::kZstd};
  const Filter filters[] = {Filter::kShuffle, Filter::kBitShuffle, Filter::kNone, Filter::kDelta};
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(std::string("dtype ") + dtypes[i]);
    const Array a = MakeArray(g.shape, dtypes[i], static_cast<uint32_t>(ndim * 10 + i));
    const auto options = Options(g, codecs[(ndim + i) % 5], filters[i], 1 + (ndim + i) % 9);
    ASSERT_OK_AND_ASSIGN(auto frame, EncodeB2ndFrame(a.data, a.shape, a.dtype, options));
    ASSERT_OK_AND_ASSIGN(const NdArrayReader r, ReaderFromBytes(std::move(frame)));
    EXPECT_EQ(r.meta().shape, a.shape);
    EXPECT_EQ(r.meta().chunkshape, g.chunks);
    EXPECT_EQ(r.meta().blockshape, g.blocks);
    EXPECT_EQ(r.meta().dtype, a.dtype);
    EXPECT_EQ(r.itemsize(), a.itemsize);
    ExpectBoxesMatch(r, a, i == 0 || i == 3 ? 7 : -1, static_cast<uint32_t>(i));
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, RankTest, ::testing::Range(1, 6));

// Seeded random geometries, including chunk == shape, block == chunk and extents of 1.
TEST(FrameRoundTrip, RandomGeometries) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 40; ++trial) {
    const int ndim = 1 + static_cast<int>(rng() % 5);
    Geometry g;
    for (int d = 0; d < ndim; ++d) {
      const int64_t s = 1 + rng() % (ndim == 1 ? 300 : (ndim == 2 ? 40 : 10));
      const auto c = static_cast<int32_t>(rng() % 4 == 0 ? s : 1 + rng() % s);
      const auto b = static_cast<int32_t>(rng() % 4 == 0 ? c : 1 + rng() % c);
      g.shape.push_back(s);
      g.chunks.push_back(c);
      g.blocks.push_back(b);
    }
    SCOPED_TRACE("trial " + std::to_string(trial));
    const Array a = MakeArray(g.shape, trial % 2 ? "<i4" : "<u2", static_cast<uint32_t>(trial));
    const Filter f[] = {Filter::kShuffle, Filter::kDelta, Filter::kBitShuffle, Filter::kByteDelta};
    auto options = Options(g, static_cast<Codec>(trial % 3 == 0 ? 5 : trial % 3), f[trial % 4]);
    if (f[trial % 4] == Filter::kByteDelta)
      options.encode.filters = {Filter::kShuffle, f[3]};
    ASSERT_OK_AND_ASSIGN(auto frame, EncodeB2ndFrame(a.data, a.shape, a.dtype, options));
    ASSERT_OK_AND_ASSIGN(const NdArrayReader r, ReaderFromBytes(std::move(frame)));
    ExpectBoxesMatch(r, a, 3, static_cast<uint32_t>(trial), 12);
  }
}

// TRUNC_PREC with 10 kept mantissa bits: reads give the input with the low 13 bits cleared.
TEST(FrameRoundTrip, TruncPrecIsTheOnlyLoss) {
  const Geometry g = GeometryOfRank(2);
  Array a = MakeArray(g.shape, "<f4", 5);
  for (size_t i = 0; i < a.data.size(); i += 4) {
    const float f = 1.0f + static_cast<float>(i) / 77.0f;
    std::memcpy(a.data.data() + i, &f, 4);
  }
  auto options = Options(g, Codec::kZstd, Filter::kTruncPrec);
  options.encode.filters_meta[0] = 10;
  ASSERT_OK_AND_ASSIGN(auto frame, EncodeB2ndFrame(a.data, a.shape, a.dtype, options));
  ASSERT_OK_AND_ASSIGN(const NdArrayReader r, ReaderFromBytes(std::move(frame)));
  Array truncated = a;
  for (size_t i = 0; i < a.data.size(); i += 4) {
    uint32_t bits;
    std::memcpy(&bits, a.data.data() + i, 4);
    bits &= ~uint32_t{0} << 13;
    std::memcpy(truncated.data.data() + i, &bits, 4);
  }
  EXPECT_NE(truncated.data, a.data);
  ExpectBoxesMatch(r, truncated, 0, 4);
}

TEST(FrameRoundTrip, ScalarAndZeroSize) {
  const Array scalar = MakeArray({}, "<f8", 1);
  ASSERT_OK_AND_ASSIGN(auto frame, EncodeB2ndFrame(scalar.data, {}, "<f8", B2ndWriteOptions{}));
  ASSERT_OK_AND_ASSIGN(const NdArrayReader r, ReaderFromBytes(std::move(frame)));
  EXPECT_EQ(r.meta().ndim(), 0);
  EXPECT_EQ(r.frame().nchunks(), 1);
  ASSERT_OK_AND_ASSIGN(const auto item, r.ReadBox(Box{}, std::vector<std::byte>(8)));
  EXPECT_EQ(item, scalar.data);

  B2ndWriteOptions o;
  o.chunkshape = {3, 1, 4};
  o.blockshape = {3, 1, 2};
  ASSERT_OK_AND_ASSIGN(auto empty, EncodeB2ndFrame({}, {3, 0, 4}, "<i2", o));
  ASSERT_OK_AND_ASSIGN(const NdArrayReader z, ReaderFromBytes(std::move(empty)));
  EXPECT_EQ(z.frame().nchunks(), 0);
  const std::vector<std::byte> pad = {std::byte{0x34}, std::byte{0x12}};
  ASSERT_OK_AND_ASSIGN(const auto got, z.ReadBox(Box{{-1, -1, 0}, {2, 1, 3}}, pad));
  ASSERT_EQ(got.size(), 3u * 2 * 3 * 2);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i], pad[i % 2]) << i;
  }
}

// All-zero chunks are stored as special offsets and come back as 32-byte zero chunks.
TEST(FrameRoundTrip, ZeroChunksAreSpecialOffsets) {
  const Geometry g{{20, 14}, {10, 7}, {4, 3}};
  Array a = MakeArray(g.shape, "<i4", 3);
  for (int64_t y = 0; y < 10; ++y) {
    std::memset(a.data.data() + (y * 14 + 7) * 4, 0, 7 * 4);  // chunk 1
  }
  ASSERT_OK_AND_ASSIGN(auto frame,
                       EncodeB2ndFrame(a.data, a.shape, a.dtype, Options(g, Codec::kLZ4, {})));
  ASSERT_OK_AND_ASSIGN(const NdArrayReader r, ReaderFromBytes(std::move(frame)));
  std::vector<std::byte> scratch;
  ASSERT_OK_AND_ASSIGN(const auto special, r.frame().GetChunk(1, scratch));
  EXPECT_EQ(special.size(), 32u);
  EXPECT_EQ(static_cast<uint8_t>(special[31]) >> 4, 1);  // zeros
  int64_t stored_bytes = 0;
  for (const int64_t k : {0, 2, 3}) {
    ASSERT_OK_AND_ASSIGN(const auto chunk, r.frame().GetChunk(k, scratch));
    stored_bytes += static_cast<int64_t>(chunk.size());
  }
  EXPECT_EQ(r.frame().info().cbytes, stored_bytes);  // the zero chunk takes no bytes
  ExpectBoxesMatch(r, a, -5, 8);
}

// ReadBox into views that are not C-contiguous: a window of a larger buffer (sentinels
// around it must survive) and a Fortran-ordered buffer.
TEST(FrameRoundTrip, StridedDestinations) {
  const Geometry g = GeometryOfRank(3);
  const Array a = MakeArray(g.shape, "<i2", 17);
  ASSERT_OK_AND_ASSIGN(auto frame, EncodeB2ndFrame(a.data, a.shape, a.dtype,
                                                   Options(g, Codec::kZstd, Filter::kShuffle)));
  ASSERT_OK_AND_ASSIGN(const NdArrayReader r, ReaderFromBytes(std::move(frame)));
  ASSERT_OK_AND_ASSIGN(const auto pad, ItemFromDouble("<i2", 2, -1));
  std::mt19937 rng(5);
  std::vector<Box> boxes = FixedBoxes(a.shape);
  for (int i = 0; i < 30; ++i) {
    boxes.push_back(RandomBox(a.shape, rng));
  }
  boxes.push_back(Box{{0, 0, 0}, {8, 6, 6}});  // whole blocks: the direct-decode path
  BoxReadScratch scratch;
  for (const Box& box : boxes) {
    SCOPED_TRACE(BoxString(box));
    const std::vector<std::byte> want = Reference(a, box, pad);
    std::vector<int64_t> ext(3), big(3);
    for (int d = 0; d < 3; ++d) {
      ext[d] = box.stop[d] - box.start[d];
      big[d] = ext[d] + 3;
    }
    // Window at (1, 2, 1) of a C-ordered buffer of extents ext + 3.
    std::vector<std::byte> buf(static_cast<size_t>(big[0] * big[1] * big[2] * 2), std::byte{0xAB});
    NdView window = NdView::Contiguous(buf.data(), big, 2);
    window.data += 1 * window.byte_strides[0] + 2 * window.byte_strides[1] + window.byte_strides[2];
    window.shape = ext;
    ASSERT_OK(r.ReadBox(box, window, pad, scratch));
    // Fortran order.
    std::vector<std::byte> fbuf(want.size(), std::byte{0xCD});
    NdView fview{fbuf.data(), ext, {2, 2 * ext[0], 2 * ext[0] * ext[1]}};
    ASSERT_OK(r.ReadBox(box, fview, pad, scratch));
    size_t k = 0;
    for (int64_t i = 0; i < big[0]; ++i) {
      for (int64_t j = 0; j < big[1]; ++j) {
        for (int64_t l = 0; l < big[2]; ++l) {
          const std::byte* got = buf.data() + ((i * big[1] + j) * big[2] + l) * 2;
          const bool in =
              i >= 1 && i < 1 + ext[0] && j >= 2 && j < 2 + ext[1] && l >= 1 && l < 1 + ext[2];
          if (!in) {
            ASSERT_TRUE(got[0] == std::byte{0xAB} && got[1] == std::byte{0xAB}) << i << j << l;
            continue;
          }
          const int64_t ci = ((i - 1) * ext[1] + (j - 2)) * ext[2] + (l - 1);
          const int64_t fi = (l - 1) * ext[0] * ext[1] + (j - 2) * ext[0] + (i - 1);
          ASSERT_EQ(std::memcmp(got, want.data() + ci * 2, 2), 0) << i << " " << j << " " << l;
          ASSERT_EQ(std::memcmp(fbuf.data() + fi * 2, want.data() + ci * 2, 2), 0);
          ++k;
        }
      }
    }
    EXPECT_EQ(k * 2, want.size());
  }
}

// WriteB2nd files (contiguous and sparse) read back through mmap and pread.
TEST(FrameFiles, ContiguousAndSparseInBothIoModes) {
  TempDir dir;
  const Geometry g = GeometryOfRank(4);
  Array a = MakeArray(g.shape, "<u2", 21);
  std::fill(a.data.begin(), a.data.begin() + 6 * 9 * 4 * 2, std::byte{0});  // a zero chunk
  for (const bool sparse : {false, true}) {
    auto options = Options(g, Codec::kLZ4HC, Filter::kDelta);
    options.sparse = sparse;
    const std::string path = dir / (sparse ? "a.b2frame" : "a.b2nd");
    ASSERT_OK(WriteB2nd(path, a.data, a.shape, a.dtype, options));
    EXPECT_EQ(fs::is_directory(path), sparse);
    if (sparse) {
      EXPECT_TRUE(fs::is_regular_file(path + "/chunks.b2frame"));
      EXPECT_TRUE(fs::is_regular_file(path + "/00000000.chunk"));
    }
    for (const storage::IoMode mode : {storage::IoMode::kMmap, storage::IoMode::kPread}) {
      SCOPED_TRACE(path + (mode == storage::IoMode::kMmap ? " mmap" : " pread"));
      ASSERT_OK_AND_ASSIGN(const NdArrayReader r, NdArrayReader::Open(path, {mode}));
      EXPECT_EQ(r.frame().info().sparse, sparse);
      EXPECT_EQ(r.frame().path(), path);
      ExpectBoxesMatch(r, a, 9, 6);
    }
  }
}

TEST(FrameFiles, MissingFilesAreNotFound) {
  TempDir dir;
  EXPECT_THAT(NdArrayReader::Open(dir / "nope.b2nd"),
              StatusIs(StatusCode::kNotFound, HasSubstr("nope.b2nd")));
  const Geometry g = GeometryOfRank(2);
  const Array a = MakeArray(g.shape, "<i4", 2);
  auto options = Options(g, Codec::kZstd, Filter::kShuffle);
  options.sparse = true;
  const std::string path = dir / "s.b2frame";
  ASSERT_OK(WriteB2nd(path, a.data, a.shape, a.dtype, options));
  fs::remove(path + "/00000001.chunk");
  ASSERT_OK_AND_ASSIGN(const NdArrayReader r, NdArrayReader::Open(path));
  const std::vector<std::byte> pad(4);
  EXPECT_OK(r.ReadBox(Box{{0, 0}, {10, 12}}, pad).status());  // chunk 0 only
  EXPECT_THAT(r.ReadBox(Box{{0, 0}, {10, 29}}, pad),
              StatusIs(StatusCode::kNotFound, HasSubstr("chunk 1")));
}

TEST(FrameErrors, EveryTruncationIsDataLoss) {
  const Geometry g = GeometryOfRank(2);
  const Array a = MakeArray(g.shape, "<i2", 9);
  ASSERT_OK_AND_ASSIGN(
      const auto frame,
      EncodeB2ndFrame(a.data, a.shape, a.dtype, Options(g, Codec::kLZ4, Filter::kShuffle)));
  for (size_t n = 0; n < frame.size(); ++n) {
    std::vector<std::byte> prefix(frame.begin(), frame.begin() + static_cast<ptrdiff_t>(n));
    EXPECT_THAT(FrameReader::FromSource(storage::MemorySource(prefix, "cut.b2nd")),
                StatusIs(StatusCode::kDataLoss, HasSubstr(n < 87 ? "cut.b2nd: too short"
                                                                 : "cut.b2nd: frame is truncated")))
        << n;
  }
  ASSERT_OK(ReaderFromBytes(frame).status());
}

TEST(FrameErrors, WrongMagicAndBadHeader) {
  const Geometry g = GeometryOfRank(1);
  const Array a = MakeArray(g.shape, "<f4", 9);
  ASSERT_OK_AND_ASSIGN(
      const auto frame,
      EncodeB2ndFrame(a.data, a.shape, a.dtype, Options(g, Codec::kZstd, Filter::kShuffle)));
  for (size_t pos = 0; pos < 10; ++pos) {
    auto bad = frame;
    bad[pos] ^= std::byte{0x01};
    EXPECT_THAT(FrameReader::FromSource(storage::MemorySource(bad, "m.b2nd")),
                StatusIs(StatusCode::kDataLoss, HasSubstr("m.b2nd: not a Blosc2 frame")))
        << pos;
  }
  auto bad = frame;
  bad[frame.size() - 23] = std::byte{0};
  EXPECT_THAT(FrameReader::FromSource(storage::MemorySource(bad, "t.b2nd")),
              StatusIs(StatusCode::kDataLoss, HasSubstr("t.b2nd: frame trailer is corrupt")));
  // A b2nd shape with more chunks than the frame holds.
  bad = frame;
  ASSERT_OK_AND_ASSIGN(FrameReader f,
                       FrameReader::FromSource(storage::MemorySource(frame, "s.b2nd")));
  const auto* content = f.info().metalayer("b2nd");
  ASSERT_NE(content, nullptr);
  const auto it = std::search(bad.begin(), bad.end(), content->begin(), content->end());
  ASSERT_NE(it, bad.end());
  it[11] = std::byte{0x07};  // shape[0] 1000 (0x3E8) -> 2024 (0x7E8): 7 chunks
  ASSERT_OK_AND_ASSIGN(FrameReader f2,
                       FrameReader::FromSource(storage::MemorySource(bad, "s.b2nd")));
  EXPECT_THAT(NdArrayReader::FromFrame(std::move(f2)),
              StatusIs(StatusCode::kDataLoss, HasSubstr("s.b2nd: the frame's 4 chunks")));
}

// Shapes whose chunk count overflows int64 are corrupt (c-blosc2 >= 3.3.0 rejects them too),
// both in B2ndGeometry and when a frame carries such a metalayer; under UBSan the
// multiplication itself must not overflow.
TEST(FrameErrors, ChunkCountOverflowIsDataLoss) {
  const B2ndMeta meta{0, {int64_t{1} << 62, int64_t{1} << 62}, {10, 12}, {4, 5}, "<i2"};
  EXPECT_THAT(B2ndGeometry(meta, 2), StatusIs(StatusCode::kDataLoss, HasSubstr("b2nd")));
  const Geometry g = GeometryOfRank(2);
  const Array a = MakeArray(g.shape, "<i2", 9);
  ASSERT_OK_AND_ASSIGN(auto frame,
                       EncodeB2ndFrame(a.data, a.shape, a.dtype, Options(g, Codec::kLZ4, {})));
  ASSERT_OK_AND_ASSIGN(FrameReader f,
                       FrameReader::FromSource(storage::MemorySource(frame, "big.b2nd")));
  const auto* content = f.info().metalayer("b2nd");
  ASSERT_NE(content, nullptr);
  const auto it = std::search(frame.begin(), frame.end(), content->begin(), content->end());
  ASSERT_NE(it, frame.end());
  it[5] = std::byte{0x40};   // shape[0] = 2^62 + 37
  it[14] = std::byte{0x40};  // shape[1] = 2^62 + 29
  ASSERT_OK_AND_ASSIGN(FrameReader f2,
                       FrameReader::FromSource(storage::MemorySource(frame, "big.b2nd")));
  EXPECT_THAT(NdArrayReader::FromFrame(std::move(f2)),
              StatusIs(StatusCode::kDataLoss, HasSubstr("big.b2nd")));
}

TEST(FrameErrors, BadReadArguments) {
  const Geometry g = GeometryOfRank(2);
  const Array a = MakeArray(g.shape, "<i2", 9);
  ASSERT_OK_AND_ASSIGN(auto frame,
                       EncodeB2ndFrame(a.data, a.shape, a.dtype, Options(g, Codec::kLZ4, {})));
  ASSERT_OK_AND_ASSIGN(const NdArrayReader r, ReaderFromBytes(std::move(frame)));
  const std::vector<std::byte> pad(2);
  EXPECT_THAT(r.ReadBox(Box{{0}, {3}}, pad),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("2 dimensions")));
  EXPECT_THAT(r.ReadBox(Box{{0, 0}, {3, 3}}, std::vector<std::byte>(4)),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("pad")));
  std::vector<std::byte> out(18);
  BoxReadScratch scratch;
  EXPECT_THAT(
      r.ReadBox(Box{{0, 0}, {3, 3}}, NdView::Contiguous(out.data(), {3, 2}, 2), pad, scratch),
      StatusIs(StatusCode::kInvalidArgument, HasSubstr("dimension 1")));
}

// One reader, four threads, each with its own scratch, reading random boxes at once; for a
// memory frame with DELTA (whole-chunk decode path), a mapped file and a sparse frame read
// with pread. Run under ThreadSanitizer in CI.
TEST(ConcurrentFrameReads, FourThreadsShareOneReader) {
  TempDir dir;
  const Geometry g{{40, 50, 30}, {16, 20, 12}, {5, 7, 5}};
  const Array a = MakeArray(g.shape, "<u2", 77);
  ASSERT_OK_AND_ASSIGN(const auto pad, ItemFromDouble("<u2", 2, 4242));
  std::vector<NdArrayReader> readers;
  ASSERT_OK_AND_ASSIGN(auto frame, EncodeB2ndFrame(a.data, a.shape, a.dtype,
                                                   Options(g, Codec::kZstd, Filter::kDelta)));
  ASSERT_OK_AND_ASSIGN(auto mem, ReaderFromBytes(std::move(frame)));
  readers.push_back(std::move(mem));
  auto contiguous = Options(g, Codec::kLZ4, Filter::kBitShuffle);
  ASSERT_OK(WriteB2nd(dir / "c.b2nd", a.data, a.shape, a.dtype, contiguous));
  ASSERT_OK_AND_ASSIGN(auto mapped, NdArrayReader::Open(dir / "c.b2nd", {storage::IoMode::kMmap}));
  readers.push_back(std::move(mapped));
  auto sparse = Options(g, Codec::kBloscLZ, Filter::kShuffle);
  sparse.sparse = true;
  ASSERT_OK(WriteB2nd(dir / "s.b2frame", a.data, a.shape, a.dtype, sparse));
  ASSERT_OK_AND_ASSIGN(auto pread,
                       NdArrayReader::Open(dir / "s.b2frame", {storage::IoMode::kPread}));
  readers.push_back(std::move(pread));
  for (const NdArrayReader& reader : readers) {
    std::atomic<int> errors{0}, mismatches{0}, reads{0};
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        BoxReadScratch scratch;
        std::mt19937 rng(1000 + t);
        for (int i = 0; i < 150; ++i) {
          const Box box = RandomBox(a.shape, rng);
          std::vector<int64_t> ext;
          for (int d = 0; d < 3; ++d) {
            ext.push_back(box.stop[d] - box.start[d]);
          }
          std::vector<std::byte> out(static_cast<size_t>(ext[0] * ext[1] * ext[2] * 2));
          const Status st =
              reader.ReadBox(box, NdView::Contiguous(out.data(), ext, 2), pad, scratch);
          if (!st.ok()) {
            ++errors;
          } else if (out != Reference(a, box, pad)) {
            ++mismatches;
          }
          ++reads;
        }
      });
    }
    for (auto& th : threads) {
      th.join();
    }
    EXPECT_EQ(reads.load(), 600);
    EXPECT_EQ(errors.load(), 0) << reader.frame().path();
    EXPECT_EQ(mismatches.load(), 0) << reader.frame().path();
  }
}

// A file read with pread (no memory to point into) that counts the bytes asked for.
class CountingPreadSource : public storage::ByteSource {
 public:
  explicit CountingPreadSource(std::vector<std::byte> bytes) : bytes_(std::move(bytes)) {}
  const std::string& name() const override { return name_; }
  uint64_t size() const override { return bytes_.size(); }
  const std::byte* Data(uint64_t, size_t) const override { return nullptr; }
  Status ReadAt(uint64_t offset, std::span<std::byte> out) const override {
    if (offset + out.size() > bytes_.size())
      return DataLossError("past the end");
    std::memcpy(out.data(), bytes_.data() + offset, out.size());
    read_ += static_cast<int64_t>(out.size());
    return Status::Ok();
  }
  int64_t bytes_read() const { return read_; }

 private:
  std::string name_ = "pread.b2nd";
  std::vector<std::byte> bytes_;
  mutable int64_t read_ = 0;  // single-threaded test
};

TEST(PreadReads, OnlyTheTouchedBlocksAreRead) {
  // One 48^3 chunk of 64 blocks of 12^3: a box inside one block reads the chunk's header,
  // offsets and that block's stream, not the chunk; any box still reads right.
  const Geometry g{{48, 48, 48}, {48, 48, 48}, {12, 12, 12}};
  // Compressible values (a random walk of floats would be stored raw, as one memcpy'd chunk).
  Array a = MakeArray(g.shape, "<f4", 77);
  for (size_t i = 0; i < a.data.size() / 4; ++i) {
    const auto v = static_cast<float>((i * 7 + i / 48 * 3) % 50);
    std::memcpy(a.data.data() + 4 * i, &v, 4);
  }
  for (const Filter filter : {Filter::kShuffle, Filter::kNone, Filter::kDelta}) {
    SCOPED_TRACE(static_cast<int>(filter));
    ASSERT_OK_AND_ASSIGN(
        auto frame, EncodeB2ndFrame(a.data, a.shape, a.dtype, Options(g, Codec::kLZ4, filter)));
    auto source = std::make_shared<CountingPreadSource>(frame);
    ASSERT_OK_AND_ASSIGN(FrameReader f, FrameReader::FromSource(source));
    ASSERT_OK_AND_ASSIGN(std::vector<std::byte> whole_chunk_bytes,
                         [&]() -> Result<std::vector<std::byte>> {
                           std::vector<std::byte> scratch;
                           PATCHFEED_ASSIGN_OR_RETURN(auto c, f.GetChunk(0, scratch));
                           return std::vector<std::byte>(c.begin(), c.end());
                         }());
    ASSERT_OK_AND_ASSIGN(const NdArrayReader r, NdArrayReader::FromFrame(std::move(f)));
    const int64_t before = source->bytes_read();
    const Box box{{13, 14, 15}, {20, 22, 23}};  // inside block (1, 1, 1)
    ASSERT_OK_AND_ASSIGN(auto pad, ItemFromDouble("<f4", 4, 0));
    ASSERT_OK_AND_ASSIGN(std::vector<std::byte> got, r.ReadBox(box, pad));
    const int64_t read = source->bytes_read() - before;
    if (filter == Filter::kDelta) {
      EXPECT_GE(read, static_cast<int64_t>(whole_chunk_bytes.size()));  // needs every block
    } else {
      EXPECT_LT(read * 8, static_cast<int64_t>(whole_chunk_bytes.size()))
          << read << " of " << whole_chunk_bytes.size() << " bytes";
    }
    ExpectBoxesMatch(r, a, 0, 5);
  }
}

TEST(BlockFilterReads, DeclinedBlocksArePaddedOthersRead) {
  // Blocks of 4x4x8 in chunks of 8x8x8; the filter declines blocks whose first axis starts at
  // an odd multiple of 4. A box crossing several chunks: declined voxels get the pad value,
  // the others the array's values; the same for mmap-like and pread-like reading.
  const Geometry g{{20, 18, 22}, {8, 8, 8}, {4, 4, 8}};
  Array a = MakeArray(g.shape, "<i2", 3);
  ASSERT_OK_AND_ASSIGN(auto frame,
                       EncodeB2ndFrame(a.data, a.shape, a.dtype, Options(g, Codec::kLZ4, {})));
  const Box box{{2, 1, 3}, {17, 15, 20}};
  ASSERT_OK_AND_ASSIGN(auto pad, ItemFromDouble("<i2", 2, -7));
  const std::vector<std::byte> want = Reference(a, box, pad);
  BlockFilter filter;
  filter.wants = [](const void*, const int64_t* lo, const int64_t*) { return lo[0] / 4 % 2 == 0; };
  for (const bool mapped : {true, false}) {
    std::shared_ptr<storage::ByteSource> source = storage::MemorySource(frame, "f.b2nd");
    if (!mapped)
      source = std::make_shared<CountingPreadSource>(frame);
    ASSERT_OK_AND_ASSIGN(FrameReader f, FrameReader::FromSource(source));
    ASSERT_OK_AND_ASSIGN(const NdArrayReader r, NdArrayReader::FromFrame(std::move(f)));
    std::vector<int64_t> extents;
    for (size_t d = 0; d < 3; ++d)
      extents.push_back(box.stop[d] - box.start[d]);
    std::vector<std::byte> got(want.size(), std::byte{0x11});
    BoxReadScratch scratch;
    ASSERT_OK(r.ReadBox(box, NdView::Contiguous(got.data(), extents, 2), pad, scratch, filter));
    int declined = 0;
    for (int64_t i0 = 0; i0 < extents[0]; ++i0) {
      const bool wanted = (box.start[0] + i0) / 4 % 2 == 0;
      declined += !wanted;
      const size_t row = static_cast<size_t>(i0 * extents[1] * extents[2] * 2);
      const size_t len = static_cast<size_t>(extents[1] * extents[2] * 2);
      for (size_t b = 0; b < len; b += 2) {
        const std::byte* expect = wanted ? &want[row + b] : pad.data();
        ASSERT_TRUE(got[row + b] == expect[0] && got[row + b + 1] == expect[1])
            << (mapped ? "mapped" : "pread") << " plane " << i0;
      }
    }
    EXPECT_GT(declined, 0);
  }
}

}  // namespace
}  // namespace patchfeed::codec
