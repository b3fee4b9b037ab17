// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/read_plan.h"

#include <algorithm>
#include <string>

namespace patchfeed::loader {
namespace {

// Floor division for possibly negative numerators.
int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

std::vector<ReadCell> SplitBoxAtChunks(const codec::Box& box, const codec::NdGeometry& g,
                                       std::span<const int64_t> dst_strides) {
  const size_t n = box.start.size();
  // Per axis: the cut points, box.start first and box.stop last.
  std::vector<std::vector<int64_t>> cuts(n);
  for (size_t d = 0; d < n; ++d) {
    const int64_t lo = box.start[d], hi = box.stop[d], c = g.chunkshape[d];
    cuts[d].push_back(lo);
    const int64_t first = std::max<int64_t>(FloorDiv(lo, c) + 1, 1) * c;
    for (int64_t x = first; x < hi && x < g.shape[d]; x += c) {
      cuts[d].push_back(x);
    }
    cuts[d].push_back(hi);
  }
  std::vector<ReadCell> cells;
  std::vector<size_t> k(n, 0);  // interval index per axis
  if (n == 0) {
    return cells;
  }
  for (size_t d = 0; d < n; ++d) {
    if (cuts[d].size() < 2 || box.stop[d] <= box.start[d]) {
      return cells;
    }
  }
  while (true) {
    ReadCell cell;
    cell.box.start.resize(n);
    cell.box.stop.resize(n);
    cell.shape.resize(n);
    int64_t items = 1, chunk = 0, blocks = 1;
    bool inside = true;
    for (size_t d = 0; d < n; ++d) {
      const int64_t lo = cuts[d][k[d]], hi = cuts[d][k[d] + 1];
      cell.box.start[d] = lo;
      cell.box.stop[d] = hi;
      cell.shape[d] = hi - lo;
      cell.dst_offset += (lo - box.start[d]) * dst_strides[d];
      items *= hi - lo;
      // The part inside the array, its chunk and the blocks it touches in that chunk.
      const int64_t ilo = std::max<int64_t>(lo, 0), ihi = std::min(hi, g.shape[d]);
      if (ilo >= ihi) {
        inside = false;
        continue;
      }
      const int64_t q = ilo / g.chunkshape[d];
      chunk = chunk * g.chunks_per_dim[d] + q;
      const int64_t origin = q * g.chunkshape[d];
      blocks *= (ihi - 1 - origin) / g.blockshape[d] - (ilo - origin) / g.blockshape[d] + 1;
    }
    cell.nbytes = items * g.itemsize;
    cell.chunk = inside ? chunk : -1;
    cell.decoded_bytes = inside ? blocks * g.block_nitems * g.itemsize : 0;
    cells.push_back(std::move(cell));
    // Next interval in C order.
    size_t d = n;
    while (d-- > 0) {
      if (++k[d] + 1 < cuts[d].size()) {
        break;
      }
      k[d] = 0;
      if (d == 0) {
        return cells;
      }
    }
  }
}

std::vector<size_t> GroupCells(std::span<const ReadCell> cells, int64_t min_bytes) {
  std::vector<size_t> ends;
  int64_t bytes = 0;
  for (size_t i = 0; i < cells.size(); ++i) {
    bytes += cells[i].nbytes;
    if (bytes >= min_bytes) {
      ends.push_back(i + 1);
      bytes = 0;
    }
  }
  if (ends.empty() ? !cells.empty() : ends.back() != cells.size()) {
    ends.push_back(cells.size());
  }
  return ends;
}

std::string BoxToString(const codec::Box& box) {
  std::string s = "[";
  for (size_t d = 0; d < box.start.size(); ++d) {
    if (d > 0) {
      s += ", ";
    }
    s += std::to_string(box.start[d]) + ":" + std::to_string(box.stop[d]);
  }
  return s + "]";
}

}  // namespace patchfeed::loader
