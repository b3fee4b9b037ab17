// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "storage/byte_source.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>

#include "common/str_cat.h"
#include "storage/mapping_fault_guard.h"

namespace patchfeed::storage {
namespace {

Status ErrnoStatus(const std::string& name, const char* what) {
  const int err = errno;
  const std::string msg = name + ": " + what + ": " + std::strerror(err);
  if (err == ENOENT)
    return NotFoundError(msg);
  return IoError(msg);
}

Status RangeError(const std::string& name, uint64_t offset, size_t length, uint64_t size) {
  return DataLossError(StrCat(name, ": bytes [", offset, ", ", offset + length,
                              ") lie past the end of the ", size, "-byte file (truncated?)"));
}

bool InRange(uint64_t offset, size_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

class FileSource final : public ByteSource {
 public:
  FileSource(std::string name, int fd, uint64_t size, const std::byte* map,
             std::unique_ptr<MappingFaultGuard> guard)
      : name_(std::move(name)), fd_(fd), size_(size), map_(map), guard_(std::move(guard)) {}
  ~FileSource() override {
    guard_.reset();  // before the pages go: the handler must not claim them for this file
    if (map_ != nullptr)
      munmap(const_cast<std::byte*>(map_), size_);
    close(fd_);
  }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  const std::string& name() const override { return name_; }
  uint64_t size() const override { return size_; }
  int fd() const override { return map_ == nullptr ? fd_ : -1; }

  const std::byte* Data(uint64_t offset, size_t length) const override {
    if (map_ == nullptr || !InRange(offset, length, size_))
      return nullptr;
    return map_ + offset;
  }

  Status ReadAt(uint64_t offset, std::span<std::byte> out) const override {
    if (!InRange(offset, out.size(), size_))
      return RangeError(name_, offset, out.size(), size_);
    if (map_ != nullptr) {
      std::memcpy(out.data(), map_ + offset, out.size());
      return Status::Ok();
    }
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n =
          pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR)
          continue;
        return ErrnoStatus(name_, "pread failed");
      }
      if (n == 0)
        return RangeError(name_, offset, out.size(), offset + done);  // file shrank
      done += static_cast<size_t>(n);
    }
    return Status::Ok();
  }

  Status CheckMapping() const override {
    if (guard_ != nullptr && guard_->faulted()) [[unlikely]] {
      return DataLossError(
          StrCat(name_,
                 ": the file shrank while it was mapped (truncated or rewritten in "
                 "place); what was read from it is discarded (reopen the file)"));
    }
    return Status::Ok();
  }

 private:
  std::string name_;
  int fd_;
  uint64_t size_;
  const std::byte* map_;                      // null in pread mode
  std::unique_ptr<MappingFaultGuard> guard_;  // null in pread mode
};

class MemoryByteSource final : public ByteSource {
 public:
  MemoryByteSource(std::vector<std::byte> bytes, std::string name)
      : bytes_(std::move(bytes)), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  uint64_t size() const override { return bytes_.size(); }
  const std::byte* Data(uint64_t offset, size_t length) const override {
    return InRange(offset, length, bytes_.size()) ? bytes_.data() + offset : nullptr;
  }
  Status ReadAt(uint64_t offset, std::span<std::byte> out) const override {
    if (!InRange(offset, out.size(), bytes_.size())) {
      return RangeError(name_, offset, out.size(), bytes_.size());
    }
    std::memcpy(out.data(), bytes_.data() + offset, out.size());
    return Status::Ok();
  }

 private:
  std::vector<std::byte> bytes_;
  std::string name_;
};

}  // namespace

Result<std::span<const std::byte>> ByteSource::Get(uint64_t offset, size_t length,
                                                   std::vector<std::byte>& scratch) const {
  if (!InRange(offset, length, size()))
    return RangeError(name(), offset, length, size());
  if (const std::byte* p = Data(offset, length))
    return std::span<const std::byte>(p, length);
  if (scratch.size() < length)
    scratch.resize(length);
  PATCHFEED_RETURN_IF_ERROR(ReadAt(offset, std::span(scratch.data(), length)));
  return std::span<const std::byte>(scratch.data(), length);
}

Status ReadAndWait(const ByteSource& source, uint64_t offset, std::span<std::byte> out) {
  std::mutex mutex;
  std::condition_variable cv;
  bool finished = false;
  Status status;
  source.ReadAsync(offset, out, [&](Status s) {
    std::lock_guard lock(mutex);
    status = std::move(s);
    finished = true;
    cv.notify_one();
  });
  std::unique_lock lock(mutex);
  cv.wait(lock, [&] { return finished; });
  return status;
}

Result<std::shared_ptr<ByteSource>> OpenFile(const std::string& path, IoMode mode) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return ErrnoStatus(path, "cannot open");
  struct stat st;
  if (fstat(fd, &st) != 0) {
    Status s = ErrnoStatus(path, "cannot stat");
    close(fd);
    return s;
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return InvalidArgumentError(StrCat(path, ": is a directory, not a file"));
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  const std::byte* map = nullptr;
  std::unique_ptr<MappingFaultGuard> guard;
  if (mode == IoMode::kMmap && size > 0) {
    void* p = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      Status s = ErrnoStatus(path, "cannot map");
      close(fd);
      return s;
    }
    guard = MappingFaultGuard::Register(p, size);
    if (guard == nullptr) {
      munmap(p, size);  // unguarded, a truncation would kill the process: use pread
    } else {
      // Patch reads touch scattered blocks: read-ahead would fetch pages nobody asked for.
      madvise(p, size, MADV_RANDOM);
      map = static_cast<const std::byte*>(p);
    }
  }
  if (map == nullptr) {
    // pread asks for exactly the bytes a read needs; the kernel's (or an NFS client's)
    // read-ahead after two neighbouring reads would fetch blocks nobody asked for. A hint: file
    // systems without a page cache for the file (FUSE direct_io) ignore it.
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
  }
  return std::shared_ptr<ByteSource>(
      std::make_shared<FileSource>(path, fd, size, map, std::move(guard)));
}

std::shared_ptr<ByteSource> MemorySource(std::vector<std::byte> bytes, std::string name) {
  return std::make_shared<MemoryByteSource>(std::move(bytes), std::move(name));
}

}  // namespace patchfeed::storage
