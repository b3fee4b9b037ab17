// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any byte string, opened as a contiguous Blosc2 frame holding a `.b2nd`
// array, then read through a few small boxes (across the lower border, across the upper
// border, entirely outside), must give an error or a result, never a crash, leak or
// out-of-bounds access (ASan/UBSan). Arrays whose chunks or boxes would need more than 16 MB
// are skipped so that the fuzzer measures parsing, not allocation.
// Seed corpus: tests/fuzz/make_frame_corpus.py DIR writes small frames from python-blosc2 and
// patchfeed.

#include <algorithm>
#include <cstddef>
#include <cstdint>
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace patchfeed::codec;
  std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(data),
                               reinterpret_cast<const std::byte*>(data) + size);
  auto frame = FrameReader::FromSource(MemorySource(std::move(bytes), "fuzz.b2nd"));
  if (!frame.ok())
    return 0;
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
    return 0;
  const NdGeometry& g = array->geometry();
  if (g.chunk_nitems * g.itemsize > kMaxBytes)
    return 0;
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
  return 0;
}
