// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_BLOSC_INTERNAL_ZSTD_FRAME_CHECK_H_
#define PATCHFEED_CODEC_BLOSC_INTERNAL_ZSTD_FRAME_CHECK_H_

/// \file
/// A structural check of zstd frames that libzstd before 1.5.6 does not make. Those releases
/// (Debian 12 ships 1.5.4) return success with wrong bytes for some corrupt frames that 1.5.6,
/// which numcodecs and python-blosc bundle, rejects as "Data corruption detected":
///   - a sequence bitstream whose decoding reads past its start (1.5.4 accepts the overflow);
///   - 4-stream Huffman literals whose streams do not end exactly where their segment does;
///   - nonzero reserved bits in the sequences header, or bytes after a header of 0 sequences;
///   - a repeat offset that works out to 0 (1.5.4 silently uses 1).
/// Blosc writes zstd frames without a checksum, so nothing else catches these. The check walks
/// every entropy-coded bit of the frame (Huffman literals, FSE sequence codes and extra bits)
/// without producing output, following RFC 8878, and is run after a successful decode only
/// where LinkedZstdMissesCorruption() says the library needs it.
/// Stateless; safe to call concurrently.

#include <cstddef>
#include <span>

#include "common/status.h"

namespace patchfeed::internal_codec {

/// True when the libzstd linked at run time predates 1.5.6 and so decodes the corrupt frames
/// listed above without an error.
bool LinkedZstdMissesCorruption();

/// Checks every frame in `src` (zstd frames and skippable frames back to back, as
/// ZSTD_decompress accepts them) bit for bit. `dict` is the dictionary the frames were
/// compressed with (empty: none); its entropy tables and repeat offsets seed each frame.
/// Returns kDataLoss saying what is inconsistent and at which byte of `src`.
Status CheckZstdFrames(std::span<const std::byte> src, std::span<const std::byte> dict);

}  // namespace patchfeed::internal_codec

#endif  // PATCHFEED_CODEC_BLOSC_INTERNAL_ZSTD_FRAME_CHECK_H_
