// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_BLOSC_INTERNAL_CHUNK_FLAGS_H_
#define PATCHFEED_CODEC_BLOSC_INTERNAL_CHUNK_FLAGS_H_

/// \file
/// Flag bits of the Blosc chunk header, shared by the parser, the encoder and the frame reader.

#include <cstdint>

namespace patchfeed::internal_codec {

// Header byte 2.
inline constexpr uint8_t kFlagShuffle = 0x01;
inline constexpr uint8_t kFlagMemcpyed = 0x02;
inline constexpr uint8_t kFlagBitShuffle = 0x04;
inline constexpr uint8_t kFlagDelta = 0x08;
inline constexpr uint8_t kFlagDontSplit = 0x10;
/// Both shuffle bits set: a Blosc2 chunk with the 32-byte extended header.
inline constexpr uint8_t kFlagExtendedHeader = kFlagShuffle | kFlagBitShuffle;

// blosc2_flags (byte 0x1F) and blosc2_flags2 (byte 0x1E).
inline constexpr uint8_t kB2FlagDict = 0x01;
inline constexpr uint8_t kB2FlagLazy = 0x08;
inline constexpr uint8_t kB2FlagInstrumented = 0x80;
inline constexpr uint8_t kB2Flags2VarBlocks = 0x01;
inline constexpr uint8_t kB2SpecialZeros = 0x10;  ///< special value 1 in bits 4-6

}  // namespace patchfeed::internal_codec

#endif  // PATCHFEED_CODEC_BLOSC_INTERNAL_CHUNK_FLAGS_H_
