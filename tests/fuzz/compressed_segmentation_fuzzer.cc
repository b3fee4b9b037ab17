// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any bytes as a compressed_segmentation chunk must decode or give an error,
// never crash or read or write out of bounds (ASan/UBSan). The first 12 bytes choose the item
// size, the chunk's size and block size (1-16 and 1-8 voxels per axis), the channel and the
// region decoded; the rest is the chunk. Seed corpus: tests/fuzz/compressed_segmentation_corpus
// (chunks cloud-volume 12.15 wrote, with their parameters). CI runs it for a bounded number of
// inputs.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "codec/precomputed/compressed_segmentation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace patchfeed::codec::precomputed;
  if (size < 12)
    return 0;
  const int64_t itemsize = (data[0] & 1) ? 8 : 4;
  Vec3 chunk{}, block{}, lo{}, hi{};
  for (size_t d = 0; d < 3; ++d) {
    chunk[d] = 1 + data[1 + d] % 16;
    block[d] = 1 + data[4 + d] % 8;
    lo[d] = data[7 + d] % chunk[d];
    hi[d] = lo[d] + 1 + (data[7 + d] >> 4) % (chunk[d] - lo[d]);
  }
  const int64_t channel = data[10] % 2;
  const Vec3 extent = {hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]};
  std::vector<std::byte> out(static_cast<size_t>(extent[0] * extent[1] * extent[2] * itemsize));
  VoxelsOut view;
  view.data = out.data();
  view.stride = {itemsize, itemsize * extent[0], itemsize * extent[0] * extent[1]};
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data) + 12, size - 12);
  (void)DecodeCompressedSegmentation(bytes, itemsize, chunk, block, channel, lo, hi, view);
  return 0;
}
