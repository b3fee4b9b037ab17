// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any byte string as a zarr v3 `zarr.json` document (or OME-Zarr group
// attributes) must parse or give an error, never crash, leak or read out of bounds
// (ASan/UBSan); what parses must be consistent: as many chunk extents as axes, a decoded chunk
// within kMaxZarrChunkBytes, a fill value of one item, transposes that are permutations, inner
// chunks that tile the shard, a bounded shard index, a key for the first chunk, and OME paths
// that stay inside the group. Seed corpus: tests/fuzz/zarr_v3_meta_corpus (documents
// zarr-python 3.1 wrote). CI runs it for a bounded number of inputs.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "codec/zarr/ome_zarr.h"
#include "codec/zarr/zarr_v3_meta.h"

namespace {

using namespace patchfeed::codec;

bool IsPermutation(const std::vector<int>& order, int ndim) {
  if (order.empty()) {
    return true;
  }
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (int d = 0; d < ndim; ++d) {
    if (sorted.size() != static_cast<size_t>(ndim) || sorted[static_cast<size_t>(d)] != d) {
      return false;
    }
  }
  return true;
}

bool Consistent(const ZarrV3Meta& m) {
  const size_t ndim = m.shape.size();
  if (m.chunks.size() != ndim || m.itemsize <= 0 || m.numpy_dtype.empty() ||
      static_cast<int64_t>(m.fill_value.size()) != m.itemsize || m.inner_chunks().size() != ndim ||
      m.inner_chunk_nbytes() <= 0 || m.inner_chunk_nbytes() > kMaxZarrChunkBytes ||
      !IsPermutation(m.codecs.transpose_order, m.ndim())) {
    return false;
  }
  if (!m.sharding) {
    return true;
  }
  const ZarrV3Sharding& s = *m.sharding;
  if (!m.codecs.transpose_order.empty() || !m.codecs.bytes_codecs.empty() ||
      s.chunks_per_shard.size() != ndim || !IsPermutation(s.inner.transpose_order, m.ndim()) ||
      s.index_nbytes() <= 0 || s.index_nbytes() > kMaxZarrChunkBytes) {
    return false;
  }
  for (size_t d = 0; d < ndim; ++d) {
    if (s.inner_chunks[d] * s.chunks_per_shard[d] != m.chunks[d]) {
      return false;
    }
  }
  return true;
}

// A relative path of plain components: no absolute path, backslash, NUL, "", "." or "..".
bool InsideGroup(std::string_view path) {
  if (path.empty() || path.find_first_of(std::string_view("\\\0", 2)) != path.npos) {
    return false;
  }
  size_t start = 0;
  while (true) {
    const size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") {
      return false;
    }
    if (end == path.size()) {
      return true;
    }
    start = end + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto node = ZarrV3NodeType(text);
  const auto meta = ParseZarrV3Meta(text);
  // An array ParseZarrV3Meta reads, or the group it refuses, has that node type.
  if ((meta.ok() && (!node.ok() || *node != "array")) ||
      (meta.status().code() == patchfeed::StatusCode::kInvalidArgument &&
       (!node.ok() || *node != "group"))) {
    std::abort();
  }
  if (meta.ok()) {
    if (!Consistent(*meta)) {
      std::abort();
    }
    const std::vector<int64_t> first(meta->shape.size(), 0);
    if (ZarrV3ChunkKey(*meta, first).empty()) {
      std::abort();
    }
  }
  const auto paths = ParseOmeMultiscalePaths(text);
  if (paths.ok()) {
    for (const std::string& p : *paths) {
      if (!InsideGroup(p)) {
        std::abort();
      }
    }
  }
  return 0;
}
