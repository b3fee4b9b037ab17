// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_STORAGE_BYTE_SOURCE_H_
#define PATCHFEED_STORAGE_BYTE_SOURCE_H_

/// \file
/// ByteSource: random read-only access to the bytes of one file (or a buffer), shared by every
/// worker that reads the frame in it.
///
/// Two ways to reach a local file, chosen at open:
/// - kMmap (default): the file is mapped once; `Data()` returns pointers into the mapping, so
///   chunks are decoded straight from the page cache with no copy and no system call.
/// - kPread: positional reads of exactly the bytes asked for. On network file systems a mapped
///   page fault becomes a 4 KiB round trip; explicit reads of whole chunks are far cheaper.
///
/// All methods are const and thread-safe: pread and reads from a mapping keep no state.
/// A mapped file truncated by another process is an error (CheckMapping), not a SIGBUS.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"

namespace patchfeed::storage {

enum class IoMode : uint8_t { kMmap, kPread };

/// `length` bytes at `offset` of a file.
struct FileRange {
  uint64_t offset = 0;
  uint64_t length = 0;
};

class ByteSource {
 public:
  virtual ~ByteSource() = default;

  /// The file name (or a label), for error messages.
  virtual const std::string& name() const = 0;
  virtual uint64_t size() const = 0;

  /// Pointer to bytes [offset, offset + length) when they are in memory (mapped or buffered),
  /// nullptr otherwise; then use ReadAt. The range must lie inside size().
  virtual const std::byte* Data(uint64_t offset, size_t length) const = 0;

  /// Reads exactly `out.size()` bytes at `offset`. kDataLoss when the range passes the end,
  /// kIoError when the system refuses.
  virtual Status ReadAt(uint64_t offset, std::span<std::byte> out) const = 0;

  /// Whether everything read from the source since it was opened is what the file held: a
  /// mapped file that shrank under the mapping (mapping_fault_guard.h) returns kDataLoss
  /// naming it, for good. Readers call it after using bytes from Data(). Cheap: one load.
  virtual Status CheckMapping() const { return Status::Ok(); }

  /// The descriptor of a file read with pread, for a caller that reads it asynchronously
  /// (the loader's I/O engine); -1 for mapped files and buffers. Owned by the source.
  virtual int fd() const { return -1; }

  /// What changes when the bytes do (a remote object's ETag and Last-Modified); "" when the
  /// source cannot say. A cache of the bytes is keyed by it.
  virtual std::string version() const { return {}; }

  /// Whether ReadAsync returns before the bytes arrive: sources whose reads wait on a network
  /// (remote objects), which the loader keeps many reads in flight for as it does for fd().
  virtual bool reads_async() const { return false; }

  /// Reads `out.size()` bytes at `offset` into `out`; `done` runs exactly once with the result.
  /// Where reads_async(), it runs later on the source's engine thread (return from it at once:
  /// hand the work on), and `out` must stay valid until then; otherwise it runs here, after a
  /// ReadAt.
  virtual void ReadAsync(uint64_t offset, std::span<std::byte> out,
                         std::function<void(Status)> done) const {
    done(ReadAt(offset, out));
  }

  /// A hint that ReadAt of each of `ranges` follows: the dictionary and block streams of the
  /// chunk that spans `chunk` in the file, once its header and offsets said where they are.
  /// Sources that fetch ahead (the loader's) gather them into one round of reads; a file read
  /// with pread or mapped ignores it.
  virtual void WillRead([[maybe_unused]] FileRange chunk,
                        [[maybe_unused]] std::span<const FileRange> ranges) const {}

  /// For a source that fetched a chunk ahead into an image of it (the loader's): `length`
  /// bytes standing for the file's [pos, pos + length), of which at least `needed` hold the
  /// file's bytes (the rest is unspecified: decode nothing else from it). nullptr when the
  /// source holds no such image or not all of `needed`: read with ReadAt instead.
  virtual const std::byte* ChunkImage([[maybe_unused]] uint64_t pos,
                                      [[maybe_unused]] uint64_t length,
                                      [[maybe_unused]] std::span<const FileRange> needed) const {
    return nullptr;
  }

  /// Bytes [offset, offset + length): a pointer into memory when possible, else read into
  /// `scratch` (resized as needed). Checks the range against size().
  Result<std::span<const std::byte>> Get(uint64_t offset, size_t length,
                                         std::vector<std::byte>& scratch) const;
};

/// ReadAt for a source whose reads are asynchronous: starts `source.ReadAsync` and waits for
/// its `done` (the sources that read over a network implement ReadAt with it).
Status ReadAndWait(const ByteSource& source, uint64_t offset, std::span<std::byte> out);

/// Opens `path` read-only in the given mode; the file stays open for every later read.
/// kNotFound when it does not exist.
Result<std::shared_ptr<ByteSource>> OpenFile(const std::string& path, IoMode mode = IoMode::kMmap);

/// A source over bytes already in memory (tests, freshly written frames).
std::shared_ptr<ByteSource> MemorySource(std::vector<std::byte> bytes, std::string name);

}  // namespace patchfeed::storage

#endif  // PATCHFEED_STORAGE_BYTE_SOURCE_H_
