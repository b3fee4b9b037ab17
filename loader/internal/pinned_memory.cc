// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/pinned_memory.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "common/str_cat.h"

namespace patchfeed::loader::internal_loader {
namespace {

// The three entry points we use, with the runtime API's C signatures (cudaError_t is an int
// enum; 0 is cudaSuccess).
using CudaHostRegisterFn = int (*)(void* ptr, size_t size, unsigned int flags);
using CudaHostUnregisterFn = int (*)(void* ptr);
using CudaGetErrorStringFn = const char* (*)(int error);
constexpr unsigned int kCudaHostRegisterPortable = 1;  // pinned for every CUDA context

struct CudaRuntime {
  CudaHostRegisterFn host_register = nullptr;
  CudaHostUnregisterFn host_unregister = nullptr;
  CudaGetErrorStringFn error_string = nullptr;
  std::string load_error;
};

// Loaded once and never unloaded: the CUDA runtime does not support dlclose well, and pinned
// buffers may outlive any particular owner.
const CudaRuntime& Runtime() {
  static const CudaRuntime runtime = [] {
    CudaRuntime rt;
    void* handle = nullptr;
    for (const char* name :
         {"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"}) {
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle != nullptr) {
        break;
      }
    }
    if (handle == nullptr) {
      rt.load_error = "the CUDA runtime (libcudart.so) could not be loaded";
      return rt;
    }
    rt.host_register = reinterpret_cast<CudaHostRegisterFn>(dlsym(handle, "cudaHostRegister"));
    rt.host_unregister =
        reinterpret_cast<CudaHostUnregisterFn>(dlsym(handle, "cudaHostUnregister"));
    rt.error_string = reinterpret_cast<CudaGetErrorStringFn>(dlsym(handle, "cudaGetErrorString"));
    if (rt.host_register == nullptr || rt.host_unregister == nullptr) {
      rt.host_register = nullptr;
      rt.host_unregister = nullptr;
      rt.load_error = "libcudart.so lacks cudaHostRegister";
    }
    return rt;
  }();
  return runtime;
}

std::string CudaErrorText(int error) {
  const char* text = Runtime().error_string ? Runtime().error_string(error) : nullptr;
  return "CUDA error " + std::to_string(error) + (text ? std::string(" (") + text + ")" : "");
}

}  // namespace

bool CudaRuntimeAvailable() { return Runtime().host_register != nullptr; }

size_t PageSize() {
  static const size_t page = [] {
    const long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<size_t>(p) : size_t{4096};
  }();
  return page;
}

size_t RoundUpToPage(size_t n) {
  const size_t page = PageSize();
  return (n + page - 1) / page * page;
}

void AdviseHugePages(void* p, size_t n) {
  const size_t page = PageSize();
  const auto begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const auto end = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
  if (end > begin) {
    (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  }
}

Result<HostBuffer> HostBuffer::Allocate(size_t nbytes, PinMode mode) {
  // Buffers of 2 MiB or more sit on 2 MiB boundaries with transparent huge pages asked for:
  // the stages that write and read a batch (resampling into the slot, mirroring, the
  // consumer's pass) then miss the TLB far less. 4-channel nnU-Net samples: 0.078 -> 0.067
  // CPU-s each (bench/README.md section 7, issue 26); huge pages for the window staging gave
  // nothing measurable and were not kept.
  constexpr size_t kHugePage = size_t{2} << 20;
  HostBuffer b;
  b.size_ = RoundUpToPage(nbytes == 0 ? 1 : nbytes);
  const bool huge = b.size_ >= kHugePage;
  if (huge) {
    b.size_ = (b.size_ + kHugePage - 1) / kHugePage * kHugePage;
  }
  b.data_ = static_cast<std::byte*>(std::aligned_alloc(huge ? kHugePage : PageSize(), b.size_));
  if (b.data_ == nullptr) {
    b.size_ = 0;
    return ResourceExhaustedError(StrCat("could not allocate ", nbytes, " bytes of batch memory"));
  }
  if (huge) {
    AdviseHugePages(b.data_, b.size_);
  }
  // The one touch: decode threads then never fault a page in.
  std::memset(b.data_, 0, b.size_);
  if (mode == PinMode::kOff) {
    return b;
  }
  const CudaRuntime& rt = Runtime();
  if (rt.host_register == nullptr) {
    if (mode == PinMode::kRequire) {
      return UnimplementedError(rt.load_error + ": cannot pin");
    }
    b.unpinned_reason_ = rt.load_error;
    return b;
  }
  const int err = rt.host_register(b.data_, b.size_, kCudaHostRegisterPortable);
  if (err != 0) {
    if (mode == PinMode::kRequire) {
      return InternalError(
          StrCat("cudaHostRegister of ", b.size_, " bytes failed: ", CudaErrorText(err)));
    }
    b.unpinned_reason_ = "cudaHostRegister failed: " + CudaErrorText(err);
    return b;
  }
  b.pinned_ = true;
  return b;
}

HostBuffer::HostBuffer(HostBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      pinned_(std::exchange(other.pinned_, false)),
      unpinned_reason_(std::move(other.unpinned_reason_)) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
  if (this != &other) {
    Reset();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    pinned_ = std::exchange(other.pinned_, false);
    unpinned_reason_ = std::move(other.unpinned_reason_);
  }
  return *this;
}

HostBuffer::~HostBuffer() { Reset(); }

void HostBuffer::Reset() {
  if (data_ == nullptr) {
    return;
  }
  if (pinned_) {
    Runtime().host_unregister(data_);
  }
  std::free(data_);
  data_ = nullptr;
  size_ = 0;
  pinned_ = false;
}

}  // namespace patchfeed::loader::internal_loader
