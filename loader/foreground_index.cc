// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/foreground_index.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "codec/b2nd/b2nd_meta.h"
#include "codec/open_array.h"
#include "common/byte_order.h"
#include "common/byte_size.h"
#include "common/random.h"
#include "common/str_cat.h"

namespace patchfeed::loader {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kSlabBytes = int64_t{64} << 20;  // bounds the decoded label map in memory
constexpr int64_t kPieceItems = 4096;              // labels widened to int64 at a time
constexpr size_t kMaxLabels = size_t{1} << 16;     // distinct labels a label map may hold
constexpr int64_t kDrawBytesPerVoxel = 48;         // SortedSubset's set node + sorted rank
constexpr int64_t kVoxelCap = int64_t{1} << 56;    // voxel counts saturate here

int64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : INT64_MAX;
}

struct LabelType {
  bool is_signed = false;
  int size = 0;
  bool swap = false;  // big-endian on a little-endian host
};

Result<LabelType> LabelTypeOf(const std::string& path, const std::string& dtype, int64_t itemsize) {
  LabelType t;
  if (dtype.size() >= 3 && (dtype[1] == 'i' || dtype[1] == 'u' || dtype[1] == 'b')) {
    t.is_signed = dtype[1] == 'i';
    t.size = static_cast<int>(itemsize);
    t.swap = dtype[0] == '>';
    if (itemsize == 1 || itemsize == 2 || itemsize == 4 || itemsize == 8) {
      return t;
    }
  }
  return UnimplementedError(path + ": a foreground index needs an integer label map, dtype is '" +
                            dtype + "'");
}

template <typename T>
void WidenLabels(const std::byte* src, int64_t n, bool swap, int64_t* dst) {
  for (int64_t i = 0; i < n; ++i) {
    T v = LoadLE<T>(src + i * static_cast<int64_t>(sizeof(T)));
    dst[i] = static_cast<int64_t>(swap ? ByteSwap(v) : v);
  }
}

void WidenLabels(const LabelType& t, const std::byte* src, int64_t n, int64_t* dst) {
  switch (t.size * (t.is_signed ? -1 : 1)) {
    case -1:
      return WidenLabels<int8_t>(src, n, t.swap, dst);
    case -2:
      return WidenLabels<int16_t>(src, n, t.swap, dst);
    case -4:
      return WidenLabels<int32_t>(src, n, t.swap, dst);
    case -8:
      return WidenLabels<int64_t>(src, n, t.swap, dst);
    case 1:
      return WidenLabels<uint8_t>(src, n, t.swap, dst);
    case 2:
      return WidenLabels<uint16_t>(src, n, t.swap, dst);
    case 4:
      return WidenLabels<uint32_t>(src, n, t.swap, dst);
    default:
      return WidenLabels<uint64_t>(src, n, t.swap, dst);
  }
}

/// Calls fn(linear index, label) for every voxel in C order (channel axes of size 1 do not
/// change the linear index). Reads slabs along the outermost axis whose inner planes fit in
/// kSlabBytes, walking the axes before it one index at a time, so memory stays bounded however
/// wide a plane is; a slab is chunk-thick (or whole blocks) so no block is decoded twice when
/// the planes are small.
template <typename Fn>
Status ScanLabels(const codec::ArrayReader& reader, const LabelType& type, Fn&& fn) {
  const codec::NdGeometry& g = reader.geometry();
  const int n = g.ndim;
  std::vector<int64_t> after(static_cast<size_t>(n) + 1, 1);  // items per unit of each axis
  for (int d = n - 1; d >= 0; --d) {
    after[d] = after[d + 1] * g.shape[d];
  }
  int axis = 0;
  while (after[axis + 1] * g.itemsize > kSlabBytes) {
    ++axis;  // stops at the last axis at the latest: one item fits
  }
  const int64_t unit = after[axis + 1];  // items per index along the slab axis
  const int64_t fit = std::max<int64_t>(kSlabBytes / (unit * g.itemsize), 1);
  int64_t thick = g.chunkshape[axis];
  if (thick > fit) {
    const int64_t block = g.blockshape[axis];
    thick = fit >= block ? fit / block * block : fit;
  }
  std::vector<std::byte> slab;
  std::vector<int64_t> labels(kPieceItems);
  const std::vector<std::byte> pad(static_cast<size_t>(g.itemsize));
  codec::BoxReadScratch scratch;
  codec::Box box{std::vector<int64_t>(n, 0), g.shape};
  std::vector<int64_t> extent = g.shape;
  for (int d = 0; d < axis; ++d) {
    box.stop[d] = 1;
    extent[d] = 1;
  }
  const int64_t outer_count = g.shape[0] == 0 ? 0 : after[0] / after[axis];
  for (int64_t outer = 0; outer < outer_count; ++outer) {
    int64_t rest = outer;  // unravel the outer axes' indices
    for (int d = axis - 1; d >= 0; --d) {
      box.start[d] = rest % g.shape[d];
      box.stop[d] = box.start[d] + 1;
      rest /= g.shape[d];
    }
    for (int64_t z = 0; z < g.shape[axis]; z += thick) {
      box.start[axis] = z;
      box.stop[axis] = std::min(z + thick, g.shape[axis]);
      extent[axis] = box.stop[axis] - z;
      const int64_t items = extent[axis] * unit;
      slab.resize(static_cast<size_t>(items * g.itemsize));
      PATCHFEED_RETURN_IF_ERROR(reader.ReadBox(
          box, codec::NdView::Contiguous(slab.data(), extent, g.itemsize), pad, scratch));
      const int64_t first = outer * after[axis] + z * unit;
      for (int64_t i = 0; i < items; i += kPieceItems) {
        const int64_t count = std::min(kPieceItems, items - i);
        WidenLabels(type, slab.data() + i * g.itemsize, count, labels.data());
        for (int64_t k = 0; k < count; ++k) {
          fn(first + i + k, labels[k]);
        }
      }
    }
  }
  return Status::Ok();
}

/// Label -> keys containing it, remembering the last label: label maps are long runs.
class KeyLookup {
 public:
  explicit KeyLookup(const std::vector<LabelSet>& keys) {
    for (size_t k = 0; k < keys.size(); ++k) {
      for (const int64_t label : keys[k]) {
        map_[label].push_back(static_cast<int32_t>(k));
      }
    }
  }
  const std::vector<int32_t>& KeysOf(int64_t label) {
    if (last_ == nullptr || label != last_label_) {
      const auto it = map_.find(label);
      last_ = it == map_.end() ? &none_ : &it->second;
      last_label_ = label;
    }
    return *last_;
  }

 private:
  std::unordered_map<int64_t, std::vector<int32_t>> map_;
  std::vector<int32_t> none_;
  int64_t last_label_ = 0;
  const std::vector<int32_t>* last_ = nullptr;
};

/// `n` distinct ranks drawn uniformly from [0, total), ascending (Floyd's algorithm: O(n)
/// draws and memory however large `total` is).
std::vector<int64_t> SortedSubset(int64_t n, int64_t total, CounterRng& rng) {
  std::unordered_set<int64_t> chosen;
  chosen.reserve(static_cast<size_t>(n));
  for (int64_t j = total - n; j < total; ++j) {
    if (!chosen.insert(rng.UniformInt(0, j)).second) {
      chosen.insert(j);
    }
  }
  std::vector<int64_t> ranks(chosen.begin(), chosen.end());
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

void NormalizeKeys(std::vector<LabelSet>& keys) {
  for (LabelSet& k : keys) {
    std::sort(k.begin(), k.end());
    k.erase(std::unique(k.begin(), k.end()), k.end());
  }
}

// The segmentation's size and latest modification time (ns), to tell a stale index; {0, 0}
// when unknown. A sparse frame is a directory: its files are summed, their latest time taken.
std::pair<uint64_t, int64_t> SourceStamp(const std::string& path) {
  std::error_code ec;
  bool failed = false;
  const auto check = [&ec, &failed] { failed |= static_cast<bool>(ec); };
  uint64_t size = 0;
  fs::file_time_type latest = fs::last_write_time(path, ec);
  check();
  if (fs::is_directory(path, ec)) {
    for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
      size += e.is_regular_file(ec) ? e.file_size(ec) : 0;
      check();
      latest = std::max(latest, e.last_write_time(ec));
      check();
    }
  } else {
    size = fs::file_size(path, ec);
  }
  check();
  if (failed) {
    return {0, 0};
  }
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(latest.time_since_epoch());
  return {size, ns.count()};
}

}  // namespace

int64_t ForegroundIndex::SampleCount(int64_t total) {
  const auto one_percent = static_cast<int64_t>(std::ceil(static_cast<double>(total) * 0.01));
  return std::max(std::min<int64_t>(10000, total), one_percent);
}

std::string ForegroundIndex::DefaultCacheDir() {
  for (const char* var : {"PATCHFEED_CACHE_DIR", "XDG_CACHE_HOME", "HOME"}) {
    const char* value = std::getenv(var);
    if (value == nullptr || *value == '\0') {
      continue;
    }
    const fs::path base(value);
    if (std::string_view(var) == "PATCHFEED_CACHE_DIR") {
      return (base / "fgindex").string();
    }
    return (std::string_view(var) == "HOME" ? base / ".cache" / "patchfeed" / "fgindex"
                                            : base / "patchfeed" / "fgindex")
        .string();
  }
  return "";
}

std::string ForegroundIndex::CachePath(const std::string& cache_dir, const std::string& seg_path,
                                       const std::vector<LabelSet>& keys, uint64_t seed,
                                       int spatial_dims) {
  std::error_code ec;
  fs::path absolute = fs::absolute(seg_path, ec);
  if (ec) {
    absolute = seg_path;
  }
  std::vector<LabelSet> normalized = keys;
  NormalizeKeys(normalized);
  std::string identity = StrCat(absolute.lexically_normal().string(), "|", seed, "|", spatial_dims,
                                "|", keys.empty() ? "found" : "given");
  for (const LabelSet& key : normalized) {
    identity += "|";
    for (const int64_t label : key) {
      identity += StrCat(label, ",");
    }
  }
  uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a
  for (const char c : identity) {
    h = (h ^ static_cast<uint8_t>(c)) * 0x100000001B3ull;
  }
  char name[32];
  std::snprintf(name, sizeof(name), "%016llx.fgindex", static_cast<unsigned long long>(h));
  // The label map's own name first, so a person looking into the cache sees whose it is.
  return (fs::path(cache_dir) / (fs::path(seg_path).filename().string() + "." + name)).string();
}

Result<ForegroundIndex> ForegroundIndex::Build(const std::string& seg_path,
                                               std::vector<LabelSet> keys, uint64_t seed,
                                               int spatial_dims,
                                               const codec::FrameOpenOptions& open) {
  // An index of a huge label map can need more memory than there is (1 % of its voxels);
  // the failed allocation becomes an error naming the file, not a terminated process.
  int64_t needed = 0;
  try {
    return BuildIndex(seg_path, std::move(keys), seed, spatial_dims, open, &needed);
  } catch (const std::bad_alloc&) {
    return ResourceExhaustedError(
        seg_path + ": not enough memory for its foreground index" +
        (needed > 0 ? " (" + std::to_string(needed) + " bytes for the kept voxels)" : ""));
  }
}

Result<ForegroundIndex> ForegroundIndex::BuildIndex(const std::string& seg_path,
                                                    std::vector<LabelSet> keys, uint64_t seed,
                                                    int spatial_dims,
                                                    const codec::FrameOpenOptions& open,
                                                    int64_t* needed_bytes) {
  if (spatial_dims < 1 || spatial_dims > codec::kMaxDims) {
    return InvalidArgumentError(StrCat(seg_path, ": a foreground index has 1 to ", codec::kMaxDims,
                                       " spatial axes, not ", spatial_dims));
  }
  PATCHFEED_ASSIGN_OR_RETURN(const std::unique_ptr<codec::ArrayReader> opened,
                             codec::OpenArray(seg_path, open));
  const codec::ArrayReader& reader = *opened;
  const codec::NdGeometry& g = reader.geometry();
  PATCHFEED_ASSIGN_OR_RETURN(const LabelType type,
                             LabelTypeOf(seg_path, reader.dtype(), g.itemsize));
  if (g.ndim < spatial_dims) {
    return InvalidArgumentError(StrCat(seg_path, ": the label map has ", g.ndim,
                                       " axes, fewer than the ", spatial_dims, " spatial ones"));
  }
  const int lead = g.ndim - spatial_dims;  // channel axes before the spatial ones
  if (std::find(g.shape.begin(), g.shape.end(), 0) != g.shape.end()) {
    return InvalidArgumentError(seg_path + ": the label map is empty");
  }
  for (int d = 0; d < lead; ++d) {
    if (g.shape[d] != 1) {
      return InvalidArgumentError(StrCat(seg_path, ": a label map has one channel, this array has ",
                                         g.shape[d], " on axis ", d));
    }
  }
  ForegroundIndex index;
  index.shape_.assign(g.shape.begin() + lead, g.shape.end());
  for (const int64_t s : index.shape_) {
    if (s > std::numeric_limits<int32_t>::max()) {
      return UnimplementedError(seg_path + ": axes longer than 2^31 - 1 voxels");
    }
  }
  // All voxels of one key is the worst case; refused up front when it cannot fit, rather than
  // after scanning a label map that large (a 1 TiB map takes most of an hour).
  int64_t voxels = 1;
  for (const int64_t s : index.shape_) {
    voxels = s > kVoxelCap / voxels ? kVoxelCap : voxels * s;
  }
  const int64_t worst = SampleCount(voxels) * (index.ndim() * 4 + kDrawBytesPerVoxel);
  const int64_t memory = PhysicalMemoryBytes();
  if (worst > memory) {
    return ResourceExhaustedError(StrCat(
        seg_path, ": the foreground index of its ", voxels, " voxels may need up to ",
        FormatBytes(worst), ", more than this machine's ", FormatBytes(memory), " of memory"));
  }
  index.seed_ = seed;
  index.keys_found_ = keys.empty();
  std::tie(index.source_size_, index.source_mtime_ns_) = SourceStamp(seg_path);

  // Pass 1: voxels per label, counted in runs.
  std::unordered_map<int64_t, int64_t> per_label;
  int64_t run_label = 0, run = 0;
  bool too_many_labels = false;
  PATCHFEED_RETURN_IF_ERROR(ScanLabels(reader, type, [&](int64_t, int64_t label) {
    if (label != run_label) {
      per_label[run_label] += run;
      run_label = label;
      run = 0;
      too_many_labels |= per_label.size() > kMaxLabels;
    }
    ++run;
  }));
  per_label[run_label] += run;
  if (too_many_labels) {
    return InvalidArgumentError(
        StrCat(seg_path, ": more than ", kMaxLabels,
               " distinct labels; a foreground index is for label maps with few classes"));
  }
  if (keys.empty()) {
    for (const auto& [label, n] : per_label) {
      if (label > 0 && n > 0) {
        keys.push_back({label});
      }
    }
    std::sort(keys.begin(), keys.end());
  }
  NormalizeKeys(keys);
  const size_t num_keys = keys.size();
  index.keys_ = std::move(keys);
  index.totals_.assign(num_keys, 0);
  for (size_t k = 0; k < num_keys; ++k) {
    for (const int64_t label : index.keys_[k]) {
      const auto it = per_label.find(label);
      index.totals_[k] += it == per_label.end() ? 0 : it->second;
    }
  }

  // Pass 2: keep the voxels whose rank within their key was drawn beforehand.
  const int ndim = index.ndim();
  std::vector<std::vector<int64_t>> ranks(num_keys);
  std::vector<int64_t> seen(num_keys, 0), next(num_keys, 0);
  index.counts_.resize(num_keys);
  index.coords_.resize(num_keys);
  for (size_t k = 0; k < num_keys; ++k) {
    index.counts_[k] = SampleCount(index.totals_[k]);
    // The kept coordinates, and while drawing them a hash set and a list of ranks.
    *needed_bytes += index.counts_[k] * (ndim * 4 + kDrawBytesPerVoxel);
  }
  for (size_t k = 0; k < num_keys; ++k) {
    if (index.counts_[k] < index.totals_[k]) {
      CounterRng rng(StreamId{.seed = seed, .position = static_cast<uint32_t>(k), .stream = 1});
      ranks[k] = SortedSubset(index.counts_[k], index.totals_[k], rng);
    }
    index.coords_[k].reserve(index.counts_[k] * ndim);
  }
  KeyLookup lookup(index.keys_);
  PATCHFEED_RETURN_IF_ERROR(ScanLabels(reader, type, [&](int64_t linear, int64_t label) {
    for (const int32_t k : lookup.KeysOf(label)) {
      const int64_t rank = seen[k]++;
      if (ranks[k].empty() ? rank >= index.counts_[k]
                           : next[k] >= index.counts_[k] || ranks[k][next[k]] != rank) {
        continue;
      }
      ++next[k];
      std::vector<int32_t>& out = index.coords_[k];
      out.resize(out.size() + ndim);
      int64_t rest = linear;  // unravel the C-order index
      for (int d = ndim - 1; d >= 0; --d) {
        out[out.size() - ndim + d] = static_cast<int32_t>(rest % index.shape_[d]);
        rest /= index.shape_[d];
      }
    }
  }));
  for (size_t k = 0; k < num_keys; ++k) {
    if (seen[k] != index.totals_[k] ||
        static_cast<int64_t>(index.coords_[k].size()) != index.counts_[k] * ndim) {
      return DataLossError(seg_path + ": label map changed while it was being indexed");
    }
    // Stored in random order, as nnU-Net's: a prefix of the list is a uniform sample too.
    CounterRng rng(StreamId{.seed = seed, .position = static_cast<uint32_t>(k), .stream = 2});
    std::vector<int32_t>& c = index.coords_[k];
    for (int64_t i = index.counts_[k] - 1; i > 0; --i) {
      std::swap_ranges(c.begin() + i * ndim, c.begin() + (i + 1) * ndim,
                       c.begin() + rng.UniformInt(0, i) * ndim);
    }
  }
  return index;
}

Result<ForegroundIndex> ForegroundIndex::BuildOrLoad(const std::string& seg_path,
                                                     std::vector<LabelSet> keys, uint64_t seed,
                                                     int spatial_dims, const std::string& cache_dir,
                                                     const codec::FrameOpenOptions& open) {
  if (cache_dir.empty()) {
    return Build(seg_path, std::move(keys), seed, spatial_dims, open);
  }
  const std::string index_path = CachePath(cache_dir, seg_path, keys, seed, spatial_dims);
  std::error_code ec;
  if (fs::exists(index_path, ec)) {
    // A file that does not load (corrupt, an older format) is rebuilt over: it is our cache.
    Result<ForegroundIndex> loaded = Load(index_path);
    std::vector<LabelSet> wanted = keys;
    NormalizeKeys(wanted);
    const auto [size, mtime] = SourceStamp(seg_path);
    if (loaded.ok()) {
      const bool same_keys =
          keys.empty() ? loaded->keys_found_ : !loaded->keys_found_ && loaded->keys_ == wanted;
      if (same_keys && loaded->seed_ == seed && loaded->ndim() == spatial_dims &&
          loaded->source_size_ == size && loaded->source_mtime_ns_ == mtime &&
          (size != 0 || mtime != 0)) {
        return loaded;
      }
    }
  }
  PATCHFEED_ASSIGN_OR_RETURN(ForegroundIndex index,
                             Build(seg_path, std::move(keys), seed, spatial_dims, open));
  fs::create_directories(cache_dir, ec);
  (void)index.Save(index_path);  // best effort: see the header
  return index;
}

Result<ForegroundIndex> ForegroundIndex::FromLocations(
    std::vector<int64_t> spatial_shape, std::vector<LabelSet> keys,
    const std::vector<std::vector<int64_t>>& coords, int64_t row_length) {
  const auto ndim = static_cast<int64_t>(spatial_shape.size());
  if (ndim == 0 || keys.size() != coords.size() || (row_length != ndim && row_length != ndim + 1)) {
    return InvalidArgumentError(
        "foreground locations: need a spatial shape, one coordinate list per key and rows of "
        "ndim or ndim + 1 values");
  }
  for (const int64_t s : spatial_shape) {
    if (s <= 0 || s > std::numeric_limits<int32_t>::max()) {
      return InvalidArgumentError("foreground locations: spatial sizes must be in [1, 2^31)");
    }
  }
  ForegroundIndex index;
  index.shape_ = std::move(spatial_shape);
  index.keys_ = std::move(keys);
  const int64_t skip = row_length - ndim;  // nnU-Net's leading channel column
  for (size_t k = 0; k < coords.size(); ++k) {
    const std::vector<int64_t>& rows = coords[k];
    if (rows.size() % row_length != 0) {
      return InvalidArgumentError(StrCat("foreground locations: key ", k, " has a partial row"));
    }
    const int64_t n = static_cast<int64_t>(rows.size()) / row_length;
    std::vector<int32_t> out(n * ndim);
    for (int64_t i = 0; i < n; ++i) {
      if (skip != 0 && rows[i * row_length] != 0) {
        return InvalidArgumentError(
            StrCat("foreground locations: key ", k, " row ", i, " has channel index != 0"));
      }
      for (int64_t d = 0; d < ndim; ++d) {
        const int64_t v = rows[i * row_length + skip + d];
        if (v < 0 || v >= index.shape_[d]) {
          return InvalidArgumentError(
              StrCat("foreground locations: key ", k, " row ", i, " lies outside the shape"));
        }
        out[i * ndim + d] = static_cast<int32_t>(v);
      }
    }
    index.counts_.push_back(n);
    index.coords_.push_back(std::move(out));
  }
  index.totals_ = index.counts_;
  return index;
}

Result<std::vector<int64_t>> ForegroundIndex::Voxel(int64_t key, int64_t i) const {
  if (key < 0 || key >= num_keys() || i < 0 || i >= counts_[key]) {
    return InvalidArgumentError(StrCat("foreground index: no voxel ", i, " of key ", key));
  }
  const int n = ndim();
  const int32_t* row = coords_[key].data() + i * n;
  return std::vector<int64_t>(row, row + n);
}

}  // namespace patchfeed::loader
