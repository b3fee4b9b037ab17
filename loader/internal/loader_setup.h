// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_LOADER_SETUP_H_
#define PATCHFEED_LOADER_INTERNAL_LOADER_SETUP_H_

/// \file
/// What Loader::Create works out before the engine starts: the checked configuration, the
/// output arrays, every case's probe and the foreground indexes (case_probe.h), the samplers
/// and the ring. Nothing here runs after Create.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "augment/intensity/deep_supervision.h"
#include "augment/intensity/label_transforms.h"
#include "common/result.h"
#include "loader/dataset.h"
#include "loader/internal/batch_ring.h"
#include "loader/internal/foreground_store.h"
#include "loader/internal/nonfinite_count.h"
#include "loader/internal/open_file_cache.h"
#include "loader/loader.h"
#include "loader/sampler.h"
#include "storage/io_engine.h"

namespace patchfeed::loader::internal_loader {

/// One output array: which dataset array feeds it, its type and how to pad it.
struct OutputArray {
  std::string name;
  int dataset_array = 0;
  std::string dtype;
  int64_t itemsize = 0;
  int64_t channels = 0;
  std::vector<std::byte> pad_item;
  /// False for the cascade's previous-stage segmentation: its arrays have no channel axis
  /// (`channels` is then 1).
  bool channel_axis = true;
  /// LoaderConfig::check_finite on a float array: how to tell its NaN and infinite items.
  std::optional<NonFiniteTest> nonfinite;
};

/// A deep-supervision target after the segmentation in the ring (augmentation only).
struct TargetArray {
  augment::DeepSupervisionScale scale;
  int ring_array = 0;  ///< its index among the ring's arrays
};

struct LoaderParts {
  LoaderConfig config;
  int num_threads = 1;
  std::vector<OutputArray> outputs;
  std::vector<ArrayProbe> probes;  ///< [case * outputs.size() + output]
  std::optional<Sampler> sampler;
  std::optional<Sampler> redraw_sampler;  ///< ErrorPolicy::kSkip: replacements, infinite
  std::unique_ptr<ForegroundStore> foreground;
  std::unique_ptr<OpenFileCache> files;
  /// Reads in flight (IoMode::kPread, io_depth > 0); else null.
  std::unique_ptr<storage::IoEngine> io;
  BatchRing ring;
  /// Augmentation: the 2-D pipeline reads (1, Y, X) slabs of 3-D cases (nnU-Net's `2d`).
  bool slab_2d = false;
  /// Augmentation: the segmentation as regions (AugmentOptions::regions), if any.
  std::optional<augment::RegionTable> regions;
  /// Augmentation: the deep-supervision targets that are arrays of their own.
  std::vector<TargetArray> targets;
  /// Augmentation with nnU-Net's cascade: the output read from AugmentOptions::
  /// previous_seg_array, last in `outputs` and not in the ring (spatial axes only); else -1.
  int previous_seg = -1;
  /// ErrorPolicy::kSkip: the cases left out at start (case_probe.h), in dataset order.
  std::vector<ExcludedCase> excluded;

  const ArrayProbe& probe(int64_t case_index, size_t output) const {
    return probes[static_cast<size_t>(case_index) * outputs.size() + output];
  }
};

/// `shape` as "(a, b, c)", for messages.
std::string ShapeToString(const std::vector<int64_t>& shape);

/// Checks `config` and prepares every part, probing the dataset with `arena`'s `num_threads`
/// workers. kInvalidArgument for inconsistent options or arrays, kResourceExhausted over the
/// memory budget; file errors name the case and file.
Result<LoaderParts> PrepareLoader(LoaderConfig config, int num_threads, tbb::task_arena& arena);

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_LOADER_SETUP_H_
