// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
//
// AVX2 unshuffle of runs of items inside a shuffled block: the rows of a patch that one block
// holds (UnshuffleItemRows), each written straight to its place in the destination.

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "codec/blosc/internal/shuffle_avx2_vectors.h"
#include "codec/blosc/internal/shuffle_kernels.h"
#include "codec/internal/prefetch.h"

namespace patchfeed::internal_codec {
namespace {

using namespace avx2;  // NOLINT: the vector primitives of shuffle_avx2_vectors.h

// Items [off, off + count) of the batch whose planes start at `planes` (count <= kBatch - off)
// to dst, straight from registers: the batch's items as kTs whole vectors in item order, each
// stored whole when all of its items are wanted and under a mask of 4- or 8-byte lanes when
// some are (2-byte items: a lane holds two, and an item whose lane is only half wanted is
// copied from the planes). The partial rows of a patch (a block row it crosses only in part)
// are ~40 % of its rows; through a buffer and memcpy each paid a call and a store-forwarding
// stall.
template <size_t kTs>
PATCHFEED_AVX2_INLINE void UnshufflePartialBatch(const std::byte* planes, size_t stride, size_t off,
                                                 size_t count, std::byte* dst) {
  static_assert(kTs == 2 || kTs == 4 || kTs == 8);
  Vec v[kTs];
#pragma GCC unroll 8
  for (size_t k = 0; k < kTs; ++k)
    v[k] = Load(planes + k * stride);
  Interleave<kTs>(v);
  // As UnshufflePow2Strided<kTs, true> stores them: vector q holds bytes [32q, 32q + 32).
  Vec out[kTs];
#pragma GCC unroll 4
  for (size_t j = 0; j < kTs / 2; ++j) {
    out[j] = _mm256_permute2x128_si256(v[2 * j], v[2 * j + 1], 0x20);
    out[kTs / 2 + j] = _mm256_permute2x128_si256(v[2 * j], v[2 * j + 1], 0x31);
  }
  constexpr size_t kPer = 32 / kTs;  // items per vector
  const size_t end = off + count;
  const auto base = reinterpret_cast<uintptr_t>(dst) - off * kTs;  // where item 0 would go
#pragma GCC unroll 8
  for (size_t q = 0; q < kTs; ++q) {
    const size_t lo = q * kPer;
    if (lo + kPer <= off || lo >= end)
      continue;
    auto* d = reinterpret_cast<std::byte*>(base + lo * kTs);
    if (lo >= off && lo + kPer <= end) {
      Store(d, out[q]);
      continue;
    }
    // Masked-off lanes are neither read nor written, so d may point before dst.
    if constexpr (kTs == 8) {
      const Vec item = _mm256_add_epi64(_mm256_setr_epi64x(0, 1, 2, 3),
                                        _mm256_set1_epi64x(static_cast<int64_t>(lo)));
      const Vec mask = _mm256_and_si256(
          _mm256_cmpgt_epi64(item, _mm256_set1_epi64x(static_cast<int64_t>(off) - 1)),
          _mm256_cmpgt_epi64(_mm256_set1_epi64x(static_cast<int64_t>(end)), item));
      _mm256_maskstore_epi64(reinterpret_cast<long long*>(d), mask, out[q]);
    } else {
      // Lane L holds items [lo + L * k, lo + L * k + k), k = kItemsPerLane; it is stored when
      // all of them are wanted.
      constexpr int kItemsPerLane = 4 / static_cast<int>(kTs);
      const Vec item =
          _mm256_add_epi32(_mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                              _mm256_set1_epi32(kItemsPerLane)),
                           _mm256_set1_epi32(static_cast<int>(lo)));
      const Vec mask = _mm256_and_si256(
          _mm256_cmpgt_epi32(item, _mm256_set1_epi32(static_cast<int>(off) - 1)),
          _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(end) - kItemsPerLane + 1), item));
      _mm256_maskstore_epi32(reinterpret_cast<int*>(d), mask, out[q]);
    }
  }
  if constexpr (kTs == 2) {
    // An odd first or end leaves one item in a half-wanted lane: copied from the planes.
    const auto copy_item = [&](size_t i) {
      dst[(i - off) * 2] = planes[i];
      dst[(i - off) * 2 + 1] = planes[stride + i];
    };
    if (off % 2 != 0)
      copy_item(off);
    if (end % 2 != 0)  // item end - 1 is even; off == end - 1 is even too, so not copied above
      copy_item(end - 1);
  }
}

// Rows ahead of the one being written whose destination lines are prefetched (prefetch.h). The
// rows of a patch land in memory that is seldom cached (a ring slot or a window's staging, tens
// of MB, written once per batch), each a few lines a patch row apart (512 bytes for 128
// floats). Asking for them four rows ahead overlaps their
// misses with the unshuffle: plain reads of 128^3 float patches 10-17 % faster on one thread.
constexpr size_t kAhead = 4;

// Rows of `count` items: whole vectors, then one more vector ending at the row's last item
// (overlapping the previous one: the same bytes again). A row shorter than a vector is
// unshuffled as a whole vector from a start that stays inside the block's planes, and its
// items stored from registers (UnshufflePartialBatch).
template <size_t kTs>
void UnshuffleRowsPow2(const std::byte* planes, size_t nitems, size_t first, size_t count,
                       size_t rows, size_t src_row_step, std::byte* dst, size_t dst_row_step) {
  const auto row_bytes = static_cast<int64_t>(count * kTs);
  const auto prefetch_row = [row_bytes](const std::byte* row) {
    PrefetchForWrite(reinterpret_cast<uintptr_t>(row), row_bytes);
  };
  for (size_t r = 0; r < std::min<size_t>(rows, kAhead); ++r)
    prefetch_row(dst + r * dst_row_step);
  for (size_t r = 0; r < rows; ++r, first += src_row_step, dst += dst_row_step) {
    if (r + kAhead < rows)
      prefetch_row(dst + kAhead * dst_row_step);
    if (count < kBatch) {
      const size_t start = std::min(first, nitems - kBatch);
      UnshufflePartialBatch<kTs>(planes + start, nitems, first - start, count, dst);
      continue;
    }
    const size_t done = UnshufflePow2Strided<kTs, false>(planes + first, nitems, dst, count);
    if (done < count) {
      const size_t last = count - kBatch;
      UnshufflePow2Strided<kTs, false>(planes + first + last, nitems, dst + last * kTs, kBatch);
    }
  }
}

}  // namespace

bool UnshuffleRowsAvx2(size_t typesize, const std::byte* planes, size_t nitems, size_t first,
                       size_t count, size_t rows, size_t src_row_step, std::byte* dst,
                       size_t dst_row_step) {
  if (nitems < kBatch || count == 0)
    return false;
  switch (typesize) {
    case 2:
      UnshuffleRowsPow2<2>(planes, nitems, first, count, rows, src_row_step, dst, dst_row_step);
      return true;
    case 4:
      UnshuffleRowsPow2<4>(planes, nitems, first, count, rows, src_row_step, dst, dst_row_step);
      return true;
    case 8:
      UnshuffleRowsPow2<8>(planes, nitems, first, count, rows, src_row_step, dst, dst_row_step);
      return true;
    default:
      return false;
  }
}

}  // namespace patchfeed::internal_codec
