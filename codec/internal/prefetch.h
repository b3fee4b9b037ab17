// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_INTERNAL_PREFETCH_H_
#define PATCHFEED_CODEC_INTERNAL_PREFETCH_H_

/// \file
/// A hint for rows about to be written into memory that is seldom cached (batch slots, window
/// staging): rows a few strides apart, a pattern the hardware prefetchers do not follow. The
/// row writers ask for a row's lines a few rows before they write it.

#include <cstdint>

namespace patchfeed::internal_codec {

/// Asks for the cache lines of bytes [address, address + bytes). The write hint becomes
/// `prefetchw` only where the target has PRFCHW; the baseline and AVX2 targets patchfeed builds
/// for lack it, so GCC emits `prefetcht0` (fetch into every cache level), which is what the
/// callers' measurements ran. `address` is an integer so that it may lie outside any object
/// (rows past the end of a view): a prefetch never faults and nothing is dereferenced.
[[gnu::always_inline]] inline void PrefetchForWrite(uintptr_t address, int64_t bytes) {
  for (int64_t k = 0; k < bytes + 63; k += 64)
    __builtin_prefetch(reinterpret_cast<const void*>(address + static_cast<uintptr_t>(k)), 1, 3);
}

}  // namespace patchfeed::internal_codec

#endif  // PATCHFEED_CODEC_INTERNAL_PREFETCH_H_
