// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/blosc/internal/cpu_features.h"

#include <algorithm>

namespace patchfeed::internal_codec {
namespace {

SimdLevel DetectSimdLevel() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2"))
    return SimdLevel::kAvx2;
  if (__builtin_cpu_supports("sse2"))
    return SimdLevel::kSse2;
#endif
  return SimdLevel::kScalar;
}

// Not atomic on purpose: codec owns no threads and the cap is a test-only knob set before any
// kernel runs. A plain int read is what every kernel call pays.
SimdLevel g_cap = SimdLevel::kAvx2;

}  // namespace

SimdLevel ActiveSimdLevel() {
  static const SimdLevel detected = DetectSimdLevel();
  return std::min(detected, g_cap);
}

void SetSimdLevelCapForTesting(SimdLevel cap) { g_cap = cap; }

}  // namespace patchfeed::internal_codec
