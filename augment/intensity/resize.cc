// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "augment/intensity/resize.h"

#include <algorithm>
#include <cmath>

#include "augment/intensity/channel_loops.h"

namespace patchfeed::internal_augment {

int64_t RoundHalfEven(double x) { return static_cast<int64_t>(std::nearbyint(x)); }

template <typename T>
void ResizeNearestExact(const T* in, const int64_t* in_shape, T* out, const int64_t* out_shape,
                        int dims, std::vector<int64_t>& index) {
  // Index tables per axis, premultiplied by the input strides: the inner loop is a gather.
  int64_t offsets[3] = {0, 0, 0};
  int64_t total = 0;
  for (int d = 0; d < dims; ++d) {
    offsets[d] = total;
    total += out_shape[d];
  }
  if (static_cast<int64_t>(index.size()) < total)
    index.resize(static_cast<size_t>(total));
  int64_t stride = 1;
  for (int d = dims - 1; d >= 0; --d) {
    for (int64_t j = 0; j < out_shape[d]; ++j)
      index[offsets[d] + j] = NearestExactIndex(j, in_shape[d], out_shape[d]) * stride;
    stride *= in_shape[d];
  }
  const int64_t* ix = index.data() + offsets[dims - 1];
  const int64_t nx = out_shape[dims - 1];
  if (dims == 2) {
    const int64_t* i0 = index.data() + offsets[0];
    for (int64_t a = 0; a < out_shape[0]; ++a) {
      const T* src = in + i0[a];
      for (int64_t x = 0; x < nx; ++x)
        *out++ = src[ix[x]];
    }
    return;
  }
  const int64_t* i0 = index.data() + offsets[0];
  const int64_t* i1 = index.data() + offsets[1];
  for (int64_t a = 0; a < out_shape[0]; ++a) {
    for (int64_t b = 0; b < out_shape[1]; ++b) {
      const T* src = in + i0[a] + i1[b];
      for (int64_t x = 0; x < nx; ++x)
        *out++ = src[ix[x]];
    }
  }
}

template void ResizeNearestExact<float>(const float*, const int64_t*, float*, const int64_t*, int,
                                        std::vector<int64_t>&);
template void ResizeNearestExact<int16_t>(const int16_t*, const int64_t*, int16_t*, const int64_t*,
                                          int, std::vector<int64_t>&);
template void ResizeNearestExact<uint8_t>(const uint8_t*, const int64_t*, uint8_t*, const int64_t*,
                                          int, std::vector<int64_t>&);

namespace {

// ATen's linear source index and weights for one axis, in float.
struct Tap {
  int64_t i0;
  int64_t i1;
  float w0;
  float w1;
};

Tap LinearTap(int64_t i, int64_t in, int64_t out) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  // ATen's AVX2 build contracts this to one fused multiply-add; so must we to match it.
  float src = std::fma(scale, static_cast<float>(i) + 0.5f, -0.5f);
  if (src < 0.0f)
    src = 0.0f;
  int64_t i0 = static_cast<int64_t>(std::floor(src));
  if (i0 > in - 1)
    i0 = in - 1;
  float lambda = src - static_cast<float>(i0);
  lambda = lambda < 0.0f ? 0.0f : (lambda > 1.0f ? 1.0f : lambda);
  return {i0, i0 < in - 1 ? i0 + 1 : i0, 1.0f - lambda, lambda};
}

// torch's AVX2/AVX-512 kernels (the ones any current x86 CPU runs) compile `t0 * w0 + t1 * w1`
// to fma(t0, w0, t1 * w1). We evaluate the same fused form: with hardware FMA when the CPU has
// it (a target attribute, so the baseline build still runs anywhere), else with fmaf.
bool HasFma() {
  static const bool has = __builtin_cpu_supports("fma");
  return has;
}

[[gnu::target("avx2,fma")]] void LerpLinesFma(const float* a, const float* b, float w0, float w1,
                                              float* d, int64_t n) {
  for (int64_t x = 0; x < n; ++x)
    d[x] = std::fma(a[x], w0, b[x] * w1);
}

void LerpLinesSoft(const float* a, const float* b, float w0, float w1, float* d, int64_t n) {
  for (int64_t x = 0; x < n; ++x)
    d[x] = std::fma(a[x], w0, b[x] * w1);
}

[[gnu::target("avx2,fma")]] void GatherRowsFma(const float* in, int64_t in_len, float* out,
                                               int64_t out_len, int64_t rows, const int64_t* index,
                                               const float* weights) {
  for (int64_t o = 0; o < rows; ++o) {
    const float* src = in + o * in_len;
    float* dst = out + o * out_len;
    for (int64_t i = 0; i < out_len; ++i)
      dst[i] =
          std::fma(src[index[2 * i]], weights[2 * i], src[index[2 * i + 1]] * weights[2 * i + 1]);
  }
}

void GatherRowsSoft(const float* in, int64_t in_len, float* out, int64_t out_len, int64_t rows,
                    const int64_t* index, const float* weights) {
  for (int64_t o = 0; o < rows; ++o) {
    const float* src = in + o * in_len;
    float* dst = out + o * out_len;
    for (int64_t i = 0; i < out_len; ++i)
      dst[i] =
          std::fma(src[index[2 * i]], weights[2 * i], src[index[2 * i + 1]] * weights[2 * i + 1]);
  }
}

// Resizes axis `axis` of a dense array of shape `shape` into `out`; the other axes keep their
// sizes. Lines along the axis become rows of `inner` contiguous floats combined two at a time.
// The last axis gathers with tap tables (`index`, `weights`: 2 * out_len entries each).
void ResizeAxisLinear(const float* in, const int64_t* shape, int dims, int axis, int64_t out_len,
                      float* out, int64_t* index, float* weights) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int d = axis + 1; d < dims; ++d)
    inner *= shape[d];
  const int64_t in_len = shape[axis];
  if (inner == 1) {
    for (int64_t i = 0; i < out_len; ++i) {
      const Tap t = LinearTap(i, in_len, out_len);
      index[2 * i] = t.i0;
      index[2 * i + 1] = t.i1;
      weights[2 * i] = t.w0;
      weights[2 * i + 1] = t.w1;
    }
    (HasFma() ? GatherRowsFma : GatherRowsSoft)(in, in_len, out, out_len, outer, index, weights);
    return;
  }
  const auto lerp = HasFma() ? LerpLinesFma : LerpLinesSoft;
  for (int64_t o = 0; o < outer; ++o) {
    const float* src = in + o * in_len * inner;
    float* dst = out + o * out_len * inner;
    for (int64_t i = 0; i < out_len; ++i) {
      const Tap t = LinearTap(i, in_len, out_len);
      lerp(src + t.i0 * inner, src + t.i1 * inner, t.w0, t.w1, dst + i * inner, inner);
    }
  }
}

}  // namespace

void ResizeLinear(const float* in, const int64_t* in_shape, float* out, const int64_t* out_shape,
                  int dims, std::vector<float>& work, std::vector<int64_t>& index) {
  // Stage shapes: start from in_shape and replace one axis per stage, last axis first. The
  // last stage writes to `out`; earlier ones alternate between two halves of `work`.
  int64_t shape[3] = {1, 1, 1};
  for (int d = 0; d < dims; ++d)
    shape[d] = in_shape[d];
  int64_t sizes[3] = {0, 0, 0};
  {
    int64_t s[3] = {shape[0], shape[1], shape[2]};
    for (int d = dims - 1; d >= 0; --d) {
      s[d] = out_shape[d];
      int64_t n = 1;
      for (int e = 0; e < dims; ++e)
        n *= s[e];
      sizes[d] = n;
    }
  }
  int64_t need = 0;
  int64_t largest = 1;  // no stage is larger: each axis is in_shape's or out_shape's
  for (int d = dims - 1; d >= 1; --d)
    need += sizes[d];
  for (int d = 0; d < dims; ++d)
    largest *= std::max(in_shape[d], out_shape[d]);
  const int64_t last = out_shape[dims - 1];
  Reserve(work, need + 2 * last, (dims - 1) * largest + 2 * last);
  Reserve(index, 2 * last);
  float* weights = work.data() + need;
  const float* src = in;
  float* next = work.data();
  for (int d = dims - 1; d >= 0; --d) {
    float* dst = d == 0 ? out : next;
    ResizeAxisLinear(src, shape, dims, d, out_shape[d], dst, index.data(), weights);
    shape[d] = out_shape[d];
    src = dst;
    next = dst + sizes[d];
  }
}

}  // namespace patchfeed::internal_augment
