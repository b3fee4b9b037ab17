// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any byte string, decoded as a Blosc chunk whole and block by block, must
// give an error or a result, never a crash, leak or out-of-bounds access (ASan/UBSan).
// Seed corpus: tests/codec/testdata/golden/*.chunk. CI runs it for a bounded time.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "codec/block_decoder.h"
#include "codec/chunk_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace patchfeed::codec;
  const std::span<const std::byte> chunk(reinterpret_cast<const std::byte*>(data), size);
  static BlockDecoder decoder;  // reused like a worker's decoder, so scratch reuse is fuzzed too
  auto header = ParseChunkHeader(chunk);
  if (!header.ok() || header->nbytes > (16 << 20))
    return 0;
  std::vector<std::byte> out(static_cast<size_t>(header->nbytes));
  (void)decoder.DecodeChunk(chunk, out);
  for (int32_t b = header->nblocks - 1; b >= 0 && b >= header->nblocks - 3; --b) {
    std::vector<std::byte> block(static_cast<size_t>(header->block_nbytes(b)));
    (void)decoder.DecodeBlock(chunk, *header, b, block);
  }
  return 0;
}
