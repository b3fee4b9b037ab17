// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/blosc/shuffle.h"

#include <algorithm>
#include <cstring>

#include "codec/blosc/internal/cpu_features.h"
#include "codec/blosc/internal/shuffle_kernels.h"

namespace patchfeed::codec {
namespace {

using internal_codec::ActiveSimdLevel;
using internal_codec::SimdLevel;

// The scalar code serves three purposes: the whole job on CPUs without the SIMD kernels, the
// elements a kernel leaves at the end, and the reference the SIMD paths are tested against.

// With the type size known at compile time the inner loop unrolls into straight-line moves,
// and each of the `kTypesize` byte planes is a sequential stream the prefetcher follows.
template <size_t kTypesize>
void ShuffleFixed(const std::byte* src, std::byte* dst, size_t n, size_t begin) {
  for (size_t i = begin; i < n; ++i) {
    for (size_t k = 0; k < kTypesize; ++k)
      dst[k * n + i] = src[i * kTypesize + k];
  }
}

template <size_t kTypesize>
void UnshuffleFixed(const std::byte* src, std::byte* dst, size_t n, size_t begin) {
  for (size_t i = begin; i < n; ++i) {
    for (size_t k = 0; k < kTypesize; ++k)
      dst[i * kTypesize + k] = src[k * n + i];
  }
}

// For other type sizes the elements go in blocks whose interleaved side (about 8 KiB) stays in
// L1 while each byte plane is walked once per block: an element-by-element loop would touch
// `typesize` planes per element, far more streams than the cache keeps apart when it is large.
constexpr size_t kScalarBlockBytes = 8192;

void ShuffleBlocked(size_t ts, const std::byte* src, std::byte* dst, size_t n, size_t begin) {
  const size_t block = std::max<size_t>(1, kScalarBlockBytes / ts);
  for (size_t b = begin; b < n; b += block) {
    const size_t e = std::min(n, b + block);
    for (size_t k = 0; k < ts; ++k) {
      const std::byte* s = src + k;
      std::byte* d = dst + k * n;
      for (size_t i = b; i < e; ++i)
        d[i] = s[i * ts];
    }
  }
}

void UnshuffleBlocked(size_t ts, const std::byte* src, std::byte* dst, size_t n, size_t begin) {
  const size_t block = std::max<size_t>(1, kScalarBlockBytes / ts);
  for (size_t b = begin; b < n; b += block) {
    const size_t e = std::min(n, b + block);
    for (size_t k = 0; k < ts; ++k) {
      const std::byte* s = src + k * n;
      std::byte* d = dst + k;
      for (size_t i = b; i < e; ++i)
        d[i * ts] = s[i];
    }
  }
}

// Elements [begin, n) of the n whole elements.
void ShuffleScalar(size_t ts, const std::byte* src, std::byte* dst, size_t n, size_t begin) {
  switch (ts) {
    case 2:
      return ShuffleFixed<2>(src, dst, n, begin);
    case 4:
      return ShuffleFixed<4>(src, dst, n, begin);
    case 8:
      return ShuffleFixed<8>(src, dst, n, begin);
    case 16:
      return ShuffleFixed<16>(src, dst, n, begin);
    default:
      return ShuffleBlocked(ts, src, dst, n, begin);
  }
}

void UnshuffleScalar(size_t ts, const std::byte* src, std::byte* dst, size_t n, size_t begin) {
  switch (ts) {
    case 2:
      return UnshuffleFixed<2>(src, dst, n, begin);
    case 4:
      return UnshuffleFixed<4>(src, dst, n, begin);
    case 8:
      return UnshuffleFixed<8>(src, dst, n, begin);
    case 16:
      return UnshuffleFixed<16>(src, dst, n, begin);
    default:
      return UnshuffleBlocked(ts, src, dst, n, begin);
  }
}

// Shared frame of both directions: `kernel_*` do a prefix of the elements, the scalar code the
// rest, and the bytes after the last whole element are copied as they are.
using KernelFn = size_t (*)(size_t, const std::byte*, std::byte*, size_t);
using ScalarFn = void (*)(size_t, const std::byte*, std::byte*, size_t, size_t);

void Run(int32_t typesize, const std::byte* src, std::byte* dst, size_t size, KernelFn kernel_avx2,
         KernelFn kernel_sse2, ScalarFn scalar) {
  // Also guards memcpy against the null pointers an empty buffer may come with.
  if (size == 0)
    return;
  if (typesize <= 1 || size < 2 * static_cast<size_t>(typesize)) {
    std::memcpy(dst, src, size);
    return;
  }
  const size_t ts = static_cast<size_t>(typesize);
  const size_t n = size / ts;
  size_t done = 0;
  switch (ActiveSimdLevel()) {
    case SimdLevel::kAvx2:
      if (kernel_avx2 != nullptr)
        done = kernel_avx2(ts, src, dst, n);
      break;
    case SimdLevel::kSse2:
      if (kernel_sse2 != nullptr)
        done = kernel_sse2(ts, src, dst, n);
      break;
    case SimdLevel::kScalar:
      break;
  }
  if (done < n)
    scalar(ts, src, dst, n, done);
  std::memcpy(dst + n * ts, src + n * ts, size - n * ts);
}

template <size_t kTypesize>
void UnshuffleItemsFixed(const std::byte* planes, size_t stride, std::byte* dst, size_t begin,
                         size_t count) {
  for (size_t i = begin; i < count; ++i) {
    for (size_t k = 0; k < kTypesize; ++k)
      dst[i * kTypesize + k] = planes[k * stride + i];
  }
}

}  // namespace

void Shuffle(int32_t typesize, const std::byte* src, std::byte* dst, size_t size) {
#if defined(PATCHFEED_SHUFFLE_X86_KERNELS)
  Run(typesize, src, dst, size, internal_codec::ShuffleAvx2, internal_codec::ShuffleSse2,
      ShuffleScalar);
#else
  Run(typesize, src, dst, size, nullptr, nullptr, ShuffleScalar);
#endif
}

void Unshuffle(int32_t typesize, const std::byte* src, std::byte* dst, size_t size) {
#if defined(PATCHFEED_SHUFFLE_X86_KERNELS)
  Run(typesize, src, dst, size, internal_codec::UnshuffleAvx2, internal_codec::UnshuffleSse2,
      UnshuffleScalar);
#else
  Run(typesize, src, dst, size, nullptr, nullptr, UnshuffleScalar);
#endif
}

void UnshuffleItemRows(int32_t typesize, const std::byte* src, size_t n, size_t first, size_t count,
                       size_t rows, size_t src_row_step, std::byte* dst, size_t dst_row_step) {
  if (count == 0 || rows == 0)
    return;
  const size_t ts = static_cast<size_t>(typesize);
#if defined(PATCHFEED_SHUFFLE_X86_KERNELS)
  if (ts > 1 && ActiveSimdLevel() == SimdLevel::kAvx2 &&
      internal_codec::UnshuffleRowsAvx2(ts, src, n, first, count, rows, src_row_step, dst,
                                        dst_row_step))
    return;
#endif
  for (size_t r = 0; r < rows; ++r, first += src_row_step, dst += dst_row_step) {
    const std::byte* planes = src + first;
    switch (ts) {
      case 1:
        std::memcpy(dst, planes, count);
        break;
      case 2:
        UnshuffleItemsFixed<2>(planes, n, dst, 0, count);
        break;
      case 4:
        UnshuffleItemsFixed<4>(planes, n, dst, 0, count);
        break;
      case 8:
        UnshuffleItemsFixed<8>(planes, n, dst, 0, count);
        break;
      default:
        for (size_t i = 0; i < count; ++i) {
          for (size_t k = 0; k < ts; ++k)
            dst[i * ts + k] = planes[k * n + i];
        }
    }
  }
}

}  // namespace patchfeed::codec
