// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_TASK_SPAWN_H_
#define PATCHFEED_LOADER_INTERNAL_TASK_SPAWN_H_

/// \file
/// The loader's only ways to hand work to oneTBB: RunTask (into a task_group) and EnqueueTask
/// (fire-and-forget into a task_arena, tracked by a task_group). Internal to loader/.
///
/// Why wrappers: the system's libtbb is not built with ThreadSanitizer, so TSan cannot see the
/// happens-before edges TBB's queues create, and reports every task's first read of its own
/// captures as a race. Under TSan the wrappers state the edges TBB guarantees (everything the
/// spawner did happens before the task; the task happens before whoever waits on `done`) and
/// keep TSan from recording the construction of the task object in TBB's uninstrumented
/// memory pool. Races between tasks are still reported. The few remaining reports inside TBB's
/// own headers are listed in tests/loader/tsan.supp. Without TSan the wrappers are plain calls.
///
/// Captures must be trivially destructible (pointers, integers): the task object is destroyed
/// by TBB after `done` is released.

#include <type_traits>
#include <utility>

#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#if defined(__SANITIZE_THREAD__)
#define PATCHFEED_LOADER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PATCHFEED_LOADER_TSAN 1
#endif
#endif

#if PATCHFEED_LOADER_TSAN
extern "C" {
void __tsan_acquire(void* addr);
void __tsan_release(void* addr);
void AnnotateIgnoreWritesBegin(const char* file, int line);
void AnnotateIgnoreWritesEnd(const char* file, int line);
}
#endif

namespace patchfeed::loader::internal_loader {

/// An address TSan uses as a synchronization object; has no other meaning.
struct TsanToken {
  char byte = 0;
};

inline void TsanAcquire([[maybe_unused]] TsanToken* token) {
#if PATCHFEED_LOADER_TSAN
  __tsan_acquire(token);
#endif
}
inline void TsanRelease([[maybe_unused]] TsanToken* token) {
#if PATCHFEED_LOADER_TSAN
  __tsan_release(token);
#endif
}

/// Every spawn releases it and every task acquires it first (a static address, so the task
/// needs no capture to find it).
inline TsanToken g_spawn_token;

template <typename F>
auto WrapTask(F&& f, TsanToken* done) {
  static_assert(std::is_trivially_destructible_v<std::decay_t<F>>,
                "task captures must be trivially destructible");
  return [fn = std::forward<F>(f), done]() {
    TsanAcquire(&g_spawn_token);
    fn();
    TsanRelease(done);
  };
}

/// `group.run(f)`; the waiter calls TsanAcquire(done) after `group.wait()`.
template <typename F>
void RunTask(tbb::task_group& group, TsanToken* done, F&& f) {
  auto task = WrapTask(std::forward<F>(f), done);
  TsanRelease(&g_spawn_token);
#if PATCHFEED_LOADER_TSAN
  AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
#endif
  group.run(std::move(task));
#if PATCHFEED_LOADER_TSAN
  AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
#endif
}

/// `arena.enqueue(group.defer(f))`: returns at once from any thread; `group.wait()` (inside
/// the arena) waits for it.
template <typename F>
void EnqueueTask(tbb::task_arena& arena, tbb::task_group& group, TsanToken* done, F&& f) {
  auto task = WrapTask(std::forward<F>(f), done);
  TsanRelease(&g_spawn_token);
#if PATCHFEED_LOADER_TSAN
  AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
#endif
  arena.enqueue(group.defer(std::move(task)));
#if PATCHFEED_LOADER_TSAN
  AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
#endif
}

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_TASK_SPAWN_H_
