// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_INTENSITY_FAST_LOG_H_
#define PATCHFEED_AUGMENT_INTENSITY_FAST_LOG_H_

/// \file
/// The pieces of a branch-free float logarithm shared by the noise generator (Box-Muller) and
/// gamma (x^g as exp2(g log2 x)): inline and without branches, so the loops that call them
/// vectorise, where a libm call per voxel would not. Internal to augment/intensity.

#include <bit>
#include <cstdint>

namespace patchfeed::internal_augment {

/// x = 2^e (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)), for finite x > 0.
struct LogSplit {
  int32_t e;
  float f;
};

[[gnu::always_inline]] inline LogSplit SplitForLog(float x) {
  const auto bits = std::bit_cast<uint32_t>(x);
  const auto m = std::bit_cast<float>((bits & 0x007FFFFFu) | 0x3F000000u);  // [0.5, 1)
  const int32_t small = static_cast<int32_t>(m < 0.70710678f);
  const int32_t e = static_cast<int32_t>(bits >> 23) - 126 - small;
  return {e, m * static_cast<float>(1 + small) - 1.0f};  // times 2 is exact
}

/// ln(1 + f) - f + f^2/2 for f from SplitForLog and z = f * f: the Cephes single-precision
/// logarithm's polynomial term (ln(1 + f) = f - z/2 + LogTail(f, z), a few ulp).
[[gnu::always_inline]] inline float LogTail(float f, float z) {
  float p = 7.0376836292e-2f;
  p = p * f - 1.1514610310e-1f;
  p = p * f + 1.1676998740e-1f;
  p = p * f - 1.2420140846e-1f;
  p = p * f + 1.4249322787e-1f;
  p = p * f - 1.6668057665e-1f;
  p = p * f + 2.0000714765e-1f;
  p = p * f - 2.4999993993e-1f;
  p = p * f + 3.3333331174e-1f;
  return p * f * z;
}

}  // namespace patchfeed::internal_augment

#endif  // PATCHFEED_AUGMENT_INTENSITY_FAST_LOG_H_
