// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_FETCHED_SOURCE_H_
#define PATCHFEED_LOADER_INTERNAL_FETCHED_SOURCE_H_

/// \file
/// FetchedSource: a view of one file (a `.b2nd` frame, a zarr chunk or shard) whose bytes the
/// loader fetched ahead through its I/O engine (issue 15), handed to the codec as
/// BoxReadScratch::source.
///
/// How the loader learns which bytes a read needs without teaching the codec about I/O: it
/// replays the codec's read of each piece against this source in *discovery*. A read of bytes
/// not fetched yet is recorded and fails; so does everything after the codec's WillRead hint
/// (a chunk's dictionary and block streams, once its header and offsets are known), which is
/// recorded as a whole. The loader fetches what was recorded, all files and chunks of a batch
/// at once, and replays again: two rounds of reads per chunk (header and offsets, then block
/// streams), and no piece is decoded before its bytes are all in. (Pieces without block
/// streams, such as pad regions and special chunks, run to the end in discovery: the loader
/// points them at a sink.)
///
/// Chunk images: at the WillRead hint the source makes an image of the chunk (its compressed
/// size, uninitialized) holding the header and offsets already fetched; the block streams are
/// then fetched straight into it, and the codec decodes in place (ChunkImage), so no fetched
/// stream is copied. Other fetched ranges (the headers) are buffers of their own.
///
/// After discovery the source *serves*: ChunkImage and ReadAt answer from what was fetched, and
/// a range never fetched (a read the replays did not foresee) is read from the file with pread
/// and counted, so a read never fails for want of a prefetch, and never sees unfetched bytes.
///
/// Thread-safety: discovery and AddFetch on one thread (the batch's producer) before any task
/// reads; serving is const and safe from many threads (the fallback counter is atomic). The
/// engine writes into AddFetch's buffers; the producer waits for it before serving.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "loader/internal/byte_arena.h"
#include "storage/byte_source.h"

namespace patchfeed::loader::internal_loader {

class FetchedSource final : public storage::ByteSource {
 public:
  /// A view of `file` (a `.b2nd` frame, or a zarr chunk or shard file), which it keeps open.
  /// Fetched bytes live in `arena`, which must outlive every read through the source. Each
  /// read served from the file instead adds 1 to `*fallback_reads`.
  FetchedSource(std::shared_ptr<const storage::ByteSource> file, ByteArena* arena,
                std::atomic<int64_t>* fallback_reads);

  const std::string& name() const override { return file_.name(); }
  uint64_t size() const override { return file_.size(); }
  int fd() const override { return file_.fd(); }
  std::string version() const override { return file_.version(); }
  bool reads_async() const override { return file_.reads_async(); }
  void ReadAsync(uint64_t offset, std::span<std::byte> out,
                 std::function<void(Status)> done) const override {
    file_.ReadAsync(offset, out, std::move(done));
  }
  /// Always null: the codec must treat the file as read with pread, which is what makes it
  /// read only the blocks it needs (fetched bytes reach it through ReadAt and ChunkImage).
  const std::byte* Data(uint64_t, size_t) const override { return nullptr; }
  Status ReadAt(uint64_t offset, std::span<std::byte> out) const override;
  void WillRead(storage::FileRange chunk,
                std::span<const storage::FileRange> ranges) const override;
  const std::byte* ChunkImage(uint64_t pos, uint64_t length,
                              std::span<const storage::FileRange> needed) const override;

  /// Discovery of one piece's reads: from here on, reads not fetched are recorded, up to the
  /// WillRead hint (see the file comment).
  void BeginDiscovery();
  /// Back to serving.
  void EndDiscovery() { discovering_ = false; }
  /// The ranges recorded since the last call, in the order the codec asked for them.
  std::vector<storage::FileRange> TakeMissing();

  /// Where a fetch of `range` goes: into the chunk image that holds it whole, else a buffer of
  /// its own. The caller fills it before serving starts.
  std::span<std::byte> AddFetch(storage::FileRange range);
  /// Bytes [offset, offset + bytes.size()) fetched already (a file's first bytes, which came
  /// with its open), in memory that outlives every read through the source (the arena's).
  void AddFetched(uint64_t offset, std::span<std::byte> bytes);
  /// The chunk image holding `offset` (an index), or -1: ranges of different images (or one in
  /// an image and one not) must not be fetched as one read.
  int64_t ImageAt(uint64_t offset) const;
  /// Bytes fetched (into images or buffers).
  int64_t fetched_bytes() const { return fetched_bytes_; }
  /// ChunkImage calls answered with an image: chunks decoded in place.
  int64_t images_served() const { return images_served_.load(std::memory_order_relaxed); }

 private:
  struct Buffer {  // a fetched range of its own
    uint64_t offset = 0;
    std::span<std::byte> bytes;
  };
  struct Image {  // a chunk's compressed bytes, of which `valid` were fetched
    uint64_t pos = 0;
    uint64_t size = 0;
    std::byte* bytes = nullptr;
    std::vector<storage::FileRange> valid;
  };
  void AddBuffer(uint64_t offset, std::span<std::byte> bytes);
  // Calls fn(buffer) on each buffer that starts at or before `offset` and may reach it,
  // nearest first, until it returns true.
  template <typename Fn>
  void VisitBuffersFrom(uint64_t offset, Fn&& fn) const;
  // The fetched bytes holding [offset, offset + length) in one piece, or null.
  const std::byte* Find(uint64_t offset, size_t length) const;
  const std::byte* FindInBuffers(uint64_t offset, size_t length) const;
  // The buffer holding byte `offset` that reaches furthest past it, or null.
  const Buffer* FurthestBuffer(uint64_t offset) const;
  static bool Holds(const Image& image, uint64_t offset, uint64_t length);

  const std::shared_ptr<const storage::ByteSource> holder_;
  const storage::ByteSource& file_;
  ByteArena* const arena_;
  std::vector<Buffer> buffers_;  // sorted by offset; may overlap
  uint64_t longest_ = 0;         // the longest buffer: how far back FindInBuffers must look
  // Chunk images, sorted by position, disjoint (chunks do not overlap). Discovery adds them,
  // hence mutable.
  mutable std::vector<Image> images_;
  int64_t fetched_bytes_ = 0;
  mutable bool discovering_ = false;
  mutable bool stopped_ = false;  // discovery: WillRead was called, the piece is known
  mutable std::vector<storage::FileRange> missing_;
  std::atomic<int64_t>* const fallback_reads_;
  mutable std::atomic<int64_t> images_served_{0};
};

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_FETCHED_SOURCE_H_
