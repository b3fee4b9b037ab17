// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_INTENSITY_RANDOM_DRAWS_H_
#define PATCHFEED_AUGMENT_INTENSITY_RANDOM_DRAWS_H_

/// \file
/// The random draws nnU-Net's intensity transforms share, on top of CounterRng: the
/// RandomTransform gate, `sample_scalar` over a range, BGContrast, per-channel masks and a
/// fast standard-normal generator for noise fields.
///
/// batchgeneratorsv2 mixes torch and numpy generators; we reproduce the distributions, not
/// the streams. All functions are pure functions of the CounterRng state they advance.

#include <cstdint>
#include <span>

#include "augment/scalar_range.h"
#include "common/random.h"

namespace patchfeed::augment {

/// Most channels a sample may have in the per-channel parameter arrays below.
inline constexpr int kMaxChannels = 16;

/// A per-channel selection, as `torch.rand(C) < p` gives it.
struct ChannelMask {
  int64_t channels = 0;
  bool selected[kMaxChannels] = {};

  int64_t count() const {
    int64_t n = 0;
    for (int64_t c = 0; c < channels && c < kMaxChannels; ++c)
      n += selected[c] ? 1 : 0;
    return n;
  }
};

/// `U(lo, hi)`, or `lo` when `lo == hi` (sample_scalar's rule: no draw is consumed then).
double SampleUniform(CounterRng& rng, const ScalarRange& range);

/// RandomTransform's gate: true with probability `p` (`u < p`, `u ~ U[0, 1)`).
bool DrawGate(CounterRng& rng, double p);

/// BGContrast: with probability 1/2 (and only if `lo < 1`) a factor in `U(lo, 1)`, else in
/// `U(max(lo, 1), hi)`, so half the factors are below 1 whatever the range's asymmetry.
double SampleBGContrast(CounterRng& rng, const ScalarRange& range);

/// One `u < p` draw per channel. Only the first kMaxChannels are drawn; the count is kept, so
/// the Apply functions report a sample with more channels as invalid.
ChannelMask DrawChannelMask(CounterRng& rng, int64_t channels, double p);

/// The draws every per-channel RandomTransform starts with: the gate (`*apply`), then, if it
/// fires, the channel mask. Returns *apply; without it `mask` only records the channel count.
bool DrawGateAndChannels(CounterRng& rng, double p_apply, double p_per_channel, int64_t channels,
                         bool* apply, ChannelMask* mask);

/// Standard normals in chunks of kChunk, from a key and nonce taken from a CounterRng once:
/// the noise transform pulls one chunk at a time so the field never leaves L1 cache.
class NormalStream {
 public:
  static constexpr int64_t kChunk = 1024;

  /// Takes four words from `rng`.
  explicit NormalStream(CounterRng& rng);

  /// Writes the next kChunk normals to `out`.
  void NextChunk(float* out);

  /// Moves on by `chunks` chunks without computing them (chunk k is a pure function of the
  /// key and k).
  void Skip(int64_t chunks) { chunk_ += static_cast<uint32_t>(chunks); }

 private:
  uint32_t key_[4];
  uint32_t chunk_ = 0;
};

/// Fills `out` with independent standard normals: Box-Muller on Philox4x32-10 words (each
/// block of four words gives four normals), vectorised. Takes four words from `rng` for the
/// field's own key and nonce, so one call advances `rng` by a fixed amount whatever the
/// length. Accurate to a few float ulp; the radius uses 24 random bits, so |n| <= 5.9
/// (P(|N| > 5.9) = 4e-9, which no noise augmentation notices).
void FillStandardNormal(CounterRng& rng, std::span<float> out);

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_INTENSITY_RANDOM_DRAWS_H_
