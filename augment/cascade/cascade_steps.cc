// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "augment/cascade/cascade_steps.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "common/str_cat.h"

namespace patchfeed::augment {
namespace {

// bg2's channel selection: `np.random.shuffle(channel_idx)`, then `torch.rand(n) < p` over the
// shuffled list. Writes the kept channels, in order, to `channel`; returns how many.
int64_t DrawChannelOrder(CounterRng& rng, int64_t labels, double p_per_label,
                         std::array<int64_t, kMaxChannels>& channel) {
  const int64_t n = std::min<int64_t>(labels, kMaxChannels);
  std::array<int64_t, kMaxChannels> order{};
  std::iota(order.begin(), order.begin() + n, int64_t{0});
  for (int64_t i = n - 1; i > 0; --i)  // Fisher-Yates
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(rng.UniformInt(0, i))]);
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (rng.UniformDouble() < p_per_label)
      channel[static_cast<size_t>(count++)] = order[static_cast<size_t>(i)];
  }
  return count;
}

Status CheckChannels(int64_t labels, const SampleView<float>& onehot, const char* step) {
  if (onehot.channels != labels || labels > kMaxChannels) {
    return InvalidArgumentError(StrCat(step, ": drawn for ", labels, " one-hot channels, given ",
                                       onehot.channels, " (at most ", kMaxChannels, ")"));
  }
  return Status::Ok();
}

}  // namespace

BinaryOperatorParams DrawBinaryOperatorParams(CounterRng& rng, const BinaryOperatorConfig& config,
                                              int64_t labels) {
  BinaryOperatorParams p;
  p.labels = labels;
  p.apply = DrawGate(rng, config.p_apply);
  if (!p.apply)
    return p;
  p.count = DrawChannelOrder(rng, labels, config.p_per_label, p.channel);
  std::array<BinaryOperator, 4> enabled{};
  int64_t n_enabled = 0;
  for (size_t k = 0; k < config.operators.size(); ++k) {
    if (config.operators[k])
      enabled[static_cast<size_t>(n_enabled++)] = static_cast<BinaryOperator>(k);
  }
  for (int64_t i = 0; i < p.count; ++i) {
    const auto k = static_cast<size_t>(i);
    // np.random.choice(any_of_these), then sample_scalar(strel_size), per channel.
    p.op[k] = n_enabled == 0 ? BinaryOperator::kDilation
                             : enabled[static_cast<size_t>(rng.UniformInt(0, n_enabled - 1))];
    p.radius[k] = SampleUniform(rng, config.strel_size);
  }
  return p;
}

RemoveComponentParams DrawRemoveComponentParams(CounterRng& rng,
                                                const RemoveComponentConfig& config,
                                                int64_t labels) {
  RemoveComponentParams p;
  p.labels = labels;
  p.apply = DrawGate(rng, config.p_apply);
  if (!p.apply)
    return p;
  p.count = DrawChannelOrder(rng, labels, config.p_per_label, p.channel);
  for (int64_t i = 0; i < p.count; ++i) {
    const auto k = static_cast<size_t>(i);
    p.pick[k] = rng.UniformDouble();
    p.fill[k] = rng.UniformDouble();
    p.other[k] = rng.UniformDouble();
  }
  return p;
}

Status ApplyBinaryOperators(const BinaryOperatorParams& params, SampleView<float> onehot,
                            CascadeScratch& scratch) {
  if (!params.apply)
    return Status::Ok();
  PATCHFEED_RETURN_IF_ERROR(CheckChannels(params.labels, onehot, "binary operator"));
  const MaskShape shape = MaskShapeOf(onehot);
  for (int64_t i = 0; i < params.count; ++i) {
    const auto k = static_cast<size_t>(i);
    const int64_t a = params.channel[k];
    PATCHFEED_ASSIGN_OR_RETURN(const Footprint fp,
                               NnUNetFootprint(params.radius[k], onehot.spatial_dims));
    ChannelToMask(onehot.channel(a), scratch.mask);
    scratch.before = scratch.mask;
    PATCHFEED_RETURN_IF_ERROR(
        ApplyBinaryMorphology(params.op[k], fp, shape, scratch.mask, scratch.morphology));
    // Voxels the operator added leave every other one-hot channel.
    for (int64_t oc = 0; oc < onehot.channels; ++oc) {
      if (oc == a)
        continue;
      const SampleView<float> other = onehot.channel(oc);
      const uint8_t* after = scratch.mask.data();
      const uint8_t* before = scratch.before.data();
      if (other.channel_is_contiguous()) {
        for (int64_t v = 0; v < other.spatial_size(); ++v)
          other.data[v] = after[v] > before[v] ? 0.0f : other.data[v];
        continue;
      }
      int64_t m = 0;
      for (int64_t i0 = 0; i0 < other.shape[0]; ++i0) {
        for (int64_t i1 = 0; i1 < other.shape[1]; ++i1) {
          for (int64_t i2 = 0; i2 < other.shape[2]; ++i2, ++m) {
            if (after[m] > before[m])
              other.at(0, i0, i1, i2) = 0.0f;
          }
        }
      }
    }
    MaskToChannel(scratch.mask, onehot.channel(a));
  }
  return Status::Ok();
}

Status ApplyRemoveComponent(const RemoveComponentParams& params,
                            const RemoveComponentConfig& config, SampleView<float> onehot,
                            CascadeScratch& scratch) {
  if (!params.apply)
    return Status::Ok();
  PATCHFEED_RETURN_IF_ERROR(CheckChannels(params.labels, onehot, "remove connected component"));
  const MaskShape shape = MaskShapeOf(onehot);
  // bg2 compares `size < np.uint64(voxels) * fraction` in float64.
  const double limit = static_cast<double>(onehot.spatial_size()) * config.max_coverage;
  std::vector<int32_t>& candidates = scratch.candidates;
  for (int64_t i = 0; i < params.count; ++i) {
    const auto k = static_cast<size_t>(i);
    const int64_t a = params.channel[k];
    ChannelToMask(onehot.channel(a), scratch.mask);
    if (std::find(scratch.mask.begin(), scratch.mask.end(), uint8_t{1}) == scratch.mask.end())
      continue;
    PATCHFEED_RETURN_IF_ERROR(LabelComponents(shape, scratch.mask, scratch.components));
    candidates.clear();
    for (int64_t c = 0; c < scratch.components.count(); ++c) {
      if (static_cast<double>(scratch.components.sizes[static_cast<size_t>(c)]) < limit)
        candidates.push_back(static_cast<int32_t>(c + 1));
    }
    if (candidates.empty())
      continue;
    const auto n = static_cast<int64_t>(candidates.size());
    const int32_t chosen = candidates[static_cast<size_t>(
        std::min<int64_t>(static_cast<int64_t>(params.pick[k] * static_cast<double>(n)), n - 1))];
    int64_t fill_channel = -1;
    if (params.fill[k] < config.fill_with_other_class_p && onehot.channels > 1) {
      // The other channels in index order; bg2 lists them in its shuffled order, which
      // changes which one a draw names, not how likely each is.
      const int64_t others = onehot.channels - 1;
      const int64_t j = std::min<int64_t>(
          static_cast<int64_t>(params.other[k] * static_cast<double>(others)), others - 1);
      fill_channel = j >= a ? j + 1 : j;
    }
    const SampleView<float> channel = onehot.channel(a);
    const int32_t* label = scratch.components.label.data();
    for (int64_t i0 = 0; i0 < channel.shape[0]; ++i0) {
      for (int64_t i1 = 0; i1 < channel.shape[1]; ++i1) {
        for (int64_t i2 = 0; i2 < channel.shape[2]; ++i2) {
          if (*label++ != chosen)
            continue;
          channel.at(0, i0, i1, i2) = 0.0f;
          if (fill_channel >= 0)
            onehot.at(fill_channel, i0, i1, i2) = 1.0f;
        }
      }
    }
  }
  return Status::Ok();
}

Status ValidateCascadeConfig(const CascadeConfig& config) {
  if (!config.enabled())
    return Status::Ok();
  if (static_cast<int64_t>(config.foreground_labels.size()) > kMaxChannels) {
    return InvalidArgumentError(StrCat("cascade augmentation: ", config.foreground_labels.size(),
                                       " foreground labels; at most ", kMaxChannels,
                                       " are supported"));
  }
  const BinaryOperatorConfig& b = config.binary_operator;
  const RemoveComponentConfig& r = config.remove_component;
  const std::pair<const char*, double> probabilities[] = {
      {"p_binary_operator", b.p_apply},
      {"p_binary_operator_per_label", b.p_per_label},
      {"p_remove_component", r.p_apply},
      {"p_remove_component_per_label", r.p_per_label},
      {"fill_with_other_class_p", r.fill_with_other_class_p},
      {"max_component_coverage", r.max_coverage}};
  for (const auto& [name, value] : probabilities) {
    if (!(value >= 0 && value <= 1)) {
      return InvalidArgumentError(
          StrCat("cascade augmentation: ", name, " = ", value, " is not in [0, 1]"));
    }
  }
  if (!(b.strel_size.lo >= 0.5 && b.strel_size.lo <= b.strel_size.hi && b.strel_size.hi <= 127)) {
    return InvalidArgumentError(StrCat("cascade augmentation: the strel size range [",
                                       b.strel_size.lo, ", ", b.strel_size.hi,
                                       "] must be ordered and within [0.5, 127]"));
  }
  if (std::none_of(b.operators.begin(), b.operators.end(), [](bool on) { return on; })) {
    return InvalidArgumentError("cascade augmentation: no binary operator is enabled");
  }
  return Status::Ok();
}

}  // namespace patchfeed::augment
