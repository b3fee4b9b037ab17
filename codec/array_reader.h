// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_ARRAY_READER_H_
#define PATCHFEED_CODEC_ARRAY_READER_H_

/// \file
/// Any N-d array patchfeed reads boxes from: a `.b2nd` frame (NdArrayReader, b2nd/nd_reader.h),
/// a zarr v2/v3 array (ZarrArrayReader, zarr/zarr_reader.h) or a Neuroglancer precomputed scale
/// (precomputed/reader.h); OpenArray (open_array.h) opens one of them by its format. All
/// describe themselves as the same chunk-and-block geometry, so one planner (box_plan.h) serves
/// them all and the loader never asks which format it reads:
///
///   | format            | chunk            | block                        |
///   |-------------------|------------------|------------------------------|
///   | `.b2nd`           | Blosc2 chunk     | Blosc2 block (an N-d box)    |
///   | zarr, unsharded   | chunk file       | the whole chunk              |
///   | zarr v3, sharded  | shard file       | inner chunk                  |
///   | precomputed       | chunk file       | the whole chunk              |
///
/// The base class holds what every format shares: checking a read against the plan, the pad
/// regions, and whole-box reads. A format implements ReadChunkPiece (one chunk's part of a
/// box) and says what an open array costs (Footprint).
///
/// Readers are immutable after opening: any number of threads may read at once, each with its
/// own BoxReadScratch. No reader spawns a thread.
///
/// This header is the formats' shared interface: it includes no format's folder.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "codec/box_plan.h"
#include "codec/nd_geometry.h"
#include "common/result.h"
#include "common/strided_view.h"
#include "storage/byte_source.h"
#include "storage/store.h"

namespace patchfeed::codec {

/// A strided N-d destination: the codec's name for common's StridedView.
using NdView = StridedView;

/// Decoding state a format keeps in a worker's BoxReadScratch: codec contexts and buffers that
/// grow to the largest unit seen (the Blosc decoders of `.b2nd` and zarr arrays,
/// blosc/read_context.h). A format derives its own and gets a worker's with
/// BoxReadScratch::Context<T>(), so this interface needs no format's types.
class ReadContext {
 public:
  virtual ~ReadContext() = default;
  /// Running totals of this context's work, for metrics: the compressed bytes it read and the
  /// bytes it decoded from them (0 where a format does not count). Callers take differences.
  virtual int64_t compressed_bytes_read() const { return 0; }
  virtual int64_t bytes_decoded() const { return 0; }
};

/// Per-worker scratch for box reads: keep one per thread and reuse it.
struct BoxReadScratch {
  BoxPlan plan;                        ///< ReadBox's plan
  std::vector<std::byte> chunk;        ///< chunks read with pread, synthesized special chunks
  std::vector<int32_t> wanted_blocks;  ///< the blocks of the chunk being read
  std::vector<std::byte> whole;        ///< whole chunks, when DELTA ties blocks to block 0
  std::vector<std::byte> stage;        ///< a zarr chunk between its codecs
  std::vector<std::byte> index;        ///< a zarr shard's index
  /// Set by a caller that fetched the bytes ahead (the loader's reads in flight): chunks are
  /// read through it instead of the array's own file(). Not owned; only arrays whose file()
  /// is set honour it.
  const storage::ByteSource* source = nullptr;
  /// The same for arrays whose chunks are files of their own (chunk_store() set): chunk files
  /// are opened in it instead of the array's store. Not owned.
  const storage::Store* store = nullptr;

  /// This worker's context of type `T` (derived from ReadContext), made on first use and kept:
  /// codec contexts are created once per worker, not once per read.
  template <typename T>
  T& Context() {
    static_assert(std::is_base_of_v<ReadContext, T>);
    const void* tag = TagOf<T>();
    for (ContextSlot& slot : contexts_) {
      if (slot.tag == tag)
        return static_cast<T&>(*slot.context);
    }
    contexts_.push_back({tag, std::make_unique<T>()});
    return static_cast<T&>(*contexts_.back().context);
  }

  /// The totals of ReadContext over this scratch's contexts, for metrics.
  int64_t compressed_bytes_read() const;
  int64_t bytes_decoded() const;

 private:
  // One address per context type: how contexts are told apart without RTTI. Not const, so
  // that no linker folds two types' tags into one (identical read-only data may be merged).
  template <typename T>
  static const void* TagOf() {
    static char tag = 0;
    return &tag;
  }
  struct ContextSlot {
    const void* tag = nullptr;
    std::unique_ptr<ReadContext> context;
  };
  std::vector<ContextSlot> contexts_;
};

/// What an open array costs a reader: the loader sizes its memory budget from it.
struct ArrayFootprint {
  /// Compressed over uncompressed bytes (1 when unknown): the bytes-read metric.
  double compression_ratio = 1.0;
  /// Memory the open array keeps (headers, decoded offsets, bookkeeping).
  int64_t open_state_bytes = 0;
  /// The largest unit decoded at once, and the largest chunk read whole, uncompressed:
  /// per-worker scratch.
  int64_t block_bytes = 0;
  int64_t chunk_bytes = 0;
  /// Whether reads decode whole chunks into scratch (Blosc2 DELTA; zarr chunks that are not
  /// Blosc): one chunk_bytes buffer per worker.
  bool whole_chunks = false;
  /// Chunk files that reads take whole hold at most this many bytes (precomputed's unsharded
  /// chunks): a reader fetching ahead asks for that much with a file's open. 0: reads take
  /// parts of chunk files (Blosc blocks, a shard's index and chunks).
  int64_t whole_file_bytes = 0;
};

/// A buffer for `box` of `itemsize`-byte items in C order, and the box's extents in
/// `*extents`; kResourceExhausted naming `path` and the size when it cannot be allocated,
/// kInvalidArgument for a box that is not one.
Result<std::vector<std::byte>> AllocateBox(const std::string& path, const Box& box,
                                           int64_t itemsize, std::vector<int64_t>* extents);

class ArrayReader {
 public:
  virtual ~ArrayReader() = default;

  /// The path the array was opened from, for messages.
  const std::string& path() const { return path_; }
  const NdGeometry& geometry() const { return geom_; }
  /// NumPy dtype string of the items a read returns ("<f4", "|b1"; may be empty for `.b2nd`
  /// files without one). Zarr readers return little-endian items (they swap big-endian
  /// stores); `.b2nd` items are as stored, in their dtype's byte order.
  const std::string& dtype() const { return dtype_; }
  int64_t itemsize() const { return geom_.itemsize; }
  /// "b2nd", "zarr v2" or "zarr v3", for `info` and messages.
  virtual const char* format() const = 0;
  /// Where index 0 of each axis lies in the array's own coordinates: a precomputed scale's
  /// `voxel_offset` (as (0, z, y, x)); zeros for every other format. Boxes are indexes from 0.
  virtual std::vector<int64_t> origin() const {
    return std::vector<int64_t>(static_cast<size_t>(geom_.ndim), 0);
  }
  virtual ArrayFootprint Footprint() const = 0;
  /// kDataLoss once bytes read may have gone bad under the reader (a mapped file that shrank,
  /// mapping_fault_guard.h); reads report it rather than what the decoders made of them.
  virtual Status CheckMapping() const { return Status::Ok(); }
  /// The one file every chunk is read from (a contiguous `.b2nd` frame), for a caller that
  /// fetches bytes ahead (BoxReadScratch::source); nullptr when chunks are files of their own
  /// (zarr stores, sparse frames).
  virtual const storage::ByteSource* file() const { return nullptr; }
  /// The store chunk files are opened in when chunks (zarr chunks and shards) are files of
  /// their own, for a caller that opens and fetches them ahead (BoxReadScratch::store); nullptr
  /// otherwise. A sharded array's inner chunks (its blocks) are stored apart, each with its own
  /// header: such a caller learns one's bytes before the next's.
  virtual const storage::Store* chunk_store() const { return nullptr; }

  /// Reads `box` into `dst`, whose shape must equal the box's extents. `pad_item` (itemsize
  /// bytes) fills the parts outside the array. Errors name the file, the chunk and the block.
  Status ReadBox(const Box& box, const NdView& dst, std::span<const std::byte> pad_item,
                 BoxReadScratch& scratch) const;

  /// ReadBox for a caller that needs only some of the box: blocks that `filter` declines are
  /// not read or decoded, and their part of `dst` gets `pad_item` instead (or the array's
  /// value where it costs nothing, as in chunks of one repeated value).
  Status ReadBox(const Box& box, const NdView& dst, std::span<const std::byte> pad_item,
                 BoxReadScratch& scratch, const BlockFilter& filter) const;

  /// Convenience: the box in C order in a new vector.
  Result<std::vector<std::byte>> ReadBox(const Box& box, std::span<const std::byte> pad_item) const;

  /// Reads one piece of `plan` (PlanBox over this array's geometry) into `dst`, the destination
  /// of the whole planned box (its shape is plan.shape()): the piece's chunk, only its blocks
  /// (only their bytes with pread), or its pad region. Pieces are disjoint: threads may read
  /// different pieces into one `dst` at once, each with its own scratch. Errors name the file,
  /// the chunk and the block; kInvalidArgument when plan, piece, `dst` or `pad_item` do not
  /// fit this array.
  Status ReadPiece(const BoxPlan& plan, const BoxPiece& piece, const NdView& dst,
                   std::span<const std::byte> pad_item, BoxReadScratch& scratch) const;

 protected:
  ArrayReader() = default;
  ArrayReader(const ArrayReader&) = default;
  ArrayReader(ArrayReader&&) noexcept = default;
  ArrayReader& operator=(const ArrayReader&) = default;
  ArrayReader& operator=(ArrayReader&&) noexcept = default;

  /// Chunk piece `piece` (piece.chunk >= 0) of `plan` into `dst`; plan and dst are checked.
  virtual Status ReadChunkPiece(const BoxPlan& plan, const BoxPiece& piece, const NdView& dst,
                                std::span<const std::byte> pad_item,
                                BoxReadScratch& scratch) const = 0;

  std::string path_;
  NdGeometry geom_;
  std::string dtype_;

 private:
  Status CheckDestination(const BoxPlan& plan, const NdView& dst,
                          std::span<const std::byte> pad_item) const;
};

/// The chunk-and-block geometry of an array of `shape` whose chunks (`chunks`, each cut into
/// `blocks`) are stored apart (zarr, precomputed): every chunk has the full chunk shape,
/// clipped at the array's end only when read. kDataLoss when a size passes 2^63.
Result<NdGeometry> GridGeometry(const std::vector<int64_t>& shape,
                                const std::vector<int64_t>& chunks,
                                const std::vector<int64_t>& blocks, int64_t itemsize);

}  // namespace patchfeed::codec

#endif  // PATCHFEED_CODEC_ARRAY_READER_H_
