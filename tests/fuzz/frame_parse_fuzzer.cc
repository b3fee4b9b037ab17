// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any byte string, opened as a contiguous Blosc2 frame holding a `.b2nd`
// array, then read through a few small boxes (across the lower border, across the upper
// border, entirely outside), must give an error or a result, never a crash, leak or
// out-of-bounds access (ASan/UBSan). Each input is read twice: from memory (as a mapped file)
// and through positional reads only (as with IoMode::kPread, where a box fetches just the
// chunk header, block offsets and the touched blocks' streams). Arrays whose chunks or boxes would
// need more than 16 MB are skipped so that the fuzzer measures parsing, not allocation. Seed
// corpus: tests/fuzz/make_frame_corpus.py DIR writes small frames from python-blosc2 and patchfeed.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "codec/byte_source.h"
#include "codec/frame_reader.h"
#include "codec/nd_reader.h"

namespace {

constexpr int64_t kMaxBytes = 16 << 20;

using patchfeed::codec::Box;
using patchfeed::codec::NdArrayReader;

// Reads `box` unless its output would exceed the byte bound.
void ReadIfSmall(const NdArrayReader& array, const Box& box,
                 patchfeed::codec::BoxReadScratch& scratch) {
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
  (void)array.ReadBox(
      box, patchfeed::codec::NdView::Contiguous(out.data(), shape, array.itemsize()), pad, scratch);
}

// A file that can only be read with ReadAt, like a file opened with IoMode::kPread.
class UnmappedSource : public patchfeed::codec::ByteSource {
 public:
  explicit UnmappedSource(std::shared_ptr<patchfeed::codec::ByteSource> inner)
      : inner_(std::move(inner)) {}
  const std::string& name() const override { return inner_->name(); }
  uint64_t size() const override { return inner_->size(); }
  const std::byte* Data(uint64_t, size_t) const override { return nullptr; }
  patchfeed::Status ReadAt(uint64_t offset, std::span<std::byte> out) const override {
    return inner_->ReadAt(offset, out);
  }

 private:
  std::shared_ptr<patchfeed::codec::ByteSource> inner_;
};

void ReadFrame(std::shared_ptr<patchfeed::codec::ByteSource> source);

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace patchfeed::codec;
  std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(data),
                               reinterpret_cast<const std::byte*>(data) + size);
  auto memory = MemorySource(std::move(bytes), "fuzz.b2nd");
  ReadFrame(memory);
  ReadFrame(std::make_shared<UnmappedSource>(memory));
  return 0;
}

namespace {

void ReadFrame(std::shared_ptr<patchfeed::codec::ByteSource> source) {
  using namespace patchfeed::codec;
  auto frame = FrameReader::FromSource(std::move(source));
  if (!frame.ok())
    return;
  {
    // Raw chunk access, as `patchfeed info`-like tools do.
    std::vector<std::byte> scratch;
    for (int64_t i = 0; i < std::min<int64_t>(frame->nchunks(), 4); ++i) {
      (void)frame->GetChunk(i, scratch);
      (void)frame->GetChunk(frame->nchunks() - 1 - i, scratch);
    }
  }
  auto array = NdArrayReader::FromFrame(std::move(*frame));
  if (!array.ok())
    return;
  const NdGeometry& g = array->geometry();
  if (g.chunk_nitems * g.itemsize > kMaxBytes)
    return;
  BoxReadScratch scratch;
  const int n = g.ndim;
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
    high.stop.push_back(g.shape[i] + (d < 4 ? 1 : 0));
    outside.start.push_back(d == 0 ? g.shape[i] + 2 : 0);
    outside.stop.push_back(d == 0 ? g.shape[i] + 4 : inside);
  }
  ReadIfSmall(*array, low, scratch);
  ReadIfSmall(*array, high, scratch);
  ReadIfSmall(*array, outside, scratch);
}

}  // namespace
