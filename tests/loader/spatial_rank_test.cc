// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Datasets of every spatial rank the loader takes (1-D to 5-D after the channel axis): batches
// equal naive reads, with and without foreground oversampling, and forced samples hold their
// class. Label maps are (1, *spatial) as nnU-Net stores them, so a 2-D case is (1, H, W).

#include <cstdint>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codec/b2nd/frame_writer.h"
#include "loader/foreground_index.h"
#include "loader/loader.h"
#include "tests/loader/loader_testutil.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::loader {
namespace {

using testing::ExpectMatchesNaiveRead;
using testing::TempDir;

struct RankCase {
  std::vector<int64_t> spatial;  // of case 0; later cases add one voxel to the first axis
  std::vector<int64_t> patch;

  friend void PrintTo(const RankCase& rc, std::ostream* os) {
    *os << rc.spatial.size() << "-D spatial, patch of " << rc.patch.size() << " axes";
  }
};

std::string Name(const ::testing::TestParamInfo<RankCase>& info) {
  return std::to_string(info.param.spatial.size()) + "d";
}

// Writes `cases` cases of a float32 image (2, *spatial) and an int16 label map (1, *spatial)
// with label 1 on a sparse random set of voxels, in chunks and blocks smaller than the patch.
Dataset WriteCases(const std::string& folder, const RankCase& rc, int cases) {
  std::vector<CaseFiles> files;
  std::mt19937 rng(7);
  for (int i = 0; i < cases; ++i) {
    std::vector<int64_t> spatial = rc.spatial;
    spatial[0] += i;
    int64_t voxels = 1;
    for (const int64_t s : spatial) {
      voxels *= s;
    }
    std::vector<float> image(static_cast<size_t>(2 * voxels));
    for (float& v : image) {
      v = static_cast<float>(rng() % 1000);
    }
    std::vector<int16_t> seg(static_cast<size_t>(voxels));
    for (int16_t& v : seg) {
      v = rng() % 50 == 0 ? 1 : 0;
    }
    seg[static_cast<size_t>(voxels / 2)] = 1;  // never without foreground
    codec::B2ndWriteOptions o;
    o.chunkshape = {1};
    o.blockshape = {1};
    for (const int64_t s : spatial) {
      o.chunkshape.push_back(static_cast<int32_t>((s + 1) / 2));
      o.blockshape.push_back(static_cast<int32_t>((s + 3) / 4));
    }
    std::vector<int64_t> image_shape{2}, seg_shape{1};
    image_shape.insert(image_shape.end(), spatial.begin(), spatial.end());
    seg_shape.insert(seg_shape.end(), spatial.begin(), spatial.end());
    const std::string base = folder + "/case" + std::to_string(i);
    EXPECT_OK(
        codec::WriteB2nd(base + ".b2nd", std::as_bytes(std::span(image)), image_shape, "<f4", o));
    EXPECT_OK(
        codec::WriteB2nd(base + "_seg.b2nd", std::as_bytes(std::span(seg)), seg_shape, "<i2", o));
    files.push_back({"case" + std::to_string(i), {base + ".b2nd", base + "_seg.b2nd"}});
  }
  auto ds = Dataset::FromList({"image", "seg"}, files);
  EXPECT_OK(ds.status());
  return *ds;
}

class SpatialRankTest : public ::testing::TestWithParam<RankCase> {};

TEST_P(SpatialRankTest, BatchesEqualNaiveReadsWithAndWithoutForeground) {
  const RankCase& rc = GetParam();
  TempDir dir;
  const Dataset ds = WriteCases(dir.path(), rc, 3);
  for (const double oversample : {0.0, 1.0}) {
    LoaderConfig c;
    c.dataset = ds;
    c.sampler.patch_size = rc.patch;
    c.sampler.need_to_pad.assign(rc.patch.size(), 2);
    c.sampler.batch_size = 3;
    c.sampler.oversample_foreground = oversample;
    c.sampler.seed = 3;
    c.num_threads = 2;
    c.min_task_bytes = 256;
    c.pin_memory = PinMode::kOff;
    ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
    int64_t patch_voxels = 1;
    for (const int64_t p : rc.patch) {
      patch_voxels *= p;
    }
    for (int b = 0; b < 4; ++b) {
      ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
      ExpectMatchesNaiveRead(lease, ds, rc.patch);
      const ArrayView* seg = lease.array("seg");
      ASSERT_NE(seg, nullptr);
      for (size_t j = 0; j < lease.samples().size(); ++j) {
        const SampleSpec& s = lease.samples()[j];
        ASSERT_EQ(s.forced_foreground, oversample > 0) << "sample " << j;
        if (!s.forced_foreground) {
          continue;
        }
        const auto* labels = reinterpret_cast<const int16_t*>(seg->data + j * seg->byte_strides[0]);
        bool found = false;
        for (int64_t v = 0; v < patch_voxels && !found; ++v) {
          found = labels[v] == 1;
        }
        EXPECT_TRUE(found) << "a forced sample is centred on a voxel of class 1";
      }
    }
  }
}

TEST_P(SpatialRankTest, IndexDropsOnlyTheChannelAxis) {
  const RankCase& rc = GetParam();
  TempDir dir;
  const Dataset ds = WriteCases(dir.path(), rc, 1);
  const int dims = static_cast<int>(rc.spatial.size());
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex index,
                       ForegroundIndex::Build(ds.path(0, 1), {}, 1, dims));
  EXPECT_EQ(index.spatial_shape(), rc.spatial);
  ASSERT_OK_AND_ASSIGN(const std::vector<int64_t> voxel, index.Voxel(0, 0));
  EXPECT_EQ(voxel.size(), rc.spatial.size());
  // The channel axis counted as spatial is a rank mismatch the loader never asks for; a
  // channel axis of size 2 is refused.
  ASSERT_OK_AND_ASSIGN(const ForegroundIndex with_channel,
                       ForegroundIndex::Build(ds.path(0, 1), {}, 1, dims + 1));
  EXPECT_EQ(with_channel.ndim(), dims + 1);
  EXPECT_THAT(ForegroundIndex::Build(ds.path(0, 0), {}, 1, dims),
              StatusIs(StatusCode::kUnimplemented, ::testing::HasSubstr("<f4")));
  EXPECT_THAT(ForegroundIndex::Build(ds.path(0, 1), {}, 1, dims + 2),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("fewer")));
}

INSTANTIATE_TEST_SUITE_P(Ranks, SpatialRankTest,
                         ::testing::Values(RankCase{{300}, {40}}, RankCase{{40, 50}, {16, 12}},
                                           RankCase{{20, 18, 22}, {8, 8, 8}},
                                           RankCase{{8, 9, 10, 11}, {4, 4, 4, 4}},
                                           RankCase{{5, 6, 7, 6, 5}, {3, 3, 3, 3, 3}}),
                         Name);

}  // namespace
}  // namespace patchfeed::loader
