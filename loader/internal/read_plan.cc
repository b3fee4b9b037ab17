// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/read_plan.h"

#include <algorithm>
#include <string>

namespace patchfeed::loader::internal_loader {
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

std::vector<ReadCell> SplitCellsAtBlocks(std::vector<ReadCell> cells, const codec::NdGeometry& g,
                                         std::span<const int64_t> dst_strides, int64_t min_bytes) {
  std::vector<ReadCell> out;
  out.reserve(cells.size());
  for (ReadCell& cell : cells) {
    const size_t n = cell.box.start.size();
    if (cell.chunk < 0 || cell.nbytes <= 2 * std::max<int64_t>(min_bytes, 1)) {
      out.push_back(std::move(cell));
      continue;
    }
    // The outermost axis whose part inside the array spans block boundaries of its chunk.
    size_t axis = n;
    std::vector<int64_t> cuts;
    for (size_t d = 0; d < n && axis == n; ++d) {
      const int64_t ilo = std::max<int64_t>(cell.box.start[d], 0);
      const int64_t ihi = std::min(cell.box.stop[d], g.shape[d]);
      const int64_t origin = ilo / g.chunkshape[d] * g.chunkshape[d];
      for (int64_t x =
               origin + (ilo - origin) / g.blockshape[d] * g.blockshape[d] + g.blockshape[d];
           x < ihi; x += g.blockshape[d]) {
        cuts.push_back(x);
      }
      if (!cuts.empty()) {
        axis = d;
      }
    }
    if (axis == n) {
      out.push_back(std::move(cell));
      continue;
    }
    // Slabs of whole blocks along `axis`, each at least min_bytes.
    const int64_t plane_bytes = cell.nbytes / cell.shape[axis];
    const int64_t lo = cell.box.start[axis], hi = cell.box.stop[axis];
    const int64_t decoded_per_plane = cell.decoded_bytes / cell.shape[axis];
    int64_t start = lo;
    for (size_t k = 0; k <= cuts.size(); ++k) {
      const int64_t stop = k < cuts.size() ? cuts[k] : hi;
      const bool last = k == cuts.size();
      if (!last && (stop - start) * plane_bytes < min_bytes) {
        continue;  // the slab grows to the next block boundary
      }
      if (!last && (hi - stop) * plane_bytes < min_bytes) {
        continue;  // the rest would be too small: it joins this slab
      }
      ReadCell piece = cell;
      piece.box.start[axis] = start;
      piece.box.stop[axis] = stop;
      piece.shape[axis] = stop - start;
      piece.dst_offset = cell.dst_offset + (start - lo) * dst_strides[axis];
      piece.nbytes = plane_bytes * (stop - start);
      piece.decoded_bytes = decoded_per_plane * (stop - start);  // whole blocks: approximate
      out.push_back(std::move(piece));
      start = stop;
      if (last) {
        break;
      }
    }
  }
  return out;
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

}  // namespace patchfeed::loader::internal_loader
