// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/foreground_store.h"

#include <filesystem>
#include <numeric>
#include <system_error>
#include <utility>

#include "common/str_cat.h"

namespace patchfeed::loader::internal_loader {

ForegroundStore::ForegroundStore(std::vector<std::string> seg_paths, int spatial_dims,
                                 std::vector<LabelSet> keys, uint64_t seed, int64_t resident_bytes,
                                 std::string cache_dir,
                                 std::vector<std::shared_ptr<const ForegroundIndex>> given,
                                 codec::FrameOpenOptions open)
    : seg_paths_(std::move(seg_paths)),
      spatial_dims_(spatial_dims),
      cache_dir_(std::move(cache_dir)),
      open_(std::move(open)),
      keys_(std::move(keys)),
      seed_(seed),
      resident_cap_(resident_bytes),
      counts_(seg_paths_.size()),
      resident_(std::move(given)) {
  resident_.resize(seg_paths_.size());
}

Status ForegroundStore::Prepare(int64_t case_index) {
  const auto i = static_cast<size_t>(case_index);
  if (resident_[i] != nullptr) {  // given
    if (resident_[i]->ndim() != spatial_dims_) {
      return InvalidArgumentError(StrCat("foreground index of ", seg_paths_[i], ": given with ",
                                         resident_[i]->ndim(), " spatial axes, the patch has ",
                                         spatial_dims_));
    }
    counts_[i] = resident_[i]->counts();
    return Status::Ok();
  }
  auto index =
      ForegroundIndex::BuildOrLoad(seg_paths_[i], keys_, seed_, spatial_dims_, cache_dir_, open_);
  if (!index.ok()) {
    return index.status().WithContext("foreground index of " + seg_paths_[i]);
  }
  counts_[i] = index->counts();
  const int64_t voxels = std::accumulate(counts_[i].begin(), counts_[i].end(), int64_t{0});
  const int64_t bytes = voxels * index->ndim() * 4 + 256;
  std::error_code ec;
  // An index that is not in the cache could only be rebuilt from the label map: keep it.
  const bool reloadable =
      !cache_dir_.empty() &&
      std::filesystem::exists(
          ForegroundIndex::CachePath(cache_dir_, seg_paths_[i], keys_, seed_, spatial_dims_), ec);
  if (!reloadable ||
      resident_total_.fetch_add(bytes, std::memory_order_relaxed) + bytes <= resident_cap_) {
    resident_[i] = std::make_shared<const ForegroundIndex>(std::move(*index));
  } else {
    resident_total_.fetch_sub(bytes, std::memory_order_relaxed);
  }
  return Status::Ok();
}

Result<ForegroundStore::Index> ForegroundStore::Lazy(int64_t case_index) const {
  {
    std::lock_guard lock(mu_);
    for (auto it = lazy_.begin(); it != lazy_.end(); ++it) {
      if (it->first == case_index) {
        lazy_.splice(lazy_.begin(), lazy_, it);
        return it->second;
      }
    }
  }
  const auto i = static_cast<size_t>(case_index);
  // Loads the saved file; rebuilds (and retries the save) only when it is gone or stale.
  auto loaded =
      ForegroundIndex::BuildOrLoad(seg_paths_[i], keys_, seed_, spatial_dims_, cache_dir_, open_);
  if (!loaded.ok()) {
    return loaded.status().WithContext("foreground index of " + seg_paths_[i]);
  }
  if (loaded->counts() != counts_[i]) {
    return DataLossError(
        "foreground index of " + seg_paths_[i] + " changed since the loader started (" +
        ForegroundIndex::CachePath(cache_dir_, seg_paths_[i], keys_, seed_, spatial_dims_) +
        " or the label map was rewritten)");
  }
  auto index = std::make_shared<const ForegroundIndex>(std::move(*loaded));
  Index evicted;
  std::lock_guard lock(mu_);
  lazy_.emplace_front(case_index, index);
  if (lazy_.size() > kLazyCacheSize) {
    evicted = std::move(lazy_.back().second);
    lazy_.pop_back();
  }
  return index;
}

Result<std::vector<int64_t>> ForegroundStore::Voxel(int64_t case_index, int64_t key,
                                                    int64_t voxel) const {
  if (case_index < 0 || case_index >= static_cast<int64_t>(resident_.size())) {
    return InvalidArgumentError(StrCat("foreground: case ", case_index, " out of range"));
  }
  const Index& resident = resident_[static_cast<size_t>(case_index)];
  if (resident) {
    return resident->Voxel(key, voxel);
  }
  PATCHFEED_ASSIGN_OR_RETURN(const Index index, Lazy(case_index));
  return index->Voxel(key, voxel);
}

}  // namespace patchfeed::loader::internal_loader
