// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any byte string, opened as a contiguous Blosc2 frame holding a `.b2nd`
// array, then read through a few small boxes (across the lower border, across the upper
// border, entirely outside), must give an error or a result, never a crash, leak or
// out-of-bounds access (ASan/UBSan). Each input is read twice: from memory (as a mapped file)
// and through positional reads only (as with IoMode::kPread, where a box fetches just the
// chunk header, block offsets and the touched blocks' streams, into scratch that starts out
// holding other bytes). Both readings must agree step by step: the same error, or the same
// bytes; any difference traps. Arrays whose chunks or boxes would need more than 16 MB are
// skipped so that the fuzzer measures parsing, not allocation. Seed corpus:
// tests/fuzz/make_frame_corpus.py DIR writes small frames from python-blosc2 and patchfeed;
// tests/fuzz/frame_regressions/ holds damaged ones.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "codec/b2nd/frame_reader.h"
#include "codec/b2nd/nd_reader.h"
#include "storage/byte_source.h"

namespace {

constexpr int64_t kMaxBytes = 16 << 20;

using patchfeed::Status;
using patchfeed::codec::Box;
using patchfeed::codec::NdArrayReader;

// What one reading of the input gave, step by step: an error's code and message, or the bytes.
using Transcript = std::vector<std::string>;

void Record(Transcript& t, const Status& st, std::span<const std::byte> bytes = {}) {
  if (!st.ok()) {
    t.push_back(std::to_string(static_cast<int>(st.code())) + " " + std::string(st.message()));
  } else {
    t.push_back("ok " + std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
}

// Reads `box` unless its output would exceed the byte bound.
void ReadIfSmall(const NdArrayReader& array, const Box& box,
                 patchfeed::codec::BoxReadScratch& scratch, Transcript& t) {
  std::vector<int64_t> shape;
  int64_t bytes = array.itemsize();
  for (size_t d = 0; d < box.start.size(); ++d) {
    shape.push_back(box.stop[d] - box.start[d]);
    bytes *= shape.back();
    if (bytes > kMaxBytes)
      return;
  }
  std::vector<std::byte> out(static_cast<size_t>(bytes));
  const std::vector<std::byte> pad(static_cast<size_t>(array.itemsize()), std::byte{0x5A});
  const Status st = array.ReadBox(
      box, patchfeed::codec::NdView::Contiguous(out.data(), shape, array.itemsize()), pad, scratch);
  Record(t, st, out);
}

// A file that can only be read with ReadAt, like a file opened with IoMode::kPread.
class UnmappedSource : public patchfeed::storage::ByteSource {
 public:
  explicit UnmappedSource(std::shared_ptr<patchfeed::storage::ByteSource> inner)
      : inner_(std::move(inner)) {}
  const std::string& name() const override { return inner_->name(); }
  uint64_t size() const override { return inner_->size(); }
  const std::byte* Data(uint64_t, size_t) const override { return nullptr; }
  patchfeed::Status ReadAt(uint64_t offset, std::span<std::byte> out) const override {
    return inner_->ReadAt(offset, out);
  }

 private:
  std::shared_ptr<patchfeed::storage::ByteSource> inner_;
};

Transcript ReadFrame(std::shared_ptr<patchfeed::storage::ByteSource> source, bool stale_scratch);

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace patchfeed::codec;
  std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(data),
                               reinterpret_cast<const std::byte*>(data) + size);
  auto memory = patchfeed::storage::MemorySource(std::move(bytes), "fuzz.b2nd");
  const Transcript mapped = ReadFrame(memory, false);
  const Transcript pread = ReadFrame(std::make_shared<UnmappedSource>(memory), true);
  if (mapped != pread)
    __builtin_trap();
  return 0;
}

namespace {

Transcript ReadFrame(std::shared_ptr<patchfeed::storage::ByteSource> source, bool stale_scratch) {
  using namespace patchfeed::codec;
  Transcript t;
  auto frame = FrameReader::FromSource(std::move(source));
  Record(t, frame.status());
  if (!frame.ok())
    return t;
  {
    // Raw chunk access, as `patchfeed info`-like tools do.
    std::vector<std::byte> scratch;
    for (int64_t i = 0; i < std::min<int64_t>(frame->nchunks(), 4); ++i) {
      for (const int64_t c : {i, frame->nchunks() - 1 - i}) {
        auto chunk = frame->GetChunk(c, scratch);
        Record(t, chunk.status(), chunk.ok() ? *chunk : std::span<const std::byte>{});
      }
    }
  }
  auto array = NdArrayReader::FromFrame(std::move(*frame));
  Record(t, array.status());
  if (!array.ok())
    return t;
  const NdGeometry& g = array->geometry();
  if (g.chunk_nitems * g.itemsize > kMaxBytes)
    return t;
  BoxReadScratch scratch;
  if (stale_scratch) {
    // Bytes a positional reader must never decode: each box read may only use what it fetched.
    scratch.chunk.assign(1 << 16, std::byte{0xA5});
  }
  const int n = g.ndim;
  // An empty array may still declare an extent up to INT64_MAX on another axis: the box
  // corners past the edge saturate there instead of overflowing.
  const auto past = [](int64_t extent, int64_t by) {
    return extent > INT64_MAX - by ? INT64_MAX : extent + by;
  };
  // Up to 3 items inside each edge plus 1 outside; dimensions beyond the first few get
  // extent 1 so that high ranks stay small.
  Box low, high, outside;
  for (int d = 0; d < n; ++d) {
    const auto i = static_cast<size_t>(d);
    const int64_t inside =
        d < 4 ? std::min<int64_t>(g.shape[i], 3) : std::min<int64_t>(g.shape[i], 1);
    low.start.push_back(d < 4 ? -1 : 0);
    low.stop.push_back(inside);
    high.start.push_back(g.shape[i] - inside);
    high.stop.push_back(past(g.shape[i], d < 4 ? 1 : 0));
    outside.start.push_back(d == 0 ? past(g.shape[i], 2) : 0);
    outside.stop.push_back(d == 0 ? past(g.shape[i], 4) : inside);
  }
  ReadIfSmall(*array, low, scratch, t);
  ReadIfSmall(*array, high, scratch, t);
  ReadIfSmall(*array, outside, scratch, t);
  return t;
}

}  // namespace
