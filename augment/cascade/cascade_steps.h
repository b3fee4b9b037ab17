// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_CASCADE_CASCADE_STEPS_H_
#define PATCHFEED_AUGMENT_CASCADE_CASCADE_STEPS_H_

/// \file
/// The random steps of nnU-Net's cascade augmentation on the one-hot channels of the previous
/// stage's segmentation: batchgeneratorsv2's ApplyRandomBinaryOperatorTransform
/// (random_binary_operator.py) and RemoveRandomConnectedComponentFromOneHotEncodingTransform
/// (remove_connected_components.py), each behind its RandomTransform gate.
///
/// As elsewhere in augment/, draws are separate from application: Draw* is a pure function of
/// the CounterRng it advances and the config; Apply* is deterministic given those params.
/// bg2 draws with numpy and torch; we reproduce the distributions, not the streams. The one
/// draw that depends on the data (which connected component goes) is kept as a uniform number
/// in [0, 1) that Apply maps onto the candidates. CascadeScratch is per thread.

#include <array>
#include <cstdint>
#include <vector>

#include "augment/augment_config.h"
#include "augment/cascade/binary_morphology.h"
#include "augment/cascade/connected_components.h"
#include "augment/intensity/random_draws.h"
#include "augment/sample_view.h"
#include "common/random.h"
#include "common/status.h"

namespace patchfeed::augment {

/// ApplyRandomBinaryOperatorTransform's draws: the one-hot channels to work on, in the order
/// bg2 works on them (a shuffle, then a `u < p_per_label` per channel), each with its operator
/// and footprint radius.
struct BinaryOperatorParams {
  bool apply = false;
  int64_t labels = 0;  ///< one-hot channels of the sample
  int64_t count = 0;   ///< entries used below
  std::array<int64_t, kMaxChannels> channel{};
  std::array<BinaryOperator, kMaxChannels> op{};
  std::array<double, kMaxChannels> radius{};
};

/// RemoveRandomConnectedComponentFromOneHotEncodingTransform's draws: channels in order, and
/// per channel three uniforms in [0, 1): which candidate component, whether to fill it with
/// another class, and which class.
struct RemoveComponentParams {
  bool apply = false;
  int64_t labels = 0;
  int64_t count = 0;
  std::array<int64_t, kMaxChannels> channel{};
  std::array<double, kMaxChannels> pick{};
  std::array<double, kMaxChannels> fill{};
  std::array<double, kMaxChannels> other{};
};

/// Draws for a sample with `labels` one-hot channels. Only the first kMaxChannels channels
/// are drawn; Apply reports a sample with more as invalid.
BinaryOperatorParams DrawBinaryOperatorParams(CounterRng& rng, const BinaryOperatorConfig& config,
                                              int64_t labels);
RemoveComponentParams DrawRemoveComponentParams(CounterRng& rng,
                                                const RemoveComponentConfig& config,
                                                int64_t labels);

/// Work buffers of both steps.
struct CascadeScratch {
  MorphologyScratch morphology;
  ComponentLabels components;
  std::vector<uint8_t> mask;
  std::vector<uint8_t> before;
  std::vector<int32_t> candidates;  ///< components small enough to remove
};

/// Per listed channel a: the channel becomes `op` of (channel != 0) with the radius's
/// footprint (ball in 3D, disk in 2D), and every other one-hot channel is cleared where the
/// operator added voxels, as bg2 does, channel after channel. `onehot` holds exactly the
/// one-hot channels. kInvalidArgument for a channel count other than params.labels.
Status ApplyBinaryOperators(const BinaryOperatorParams& params, SampleView<float> onehot,
                            CascadeScratch& scratch);

/// Per listed channel with any foreground: one of its connected components (full
/// connectivity) of fewer than `config.max_coverage` of the patch's voxels, chosen uniformly,
/// is cleared, and with probability fill_with_other_class_p set in another one-hot channel.
Status ApplyRemoveComponent(const RemoveComponentParams& params,
                            const RemoveComponentConfig& config, SampleView<float> onehot,
                            CascadeScratch& scratch);

/// kInvalidArgument naming the setting if `config` cannot run: probabilities outside [0, 1],
/// a strel range outside [0.5, 127] or reversed, no operator enabled, a coverage outside
/// [0, 1], or more than kMaxChannels foreground labels.
Status ValidateCascadeConfig(const CascadeConfig& config);

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_CASCADE_CASCADE_STEPS_H_
