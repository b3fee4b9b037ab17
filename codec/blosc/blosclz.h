// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_BLOSC_BLOSCLZ_H_
#define PATCHFEED_CODEC_BLOSC_BLOSCLZ_H_

/// \file
/// BloscLZ (Blosc codec 0), our own decoder and encoder of its FastLZ-derived byte format.
/// Stateless: safe to call concurrently; no allocation.

#include <cstddef>
#include <cstdint>

namespace patchfeed::codec {

/// Decodes one BloscLZ stream of `src_size` bytes into exactly `dst_size` bytes at `dst`.
/// Returns true on success; false if the stream is malformed, would read past `src_size`,
/// reference data before `dst`, write past `dst_size`, or produce fewer than `dst_size` bytes.
/// Never reads or writes out of bounds, whatever the input.
bool BloscLZDecode(const std::byte* src, size_t src_size, std::byte* dst, size_t dst_size);

/// Compresses `src_size` bytes into at most `dst_capacity` bytes at `dst`, at Blosc `clevel`
/// (1..9: higher searches harder). Returns the compressed size, or 0 when the output would not
/// fit in `dst_capacity` or does not shrink the input (the caller then stores the stream raw).
size_t BloscLZEncode(int clevel, const std::byte* src, size_t src_size, std::byte* dst,
                     size_t dst_capacity);

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_BLOSC_BLOSCLZ_H_
