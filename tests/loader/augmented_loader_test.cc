// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// The loader with nnU-Net's augmentation: every sample equals the unfused reference (read the
// whole enlarged crop alone on this thread, then run the pipeline on it with the same draws),
// for crop-path and rotated/scaled samples alike; the same batches with 1, 2 and 4 threads;
// configuration errors. Tiny arrays, no timing asserts.

#include <cstring>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "augment/nnunet_pipeline.h"
#include "loader/loader.h"
#include "tests/loader/loader_testutil.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::loader {
namespace {

using augment::SampleView;
using testing::BatchSnapshot;
using ::testing::HasSubstr;
using testing::Snapshot;
using testing::TempDir;
using testing::TinyConfig;
using testing::TinyDatasetOptions;

// A crop much larger than the patch, so resampled samples read a window strictly inside it.
const std::vector<int64_t> kCrop = {20, 20, 20};
const std::vector<int64_t> kPatch = {8, 8, 8};

// Rotation and scaling half the time each, and every intensity transform on, so a few batches
// cover both read paths and the whole pipeline.
LoaderConfig AugmentedConfig(Dataset ds, const std::vector<int64_t>& crop = kCrop,
                             const std::vector<int64_t>& patch = kPatch) {
  LoaderConfig c = TinyConfig(std::move(ds));
  c.sampler.patch_size = crop;
  AugmentOptions a;
  a.pipeline = augment::NnUNetAugmentConfig::Default(patch);
  a.pipeline.spatial.p_rotation = 0.5;
  a.pipeline.spatial.p_scaling = 0.5;
  a.pipeline.noise.p_apply = 1;
  a.pipeline.blur.p_apply = 1;
  a.pipeline.brightness.p_apply = 1;
  a.pipeline.contrast.p_apply = 1;
  a.pipeline.low_resolution.p_apply = 1;
  a.pipeline.gamma_inverted.p_apply = 0.5;
  a.pipeline.gamma.p_apply = 1;
  c.augment = a;
  return c;
}

// The reference for sample j of `lease`: the whole crop read with NdArrayReader, augmented with
// the draws the loader keys by (seed, epoch, batch, position).
void ExpectMatchesUnfusedReference(const Lease& lease, const Dataset& ds, const LoaderConfig& c,
                                   int* transformed, int* windowed) {
  const augment::NnUNetAugmentConfig& pipeline = c.augment->pipeline;
  const std::vector<int64_t>& crop_shape = c.sampler.patch_size;
  const std::vector<int64_t> patch(pipeline.patch_size.begin(), pipeline.patch_size.begin() + 3);
  const int64_t patch_voxels = patch[0] * patch[1] * patch[2];
  const ArrayView& image_view = *lease.array("image");
  const ArrayView& seg_view = *lease.array("seg");
  const int64_t channels = image_view.shape[1];
  for (size_t j = 0; j < lease.samples().size(); ++j) {
    const SampleSpec& spec = lease.samples()[j];
    std::vector<std::vector<std::byte>> crops;
    for (const auto& [name, pad_value] : {std::pair{"image", 0.0}, std::pair{"seg", -1.0}}) {
      const int array = ds.array_index(name);
      ASSERT_OK_AND_ASSIGN(auto reader,
                           codec::NdArrayReader::Open(ds.path(spec.case_index, array)));
      const ArrayView& view = *lease.array(name);
      ASSERT_OK_AND_ASSIGN(auto pad, codec::ItemFromDouble(view.dtype, view.itemsize, pad_value));
      codec::Box box{{0}, {view.shape[1]}};
      for (size_t d = 0; d < crop_shape.size(); ++d) {
        box.start.push_back(spec.box_start[d]);
        box.stop.push_back(spec.box_start[d] + crop_shape[d]);
      }
      ASSERT_OK_AND_ASSIGN(std::vector<std::byte> crop, reader.ReadBox(box, pad));
      crops.push_back(std::move(crop));
    }
    const StreamId id{.seed = c.sampler.seed,
                      .epoch = lease.epoch(),
                      .batch = lease.batch_index(),
                      .position = static_cast<uint32_t>(j)};
    const augment::NnUNetAugmentParams params =
        augment::DrawNnUNetAugmentParams(pipeline, id, channels);
    *transformed += params.spatial.transforms();
    if (params.spatial.transforms()) {
      const augment::CropWindow w = augment::NnUNetSpatialWindow(params, pipeline, crop_shape);
      *windowed +=
          w.shape[0] * w.shape[1] * w.shape[2] < crop_shape[0] * crop_shape[1] * crop_shape[2];
    }
    std::vector<float> image(static_cast<size_t>(channels * patch_voxels));
    std::vector<int16_t> seg(static_cast<size_t>(patch_voxels));
    augment::NnUNetAugmentScratch scratch;
    ASSERT_OK(augment::ApplyNnUNetAugment(
        params, pipeline, id,
        SampleView<const float>::Contiguous(reinterpret_cast<const float*>(crops[0].data()),
                                            channels, crop_shape),
        SampleView<const int16_t>::Contiguous(reinterpret_cast<const int16_t*>(crops[1].data()), 1,
                                              crop_shape),
        SampleView<float>::Contiguous(image.data(), channels, patch),
        SampleView<int16_t>::Contiguous(seg.data(), 1, patch), scratch));
    const std::byte* got_image =
        image_view.data + static_cast<int64_t>(j) * image_view.byte_strides[0];
    const std::byte* got_seg = seg_view.data + static_cast<int64_t>(j) * seg_view.byte_strides[0];
    EXPECT_EQ(std::memcmp(got_image, image.data(), image.size() * sizeof(float)), 0)
        << "image of sample " << j << " (batch " << lease.batch_index() << ", "
        << (params.spatial.transforms() ? "resampled" : "cropped") << ")";
    EXPECT_EQ(std::memcmp(got_seg, seg.data(), seg.size() * sizeof(int16_t)), 0)
        << "seg of sample " << j << " (batch " << lease.batch_index() << ", "
        << (params.spatial.transforms() ? "resampled" : "cropped") << ")";
  }
}

TEST(AugmentedLoaderTest, SamplesEqualTheUnfusedReference) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(4)));
  const LoaderConfig c = AugmentedConfig(ds);
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  const auto layout = loader->array_layout();
  ASSERT_EQ(layout.size(), 2u);
  EXPECT_EQ(layout[0].shape, (std::vector<int64_t>{3, 2, 8, 8, 8}));
  EXPECT_EQ(layout[1].shape, (std::vector<int64_t>{3, 1, 8, 8, 8}));
  int transformed = 0, windowed = 0;
  const int batches = 8;
  for (int b = 0; b < batches; ++b) {
    ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
    ExpectMatchesUnfusedReference(lease, ds, c, &transformed, &windowed);
    const auto* labels = reinterpret_cast<const int16_t*>(lease.array("seg")->data);
    for (int64_t i = 0; i < lease.array("seg")->nbytes / 2; ++i) {
      ASSERT_GE(labels[i], 0) << "RemoveLabel leaves no -1";
    }
  }
  // Both read paths ran (p 0.75 of a transform per sample, 24 samples).
  EXPECT_GT(transformed, 0);
  EXPECT_LT(transformed, batches * 3);
  EXPECT_GT(windowed, 0) << "no resampled sample read less than its whole crop";
}

TEST(AugmentedLoaderTest, SameBatchesWithOneTwoAndFourThreads) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(3)));
  std::vector<std::vector<BatchSnapshot>> runs;
  for (int threads : {1, 2, 4}) {
    LoaderConfig c = AugmentedConfig(ds);
    c.num_threads = threads;
    ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
    std::vector<BatchSnapshot> run;
    for (int b = 0; b < 5; ++b) {
      ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
      run.push_back(Snapshot(lease));
    }
    runs.push_back(std::move(run));
  }
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(runs[0], runs[2]);
}

// A patch of 3 resampling pieces (16 + 16 + 4 planes of 8 x 8) and reads of many runs: with
// several threads both run as pieces on the pool (RunPiecesAsTasks), and every sample still
// equals the reference computed alone on this thread; 1 thread (no pieces) gives the same
// batches.
TEST(AugmentedLoaderTest, SamplesSplitIntoPiecesEqualTheReference) {
  TempDir dir;
  SyntheticDatasetOptions o = TinyDatasetOptions(3);
  o.spatial_shape = {52, 18, 22};
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), o));
  const std::vector<int64_t> crop = {48, 16, 16}, patch = {36, 8, 8};
  std::vector<std::vector<BatchSnapshot>> runs;
  int transformed = 0, windowed = 0;
  for (int threads : {1, 4}) {
    LoaderConfig c = AugmentedConfig(ds, crop, patch);
    c.sampler.need_to_pad = {0, 4, 4};
    c.num_threads = threads;
    ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
    std::vector<BatchSnapshot> run;
    for (int b = 0; b < 6; ++b) {
      ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
      if (threads > 1) {
        ExpectMatchesUnfusedReference(lease, ds, c, &transformed, &windowed);
      }
      run.push_back(Snapshot(lease));
    }
    runs.push_back(std::move(run));
  }
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_GT(transformed, 0) << "no resampled sample: the resampling never ran as pieces";
}

TEST(AugmentedLoaderTest, RejectsConfigurationsItCannotRun) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(2)));
  {
    LoaderConfig c = AugmentedConfig(ds);
    c.sampler.patch_size = {6, 20, 20};  // smaller than the patch on axis 0
    EXPECT_THAT(Loader::Create(c).status(), StatusIs(StatusCode::kInvalidArgument,
                                                     HasSubstr("must fit in the sampler's crop")));
  }
  {
    LoaderConfig c = AugmentedConfig(ds);
    c.arrays = {{"seg", std::nullopt}, {"image", std::nullopt}};
    EXPECT_THAT(Loader::Create(c).status(),
                StatusIs(StatusCode::kInvalidArgument, HasSubstr("holds exactly 'image', 'seg'")));
  }
  {
    LoaderConfig c = AugmentedConfig(ds);
    c.augment->image_array = "seg";  // int16, not float32
    c.augment->seg_array = "";
    EXPECT_THAT(Loader::Create(c).status(),
                StatusIs(StatusCode::kInvalidArgument, HasSubstr("as '<f4'")));
  }
  {
    LoaderConfig c = AugmentedConfig(ds);
    c.augment->pipeline.cascade.foreground_labels = {1, 2};
    EXPECT_THAT(Loader::Create(c).status(),
                StatusIs(StatusCode::kUnimplemented, HasSubstr("previous stage's segmentation")));
  }
  {
    LoaderConfig c = AugmentedConfig(ds);
    c.sampler.patch_size = {20, 20};
    EXPECT_THAT(Loader::Create(c).status(),
                StatusIs(StatusCode::kInvalidArgument,
                         HasSubstr("the augmentation's patch_size has 3 dimensions but patch_size "
                                   "(the crop the sampler draws) has 2; give 3")));
  }
}

}  // namespace
}  // namespace patchfeed::loader
