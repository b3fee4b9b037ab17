// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// nnU-Net 2.8's block and chunk rule (`comp_blosc2_params` with its default arguments).
//
// The rule, for image (c, x, y, z), spatial patch p (2-D patches become (1, py, pz)), item size s:
//  * target_d = max(1, min(image_d, floor(1.5 * p_d))), computed in double as Python does;
//  * block = (1, min(p2(p_d), image_d)...), p2 = next power of two; while the block's bytes
//    exceed 128 KiB, the spatial axis (with extent > 1) of largest block_d / target_d is cut to
//    the largest power of two below its extent, ties going to the later axis;
//  * chunk = block, then repeatedly grow by one block step (clamped to image and target) the
//    axis of smallest chunk_d / target_d (ties: larger image extent, then lower axis), among
//    axes below image and target, not x for 2-D patches, not axes with patch extent 1, and only
//    if the grown chunk stays within 6 MiB; stop when no axis can grow.
// Ratios are compared as doubles exactly like nnU-Net's Python floats (exact for extents below
// 2^53); byte counts saturate instead of overflowing, which changes no comparison with the caps.
//
// The declared interface has no error channel: where nnU-Net raises ValueError (shape not 4-D,
// patch not 2 or 3 values, a non-positive extent or item size, or an item larger than the block
// cap) this returns empty shapes.

#include "loader/nnunet_layout.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace patchfeed::loader {
namespace {

constexpr int64_t kMaxBlockBytes = 128 * 1024;
constexpr int64_t kMaxChunkBytes = 6 * 1024 * 1024;
constexpr double kMaxChunkToPatchRatio = 1.5;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr size_t kNoAxis = 3;  // "no axis picked yet" among the three

// Smallest power of two >= n (1 for n <= 1); saturates to kInt64Max above 2^62.
int64_t CeilPow2(int64_t n) {
  if (n <= 1)
    return 1;
  if (n > (int64_t{1} << 62))
    return kInt64Max;
  int64_t p = 1;
  while (p < n)
    p <<= 1;
  return p;
}

// Largest power of two < n (1 for n <= 1): Python's 1 << ((n - 1).bit_length() - 1).
int64_t PrevPow2Below(int64_t n) {
  if (n <= 1)
    return 1;
  int64_t p = 1;
  while (p <= (n - 1) / 2)
    p <<= 1;
  return p;
}

int64_t SaturatingMul(int64_t a, int64_t b) {
  if (a != 0 && b > kInt64Max / a)
    return kInt64Max;
  return a * b;
}

// Bytes of a spatial extent triple (the channel extent is always 1), saturated.
int64_t Nbytes(const std::array<int64_t, 3>& e, int64_t itemsize) {
  int64_t n = itemsize;
  for (int64_t v : e)
    n = SaturatingMul(n, v);
  return n;
}

double Ratio(int64_t a, int64_t b) { return static_cast<double>(a) / static_cast<double>(b); }

}  // namespace

ChunkBlockShapes NnUNetChunkBlockShapes(const std::vector<int64_t>& shape,
                                        const std::vector<int64_t>& patch_size, int64_t itemsize) {
  if (shape.size() != 4 || (patch_size.size() != 2 && patch_size.size() != 3) || itemsize <= 0) {
    return {};
  }
  for (int64_t v : shape) {
    if (v <= 0)
      return {};
  }
  for (int64_t v : patch_size) {
    if (v <= 0)
      return {};
  }
  const bool is_2d_patch = patch_size.size() == 2;
  std::array<int64_t, 3> patch{};
  if (is_2d_patch) {
    patch = {1, patch_size[0], patch_size[1]};
  } else {
    patch = {patch_size[0], patch_size[1], patch_size[2]};
  }
  const std::array<int64_t, 3> image = {shape[1], shape[2], shape[3]};

  std::array<int64_t, 3> target{};
  for (size_t ax = 0; ax < 3; ++ax) {
    // int(math.floor(1.5 * p)) with p converted to double, as Python does it.
    const double t = std::floor(kMaxChunkToPatchRatio * static_cast<double>(patch[ax]));
    const int64_t t_int = t >= 9.2233720368547758e18 ? kInt64Max : static_cast<int64_t>(t);
    target[ax] = std::max<int64_t>(1, std::min(image[ax], t_int));
  }

  // Block: next power of two of the patch, clamped to the image, halved until it fits the cap.
  std::array<int64_t, 3> block{};
  for (size_t ax = 0; ax < 3; ++ax)
    block[ax] = std::min(CeilPow2(patch[ax]), image[ax]);
  const int64_t block_cap = std::min(kMaxBlockBytes, kMaxChunkBytes);
  while (Nbytes(block, itemsize) > block_cap) {
    size_t picked = kNoAxis;
    for (size_t ax = 0; ax < 3; ++ax) {
      if (block[ax] <= 1)
        continue;
      // max() by (ratio, ax): a later axis wins ties.
      if (picked == kNoAxis ||
          Ratio(block[ax], target[ax]) >= Ratio(block[picked], target[picked])) {
        picked = ax;
      }
    }
    if (picked == kNoAxis)
      return {};  // one item exceeds the block cap
    block[picked] = PrevPow2Below(block[picked]);
  }

  // Chunk: grow block-step by block-step the least covered axis while it fits.
  std::array<int64_t, 3> chunk = block;
  while (true) {
    size_t picked = kNoAxis;
    int64_t picked_extent = 0;
    for (size_t ax = 0; ax < 3; ++ax) {
      if (is_2d_patch && ax == 0)
        continue;
      if (patch[ax] == 1)
        continue;
      if (chunk[ax] >= image[ax] || chunk[ax] >= target[ax])
        continue;
      const int64_t grown = std::min({chunk[ax] + block[ax], image[ax], target[ax]});
      if (grown == chunk[ax])
        continue;
      std::array<int64_t, 3> candidate = chunk;
      candidate[ax] = grown;
      if (Nbytes(candidate, itemsize) > kMaxChunkBytes)
        continue;
      // min() by (coverage, -image extent, ax): axes are visited in increasing order, so a
      // later axis replaces the pick only when strictly better on the first two keys.
      if (picked != kNoAxis) {
        const double r = Ratio(chunk[ax], target[ax]);
        const double r_picked = Ratio(chunk[picked], target[picked]);
        if (r > r_picked || (r == r_picked && image[ax] <= image[picked]))
          continue;
      }
      picked = ax;
      picked_extent = grown;
    }
    if (picked == kNoAxis)
      break;
    chunk[picked] = picked_extent;
  }

  ChunkBlockShapes out;
  out.blockshape = {1};
  out.chunkshape = {1};
  for (size_t ax = 0; ax < 3; ++ax) {
    out.blockshape.push_back(static_cast<int32_t>(block[ax]));
    out.chunkshape.push_back(static_cast<int32_t>(chunk[ax]));
  }
  return out;
}

}  // namespace patchfeed::loader
