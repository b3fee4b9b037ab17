// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any byte string as a Neuroglancer precomputed `info` document must parse or
// give an error, never crash, leak or read out of bounds (ASan/UBSan); what parses must be
// consistent: at least one scale, each with positive sizes, a chunk within kMaxChunkBytes and a
// name for its first chunk. Seed corpus: tests/fuzz/precomputed_info_corpus (documents
// cloud-volume 12.15 wrote). CI runs it for a bounded number of inputs.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "codec/precomputed/info.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace patchfeed::codec::precomputed;
  const auto info = ParseInfo(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!info.ok())
    return 0;
  if (info->scales.empty() || info->itemsize <= 0 || info->num_channels < 1)
    std::abort();
  for (const Scale& s : info->scales) {
    int64_t chunk_bytes = info->itemsize * info->num_channels;
    for (size_t d = 0; d < 3; ++d) {
      if (s.size[d] < 1 || s.chunk_size[d] < 1)
        std::abort();
      chunk_bytes *= s.chunk_size[d];
    }
    if (chunk_bytes > kMaxChunkBytes || ChunkName(ChunkBoundsAt(s, {0, 0, 0})).empty())
      std::abort();
  }
  return 0;
}
