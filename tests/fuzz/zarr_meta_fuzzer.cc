// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any byte string as a zarr v2 `.zarray` document must parse or give an
// error, never crash, leak or read out of bounds (ASan/UBSan); what parses must be consistent:
// as many chunk extents as axes, a chunk within kMaxZarrChunkBytes, a fill value of one item,
// a key for the first chunk. Seed corpus: tests/fuzz/zarr_meta_corpus (documents zarr-python
// 3.1 wrote). CI runs it for a bounded number of inputs.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "codec/zarr/zarr_meta.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace patchfeed::codec;
  const auto meta = ParseZarrV2Meta(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!meta.ok()) {
    return 0;
  }
  const bool consistent =
      meta->chunks.size() == meta->shape.size() && meta->itemsize > 0 && meta->chunk_nbytes() > 0 &&
      meta->chunk_nbytes() <= kMaxZarrChunkBytes &&
      (!meta->fill_value || static_cast<int64_t>(meta->fill_value->size()) == meta->itemsize);
  if (!consistent) {
    std::abort();
  }
  const std::vector<int64_t> first(meta->shape.size(), 0);
  if (ZarrV2ChunkKey(*meta, first).empty()) {
    std::abort();
  }
  return 0;
}
