// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_BYTE_ARENA_H_
#define PATCHFEED_LOADER_INTERNAL_BYTE_ARENA_H_

/// \file
/// ByteArena: memory for one ring slot's fetched bytes (read_prefetch.h), handed out by bumping
/// a pointer and taken back all at once when the slot's next batch starts. Reusing the same
/// blocks batch after batch matters: fresh allocations of this size come from mmap, and every
/// page of them was faulted in and cleared by the kernel again (a third of the CPU of small
/// batches read from the page cache). Not thread-safe: a slot has one producer at a time.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace patchfeed::loader::internal_loader {

class ByteArena {
 public:
  /// `n` bytes, 64-byte aligned, uninitialized, valid until Reset.
  std::span<std::byte> Allocate(size_t n) {
    n = (n + 63) & ~size_t{63};
    while (current_ < blocks_.size() && blocks_[current_].size - used_ < n) {
      ++current_;  // the rest of this block stays unused until Reset
      used_ = 0;
    }
    if (current_ == blocks_.size()) {
      const size_t size = std::max(n, kBlockBytes);
      blocks_.push_back({std::make_unique_for_overwrite<std::byte[]>(size), size});
      used_ = 0;
    }
    std::byte* p = blocks_[current_].bytes.get() + used_;
    used_ += n;
    return {p, n};
  }

  /// Everything handed out is free again; the blocks are kept.
  void Reset() {
    current_ = 0;
    used_ = 0;
  }

 private:
  static constexpr size_t kBlockBytes = size_t{4} << 20;
  struct Block {
    std::unique_ptr<std::byte[]> bytes;
    size_t size = 0;
  };
  std::vector<Block> blocks_;
  size_t current_ = 0;  // the block being handed out
  size_t used_ = 0;     // bytes of it handed out
};

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_BYTE_ARENA_H_
