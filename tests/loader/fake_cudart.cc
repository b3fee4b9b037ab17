// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// A stand-in libcudart.so for tests on machines without CUDA: the three runtime calls the
// loader resolves with dlsym, plus counters the test reads back. Registration "pins" nothing;
// it checks the arguments the way the real runtime needs them (page-aligned, portable flag).

#include <cstddef>
#include <cstdint>

namespace {
long g_live = 0;
long g_total = 0;
}  // namespace

extern "C" {

__attribute__((visibility("default"))) int cudaHostRegister(void* ptr, size_t size,
                                                            unsigned int flags) {
  if (ptr == nullptr || size == 0 || reinterpret_cast<uintptr_t>(ptr) % 4096 != 0 || flags != 1) {
    return 1;  // cudaErrorInvalidValue
  }
  ++g_live;
  ++g_total;
  return 0;
}

__attribute__((visibility("default"))) int cudaHostUnregister(void* ptr) {
  if (ptr == nullptr || g_live == 0) {
    return 1;
  }
  --g_live;
  return 0;
}

__attribute__((visibility("default"))) const char* cudaGetErrorString(int) {
  return "fake CUDA error";
}

__attribute__((visibility("default"))) long fake_cudart_live_registrations() { return g_live; }
__attribute__((visibility("default"))) long fake_cudart_total_registrations() { return g_total; }

}  // extern "C"
