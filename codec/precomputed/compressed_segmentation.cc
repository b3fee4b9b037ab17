// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/precomputed/compressed_segmentation.h"

#include <algorithm>
#include <cstring>

#include "common/str_cat.h"

namespace patchfeed::codec::precomputed {
namespace {

uint32_t Word(std::span<const std::byte> chunk, uint64_t index) {
  const std::byte* p = chunk.data() + 4 * index;
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

bool ValidBits(uint32_t bits) {
  return bits == 0 || bits == 1 || bits == 2 || bits == 4 || bits == 8 || bits == 16 || bits == 32;
}

// One block's encoded indexes and its table, both checked to lie in the chunk (the table's
// end is the chunk's: its length is not stored).
struct BlockCode {
  const std::byte* values;
  uint32_t bits;
  const std::byte* table;
  uint64_t table_entries;
};

// Voxels first .. first + n - 1 (in the block's order) to `out`, `stride` bytes apart; false
// when an index passes the table.
template <typename T>
bool DecodeRow(const BlockCode& code, uint64_t first, int64_t n, std::byte* out, int64_t stride) {
  const auto value = [&](uint64_t index) {
    T v;
    std::memcpy(&v, code.table + index * sizeof(T), sizeof(T));
    return v;
  };
  if (code.bits == 0) {
    if (code.table_entries == 0)
      return false;
    const T v = value(0);
    for (int64_t x = 0; x < n; ++x)
      std::memcpy(out + x * stride, &v, sizeof(T));
    return true;
  }
  const uint32_t bits = code.bits;
  const uint32_t mask = bits == 32 ? ~uint32_t{0} : (uint32_t{1} << bits) - 1;
  uint64_t bit = first * bits;
  for (int64_t x = 0; x < n; ++x, bit += bits) {
    uint32_t word;
    std::memcpy(&word, code.values + 4 * (bit / 32), 4);  // little-endian, as stored
    const uint32_t index = (word >> (bit % 32)) & mask;
    if (index >= code.table_entries)
      return false;
    const T v = value(index);
    std::memcpy(out + x * stride, &v, sizeof(T));
  }
  return true;
}

}  // namespace

Status DecodeCompressedSegmentation(std::span<const std::byte> chunk, int64_t itemsize,
                                    const Vec3& size, const Vec3& block, int64_t channel,
                                    const Vec3& lo, const Vec3& hi, const VoxelsOut& out) {
  const uint64_t words = chunk.size() / 4;
  const auto value_words = static_cast<uint64_t>(itemsize / 4);
  if (static_cast<uint64_t>(channel) >= words)
    return DataLossError(StrCat("compressed_segmentation: no header for channel ", channel));
  const uint64_t base = Word(chunk, static_cast<uint64_t>(channel));
  Vec3 grid{};
  uint64_t blocks = 1;
  for (size_t d = 0; d < 3; ++d) {
    grid[d] = (size[d] + block[d] - 1) / block[d];
    blocks *= static_cast<uint64_t>(grid[d]);
  }
  if (base > words || 2 * blocks > words - base) {
    return DataLossError(StrCat("compressed_segmentation: channel ", channel, "'s ", blocks,
                                " block headers at word ", base, " pass the chunk's ", words,
                                " words"));
  }
  const uint64_t block_voxels = static_cast<uint64_t>(block[0] * block[1] * block[2]);
  // Every block the region touches, and in it the voxels of the region.
  Vec3 b{};
  for (b[2] = lo[2] / block[2]; b[2] * block[2] < hi[2]; ++b[2]) {
    for (b[1] = lo[1] / block[1]; b[1] * block[1] < hi[1]; ++b[1]) {
      for (b[0] = lo[0] / block[0]; b[0] * block[0] < hi[0]; ++b[0]) {
        const uint64_t number = static_cast<uint64_t>(b[0] + grid[0] * (b[1] + grid[1] * b[2]));
        const uint32_t h0 = Word(chunk, base + 2 * number);
        const uint32_t h1 = Word(chunk, base + 2 * number + 1);
        const uint64_t table = base + (h0 & 0xffffff);
        const uint32_t bits = h0 >> 24;
        const uint64_t values = base + h1;
        if (!ValidBits(bits)) {
          return DataLossError(StrCat("compressed_segmentation: block ", number, " of channel ",
                                      channel, " says ", bits,
                                      " bits per index (0, 1, 2, 4, 8, 16 or 32)"));
        }
        const uint64_t packed = (block_voxels * bits + 31) / 32;
        if (values > words || packed > words - values || table >= words) {
          return DataLossError(StrCat("compressed_segmentation: block ", number, " of channel ",
                                      channel, ": its indexes or table pass the chunk's ", words,
                                      " words"));
        }
        const uint64_t table_entries = (words - table) / value_words;
        Vec3 from{}, to{};
        for (size_t d = 0; d < 3; ++d) {
          from[d] = std::max(lo[d], b[d] * block[d]);
          to[d] = std::min(hi[d], (b[d] + 1) * block[d]);
        }
        const BlockCode code{chunk.data() + 4 * values, bits, chunk.data() + 4 * table,
                             table_entries};
        for (int64_t z = from[2]; z < to[2]; ++z) {
          for (int64_t y = from[1]; y < to[1]; ++y) {
            std::byte* row = out.data + (y - lo[1]) * out.stride[1] + (z - lo[2]) * out.stride[2] +
                             (from[0] - lo[0]) * out.stride[0];
            // The row's first voxel in the block's x-fastest order.
            const auto first = static_cast<uint64_t>(
                (from[0] - b[0] * block[0]) +
                block[0] * ((y - b[1] * block[1]) + block[1] * (z - b[2] * block[2])));
            const bool ok =
                itemsize == 4
                    ? DecodeRow<uint32_t>(code, first, to[0] - from[0], row, out.stride[0])
                    : DecodeRow<uint64_t>(code, first, to[0] - from[0], row, out.stride[0]);
            if (!ok) {
              return DataLossError(StrCat("compressed_segmentation: block ", number, " of channel ",
                                          channel, ": an index passes its table"));
            }
          }
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace patchfeed::codec::precomputed
