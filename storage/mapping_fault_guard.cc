// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "storage/mapping_fault_guard.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace patchfeed::storage {
namespace {

// More than the loader keeps open (LoaderConfig::max_open_files, 1024 by default) times a few
// loaders; a mapping that finds no slot is read with pread instead.
constexpr int kSlots = 1 << 14;
constexpr uintptr_t kClaimed = 1;  // a slot being filled or emptied: the handler skips it

struct Slot {
  std::atomic<uintptr_t> begin{0};  // 0: free
  std::atomic<size_t> length{0};
  std::atomic<bool> faulted{false};
};

Slot g_slots[kSlots];
std::atomic<int> g_used{0};   // slots [0, g_used) may be in use: the handler scans no further
struct sigaction g_previous;  // written once, before our handler can run
uintptr_t g_page_size = 4096;

// What would have happened without us: the previous handler, or the default action (for a
// fault: terminate with a core dump, as if patchfeed had installed nothing).
void Chain(int sig, siginfo_t* info, void* context) {
  if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr) {
    g_previous.sa_sigaction(sig, info, context);
    return;
  }
  if ((g_previous.sa_flags & SA_SIGINFO) == 0 && g_previous.sa_handler != SIG_DFL &&
      g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
    return;
  }
  if (g_previous.sa_handler == SIG_IGN && info->si_code <= 0) {
    return;  // an ignored SIGBUS sent by kill(); an ignored fault would only repeat
  }
  struct sigaction fallback = {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(SIGBUS, &fallback, nullptr);
  raise(SIGBUS);  // blocked until this handler returns, then the default action
}

void OnSigbus(int sig, siginfo_t* info, void* context) {
  if (info->si_code > 0) {  // raised by the kernel for a fault, not sent by a process
    const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
    const int used = g_used.load(std::memory_order_acquire);
    for (int i = 0; i < used; ++i) {
      Slot& slot = g_slots[i];
      const uintptr_t begin = slot.begin.load(std::memory_order_acquire);
      if (begin <= kClaimed || addr - begin >= slot.length.load(std::memory_order_relaxed)) {
        continue;
      }
      void* page = reinterpret_cast<void*>(addr & ~(g_page_size - 1));
      if (mmap(page, g_page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
          MAP_FAILED) {
        slot.faulted.store(true, std::memory_order_release);
        return;  // the faulting read runs again and finds zeros
      }
      break;
    }
  }
  Chain(sig, info, context);
}

bool InstallHandler() {
  // A function-local static: initialised once, thread-safe, without a mutex.
  static const bool installed = [] {
    g_page_size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    struct sigaction action = {};
    action.sa_sigaction = OnSigbus;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    return sigaction(SIGBUS, &action, &g_previous) == 0;
  }();
  return installed;
}

}  // namespace

std::unique_ptr<MappingFaultGuard> MappingFaultGuard::Register(const void* base, size_t length) {
  if (base == nullptr || length == 0 || !InstallHandler()) {
    return nullptr;
  }
  for (int i = 0; i < kSlots; ++i) {
    Slot& slot = g_slots[i];
    uintptr_t expected = 0;
    if (!slot.begin.compare_exchange_strong(expected, kClaimed, std::memory_order_acq_rel)) {
      continue;
    }
    slot.faulted.store(false, std::memory_order_relaxed);
    slot.length.store(length, std::memory_order_relaxed);
    slot.begin.store(reinterpret_cast<uintptr_t>(base), std::memory_order_release);
    int used = g_used.load(std::memory_order_relaxed);
    while (used < i + 1 && !g_used.compare_exchange_weak(used, i + 1, std::memory_order_acq_rel)) {
    }
    return std::unique_ptr<MappingFaultGuard>(new MappingFaultGuard(i));
  }
  return nullptr;
}

MappingFaultGuard::~MappingFaultGuard() {
  g_slots[slot_].begin.store(0, std::memory_order_release);
}

bool MappingFaultGuard::faulted() const {
  return g_slots[slot_].faulted.load(std::memory_order_acquire);
}

}  // namespace patchfeed::storage
