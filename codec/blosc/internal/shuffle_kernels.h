// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_BLOSC_INTERNAL_SHUFFLE_KERNELS_H_
#define PATCHFEED_CODEC_BLOSC_INTERNAL_SHUFFLE_KERNELS_H_

/// \file
/// Per-instruction-set byte shuffle kernels behind codec/blosc/shuffle.h. Each lives in its own
/// translation unit compiled for its instruction set, so only the dispatcher in shuffle.cc may
/// call them, and only after ActiveSimdLevel() said the CPU has that set.
///
/// A kernel does the bulk of the work and leaves the rest to the caller: it handles the elements
/// [0, returned count) of the `num_elements * typesize` shuffled bytes, using the layout of the
/// whole buffer (byte plane k starts at `k * num_elements`). The caller finishes elements
/// [returned count, num_elements) with the scalar code, then copies the trailing bytes.
///
/// While running, a kernel may write garbage into the bytes of elements it did not report as
/// done (never beyond `num_elements * typesize`), so the caller must finish them afterwards. The
/// unshuffle kernels use this to store whole vectors at element starts that are not a vector
/// apart; it keeps odd type sizes fast.

#include <cstddef>

// The kernels are built only for x86-64 (see codec/CMakeLists.txt), so elsewhere the dispatcher
// sees no declarations and uses the scalar code.
#if defined(__x86_64__) || defined(_M_X64)
#define PATCHFEED_SHUFFLE_X86_KERNELS 1
#endif

namespace patchfeed::internal_codec {

#if defined(PATCHFEED_SHUFFLE_X86_KERNELS)

/// Shuffle / unshuffle with SSE2. Return the number of leading elements done.
size_t ShuffleSse2(size_t typesize, const std::byte* src, std::byte* dst, size_t num_elements);
size_t UnshuffleSse2(size_t typesize, const std::byte* src, std::byte* dst, size_t num_elements);

/// Shuffle / unshuffle with AVX2. Return the number of leading elements done.
size_t ShuffleAvx2(size_t typesize, const std::byte* src, std::byte* dst, size_t num_elements);
size_t UnshuffleAvx2(size_t typesize, const std::byte* src, std::byte* dst, size_t num_elements);
/// Unshuffles `rows` runs of `count` items of a shuffled block of `nitems` items (byte plane k
/// at `planes + k * nitems`): run r starts at item `first + r * src_row_step` and goes to
/// `dst + r * dst_row_step`. For typesize 2, 4 and 8 and blocks of at least 32 items; returns
/// false (nothing done) otherwise. Writes nothing but the runs.
bool UnshuffleRowsAvx2(size_t typesize, const std::byte* planes, size_t nitems, size_t first,
                       size_t count, size_t rows, size_t src_row_step, std::byte* dst,
                       size_t dst_row_step);

#endif  // PATCHFEED_SHUFFLE_X86_KERNELS

}  // namespace patchfeed::internal_codec

#endif  // PATCHFEED_CODEC_BLOSC_INTERNAL_SHUFFLE_KERNELS_H_
