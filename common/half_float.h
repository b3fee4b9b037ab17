// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_COMMON_HALF_FLOAT_H_
#define PATCHFEED_COMMON_HALF_FLOAT_H_

/// \file
/// IEEE 754 binary16 rounding, as torch's `.to(torch.float16)` does it (round to nearest, ties
/// to even, overflow to infinity, gradual underflow). batchgeneratorsv2 picks the segmentation
/// label by comparing interpolated one-hot values *after* this rounding, so ties created by it
/// decide labels; we reproduce it bit for bit. codec/ writes float16 fill values of zarr arrays
/// with it. Stateless; safe to call from any thread.

#include <bit>
#include <cstdint>

namespace patchfeed {

/// The binary16 bit pattern nearest to `value` (ties to even). NaN stays NaN (quiet).
constexpr uint16_t FloatToHalfBits(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) {  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477FF000u) {  // >= 65520 = largest half + half an ulp: rounds to infinity
    return static_cast<uint16_t>(sign | 0x7C00u);
  }
  if (abs < 0x38800000u) {    // below 2^-14: a half subnormal (or zero), quantum 2^-24
    if (abs < 0x33000000u) {  // <= 2^-25 rounds to zero (2^-25 itself is a tie to even 0)
      return sign;
    }
    const uint32_t exponent = abs >> 23;  // 102..112
    const uint32_t mantissa = (abs & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126u - exponent;  // 14..24: bits dropped to reach 2^-24 units
    const uint32_t kept = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    const uint32_t rounded =
        kept + ((rest > halfway || (rest == halfway && (kept & 1u))) ? 1u : 0u);
    return static_cast<uint16_t>(sign | rounded);  // a carry into bit 10 makes the smallest normal
  }
  // Normal: rebias the exponent (127 -> 15) and round 23 mantissa bits to 10; a mantissa carry
  // correctly bumps the exponent.
  const uint32_t rebased = abs - (112u << 23);
  const uint32_t rounded = rebased + 0xFFFu + ((rebased >> 13) & 1u);
  return static_cast<uint16_t>(sign | (rounded >> 13));
}

/// The float a binary16 bit pattern denotes (exact).
constexpr float HalfBitsToFloat(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1Fu;
  const uint32_t mantissa = half & 0x3FFu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 0x1.0p-24f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) {
    return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

/// `value` rounded to binary16 precision, returned as a float. The hot path of the label
/// argmax: only for finite `0 <= value < 65520`, where it equals
/// HalfBitsToFloat(FloatToHalfBits(value)) (tested) without leaving float registers.
inline float RoundToHalfPrecision(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (bits < 0x38800000u) {
    // Half subnormals are multiples of 2^-24; adding 0.5 (whose ulp is 2^-24) makes the FPU
    // round to exactly that grid, ties to even, and subtracting it back is exact. (Without
    // -ffast-math the compiler must keep both roundings.)
    return (value + 0.5f) - 0.5f;
  }
  const uint32_t rounded = (bits + 0xFFFu + ((bits >> 13) & 1u)) & 0xFFFFE000u;
  return std::bit_cast<float>(rounded);
}

}  // namespace patchfeed

#endif  // PATCHFEED_COMMON_HALF_FLOAT_H_
