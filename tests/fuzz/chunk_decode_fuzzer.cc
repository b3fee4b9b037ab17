// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any byte string, decoded as a Blosc chunk whole and block by block, must
// give an error or a result, never a crash, leak or out-of-bounds access (ASan/UBSan). When the
// whole chunk decodes, each block decoded alone must succeed too and give the same bytes (a
// block's decode depends on nothing but its own bytes, block 0 for DELTA, and the header).
// Seed corpus: tests/codec/testdata/golden/*.chunk and tests/fuzz/chunk_regressions/. CI runs
// it for a bounded time.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "codec/blosc/block_decoder.h"
#include "codec/blosc/chunk_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace patchfeed::codec;
  const std::span<const std::byte> chunk(reinterpret_cast<const std::byte*>(data), size);
  static BlockDecoder decoder;  // reused like a worker's decoder, so scratch reuse is fuzzed too
  auto header = ParseChunkHeader(chunk);
  if (!header.ok() || !DecompressedSize(chunk, 16 << 20).ok())
    return 0;
  std::vector<std::byte> out(static_cast<size_t>(header->nbytes));
  const bool whole = decoder.DecodeChunk(chunk, out).ok();
  for (int32_t b = header->nblocks - 1; b >= 0 && b >= header->nblocks - 3; --b) {
    std::vector<std::byte> block(static_cast<size_t>(header->block_nbytes(b)));
    const bool ok = decoder.DecodeBlock(chunk, *header, b, block).ok();
    const auto from = out.begin() + static_cast<ptrdiff_t>(b) * header->blocksize;
    if (whole && (!ok || !std::equal(block.begin(), block.end(), from)))
      __builtin_trap();
  }
  return 0;
}
