// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/box_plan.h"

#include <algorithm>

#include "common/check.h"
#include "common/str_cat.h"

namespace patchfeed::codec {
namespace {

// "[lo_0:hi_0, lo_1:hi_1, ...]" over the first n entries.
template <typename Lo, typename Hi>
std::string RangesToString(size_t n, const Lo& lo, const Hi& hi) {
  std::string s = "[";
  for (size_t d = 0; d < n; ++d)
    s += StrCat(d > 0 ? ", " : "", lo[d], ":", hi[d]);
  return s + "]";
}

}  // namespace

Status BoxExtents(const Box& box, int64_t itemsize, int64_t max_bytes,
                  std::vector<int64_t>* extents) {
  if (box.start.size() != box.stop.size()) {
    return InvalidArgumentError(
        StrCat("box has ", box.start.size(), " starts and ", box.stop.size(), " stops"));
  }
  extents->resize(box.start.size());
  int64_t bytes = itemsize;
  for (size_t d = 0; d < extents->size(); ++d) {
    int64_t& extent = (*extents)[d];
    if (__builtin_sub_overflow(box.stop[d], box.start[d], &extent) || extent < 0) {
      return InvalidArgumentError(StrCat("box range ", box.start[d], ":", box.stop[d],
                                         " in dimension ", d, " is not a valid start:stop"));
    }
    if (__builtin_mul_overflow(bytes, extent, &bytes) || bytes > max_bytes) {
      return InvalidArgumentError(
          StrCat("box of ", extents->size(), " dimensions is larger than ", max_bytes, " bytes"));
    }
  }
  return Status::Ok();
}

Result<std::vector<int64_t>> BoxExtents(const Box& box, int64_t itemsize, int64_t max_bytes) {
  std::vector<int64_t> extents;
  PATCHFEED_RETURN_IF_ERROR(BoxExtents(box, itemsize, max_bytes, &extents));
  return extents;
}

// With a filter, the padding is cut on the array's grid of blocks, continued past its border,
// and only the tiles the filter wants are kept (runs of them along the last dimension joined,
// so each stays one fill per row): a reader that needs only some blocks, such as a rotated
// window's, leaves the padding it does not want unwritten, as it does those blocks.
// A grid too fine for that (blocks of a few items, from an untrusted file) would cost a filter
// call and possibly a region per tile: past kMaxPadTiles the padding stays whole slabs, all of
// it filled, as without a filter.
void BoxPlan::KeepWantedPadTiles(int n, const NdIndex& blockshape, const BlockFilter& filter,
                                 std::vector<Region>* pads) {
  constexpr int64_t kMaxPadTiles = int64_t{1} << 16;
  const auto floor_div = [](int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); };
  if (n <= 0)
    return;
  int64_t tiles = 0;
  for (const Region& slab : *pads) {
    int64_t slab_tiles = 1;
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
      const int64_t along =
          floor_div(slab.hi[i] - 1, blockshape[i]) - floor_div(slab.lo[i], blockshape[i]) + 1;
      if (__builtin_mul_overflow(slab_tiles, along, &slab_tiles) || slab_tiles > kMaxPadTiles)
        return;
    }
    tiles += slab_tiles;
    if (tiles > kMaxPadTiles)
      return;
  }
  const auto last = static_cast<size_t>(n - 1);
  std::vector<Region> slabs;
  slabs.swap(*pads);
  for (const Region& slab : slabs) {
    NdIndex first{}, end{}, t{};
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
      first[i] = floor_div(slab.lo[i], blockshape[i]);
      end[i] = floor_div(slab.hi[i] - 1, blockshape[i]) + 1;
      t[i] = first[i];
    }
    while (true) {
      Region run;
      bool open = false;
      for (t[last] = first[last]; t[last] < end[last]; ++t[last]) {
        NdIndex lo{}, hi{};
        for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
          lo[i] = t[i] * blockshape[i];
          hi[i] = lo[i] + blockshape[i];
        }
        if (!filter.wants(filter.context, lo.data(), hi.data())) {
          if (open)
            pads->push_back(run);
          open = false;
          continue;
        }
        if (!open) {
          for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
            run.lo[i] = std::max(lo[i], slab.lo[i]);
            run.hi[i] = std::min(hi[i], slab.hi[i]);
          }
          open = true;
        }
        run.hi[last] = std::min(hi[last], slab.hi[last]);
      }
      if (open)
        pads->push_back(run);
      int d = n - 2;
      for (; d >= 0; --d) {
        const auto i = static_cast<size_t>(d);
        if (++t[i] < end[i])
          break;
        t[i] = first[i];
      }
      if (d < 0)
        break;
    }
  }
}

Status PlanBox(const NdGeometry& g, const Box& box, const BlockFilter& filter, BoxPlan* plan) {
  const int n = g.ndim;
  if (static_cast<int>(box.start.size()) != n || static_cast<int>(box.stop.size()) != n) {
    return InvalidArgumentError(StrCat("a box of ", box.start.size(), " starts and ",
                                       box.stop.size(), " stops for an array of ", n,
                                       " dimensions"));
  }
  BoxPlan& p = *plan;
  PATCHFEED_RETURN_IF_ERROR(BoxExtents(box, g.itemsize, INT64_MAX, &p.shape_));
  p.ndim_ = n;
  p.itemsize_ = g.itemsize;
  p.box_ = box;
  p.spans_.resize(static_cast<size_t>(n));
  p.pads_.clear();
  p.wanted_.clear();
  p.num_chunk_pieces_ = 0;
  // The part of the box inside the array, [lo, hi).
  NdIndex lo{}, hi{};
  bool empty = false, outside = false;
  for (int d = 0; d < n; ++d) {
    const auto i = static_cast<size_t>(d);
    p.array_shape_[i] = g.shape[i];
    p.chunkshape_[i] = g.chunkshape[i];
    p.blockshape_[i] = g.blockshape[i];
    lo[i] = std::max<int64_t>(box.start[i], 0);
    hi[i] = std::min(box.stop[i], g.shape[i]);
    empty |= p.shape_[i] == 0;
    outside |= lo[i] >= hi[i];
    p.spans_[i].clear();
  }
  if (empty)
    return Status::Ok();
  if (outside) {
    BoxPlan::Region all;
    std::copy(box.start.begin(), box.start.end(), all.lo.begin());
    std::copy(box.stop.begin(), box.stop.end(), all.hi.begin());
    p.pads_.push_back(all);
    return Status::Ok();
  }
  // Outside the array: disjoint slabs, along dimension d the parts below and above the array,
  // spanning the inner range in dimensions before d and the whole box in dimensions after it.
  for (int d = 0; d < n; ++d) {
    const auto i = static_cast<size_t>(d);
    BoxPlan::Region slab;
    for (int e = 0; e < n; ++e) {
      const auto k = static_cast<size_t>(e);
      slab.lo[k] = e < d ? lo[k] : box.start[k];
      slab.hi[k] = e < d ? hi[k] : box.stop[k];
    }
    if (box.start[i] < lo[i]) {
      BoxPlan::Region below = slab;
      below.hi[i] = lo[i];
      p.pads_.push_back(below);
    }
    if (box.stop[i] > hi[i]) {
      BoxPlan::Region above = slab;
      above.lo[i] = hi[i];
      p.pads_.push_back(above);
    }
  }
  if (filter.wants != nullptr)
    BoxPlan::KeepWantedPadTiles(n, p.blockshape_, filter, &p.pads_);
  // Per dimension, the box's interval in every chunk it crosses and the blocks it touches.
  NdIndex mask_shape{};
  p.num_chunk_pieces_ = 1;
  int64_t chunk_stride = 1;
  for (int d = n - 1; d >= 0; --d) {
    const auto i = static_cast<size_t>(d);
    const int64_t c = g.chunkshape[i], b = g.blockshape[i];
    for (int64_t q = lo[i] / c; q * c < hi[i]; ++q) {
      BoxPlan::AxisSpan s;
      s.chunk = q;
      s.origin = q * c;
      s.lo = std::max(lo[i], s.origin);
      s.hi = std::min(hi[i], s.origin + c);
      s.block_lo = (s.lo - s.origin) / b;
      s.block_hi = (s.hi - 1 - s.origin) / b + 1;
      s.mask_lo = mask_shape[i];
      mask_shape[i] += s.block_hi - s.block_lo;
      p.spans_[i].push_back(s);
    }
    p.chunk_stride_[i] = chunk_stride;
    chunk_stride *= g.chunks_per_dim[i];
    p.num_chunk_pieces_ *= static_cast<int64_t>(p.spans_[i].size());
  }
  if (filter.wants == nullptr)
    return Status::Ok();
  // Ask the filter about every block the box touches, piece by piece. Each touched block holds
  // at least one item of the box, so the mask is no larger than the destination's items.
  int64_t mask_size = 1;
  for (int d = n - 1; d >= 0; --d) {
    p.mask_stride_[static_cast<size_t>(d)] = mask_size;
    mask_size *= mask_shape[static_cast<size_t>(d)];
  }
  p.wanted_.assign(static_cast<size_t>(mask_size), 0);
  for (int64_t i = 0; i < p.num_chunk_pieces_; ++i) {
    const BoxPiece piece = p.piece(i);
    NdIndex k{}, blo{}, bhi{};
    for (int d = 0; d < n; ++d)
      k[static_cast<size_t>(d)] = piece.block_lo[static_cast<size_t>(d)];
    while (true) {
      int64_t pos = 0;
      for (int d = 0; d < n; ++d) {
        const auto j = static_cast<size_t>(d);
        blo[j] = piece.origin[j] + k[j] * p.blockshape_[j];
        bhi[j] = blo[j] + p.blockshape_[j];
        pos += (piece.mask_origin[j] + k[j]) * p.mask_stride_[j];
      }
      p.wanted_[static_cast<size_t>(pos)] = filter.wants(filter.context, blo.data(), bhi.data());
      int d = n - 1;
      for (; d >= 0; --d) {
        const auto j = static_cast<size_t>(d);
        if (++k[j] < piece.block_hi[j])
          break;
        k[j] = piece.block_lo[j];
      }
      if (d < 0)
        break;
    }
  }
  return Status::Ok();
}

BoxPiece BoxPlan::piece(int64_t index) const {
  PATCHFEED_DCHECK(index >= 0 && index < num_pieces());
  BoxPiece p;
  int64_t items = 1;
  if (index >= num_chunk_pieces_) {
    const Region& r = pads_[static_cast<size_t>(index - num_chunk_pieces_)];
    p.lo = r.lo;
    p.hi = r.hi;
    for (int d = 0; d < ndim_; ++d)
      items *= r.hi[static_cast<size_t>(d)] - r.lo[static_cast<size_t>(d)];
    p.nbytes = items * itemsize_;
    return p;
  }
  // Mixed radix: the last dimension's span varies fastest (C order of the chunks).
  p.chunk = 0;
  int64_t rest = index;
  for (int d = ndim_ - 1; d >= 0; --d) {
    const auto i = static_cast<size_t>(d);
    const auto count = static_cast<int64_t>(spans_[i].size());
    const AxisSpan& s = spans_[i][static_cast<size_t>(rest % count)];
    rest /= count;
    p.lo[i] = s.lo;
    p.hi[i] = s.hi;
    p.origin[i] = s.origin;
    p.block_lo[i] = s.block_lo;
    p.block_hi[i] = s.block_hi;
    p.mask_origin[i] = s.mask_lo - s.block_lo;
    p.chunk += s.chunk * chunk_stride_[i];
    items *= s.hi - s.lo;
  }
  p.nbytes = items * itemsize_;
  return p;
}

bool BoxPlan::wants(const BoxPiece& p, const NdIndex& k) const {
  if (wanted_.empty())
    return true;
  int64_t pos = 0;
  for (int d = 0; d < ndim_; ++d) {
    const auto i = static_cast<size_t>(d);
    pos += (p.mask_origin[i] + k[i]) * mask_stride_[i];
  }
  return wanted_[static_cast<size_t>(pos)] != 0;
}

bool BoxPlan::Fits(const NdGeometry& g) const {
  if (g.ndim != ndim_ || g.itemsize != itemsize_)
    return false;
  for (int d = 0; d < ndim_; ++d) {
    const auto i = static_cast<size_t>(d);
    if (g.shape[i] != array_shape_[i] || g.chunkshape[i] != chunkshape_[i] ||
        g.blockshape[i] != blockshape_[i]) {
      return false;
    }
  }
  return true;
}

int BoxPlan::block_row_axis(const BoxPiece& p) const {
  if (p.chunk < 0)
    return -1;
  for (int d = 0; d < ndim_; ++d) {
    if (p.block_hi[static_cast<size_t>(d)] - p.block_lo[static_cast<size_t>(d)] > 1)
      return d;
  }
  return -1;
}

int64_t BoxPlan::num_block_rows(const BoxPiece& p) const {
  const int axis = block_row_axis(p);
  return axis < 0 ? 1
                  : p.block_hi[static_cast<size_t>(axis)] - p.block_lo[static_cast<size_t>(axis)];
}

BoxPiece BoxPlan::BlockRows(const BoxPiece& p, int64_t row_begin, int64_t row_end) const {
  PATCHFEED_DCHECK(0 <= row_begin && row_begin < row_end && row_end <= num_block_rows(p));
  const int axis = block_row_axis(p);
  if (axis < 0)
    return p;
  const auto a = static_cast<size_t>(axis);
  BoxPiece rows = p;
  rows.block_lo[a] = p.block_lo[a] + row_begin;
  rows.block_hi[a] = p.block_lo[a] + row_end;
  rows.lo[a] = std::max(p.lo[a], p.origin[a] + rows.block_lo[a] * blockshape_[a]);
  rows.hi[a] = std::min(p.hi[a], p.origin[a] + rows.block_hi[a] * blockshape_[a]);
  rows.nbytes = p.nbytes / (p.hi[a] - p.lo[a]) * (rows.hi[a] - rows.lo[a]);
  return rows;
}

BoxPiece BoxPlan::Block(const BoxPiece& p, const NdIndex& k) const {
  BoxPiece block = p;
  int64_t items = 1;
  for (size_t a = 0; a < static_cast<size_t>(ndim_); ++a) {
    PATCHFEED_DCHECK(p.block_lo[a] <= k[a] && k[a] < p.block_hi[a]);
    block.block_lo[a] = k[a];
    block.block_hi[a] = k[a] + 1;
    block.lo[a] = std::max(p.lo[a], p.origin[a] + k[a] * blockshape_[a]);
    block.hi[a] = std::min(p.hi[a], p.origin[a] + (k[a] + 1) * blockshape_[a]);
    items *= block.hi[a] - block.lo[a];
  }
  block.nbytes = items * itemsize_;
  return block;
}

std::string RegionToString(int ndim, const NdIndex& lo, const NdIndex& hi) {
  return RangesToString(static_cast<size_t>(ndim), lo, hi);
}

std::string BoxToString(const Box& box) {
  return RangesToString(std::min(box.start.size(), box.stop.size()), box.start, box.stop);
}

}  // namespace patchfeed::codec
