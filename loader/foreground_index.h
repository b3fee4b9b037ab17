// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_FOREGROUND_INDEX_H_
#define PATCHFEED_LOADER_FOREGROUND_INDEX_H_

/// \file
/// A case's foreground index: per class key, a uniform random subset of the coordinates of the
/// voxels carrying the key's labels, as nnU-Net's `class_locations` (reference section 1.5):
/// n = max(min(10000, T), ceil(0.01 T)) of the T voxels, stored in random order. The sampler
/// centres forced-foreground patches on these voxels.
///
/// Built once from the segmentation `.b2nd` in two streaming passes over slabs of at most
/// ~64 MiB (count, then collect a pre-drawn sorted subset of ranks), so memory stays bounded by
/// one slab plus the kept coordinates, or wrapped around locations computed elsewhere (nnU-Net's
/// `class_locations`, FromLocations). A built index is saved in a cache folder outside the
/// dataset (DefaultCacheDir: patchfeed never writes into a dataset folder) and loaded back on
/// later runs. Immutable after creation: any number of threads may read.
///
/// Example:
/// \code
///   PATCHFEED_ASSIGN_OR_RETURN(ForegroundIndex index,
///                              ForegroundIndex::BuildOrLoad(seg_path, /*keys=*/{}, 1234,
///                                                           /*spatial_dims=*/3, cache_dir));
///   info.foreground_counts = index.counts();
///   // ForegroundVoxelFn: [&](int64_t, int64_t key, int64_t i) { return index.Voxel(key, i); }
/// \endcode

#include <cstdint>
#include <string>
#include <vector>

#include "codec/b2nd/frame_reader.h"
#include "common/result.h"

namespace patchfeed::loader {

/// The label values one class key collects: one label for a class; several for an nnU-Net
/// region, or for the annotated key (-1, 0, 1, ..., K) of a dataset with an ignore label.
using LabelSet = std::vector<int64_t>;

class ForegroundIndex {
 public:
  /// nnU-Net's number of kept voxels for a key with `total` voxels (ceil computed in binary64
  /// as NumPy does).
  static int64_t SampleCount(int64_t total);

  /// The cache folder for built indexes: $PATCHFEED_CACHE_DIR, else $XDG_CACHE_HOME/patchfeed,
  /// else $HOME/.cache/patchfeed, with "/fgindex" appended; "" when none of them is set.
  static std::string DefaultCacheDir();

  /// The file in `cache_dir` that holds the index of `seg_path` built with `keys`, `seed` and
  /// `spatial_dims`: named by a hash of the label map's absolute path and those settings, so
  /// loaders with other settings keep their own. The file records the label map's size and
  /// modification time: a changed label map is rebuilt.
  static std::string CachePath(const std::string& cache_dir, const std::string& seg_path,
                               const std::vector<LabelSet>& keys, uint64_t seed, int spatial_dims);

  /// Scans the label map at `seg_path`: an integer or bool `.b2nd` array whose last
  /// `spatial_dims` axes are spatial (1 to 5 of them, e.g. (Z, Y, X) or (H, W)); the axes before
  /// them are channel axes of size 1 and are dropped, as the loader's (1, *spatial) label maps.
  /// `keys` empty: one key per label > 0
  /// present, ascending (nnU-Net stores -1 outside the body mask, which is not a class). The
  /// same (file, keys, seed) gives the same index. kUnimplemented for float label maps;
  /// kResourceExhausted, naming the file and the bytes, when the index cannot be held in
  /// memory; codec errors name the file. The label map is opened with `open` (the loader's:
  /// positional reads on file systems where mappings are slow or refused).
  static Result<ForegroundIndex> Build(const std::string& seg_path, std::vector<LabelSet> keys,
                                       uint64_t seed, int spatial_dims,
                                       const codec::FrameOpenOptions& open = {});

  /// Loads the index of `seg_path` from `cache_dir` (CachePath) when it was built from this
  /// file as it is now (same size and modification time) with these keys, seed and spatial axes;
  /// otherwise builds it and saves it there (creating the folder). The cache is disposable: a
  /// corrupt or stale file is rebuilt over, and a failed save (no space, read-only) is not an
  /// error, the index is returned and built again next time. `cache_dir` "": never saved.
  static Result<ForegroundIndex> BuildOrLoad(const std::string& seg_path,
                                             std::vector<LabelSet> keys, uint64_t seed,
                                             int spatial_dims, const std::string& cache_dir,
                                             const codec::FrameOpenOptions& open = {});

  /// Reads an index file, validating every field, the coordinates against the shape and a
  /// checksum. kNotFound if missing; kDataLoss naming the file and the fault otherwise.
  static Result<ForegroundIndex> Load(const std::string& path);

  /// Writes the index to `path` atomically (a temporary file renamed over it), so ranks
  /// building the same index at once never see a partial file. kIoError names the path.
  Status Save(const std::string& path) const;

  /// Wraps locations computed elsewhere (e.g. nnU-Net's `class_locations`): `coords[k]` holds
  /// key k's voxels as rows of `row_length` values, either the spatial coordinates or, with
  /// `row_length` = ndim + 1, nnU-Net's rows [0, i0, i1, i2] whose channel column must be 0.
  /// kInvalidArgument for rows outside `spatial_shape`.
  static Result<ForegroundIndex> FromLocations(std::vector<int64_t> spatial_shape,
                                               std::vector<LabelSet> keys,
                                               const std::vector<std::vector<int64_t>>& coords,
                                               int64_t row_length);

  int ndim() const { return static_cast<int>(shape_.size()); }
  const std::vector<int64_t>& spatial_shape() const { return shape_; }
  int64_t num_keys() const { return static_cast<int64_t>(keys_.size()); }
  const std::vector<LabelSet>& keys() const { return keys_; }
  /// Stored voxels per key: CaseInfo::foreground_counts.
  const std::vector<int64_t>& counts() const { return counts_; }
  /// Voxels per key in the whole label map (T; equals counts() for FromLocations).
  const std::vector<int64_t>& totals() const { return totals_; }
  uint64_t seed() const { return seed_; }

  /// Stored voxel `i` of key `key` in spatial coordinates; kInvalidArgument when out of range.
  Result<std::vector<int64_t>> Voxel(int64_t key, int64_t i) const;

  friend bool operator==(const ForegroundIndex&, const ForegroundIndex&) = default;

 private:
  static Result<ForegroundIndex> BuildIndex(const std::string& seg_path, std::vector<LabelSet> keys,
                                            uint64_t seed, int spatial_dims,
                                            const codec::FrameOpenOptions& open,
                                            int64_t* needed_bytes);
  static Result<ForegroundIndex> Parse(const std::string& path, const std::vector<char>& bytes);

  std::vector<int64_t> shape_;
  std::vector<LabelSet> keys_;
  std::vector<int64_t> counts_;
  std::vector<int64_t> totals_;
  std::vector<std::vector<int32_t>> coords_;  ///< per key, count * ndim, row-major
  uint64_t seed_ = 0;
  bool keys_found_ = false;   ///< keys were the labels found, not given
  uint64_t source_size_ = 0;  ///< the segmentation's size and mtime (ns) when built; 0: n/a
  int64_t source_mtime_ns_ = 0;
};

}  // namespace patchfeed::loader

#endif  // PATCHFEED_LOADER_FOREGROUND_INDEX_H_
