// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/loader_setup.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "common/random.h"
#include "common/str_cat.h"
#include "loader/internal/case_probe.h"
#include "loader/internal/memory_budget.h"

namespace patchfeed::loader::internal_loader {

std::string ShapeToString(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t d = 0; d < shape.size(); ++d) {
    s += (d ? ", " : "") + std::to_string(shape[d]);
  }
  return s + ")";
}

namespace {

// nnU-Net's `2d`: a 2-D pipeline over (1, Y, X) crops of 3-D cases.
bool IsSlab2d(const LoaderConfig& c) {
  return c.augment && c.augment->pipeline.spatial_dims == 2 && c.sampler.patch_size.size() == 3 &&
         c.sampler.patch_size[0] == 1;
}

Status CheckOptions(const LoaderConfig& c) {
  if (c.dataset.num_cases() == 0) {
    return InvalidArgumentError("loader: the dataset has no cases");
  }
  if (c.num_threads < 0) {
    return InvalidArgumentError(StrCat("loader: num_threads must be at least 0 (got ",
                                       c.num_threads, "); 0 uses every core"));
  }
  if (c.ring_size < 1) {
    return InvalidArgumentError(
        StrCat("loader: ring_size must be at least 1 (got ", c.ring_size,
               "): the ring holds the batches being read and those you hold; 2 to 4 is usual"));
  }
  if (c.max_open_files < 1) {
    return InvalidArgumentError(
        StrCat("loader: max_open_files must be at least 1 (got ", c.max_open_files, ")"));
  }
  if (c.max_redraws < 0) {
    return InvalidArgumentError(
        StrCat("loader: max_redraws must be at least 0 (got ", c.max_redraws, ")"));
  }
  if (c.min_task_bytes < 0) {
    return InvalidArgumentError(
        StrCat("loader: min_task_bytes must be at least 0 (got ", c.min_task_bytes, ")"));
  }
  if (c.memory_budget < 0) {
    return InvalidArgumentError(
        StrCat("loader: memory_budget must be at least 0 bytes (got ", c.memory_budget, ")"));
  }
  if (c.io_depth < 0 || c.io_depth > storage::IoEngine::kMaxUringDepth) {
    return InvalidArgumentError(StrCat("loader: io_depth must be in [0, ",
                                       storage::IoEngine::kMaxUringDepth, "], not ", c.io_depth));
  }
  if (c.start_epoch < 0 || c.start_batch < 0) {
    return InvalidArgumentError(StrCat("loader: the start position must be >= 0 (got epoch ",
                                       c.start_epoch, ", batch ", c.start_batch, ")"));
  }
  if (!c.sampler.case_weights.empty() &&
      static_cast<int64_t>(c.sampler.case_weights.size()) != c.dataset.num_cases()) {
    return InvalidArgumentError(StrCat("loader: case_weights has ", c.sampler.case_weights.size(),
                                       " weights for ", c.dataset.num_cases(),
                                       " cases; give one per case, in dataset order"));
  }
  if (c.augment) {
    const augment::NnUNetAugmentConfig& a = c.augment->pipeline;
    PATCHFEED_RETURN_IF_ERROR(augment::ValidateNnUNetAugmentConfig(a).WithContext("loader"));
    const bool has_previous = !c.augment->previous_seg_array.empty();
    if (a.cascade.enabled() && (c.augment->seg_array.empty() || !has_previous)) {
      return InvalidArgumentError(
          "loader: nnU-Net's cascade augmentation needs a segmentation array and the previous "
          "stage's segmentation (previous_seg_array, the name of the dataset array holding it)");
    }
    if (!a.cascade.enabled() && has_previous) {
      return InvalidArgumentError(
          "loader: previous_seg_array is read only for nnU-Net's cascade; give "
          "cascade_foreground_labels too, or leave previous_seg_array out");
    }
    const auto dims = static_cast<size_t>(a.spatial_dims);
    const bool slab = IsSlab2d(c);
    if (c.sampler.patch_size.size() != dims && !slab) {
      return InvalidArgumentError(
          StrCat("loader: the augmentation's patch_size has ", dims,
                 " dimensions but patch_size (the crop the sampler draws) has ",
                 c.sampler.patch_size.size(), "; give ", dims,
                 dims == 2 ? ", or a (1, Y, X) crop for 2-D patches from 3-D cases" : ""));
    }
    const size_t lead = slab ? 1 : 0;
    for (size_t d = 0; d < dims; ++d) {
      if (a.patch_size[d] < 1 || a.patch_size[d] > c.sampler.patch_size[d + lead]) {
        return InvalidArgumentError(
            "loader: the augmented patch " +
            ShapeToString({a.patch_size.begin(), a.patch_size.begin() + dims}) +
            " must fit in the sampler's crop " + ShapeToString(c.sampler.patch_size));
      }
    }
    for (const auto& scale : c.augment->deep_supervision_scales) {
      for (size_t d = 0; d < dims; ++d) {
        if (!(scale[d] > 0 && scale[d] <= 1)) {
          return InvalidArgumentError(
              StrCat("loader: deep-supervision scales must be in (0, 1], not ", scale[d]));
        }
      }
    }
    if (!c.augment->regions.empty() && c.augment->seg_array.empty()) {
      return InvalidArgumentError("loader: regions need a segmentation array");
    }
    if (a.dummy_2d && a.patch_size[0] != c.sampler.patch_size[0]) {
      return InvalidArgumentError(StrCat("loader: dummy 2D augmentation needs the crop's axis 0 (",
                                         c.sampler.patch_size[0], ") equal to the patch's (",
                                         a.patch_size[0], ")"));
    }
  }
  return ValidateSamplerConfig(c.sampler);
}

// With augmentation the batch holds the image and the segmentation, in that order.
Status CheckAugmentOutputs(const LoaderConfig& c, const std::vector<OutputArray>& outputs) {
  const AugmentOptions& a = *c.augment;
  std::vector<std::string> want = {a.image_array};
  if (!a.seg_array.empty()) {
    want.push_back(a.seg_array);
  }
  std::vector<std::string> have;
  for (const OutputArray& o : outputs) {
    have.push_back(o.name);
  }
  if (have != want) {
    std::string w;
    for (const auto& n : want) {
      w += (w.empty() ? "'" : ", '") + n + "'";
    }
    return InvalidArgumentError("loader: with augmentation the batch holds exactly " + w +
                                " (set LoaderConfig::arrays to those, or leave it empty)");
  }
  return Status::Ok();
}

Result<std::vector<OutputArray>> ChooseOutputs(const LoaderConfig& c) {
  std::vector<ArrayOptions> wanted = c.arrays;
  if (wanted.empty() && c.augment) {
    wanted.push_back({c.augment->image_array, std::nullopt});
    if (!c.augment->seg_array.empty()) {
      wanted.push_back({c.augment->seg_array, std::nullopt});
    }
  }
  if (wanted.empty()) {
    for (const auto& name : c.dataset.array_names()) {
      wanted.push_back({name, std::nullopt});
    }
  }
  std::vector<OutputArray> outputs;
  for (const ArrayOptions& a : wanted) {
    OutputArray o;
    o.name = a.name;
    o.dataset_array = c.dataset.array_index(a.name);
    if (o.dataset_array < 0) {
      std::string names;
      for (const std::string& n : c.dataset.array_names()) {
        names += (names.empty() ? "'" : ", '") + n + "'";
      }
      return InvalidArgumentError("loader: the dataset has no array '" + a.name +
                                  "'; its arrays are " + names);
    }
    for (const auto& prev : outputs) {
      if (prev.name == a.name) {
        return InvalidArgumentError("loader: array '" + a.name + "' is asked for twice");
      }
    }
    // Stash the pad value as 8 bytes until the dtype is known.
    const bool is_seg = a.name == "seg" || (c.augment && a.name == c.augment->seg_array);
    const double pad = a.pad_value.value_or(is_seg ? -1.0 : 0.0);
    o.pad_item.resize(sizeof(double));
    std::memcpy(o.pad_item.data(), &pad, sizeof(double));
    outputs.push_back(std::move(o));
  }
  return outputs;
}

// The cascade's previous-stage segmentation, read after the batch's arrays. Its pad value is
// 0 in the file's type (which may be unsigned): the reads mark the voxels outside the case -1
// once widened to int16.
Result<OutputArray> PreviousSegOutput(const LoaderConfig& c) {
  OutputArray o;
  o.name = c.augment->previous_seg_array;
  o.dataset_array = c.dataset.array_index(o.name);
  if (o.dataset_array < 0) {
    return InvalidArgumentError("loader: the dataset has no array '" + o.name +
                                "' (previous_seg_array, the previous stage's segmentation)");
  }
  o.channel_axis = false;
  o.pad_item.assign(sizeof(double), std::byte{0});
  return o;
}

bool WantForeground(const LoaderConfig& c) {
  using Mode = ForegroundOptions::Mode;
  if (c.foreground.mode == Mode::kOff) {
    return false;
  }
  if (c.foreground.mode == Mode::kOn) {
    return true;
  }
  const bool forces = c.sampler.oversample_foreground > 0 || c.sampler.annotated_key >= 0;
  return forces && c.dataset.array_index(c.foreground.seg_array) >= 0;
}

// The batch's arrays: the outputs read from the dataset with the patch's shape and, with
// augmentation, the segmentation as regions and the deep-supervision targets after them.
Result<std::vector<RingArraySpec>> RingSpecs(LoaderParts& p) {
  const LoaderConfig& c = p.config;
  const int64_t batch = p.sampler->local_batch_size();
  std::vector<int64_t> patch = c.sampler.patch_size;
  if (c.augment) {
    const int dims = c.augment->pipeline.spatial_dims;
    patch.assign(c.augment->pipeline.patch_size.begin(),
                 c.augment->pipeline.patch_size.begin() + dims);
  }
  std::vector<RingArraySpec> specs;
  for (size_t o = 0; o < p.outputs.size(); ++o) {
    const OutputArray& out = p.outputs[o];
    if (static_cast<int>(o) == p.previous_seg) {
      continue;  // the pipeline's input only
    }
    int64_t channels = out.channels;
    if (o == 0 && c.augment) {
      // The cascade's one-hot channels follow the image's own.
      channels += static_cast<int64_t>(c.augment->pipeline.cascade.foreground_labels.size());
    }
    RingArraySpec s{out.name, out.dtype, out.itemsize, {batch, channels}};
    s.shape.insert(s.shape.end(), patch.begin(), patch.end());
    specs.push_back(std::move(s));
  }
  if (!c.augment || c.augment->seg_array.empty()) {
    return specs;
  }
  RingArraySpec& seg = specs[1];  // with augmentation: image, then the segmentation
  if (!c.augment->regions.empty()) {
    PATCHFEED_ASSIGN_OR_RETURN(augment::RegionTable table,
                               augment::RegionTable::Create(c.augment->regions),
                               "loader: augmentation regions");
    seg.dtype = "|b1";
    seg.itemsize = 1;
    seg.shape[1] = table.num_regions();
    p.regions.emplace(std::move(table));
  }
  const std::vector<std::array<double, 3>>& scales = c.augment->deep_supervision_scales;
  for (size_t k = 0; k < scales.size(); ++k) {
    TargetArray target;
    std::copy(scales[k].begin(), scales[k].end(), target.scale.factor);
    if (augment::IsIdentityScale(target.scale, static_cast<int>(patch.size()))) {
      continue;  // nnU-Net's target is the segmentation itself
    }
    RingArraySpec s = specs[1];  // specs grows here: no reference into it
    s.name = StrCat(specs[1].name, "_ds", k);
    PATCHFEED_RETURN_IF_ERROR(
        augment::DeepSupervisionShape(target.scale, patch, s.shape.data() + 2),
        "loader: deep-supervision scale ", k);
    target.ring_array = static_cast<int>(specs.size());
    p.targets.push_back(target);
    specs.push_back(std::move(s));
  }
  return specs;
}

}  // namespace

Result<LoaderParts> PrepareLoader(LoaderConfig config, int num_threads, tbb::task_arena& arena) {
  PATCHFEED_RETURN_IF_ERROR(CheckOptions(config));
  LoaderParts p;
  PATCHFEED_ASSIGN_OR_RETURN(p.outputs, ChooseOutputs(config));
  if (config.augment) {
    PATCHFEED_RETURN_IF_ERROR(CheckAugmentOutputs(config, p.outputs));
    if (config.augment->pipeline.cascade.enabled()) {
      PATCHFEED_ASSIGN_OR_RETURN(OutputArray previous, PreviousSegOutput(config));
      p.previous_seg = static_cast<int>(p.outputs.size());
      p.outputs.push_back(std::move(previous));
    }
  }
  p.num_threads = num_threads;
  p.config = std::move(config);
  const LoaderConfig& c = p.config;
  p.slab_2d = IsSlab2d(c);
  const codec::FrameOpenOptions open = c.dataset.OpenOptions(c.io_mode);
  p.files = std::make_unique<OpenFileCache>(c.dataset, c.max_open_files, open);
  if (WantForeground(c)) {
    const int seg = c.dataset.array_index(c.foreground.seg_array);
    if (seg < 0) {
      return InvalidArgumentError("loader: foreground sampling needs array '" +
                                  c.foreground.seg_array + "'");
    }
    std::vector<std::string> seg_paths;
    for (int64_t i = 0; i < c.dataset.num_cases(); ++i) {
      seg_paths.push_back(c.dataset.path(i, seg));
    }
    if (!c.foreground.indexes.empty() &&
        static_cast<int64_t>(c.foreground.indexes.size()) != c.dataset.num_cases()) {
      return InvalidArgumentError(StrCat("loader: ", c.foreground.indexes.size(),
                                         " foreground indexes given for ", c.dataset.num_cases(),
                                         " cases"));
    }
    p.foreground = std::make_unique<ForegroundStore>(
        std::move(seg_paths), static_cast<int>(c.sampler.patch_size.size()), c.foreground.keys,
        c.foreground.seed, c.foreground.resident_bytes,
        c.foreground.cache_dir.value_or(ForegroundIndex::DefaultCacheDir()), c.foreground.indexes,
        open);
  }
  PATCHFEED_ASSIGN_OR_RETURN(std::vector<CaseInfo> cases, ProbeCases(arena, p));

  // The sampler sees the cases kept; they report their dataset index (CaseInfo).
  SamplerConfig sampling = c.sampler;
  if (!p.excluded.empty() && !sampling.case_weights.empty()) {
    sampling.case_weights.clear();
    for (const CaseInfo& info : cases) {
      sampling.case_weights.push_back(
          c.sampler.case_weights[static_cast<size_t>(info.dataset_index)]);
    }
  }
  if (c.error_policy == ErrorPolicy::kSkip) {
    SamplerConfig redraw = sampling;
    redraw.seed = Mix64(c.sampler.seed ^ 0x5EDD1A3Bull);
    redraw.epoch_mode = EpochMode::kInfinite;
    redraw.samples_per_epoch = 0;
    PATCHFEED_ASSIGN_OR_RETURN(Sampler s, Sampler::Create(std::move(redraw), cases));
    p.redraw_sampler.emplace(std::move(s));
  }
  {
    PATCHFEED_ASSIGN_OR_RETURN(Sampler s, Sampler::Create(std::move(sampling), std::move(cases)));
    p.sampler.emplace(std::move(s));
  }
  const int64_t per_epoch = p.sampler->batches_per_epoch();
  if (per_epoch >= 0 && c.start_batch > per_epoch) {
    return InvalidArgumentError(StrCat("loader: start batch ", c.start_batch,
                                       " is past the end of the epoch (", per_epoch,
                                       per_epoch == 1 ? " batch" : " batches", ")"));
  }

  PATCHFEED_ASSIGN_OR_RETURN(const std::vector<RingArraySpec> specs, RingSpecs(p));
  PATCHFEED_RETURN_IF_ERROR(CheckMemoryBudget(p, specs));
  PATCHFEED_ASSIGN_OR_RETURN(p.ring, BatchRing::Create(specs, c.ring_size, c.pin_memory));
  if (c.io_mode == storage::IoMode::kPread && c.io_depth > 0) {
    PATCHFEED_ASSIGN_OR_RETURN(p.io, storage::IoEngine::Create(c.io_backend, c.io_depth),
                               "loader: io_backend");
  }

  return p;
}

}  // namespace patchfeed::loader::internal_loader
