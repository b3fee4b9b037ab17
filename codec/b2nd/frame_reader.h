// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_B2ND_FRAME_READER_H_
#define PATCHFEED_CODEC_B2ND_FRAME_READER_H_

/// \file
/// Opens Blosc2 frames: contiguous (`.b2nd`, `.b2frame` files) and sparse (a directory with
/// `chunks.b2frame` and one file per chunk), and hands out their chunks.
///
/// Opening costs one open, a read of the header and one of the offsets chunk plus trailer;
/// the offsets are decoded once and kept (8 bytes per chunk). A FrameReader is immutable after
/// Open, so any number of threads may call GetChunk at once without a lock; each brings its
/// own scratch. Formats: ../shared/reference/blosc2-formats.md sections 4 and 5.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "codec/blosc/chunk_format.h"
#include "common/result.h"
#include "storage/byte_source.h"
#include "storage/store.h"

namespace patchfeed::codec {

/// The frame header's fields (section 4.1) and what follows from them.
struct FrameInfo {
  int32_t header_len = 0;
  uint64_t frame_len = 0;
  int version = 0;
  bool sparse = false;
  int64_t nbytes = 0;  ///< all chunks, uncompressed
  int64_t cbytes = 0;  ///< the chunk-data section (or the chunk files)
  int32_t typesize = 0;
  int32_t blocksize = 0;
  int32_t chunksize = 0;
  int64_t nchunks = 0;
  uint8_t compcode = 0;  ///< defaults for new chunks; every chunk carries its own
  uint8_t clevel = 0;
  int splitmode = 0;
  std::array<uint8_t, kMaxFilters> filters{};
  std::array<uint8_t, kMaxFilters> filters_meta{};
  bool use_dict = false;
  /// Fixed metalayers (name, content) in index order, e.g. ("b2nd", ...).
  std::vector<std::pair<std::string, std::vector<std::byte>>> metalayers;
  /// Names of the variable-length metalayers in the trailer.
  std::vector<std::string> vlmetalayer_names;

  /// The content of metalayer `name`, or nullptr.
  const std::vector<std::byte>* metalayer(std::string_view name) const;
  /// Whether the default pipeline for new chunks holds `filter` (each chunk has its own).
  bool has_filter(Filter filter) const { return PipelineHasFilter(filters, filter); }
};

struct FrameOpenOptions {
  storage::IoMode io_mode = storage::IoMode::kMmap;
  /// Where paths lead: local files, or a remote store whose paths are URLs.
  std::shared_ptr<const storage::Store> store = storage::LocalFiles();
  /// A Neuroglancer precomputed chunk never written reads as zeros (cloud-volume's
  /// `fill_missing=True`); false makes it an error naming the chunk's file. Zarr's missing
  /// chunks are always its fill value: zarr leaves chunks of only that value unwritten.
  bool fill_missing = true;
};

class FrameReader {
 public:
  /// Opens a contiguous frame file or a sparse frame directory. Errors name the path: kNotFound,
  /// kDataLoss for a corrupt or truncated frame (what is wrong and where), kUnimplemented for
  /// valid features not supported.
  static Result<FrameReader> Open(const std::string& path, FrameOpenOptions options = {});

  /// Reads a contiguous frame from an already opened source.
  static Result<FrameReader> FromSource(std::shared_ptr<storage::ByteSource> source);

  const FrameInfo& info() const { return info_; }
  const std::string& path() const { return path_; }
  /// The frame file (chunks.b2frame of a sparse frame, whose chunks are files of their own).
  const storage::ByteSource& source() const { return *source_; }
  int64_t nchunks() const { return info_.nchunks; }

  /// Uncompressed size of chunk `index`.
  int32_t chunk_nbytes(int64_t index) const;

  /// The bytes of chunk `index` (validated only as far as their position: pass them to
  /// ParseChunkHeader). Points into the mapping when the file is mapped; otherwise the chunk is
  /// read into `scratch`. Chunks coded in the offsets (zeros, NaN, uninitialized) come back as
  /// a synthesized 32-byte special chunk in `scratch`. `via`, when set, is read instead of the
  /// frame's own source: another view of the same file (the loader's prefetched bytes).
  /// Thread-safe.
  Result<std::span<const std::byte>> GetChunk(int64_t index, std::vector<std::byte>& scratch,
                                              const storage::ByteSource* via = nullptr) const;

  /// GetChunk for a reader that decodes only `blocks` (ascending block indices) of the chunk,
  /// with the chunk's header parsed (ParseChunkHeader) into `header`, whose storage is reused.
  /// When the frame is read with pread, only the chunk's header, block offsets, dictionary and
  /// those blocks' bytes (BlockStreamRange: all the decoder reads of a block) are read, into a
  /// `scratch` image of the whole chunk (the rest of it is left unread: decode nothing but
  /// `blocks` from it). Chunks whose header or block offsets fail ParseChunkHeader, and
  /// special or memcpyed chunks, are read whole. Errors (a header that fails ParseChunkHeader
  /// included) name the file and chunk. `via`: as for GetChunk.
  Result<std::span<const std::byte>> GetChunkBlocks(int64_t index, std::span<const int32_t> blocks,
                                                    std::vector<std::byte>& scratch,
                                                    ChunkHeader* header,
                                                    const storage::ByteSource* via = nullptr) const;

  /// kDataLoss naming the file once it shrank under its mapping: the bytes GetChunk returned
  /// since may be zeros. Readers call it after decoding (ByteSource::CheckMapping).
  Status CheckMapping() const { return source_->CheckMapping(); }

  /// Context for errors about chunk `index`: "<path>: chunk <index>".
  std::string ChunkContext(int64_t index) const;

 private:
  Status ParseHeader(std::span<const std::byte> header);
  Status ReadOffsetsAndTrailer();

  std::string path_;
  std::shared_ptr<storage::ByteSource> source_;  // the frame file (chunks.b2frame when sparse)
  std::shared_ptr<const storage::Store> store_ = storage::LocalFiles();  // a sparse frame's chunks
  FrameInfo info_;
  std::vector<int64_t> offsets_;
};

/// Special offset markers in the index (section 4.5): 0x80 | special type in the top byte.
inline constexpr bool IsSpecialOffset(int64_t offset) { return offset < 0; }

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_B2ND_FRAME_READER_H_
