// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_BLOSC_INTERNAL_CPU_FEATURES_H_
#define PATCHFEED_CODEC_BLOSC_INTERNAL_CPU_FEATURES_H_

/// \file
/// Which SIMD level the running CPU offers, for the run-time dispatch of the filter kernels.
/// The answer is computed once (a function-local static; its initialisation is thread-safe in
/// C++) and can be capped by tests to exercise the slower paths on a fast machine.

namespace patchfeed::internal_codec {

enum class SimdLevel : int { kScalar = 0, kSse2 = 1, kAvx2 = 2 };

/// The best level the CPU supports, further limited by `SetSimdLevelCapForTesting`.
SimdLevel ActiveSimdLevel();

/// Caps the level returned by ActiveSimdLevel (tests only; not thread-safe against concurrent
/// kernel calls). Pass kAvx2 to remove the cap.
void SetSimdLevelCapForTesting(SimdLevel cap);

}  // namespace patchfeed::internal_codec

#endif  // PATCHFEED_CODEC_BLOSC_INTERNAL_CPU_FEATURES_H_
