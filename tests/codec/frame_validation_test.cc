// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Damaged frames: one field of a real frame (written by EncodeB2ndFrame) changed, read through
// a mapped file and through positional reads. Both must give the same result, whatever the
// reader's scratch held before, and the damage must be an error where c-blosc2 errs too.

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codec/b2nd/b2nd_meta.h"
#include "codec/b2nd/frame_reader.h"
#include "codec/b2nd/frame_writer.h"
#include "codec/b2nd/nd_reader.h"
#include "codec/dtype.h"
#include "common/byte_order.h"
#include "storage/byte_source.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"

namespace patchfeed::codec {
namespace {

using ::testing::HasSubstr;

// A smooth float32 field: compresses well, so every chunk holds regular compressed blocks.
std::vector<std::byte> SmoothFloats(int64_t n) {
  std::vector<std::byte> out(static_cast<size_t>(n) * 4);
  for (int64_t i = 0; i < n; ++i) {
    const auto v = static_cast<float>((i % 64) * 0.5 + (i / 64) % 7);
    std::memcpy(out.data() + 4 * i, &v, 4);
  }
  return out;
}

std::vector<std::byte> MakeFrame(const std::vector<int64_t>& shape, std::vector<int32_t> chunks,
                                 std::vector<int32_t> blocks, Filter filter,
                                 const std::string& dtype = "<f4") {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  B2ndWriteOptions o;
  o.chunkshape = std::move(chunks);
  o.blockshape = std::move(blocks);
  o.encode.codec = Codec::kLZ4;
  o.encode.filters[0] = filter;
  o.encode.filters[1] = filter == Filter::kDelta ? Filter::kShuffle : Filter::kNone;
  std::vector<std::byte> data = SmoothFloats(n * ItemSizeOfDtype(dtype) / 4);
  auto frame = EncodeB2ndFrame(data, shape, dtype, o);
  EXPECT_TRUE(frame.ok()) << frame.status().ToString();
  return frame.ok() ? *frame : std::vector<std::byte>{};
}

// Where chunk `index`'s bytes begin in `frame`.
size_t ChunkPosition(const std::vector<std::byte>& frame, int64_t index) {
  auto reader = FrameReader::FromSource(storage::MemorySource(frame, "find.b2nd"));
  EXPECT_TRUE(reader.ok());
  std::vector<std::byte> scratch;
  auto chunk = reader->GetChunk(index, scratch);
  EXPECT_TRUE(chunk.ok());
  const auto it = std::search(frame.begin(), frame.end(), chunk->begin(), chunk->end());
  EXPECT_NE(it, frame.end());
  return static_cast<size_t>(it - frame.begin());
}

void WriteFile(const std::string& path, const std::vector<std::byte>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

// A read's outcome: its bytes, or its error.
struct Outcome {
  Status status;
  std::vector<std::byte> bytes;
};

Outcome Read(const NdArrayReader& reader, const Box& box, BoxReadScratch& scratch) {
  std::vector<int64_t> extents;
  int64_t n = reader.itemsize();
  for (size_t d = 0; d < box.start.size(); ++d) {
    extents.push_back(box.stop[d] - box.start[d]);
    n *= extents.back();
  }
  Outcome o;
  o.bytes.assign(static_cast<size_t>(n), std::byte{0x5A});
  const std::vector<std::byte> pad(static_cast<size_t>(reader.itemsize()));
  o.status = reader.ReadBox(box, NdView::Contiguous(o.bytes.data(), extents, reader.itemsize()),
                            pad, scratch);
  if (!o.status.ok())
    o.bytes.clear();
  return o;
}

void ExpectSameOutcome(const Outcome& mapped, const Outcome& pread, const std::string& what) {
  EXPECT_EQ(mapped.status.code(), pread.status.code()) << what;
  EXPECT_EQ(mapped.status.message(), pread.status.message()) << what;
  EXPECT_TRUE(mapped.bytes == pread.bytes) << what;
}

TEST(PreadEqualsMmapTest, DamagedBlockStartsGiveTheSameResult) {
  // Chunks of 4 blocks (8 x 64 floats each). In chunk 1, block 2's start is moved into the
  // middle of block 1's stream. Positional reads fetch a block's bytes up to the next block
  // start; the decoder must bound block 1 there too, or a mapped read decodes it from bytes a
  // positional read never fetched (and its scratch holds whatever an earlier read left).
  const std::vector<int64_t> shape{64, 64};
  const auto good = MakeFrame(shape, {32, 64}, {8, 64}, Filter::kShuffle);
  auto bad = good;
  const size_t chunk1 = ChunkPosition(bad, 1);
  const int32_t s1 = LoadLE<int32_t>(bad.data() + chunk1 + 32 + 4);
  const int32_t s2 = LoadLE<int32_t>(bad.data() + chunk1 + 32 + 8);
  ASSERT_GT(s2 - s1, 16);
  StoreLE<int32_t>(bad.data() + chunk1 + 32 + 8, s1 + (s2 - s1) / 2);

  const testing::TempDir dir;
  const std::string good_path = dir / "good.b2nd", bad_path = dir / "bad.b2nd";
  WriteFile(good_path, good);
  WriteFile(bad_path, bad);
  ASSERT_OK_AND_ASSIGN(const NdArrayReader mapped,
                       NdArrayReader::Open(bad_path, {storage::IoMode::kMmap}));
  ASSERT_OK_AND_ASSIGN(const NdArrayReader pread,
                       NdArrayReader::Open(bad_path, {storage::IoMode::kPread}));
  ASSERT_OK_AND_ASSIGN(const NdArrayReader pread_good,
                       NdArrayReader::Open(good_path, {storage::IoMode::kPread}));

  const std::vector<Box> boxes{
      {{40, 0}, {48, 64}},  // chunk 1, block 1 exactly: decoded straight into the output
      {{41, 3}, {45, 20}},  // a piece of block 1: decoded into scratch, rows copied
      {{0, 0}, {64, 64}},   // everything
      {{32, 0}, {40, 64}},  // chunk 1, block 0 only: intact
  };
  for (const Box& box : boxes) {
    const std::string what = "box rows " + std::to_string(box.start[0]) + ":" +
                             std::to_string(box.stop[0]) + " cols " + std::to_string(box.start[1]) +
                             ":" + std::to_string(box.stop[1]);
    BoxReadScratch fresh;
    const Outcome want = Read(mapped, box, fresh);
    BoxReadScratch fresh_pread;
    ExpectSameOutcome(want, Read(pread, box, fresh_pread), what + ", fresh scratch");
    // Scratch that holds the same chunk's undamaged bytes, then another chunk's bytes.
    BoxReadScratch stale;
    ASSERT_OK(Read(pread_good, Box{{32, 0}, {64, 64}}, stale).status);
    ExpectSameOutcome(want, Read(pread, box, stale), what + ", scratch from the good file");
    ASSERT_OK(Read(pread_good, Box{{0, 0}, {32, 64}}, stale).status);
    ExpectSameOutcome(want, Read(pread, box, stale), what + ", scratch from chunk 0");
  }
  // And the damage is an error wherever block 1 of chunk 1 is read.
  BoxReadScratch scratch;
  EXPECT_THAT(Read(mapped, boxes[0], scratch).status,
              StatusIs(StatusCode::kDataLoss, HasSubstr("chunk 1")));
  EXPECT_THAT(Read(mapped, boxes[1], scratch).status,
              StatusIs(StatusCode::kDataLoss, HasSubstr("block 1")));
  EXPECT_OK(Read(mapped, boxes[3], scratch).status);
}

// Rewrites the b2nd metalayer's block shape inside `frame` (the content keeps its length).
void SetBlockShape(std::vector<std::byte>& frame, std::vector<int32_t> blockshape) {
  ASSERT_OK_AND_ASSIGN(FrameReader f,
                       FrameReader::FromSource(storage::MemorySource(frame, "m.b2nd")));
  const auto* content = f.info().metalayer("b2nd");
  ASSERT_NE(content, nullptr);
  ASSERT_OK_AND_ASSIGN(B2ndMeta meta, ParseB2ndMeta(*content));
  meta.blockshape = std::move(blockshape);
  const auto patched = SerializeB2ndMeta(meta);
  ASSERT_EQ(patched.size(), content->size());
  const auto it = std::search(frame.begin(), frame.end(), content->begin(), content->end());
  ASSERT_NE(it, frame.end());
  std::copy(patched.begin(), patched.end(), it);
}

TEST(FrameValidationTest, DeltaChunkBlocksizeMustMatchTheB2ndBlock) {
  // Chunks of two 8 x 64 blocks, DELTA + shuffle; the metalayer then claims one 16 x 64 block.
  // c-blosc2 refuses the chunk (its block count differs from the array's); patchfeed must not
  // decode it whole and lay it out with the wrong block shape.
  for (const Filter filter : {Filter::kDelta, Filter::kShuffle}) {
    SCOPED_TRACE(static_cast<int>(filter));
    auto frame = MakeFrame({32, 64}, {16, 64}, {8, 64}, filter);
    SetBlockShape(frame, {16, 64});
    ASSERT_OK_AND_ASSIGN(FrameReader f,
                         FrameReader::FromSource(storage::MemorySource(frame, "d.b2nd")));
    ASSERT_OK_AND_ASSIGN(const NdArrayReader r, NdArrayReader::FromFrame(std::move(f)));
    EXPECT_THAT(r.ReadBox(Box{{0, 0}, {32, 64}}, std::vector<std::byte>(4)),
                StatusIs(StatusCode::kDataLoss, HasSubstr("block size 2048")));
  }
}

TEST(FrameValidationTest, TypesizeMustMatchTheDtype) {
  // The frame header's typesize (big-endian int32 at byte 48) against the dtype's item size.
  auto frame = MakeFrame({32, 64}, {16, 64}, {8, 64}, Filter::kShuffle, "<f4");
  ASSERT_EQ(LoadBE<int32_t>(frame.data() + 48), 4);
  StoreBE<int32_t>(frame.data() + 48, 8);
  ASSERT_OK_AND_ASSIGN(FrameReader f,
                       FrameReader::FromSource(storage::MemorySource(frame, "t.b2nd")));
  EXPECT_THAT(NdArrayReader::FromFrame(std::move(f)),
              StatusIs(StatusCode::kDataLoss, HasSubstr("typesize 8")));
}

TEST(FrameValidationTest, ChunkTypesizeMustBeTheItemSize) {
  // A chunk's typesize drives its shuffle and stream split; c-blosc2 writes the item size
  // there and refuses block reads it cannot align.
  auto frame = MakeFrame({32, 64}, {16, 64}, {8, 64}, Filter::kShuffle);
  const size_t chunk0 = ChunkPosition(frame, 0);
  ASSERT_EQ(frame[chunk0 + 3], std::byte{4});
  frame[chunk0 + 3] = std::byte{8};
  ASSERT_OK_AND_ASSIGN(FrameReader f,
                       FrameReader::FromSource(storage::MemorySource(frame, "c.b2nd")));
  ASSERT_OK_AND_ASSIGN(const NdArrayReader r, NdArrayReader::FromFrame(std::move(f)));
  EXPECT_THAT(r.ReadBox(Box{{0, 0}, {2, 2}}, std::vector<std::byte>(4)),
              StatusIs(StatusCode::kDataLoss, HasSubstr("chunk 0: typesize 8 differs")));
}

TEST(FrameValidationTest, OffsetsChunkWithSpecialBitsMustBeBare) {
  // Zeros bits on the stored offsets chunk would make every chunk offset 0.
  auto frame = MakeFrame({64, 64}, {16, 64}, {8, 64}, Filter::kShuffle);
  ASSERT_OK_AND_ASSIGN(FrameReader f,
                       FrameReader::FromSource(storage::MemorySource(frame, "o.b2nd")));
  const size_t offsets = static_cast<size_t>(f.info().header_len + f.info().cbytes);
  ASSERT_GT(LoadLE<int32_t>(frame.data() + offsets + 12), 32);
  frame[offsets + 0x1F] |= std::byte{0x10};
  EXPECT_THAT(FrameReader::FromSource(storage::MemorySource(frame, "o.b2nd")),
              StatusIs(StatusCode::kDataLoss, HasSubstr("offsets chunk")));
}

TEST(FrameValidationTest, HeaderChecksOfCBlosc2) {
  // Fields a reader could ignore but c-blosc2 refuses to open a frame with: the frame type
  // byte, the default filter pipeline for new chunks, the offsets chunk's typesize.
  const auto frame = MakeFrame({64, 64}, {16, 64}, {8, 64}, Filter::kShuffle);
  ASSERT_OK(FrameReader::FromSource(storage::MemorySource(frame, "h.b2nd")).status());
  const auto open_with = [&](size_t at, uint8_t value) {
    auto bad = frame;
    bad[at] = std::byte{value};
    return FrameReader::FromSource(storage::MemorySource(bad, "h.b2nd")).status();
  };
  EXPECT_THAT(open_with(26, 0x10), StatusIs(StatusCode::kDataLoss, HasSubstr("frame type 16")));
  EXPECT_THAT(open_with(70, 7), StatusIs(StatusCode::kDataLoss, HasSubstr("7 filters")));
  EXPECT_THAT(open_with(71, 9), StatusIs(StatusCode::kDataLoss, HasSubstr("default filter 0")));
  EXPECT_THAT(open_with(76, 40), StatusIs(StatusCode::kDataLoss, HasSubstr("default filter 5")));
  EXPECT_OK(open_with(76, 35));   // BYTEDELTA
  EXPECT_OK(open_with(76, 200));  // a user filter id
  ASSERT_OK_AND_ASSIGN(FrameReader f,
                       FrameReader::FromSource(storage::MemorySource(frame, "h.b2nd")));
  const size_t offsets = static_cast<size_t>(f.info().header_len + f.info().cbytes);
  EXPECT_THAT(open_with(offsets + 3, 4),
              StatusIs(StatusCode::kDataLoss, HasSubstr("offsets chunk has typesize 4")));
}

}  // namespace
}  // namespace patchfeed::codec
