// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// ForegroundIndex: nnU-Net's sample sizes (reference section 1.5), labels and uniformity of the
// kept voxels, label maps of several dtypes and layouts written with codec::WriteB2nd, the
// .fgindex round trip and cache rules, every truncation and corruption as kDataLoss naming the
// file, caller-supplied locations, and the index driving the sampler's forced boxes.

#include "loader/foreground_index.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codec/b2nd/frame_writer.h"
#include "common/byte_order.h"
#include "loader/sampler.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::loader {
namespace {

namespace fs = std::filesystem;
using ::testing::_;
using ::testing::AllOf;
using ::testing::HasSubstr;

class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("patchfeed_fgindex_test_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

/// A label map held as int64 and written in the requested dtype with small, ragged chunks so
/// the index reads several slabs and partial chunks.
struct LabelMap {
  std::vector<int64_t> shape;  // as stored, e.g. (1, Z, Y, X)
  std::vector<int64_t> labels;

  void Write(const std::string& path, const std::string& dtype) const {
    const int size = std::stoi(dtype.substr(2));
    std::vector<std::byte> bytes(labels.size() * size);
    for (size_t i = 0; i < labels.size(); ++i) {
      const auto v = static_cast<uint64_t>(labels[i]);
      for (int b = 0; b < size; ++b) {
        const int shift = 8 * (dtype[0] == '>' ? size - 1 - b : b);
        bytes[i * size + b] = static_cast<std::byte>(v >> shift);
      }
    }
    codec::B2ndWriteOptions o;
    for (size_t d = 0; d < shape.size(); ++d) {
      const auto s = static_cast<int32_t>(shape[d]);
      o.chunkshape.push_back(std::min(s, d == 0 ? 7 : 16));
      o.blockshape.push_back(std::min(s, d == 0 ? 3 : 8));
    }
    if (shape.size() == 4) {
      o.chunkshape = {1, 7, 16, 16};
      o.blockshape = {1, 3, 8, 8};
    }
    ASSERT_OK(codec::WriteB2nd(path, bytes, shape, dtype, o));
  }
  // Label at spatial coordinates (the channel axis, if any, has size 1).
  int64_t At(const std::vector<int64_t>& v) const {
    int64_t linear = 0;
    const size_t lead = shape.size() - v.size();
    for (size_t d = 0; d < v.size(); ++d) {
      linear = linear * shape[lead + d] + v[d];
    }
    return labels[linear];
  }
};

// (1, 30, 40, 50): label 1 fills z < 10 (20000 voxels), label 2 a 5^3 cube (125), -1 the last
// two z planes (4000, nnU-Net's outside-the-body marker), 0 elsewhere.
LabelMap TestMap() {
  LabelMap m{{1, 30, 40, 50}, std::vector<int64_t>(30 * 40 * 50)};
  for (int64_t z = 0; z < 30; ++z) {
    for (int64_t y = 0; y < 40; ++y) {
      for (int64_t x = 0; x < 50; ++x) {
        int64_t v = z < 10 ? 1 : z >= 28 ? -1 : 0;
        if (z >= 12 && z < 17 && y >= 30 && y < 35 && x >= 45) {
          v = 2;
        }
        m.labels[(z * 40 + y) * 50 + x] = v;
      }
    }
  }
  return m;
}

std::vector<std::vector<int64_t>> VoxelsOf(const ForegroundIndex& index, int64_t key) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t i = 0; i < index.counts()[key]; ++i) {
    out.push_back(*index.Voxel(key, i));
  }
  return out;
}

TEST(ForegroundIndexTest, SampleCountFollowsNnunet) {
  EXPECT_EQ(ForegroundIndex::SampleCount(0), 0);
  EXPECT_EQ(ForegroundIndex::SampleCount(1), 1);
  EXPECT_EQ(ForegroundIndex::SampleCount(10000), 10000);
  EXPECT_EQ(ForegroundIndex::SampleCount(10001), 10000);
  EXPECT_EQ(ForegroundIndex::SampleCount(1000000), 10000);
  EXPECT_EQ(ForegroundIndex::SampleCount(1000001), 10001);
  EXPECT_EQ(ForegroundIndex::SampleCount(1234567), 12346);
}

TEST(ForegroundIndexTest, KeepsUniformSubsetsOfTheRightLabels) {
  TempDir dir;
  const LabelMap map = TestMap();
  map.Write(dir / "seg.b2nd", "<i2");
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex index,
                       ForegroundIndex::Build(dir / "seg.b2nd", {}, 1234, 3));
  EXPECT_EQ(index.spatial_shape(), (std::vector<int64_t>{30, 40, 50}));
  EXPECT_EQ(index.keys(), (std::vector<LabelSet>{{1}, {2}}));  // found: > 0 only
  EXPECT_EQ(index.totals(), (std::vector<int64_t>{20000, 125}));
  EXPECT_EQ(index.counts(), (std::vector<int64_t>{10000, 125}));
  for (int64_t key = 0; key < 2; ++key) {
    const auto voxels = VoxelsOf(index, key);
    EXPECT_EQ(std::set(voxels.begin(), voxels.end()).size(), voxels.size()) << "duplicates";
    for (const auto& v : voxels) {
      ASSERT_EQ(map.At(v), key + 1);
    }
  }
  // Label 1: every z plane of the 10 should hold ~1/10 of the kept voxels, and the list is
  // in random order rather than scan order.
  std::vector<int64_t> per_z(10);
  int64_t descents = 0;
  const auto voxels = VoxelsOf(index, 0);
  for (size_t i = 0; i < voxels.size(); ++i) {
    ++per_z[voxels[i][0]];
    descents += i > 0 && voxels[i] < voxels[i - 1] ? 1 : 0;
  }
  for (const int64_t n : per_z) {
    EXPECT_NEAR(n, 1000, 6 * std::sqrt(1000.0));
  }
  EXPECT_GT(descents, 4000);

  ASSERT_OK_AND_ASSIGN(const ForegroundIndex again,
                       ForegroundIndex::Build(dir / "seg.b2nd", {}, 1234, 3));
  EXPECT_EQ(again, index);
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex reseeded,
                       ForegroundIndex::Build(dir / "seg.b2nd", {}, 99, 3));
  EXPECT_EQ(reseeded.counts(), index.counts());
  EXPECT_NE(VoxelsOf(reseeded, 0), VoxelsOf(index, 0));
}

TEST(ForegroundIndexTest, GivenKeysRegionsAndDtypes) {
  TempDir dir;
  LabelMap map = TestMap();
  for (const std::string dtype : {"|i1", ">i2", "<i4", "<i8"}) {
    SCOPED_TRACE(dtype);
    map.Write(dir / "seg.b2nd", dtype);
    ASSERT_OK_AND_ASSIGN(const ForegroundIndex index,
                         ForegroundIndex::Build(dir / "seg.b2nd", {{1}, {3}, {2, -1}}, 5, 3));
    EXPECT_EQ(index.totals(), (std::vector<int64_t>{20000, 0, 4125}));
    EXPECT_EQ(index.counts(), (std::vector<int64_t>{10000, 0, 4125}));
    EXPECT_EQ(index.keys()[2], (LabelSet{-1, 2}));  // normalised
    for (const auto& v : VoxelsOf(index, 2)) {
      ASSERT_TRUE(map.At(v) == 2 || map.At(v) == -1);
    }
  }
  // Overlapping keys (regions, or the annotated key beside the classes) share voxels.
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex overlap,
                       ForegroundIndex::Build(dir / "seg.b2nd", {{2}, {2, -1}, {1, 2}}, 5, 3));
  EXPECT_EQ(overlap.counts(), (std::vector<int64_t>{125, 4125, 10000}));
  const std::vector<std::set<int64_t>> allowed = {{2}, {2, -1}, {1, 2}};
  for (int64_t key = 0; key < 3; ++key) {
    for (const auto& v : VoxelsOf(overlap, key)) {
      ASSERT_TRUE(allowed[key].contains(map.At(v))) << "key " << key;
    }
  }
  // (Z, Y, X) without a channel axis, unsigned.
  map.shape = {30, 40, 50};
  std::replace(map.labels.begin(), map.labels.end(), int64_t{-1}, int64_t{200});
  map.Write(dir / "u8.b2nd", "|u1");
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex u8, ForegroundIndex::Build(dir / "u8.b2nd", {}, 5, 3));
  EXPECT_EQ(u8.keys(), (std::vector<LabelSet>{{1}, {2}, {200}}));
  EXPECT_EQ(u8.counts(), (std::vector<int64_t>{10000, 125, 4000}));

  LabelMap f{{4, 4}, std::vector<int64_t>(16)};
  f.Write(dir / "f.b2nd", "<f4");
  EXPECT_THAT(ForegroundIndex::Build(dir / "f.b2nd", {}, 5, 2),
              StatusIs(StatusCode::kUnimplemented, AllOf(HasSubstr("f.b2nd"), HasSubstr("<f4"))));
  LabelMap two{{2, 3, 4, 5}, std::vector<int64_t>(120)};
  two.Write(dir / "two.b2nd", "|u1");
  EXPECT_THAT(ForegroundIndex::Build(dir / "two.b2nd", {}, 5, 3),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("channel")));
  EXPECT_THAT(ForegroundIndex::Build(dir / "missing.b2nd", {}, 5, 3),
              StatusIs(StatusCode::kNotFound, HasSubstr("missing.b2nd")));
}

TEST(ForegroundIndexTest, KeepsOnePercentOfLargeClasses) {
  TempDir dir;
  LabelMap map{{1, 125, 100, 100}, std::vector<int64_t>(1250000)};
  std::fill(map.labels.begin(), map.labels.begin() + 1234567, 1);
  map.Write(dir / "big.b2nd", "|u1");
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex index,
                       ForegroundIndex::Build(dir / "big.b2nd", {}, 1, 3));
  EXPECT_EQ(index.counts(), (std::vector<int64_t>{12346}));
  for (const auto& v : VoxelsOf(index, 0)) {
    ASSERT_EQ(map.At(v), 1);
  }
}

TEST(ForegroundIndexTest, SavesLoadsAndCachesOutsideTheDataset) {
  TempDir dir;
  fs::create_directories(dir / "data");
  const std::string seg = dir / "data/seg.b2nd";
  TestMap().Write(seg, "<i2");
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex built, ForegroundIndex::Build(seg, {}, 7, 3));
  ASSERT_OK(built.Save(dir / "copy.fgindex"));
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex loaded, ForegroundIndex::Load(dir / "copy.fgindex"));
  EXPECT_EQ(loaded, built);
  fs::remove(dir / "copy.fgindex");

  const std::string cache_dir = dir / "cache/fgindex";  // created when first needed
  const std::string cached = ForegroundIndex::CachePath(cache_dir, seg, {}, 7, 3);
  EXPECT_EQ(fs::path(cached).parent_path(), fs::path(cache_dir));
  EXPECT_THAT(fs::path(cached).filename().string(), ::testing::StartsWith("seg.b2nd."));
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex first,
                       ForegroundIndex::BuildOrLoad(seg, {}, 7, 3, cache_dir));
  EXPECT_EQ(first, built);
  ASSERT_TRUE(fs::exists(cached));
  // Nothing is written beside the segmentation.
  std::vector<std::string> listing;
  for (const auto& e : fs::directory_iterator(fs::path(seg).parent_path())) {
    listing.push_back(e.path().filename().string());
  }
  EXPECT_EQ(listing, (std::vector<std::string>{"seg.b2nd"}));
  // A later call loads the file instead of rebuilding and rewriting it.
  const auto stamp = fs::last_write_time(cached) - std::chrono::seconds(5);
  fs::last_write_time(cached, stamp);
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex second,
                       ForegroundIndex::BuildOrLoad(seg, {}, 7, 3, cache_dir));
  EXPECT_EQ(second, built);
  EXPECT_EQ(fs::last_write_time(cached), stamp);
  // Another seed or other keys have a file of their own; the first stays.
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex seed8,
                       ForegroundIndex::BuildOrLoad(seg, {}, 8, 3, cache_dir));
  EXPECT_EQ(seed8.seed(), 8u);
  EXPECT_EQ(ForegroundIndex::Load(ForegroundIndex::CachePath(cache_dir, seg, {}, 8, 3))->seed(),
            8u);
  EXPECT_EQ(fs::last_write_time(cached), stamp);
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex keyed,
                       ForegroundIndex::BuildOrLoad(seg, {{2}}, 8, 3, cache_dir));
  EXPECT_EQ(keyed.keys(), (std::vector<LabelSet>{{2}}));
  EXPECT_NE(ForegroundIndex::CachePath(cache_dir, seg, {{2}}, 8, 3),
            ForegroundIndex::CachePath(cache_dir, seg, {}, 8, 3));
  // A changed segmentation (size and modification time are the file's identity) rebuilds it.
  LabelMap changed = TestMap();
  std::replace(changed.labels.begin(), changed.labels.end(), int64_t{2}, int64_t{5});
  changed.Write(seg, "<i2");
  fs::last_write_time(seg, fs::last_write_time(seg) + std::chrono::seconds(2));
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex fresh,
                       ForegroundIndex::BuildOrLoad(seg, {}, 8, 3, cache_dir));
  EXPECT_EQ(fresh.keys(), (std::vector<LabelSet>{{1}, {5}}));
  // No cache folder: built every time, saved nowhere.
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex uncached,
                       ForegroundIndex::BuildOrLoad(seg, {}, 9, 3, ""));
  EXPECT_EQ(uncached.seed(), 9u);
  EXPECT_FALSE(fs::exists(ForegroundIndex::CachePath(cache_dir, seg, {}, 9, 3)));
}

TEST(ForegroundIndexTest, DefaultCacheDirFollowsTheEnvironment) {
  const auto restore = [](const char* name, const char* old) {
    if (old != nullptr) {
      setenv(name, old, 1);
    } else {
      unsetenv(name);
    }
  };
  const char* pf = std::getenv("PATCHFEED_CACHE_DIR");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string pf_old = pf ? pf : "", xdg_old = xdg ? xdg : "";
  setenv("PATCHFEED_CACHE_DIR", "/somewhere", 1);
  EXPECT_EQ(ForegroundIndex::DefaultCacheDir(), "/somewhere/fgindex");
  unsetenv("PATCHFEED_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(ForegroundIndex::DefaultCacheDir(), "/xdg/patchfeed/fgindex");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_THAT(ForegroundIndex::DefaultCacheDir(), ::testing::EndsWith("/.cache/patchfeed/fgindex"));
  restore("PATCHFEED_CACHE_DIR", pf ? pf_old.c_str() : nullptr);
  restore("XDG_CACHE_HOME", xdg ? xdg_old.c_str() : nullptr);
}

TEST(ForegroundIndexTest, CachesSparseFrameDirectoriesToo) {
  TempDir dir;
  const LabelMap map = TestMap();
  std::vector<std::byte> bytes(map.labels.size());
  std::transform(map.labels.begin(), map.labels.end(), bytes.begin(),
                 [](int64_t v) { return static_cast<std::byte>(v); });
  codec::B2ndWriteOptions o;
  o.chunkshape = {1, 7, 16, 16};
  o.sparse = true;
  const std::string seg = dir / "seg.b2frame";
  ASSERT_OK(codec::WriteB2nd(seg, bytes, map.shape, "|i1", o));
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex built,
                       ForegroundIndex::BuildOrLoad(seg, {}, 3, 3, dir / "c"));
  EXPECT_EQ(built.counts(), (std::vector<int64_t>{10000, 125}));
  const std::string cached = ForegroundIndex::CachePath(dir / "c", seg, {}, 3, 3);
  const auto stamp = fs::last_write_time(cached) - std::chrono::seconds(5);
  fs::last_write_time(cached, stamp);
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex loaded,
                       ForegroundIndex::BuildOrLoad(seg, {}, 3, 3, dir / "c"));
  EXPECT_EQ(loaded, built);
  EXPECT_EQ(fs::last_write_time(cached), stamp);
}

std::vector<char> ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}
void WriteAll(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

TEST(ForegroundIndexTest, CorruptFilesAreDataLossNamingTheFileAndRebuiltInTheCache) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(
      const ForegroundIndex index,
      ForegroundIndex::FromLocations({4, 5, 6}, {{1}, {2, 3}},
                                     {{0, 1, 2, 3, 0, 1, 4, 5}, {0, 0, 0, 0}}, /*row_length=*/4));
  const std::string good = dir / "good.fgindex", bad = dir / "bad.fgindex";
  ASSERT_OK(index.Save(good));
  const std::vector<char> bytes = ReadAll(good);
  const auto data_loss = [&bad](const std::string& what) {
    return StatusIs(StatusCode::kDataLoss, AllOf(HasSubstr(bad), HasSubstr(what)));
  };
  for (size_t n = 0; n < bytes.size(); ++n) {
    WriteAll(bad, std::vector<char>(bytes.begin(), bytes.begin() + n));
    ASSERT_THAT(ForegroundIndex::Load(bad), data_loss("truncated")) << n << " bytes";
  }
  std::vector<char> b = bytes;
  b[0] = 'X';
  WriteAll(bad, b);
  EXPECT_THAT(ForegroundIndex::Load(bad), data_loss("magic"));
  b = bytes;
  b[8] = 2;
  WriteAll(bad, b);
  EXPECT_THAT(ForegroundIndex::Load(bad), data_loss("version 2"));
  b = bytes;
  StoreLE<uint32_t>(b.data() + 20, 0x7fffffff);  // num_keys: refused before allocating
  WriteAll(bad, b);
  EXPECT_THAT(ForegroundIndex::Load(bad), data_loss("truncated"));
  b = bytes;
  b[b.size() - 12] ^= 1;  // the last coordinate, still inside the shape
  WriteAll(bad, b);
  EXPECT_THAT(ForegroundIndex::Load(bad), data_loss("checksum"));
  b = bytes;
  b[b.size() - 12] = 100;  // the last coordinate, outside the shape
  WriteAll(bad, b);
  EXPECT_THAT(ForegroundIndex::Load(bad), data_loss("outside"));
  b = bytes;
  b.push_back(0);
  WriteAll(bad, b);
  EXPECT_THAT(ForegroundIndex::Load(bad), data_loss("after the checksum"));
  EXPECT_THAT(ForegroundIndex::Load(dir / "none.fgindex"), StatusIs(StatusCode::kNotFound, _));

  // BuildOrLoad's cache is its own: a corrupt file there is rebuilt over, not an error.
  TestMap().Write(dir / "seg.b2nd", "<i2");
  const std::string cached = ForegroundIndex::CachePath(dir / "cache", dir / "seg.b2nd", {}, 1, 3);
  fs::create_directories(dir / "cache");
  WriteAll(cached, std::vector<char>(bytes.begin(), bytes.begin() + 30));
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex rebuilt,
                       ForegroundIndex::BuildOrLoad(dir / "seg.b2nd", {}, 1, 3, dir / "cache"));
  EXPECT_EQ(rebuilt.counts(), (std::vector<int64_t>{10000, 125}));
  EXPECT_OK(ForegroundIndex::Load(cached).status());
}

TEST(ForegroundIndexTest, CallerSuppliedLocations) {
  ASSERT_OK_AND_ASSIGN(
      const ForegroundIndex nnunet_rows,
      ForegroundIndex::FromLocations({4, 5, 6}, {{1}, {2}}, {{0, 1, 2, 3, 0, 3, 4, 5}, {}}, 4));
  EXPECT_EQ(nnunet_rows.counts(), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(*nnunet_rows.Voxel(0, 1), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_THAT(nnunet_rows.Voxel(1, 0), StatusIs(StatusCode::kInvalidArgument, _));
  EXPECT_THAT(nnunet_rows.Voxel(2, 0), StatusIs(StatusCode::kInvalidArgument, _));
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex plain,
                       ForegroundIndex::FromLocations({4, 5}, {{1}}, {{3, 4}}, 2));
  EXPECT_EQ(*plain.Voxel(0, 0), (std::vector<int64_t>{3, 4}));
  const auto bad = [](std::vector<int64_t> rows, int64_t row_length) {
    return ForegroundIndex::FromLocations({4, 5}, {{1}}, {std::move(rows)}, row_length).status();
  };
  EXPECT_THAT(bad({1, 3, 4}, 3), StatusIs(StatusCode::kInvalidArgument, HasSubstr("channel")));
  EXPECT_THAT(bad({4, 0}, 2), StatusIs(StatusCode::kInvalidArgument, HasSubstr("outside")));
  EXPECT_THAT(bad({1, 2, 3}, 2), StatusIs(StatusCode::kInvalidArgument, HasSubstr("partial")));
  EXPECT_THAT(bad({1, 2}, 5), StatusIs(StatusCode::kInvalidArgument, _));
}

TEST(ForegroundIndexTest, DrivesTheSamplersForcedBoxes) {
  TempDir dir;
  const LabelMap map = TestMap();
  map.Write(dir / "seg.b2nd", "<i2");
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex index,
                       ForegroundIndex::BuildOrLoad(dir / "seg.b2nd", {}, 1234, 3, ""));
  SamplerConfig c;
  c.patch_size = {8, 9, 10};
  c.batch_size = 3;
  c.oversample_foreground = 1.0;
  ASSERT_OK_AND_ASSIGN(const Sampler s,
                       Sampler::Create(c, {CaseInfo{index.spatial_shape(), index.counts()}}));
  const ForegroundVoxelFn fn = [&index](int64_t, int64_t key, int64_t i) {
    return index.Voxel(key, i);
  };
  std::set<int64_t> classes;
  for (int64_t b = 0; b < 100; ++b) {
    ASSERT_OK_AND_ASSIGN(const auto batch, s.Batch(0, b, fn));
    for (const SampleSpec& spec : batch) {
      classes.insert(spec.foreground_class);
      // Away from the lower border the chosen voxel sits at the patch centre.
      std::vector<int64_t> centre(3);
      bool clamped = false;
      for (int d = 0; d < 3; ++d) {
        centre[d] = spec.box_start[d] + c.patch_size[d] / 2;
        clamped |= spec.box_start[d] == 0;
      }
      if (!clamped) {
        EXPECT_EQ(map.At(centre), spec.foreground_class + 1);
      }
    }
  }
  EXPECT_EQ(classes, (std::set<int64_t>{0, 1}));
}

}  // namespace
}  // namespace patchfeed::loader
