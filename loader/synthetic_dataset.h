// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_SYNTHETIC_DATASET_H_
#define PATCHFEED_LOADER_SYNTHETIC_DATASET_H_

/// \file
/// Writes a small nnU-Net-like dataset for demos, examples and tests: per case a float32
/// image `<id>.b2nd` of shape (C, Z, Y, X) (a smooth field with bright blobs) and an int16
/// segmentation `<id>_seg.b2nd` of shape (1, Z, Y, X) (two nested labelled spheres), laid out
/// in chunks and blocks as nnU-Net 2.8 writes them unless given. The content is a pure
/// function of the case index, so tests can recompute any voxel. Single-threaded.

#include <cstdint>
#include <string>
#include <vector>

#include "codec/blosc/chunk_format.h"
#include "common/result.h"
#include "loader/dataset.h"

namespace patchfeed::loader {

struct SyntheticDatasetOptions {
  int num_cases = 4;
  int64_t channels = 1;
  /// Spatial shape of case 0; case i adds (i % 3) * 4 voxels to the first axis and (i % 2) * 4
  /// to the last when `vary_shapes`.
  std::vector<int64_t> spatial_shape = {64, 64, 64};
  bool vary_shapes = true;
  /// The patch size nnU-Net's chunk rule sizes chunks for.
  std::vector<int64_t> patch_size = {32, 32, 32};
  /// Explicit chunk and block shapes (all dimensions, channel first); empty: nnU-Net's rule.
  std::vector<int32_t> chunkshape;
  std::vector<int32_t> blockshape;
  codec::Codec codec = codec::Codec::kLZ4HC;
  int clevel = 5;
  codec::Filter filter = codec::Filter::kShuffle;
};

/// Case `i`'s id: "case_000", "case_001", ...
std::string SyntheticCaseId(int i);

/// The spatial shape of case `i`.
std::vector<int64_t> SyntheticCaseShape(const SyntheticDatasetOptions& options, int i);

/// Writes the cases into `folder` (created if needed) and returns
/// Dataset::FromNnUNetFolder(folder). Errors name the file.
Result<Dataset> WriteSyntheticDataset(const std::string& folder,
                                      const SyntheticDatasetOptions& options);

}  // namespace patchfeed::loader

#endif  // PATCHFEED_LOADER_SYNTHETIC_DATASET_H_
