// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_PINNED_MEMORY_H_
#define PATCHFEED_LOADER_INTERNAL_PINNED_MEMORY_H_

/// \file
/// Page-aligned host buffers for batches, page-locked ("pinned") through the CUDA runtime when
/// it can be loaded, so a trainer's host-to-device copies run at full speed and asynchronously.
///
/// There is no build-time CUDA dependency: the runtime is found with dlopen("libcudart.so")
/// (then the versioned names) the first time a buffer asks for it, and only
/// cudaHostRegister / cudaHostUnregister are called. Without a runtime or a device the buffer
/// is plain memory and `pinned()` says so. Every page is written once at allocation, so the
/// decode threads never take a first-touch page fault; buffers of 2 MiB or more are aligned to
/// 2 MiB and asked for transparent huge pages (madvise, where the kernel offers them).
///
/// A HostBuffer is a move-only owner; the functions here are thread-safe.

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/result.h"
#include "loader/batch_view.h"

namespace patchfeed::loader::internal_loader {

/// Whether libcudart could be loaded and exposes cudaHostRegister (looked up once).
bool CudaRuntimeAvailable();

/// The system page size.
size_t PageSize();

/// `n` rounded up to whole pages.
size_t RoundUpToPage(size_t n);

/// Asks for transparent huge pages over the whole pages inside [p, p + n) (madvise
/// MADV_HUGEPAGE; nothing where the kernel does not offer them). Call before first touch.
void AdviseHugePages(void* p, size_t n);

class HostBuffer {
 public:
  /// `nbytes` rounded up to whole pages, zeroed, pinned as `mode` asks. kResourceExhausted
  /// when the allocation fails; with kRequire, kUnimplemented when no CUDA runtime can be
  /// loaded and kInternal with CUDA's error when registration fails.
  static Result<HostBuffer> Allocate(size_t nbytes, PinMode mode);

  HostBuffer() = default;
  HostBuffer(HostBuffer&& other) noexcept;
  HostBuffer& operator=(HostBuffer&& other) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer();

  std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  bool pinned() const { return pinned_; }
  /// Why a kAuto buffer is not pinned ("" when pinned or kOff), for logs.
  const std::string& unpinned_reason() const { return unpinned_reason_; }

 private:
  void Reset();

  std::byte* data_ = nullptr;
  size_t size_ = 0;
  bool pinned_ = false;
  std::string unpinned_reason_;
};

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_PINNED_MEMORY_H_
