// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_DATASET_H_
#define PATCHFEED_LOADER_DATASET_H_

/// \file
/// A training set as the loader sees it: cases, each with the same named arrays (e.g. `image`
/// of shape (C, Z, Y, X) float32 and `seg` of shape (1, Z, Y, X) int16), each array one `.b2nd`
/// frame (a file, or a sparse-frame directory) or zarr array, in one store (local files, or a
/// remote store whose paths are URLs: storage/remote). A Dataset only names files; nothing is
/// opened until the loader does (Loader::Create probes every case). A value type; thread-safe
/// to read.
///
/// Example (an nnU-Net preprocessed configuration folder):
/// \code
///   PATCHFEED_ASSIGN_OR_RETURN(Dataset ds, Dataset::FromNnUNetFolder(
///       "/data/nnUNet_preprocessed/Dataset004_Hippocampus/nnUNetPlans_3d_fullres"));
///   // ds.array_names() == {"image", "seg"}; ds.case_id(0) == "hippocampus_001"
/// \endcode

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "codec/array_reader.h"
#include "codec/b2nd/b2nd_meta.h"
#include "codec/b2nd/frame_reader.h"
#include "common/result.h"
#include "storage/store.h"

namespace patchfeed::loader {

/// How one array's files are named in a folder: `<case id><suffix>`.
struct ArrayNaming {
  std::string name;    ///< e.g. "seg"
  std::string suffix;  ///< e.g. "_seg.b2nd"
};

/// One case: its id and one path per array, in Dataset::array_names() order.
struct CaseFiles {
  std::string id;
  std::vector<std::string> paths;
};

class Dataset {
 public:
  /// nnU-Net's rule: every `<id>.b2nd` not ending in `_seg.b2nd` is a case, sorted by id; its
  /// arrays are "image" (`<id>.b2nd`) and "seg" (`<id>_seg.b2nd`, which must exist).
  static Result<Dataset> FromNnUNetFolder(
      const std::string& folder,
      std::shared_ptr<const storage::Store> store = storage::LocalFiles());

  /// The general rule: array i's files end in `naming[i].suffix`. A folder entry belongs to
  /// the array with the longest matching suffix; the first array's entries define the case
  /// ids (sorted), and every other array must have a file for each of them (kNotFound naming
  /// the missing file). kInvalidArgument for an empty naming or no cases.
  static Result<Dataset> FromFolder(
      const std::string& folder, std::vector<ArrayNaming> naming,
      std::shared_ptr<const storage::Store> store = storage::LocalFiles());

  /// One case per entry of a zarr group (a directory), sorted by name. With `arrays` empty,
  /// every entry that is a zarr array or an OME-Zarr image group (its highest resolution) is a
  /// case with one array, "image". Otherwise every entry that holds all of `arrays` (paths
  /// inside it, e.g. {"image", "labels/0"}) is a case, whose array names are the paths;
  /// entries holding some but not all are kNotFound naming what is missing. Nothing is opened.
  static Result<Dataset> FromZarrGroup(
      const std::string& group, std::vector<std::string> arrays,
      std::shared_ptr<const storage::Store> store = storage::LocalFiles());

  /// An explicit list; every case needs one path per array name.
  static Result<Dataset> FromList(
      std::vector<std::string> array_names, std::vector<CaseFiles> cases,
      std::shared_ptr<const storage::Store> store = storage::LocalFiles());

  const std::vector<std::string>& array_names() const { return array_names_; }
  /// Index of array `name`, or -1.
  int array_index(std::string_view name) const;
  int64_t num_cases() const { return static_cast<int64_t>(cases_.size()); }
  const std::string& case_id(int64_t i) const { return cases_[static_cast<size_t>(i)].id; }
  const std::string& path(int64_t case_index, int array) const {
    return cases_[static_cast<size_t>(case_index)].paths[static_cast<size_t>(array)];
  }
  const std::vector<CaseFiles>& cases() const { return cases_; }
  /// Where the paths lead (local files, or a remote store whose paths are URLs).
  const std::shared_ptr<const storage::Store>& store() const { return store_; }
  /// Whether a precomputed chunk never written reads as zeros (true, cloud-volume's
  /// fill_missing) or fails the read naming its file (codec::FrameOpenOptions::fill_missing).
  bool fill_missing() const { return fill_missing_; }
  void set_fill_missing(bool fill) { fill_missing_ = fill; }
  /// How every reader of this dataset's arrays opens them.
  codec::FrameOpenOptions OpenOptions(storage::IoMode io_mode) const {
    return {.io_mode = io_mode, .store = store_, .fill_missing = fill_missing_};
  }

 private:
  std::vector<std::string> array_names_;
  std::vector<CaseFiles> cases_;
  std::shared_ptr<const storage::Store> store_ = storage::LocalFiles();
  bool fill_missing_ = true;
};

/// What opening one array's frame tells the loader.
struct ArrayProbe {
  codec::NdGeometry geometry;  ///< shape, chunk and block grids, item size
  std::string dtype;           ///< NumPy dtype string of the b2nd metalayer (may be empty)
  /// Compressed over uncompressed bytes of the frame's chunks: bytes-read metric.
  double compression_ratio = 1.0;
  /// Memory the open frame keeps (header, decoded offsets, bookkeeping).
  int64_t open_state_bytes = 0;
  /// Largest Blosc block and chunk, uncompressed: per-worker scratch.
  int64_t block_bytes = 0;
  int64_t chunk_bytes = 0;
  bool whole_chunks = false;  ///< whole chunks get decoded into scratch (codec::ArrayFootprint)
};

/// Describes an opened array (no further I/O).
ArrayProbe DescribeArray(const codec::ArrayReader& array);

}  // namespace patchfeed::loader

#endif  // PATCHFEED_LOADER_DATASET_H_
