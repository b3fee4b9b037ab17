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
#include "codec/dtype.h"
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

// The cascade's previous stage of case `case_index`'s crop at `start`: the whole label map (no
// channel axis, any integer type the loader takes) read with NdArrayReader, -1 outside the case.
void ReadPreviousStageCrop(const Dataset& ds, const LoaderConfig& c, int64_t case_index,
                           const std::vector<int64_t>& start, std::vector<int16_t>* out) {
  const int array = ds.array_index(c.augment->previous_seg_array);
  ASSERT_OK_AND_ASSIGN(auto reader, codec::NdArrayReader::Open(ds.path(case_index, array)));
  const std::vector<int64_t> shape = reader.geometry().shape;
  ASSERT_EQ(shape.size(), 3u);
  codec::Box all{{0, 0, 0}, shape};
  ASSERT_EQ(reader.dtype(), "|u1");
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> whole,
                       reader.ReadBox(all, std::vector<std::byte>(1)));
  const std::vector<int64_t>& crop = c.sampler.patch_size;
  out->assign(static_cast<size_t>(crop[0] * crop[1] * crop[2]), -1);
  size_t i = 0;
  for (int64_t z = start[0]; z < start[0] + crop[0]; ++z) {
    for (int64_t y = start[1]; y < start[1] + crop[1]; ++y) {
      for (int64_t x = start[2]; x < start[2] + crop[2]; ++x, ++i) {
        if (z >= 0 && y >= 0 && x >= 0 && z < shape[0] && y < shape[1] && x < shape[2]) {
          (*out)[i] =
              static_cast<int16_t>(whole[static_cast<size_t>((z * shape[1] + y) * shape[2] + x)]);
        }
      }
    }
  }
}

// The reference for sample j of `lease`: the whole crop read with NdArrayReader, augmented with
// the draws the loader keys by (seed, epoch, batch, position). With the cascade the previous
// stage's crop is the segmentation's channel 1 and the image has one-hot channels after its own.
void ExpectMatchesUnfusedReference(const Lease& lease, const Dataset& ds, const LoaderConfig& c,
                                   int* transformed, int* windowed) {
  const augment::NnUNetAugmentConfig& pipeline = c.augment->pipeline;
  const std::vector<int64_t>& crop_shape = c.sampler.patch_size;
  const std::vector<int64_t> patch(pipeline.patch_size.begin(), pipeline.patch_size.begin() + 3);
  const int64_t patch_voxels = patch[0] * patch[1] * patch[2];
  const ArrayView& image_view = *lease.array("image");
  const ArrayView& seg_view = *lease.array("seg");
  const auto onehot = static_cast<int64_t>(pipeline.cascade.foreground_labels.size());
  const int64_t channels = image_view.shape[1] - onehot;  // the crop's
  const int64_t seg_channels = pipeline.cascade.enabled() ? 2 : 1;
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
    if (pipeline.cascade.enabled()) {
      std::vector<int16_t> previous;
      ReadPreviousStageCrop(ds, c, spec.case_index, spec.box_start, &previous);
      const auto* bytes = reinterpret_cast<const std::byte*>(previous.data());
      crops[1].insert(crops[1].end(), bytes, bytes + previous.size() * sizeof(int16_t));
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
    std::vector<float> image(static_cast<size_t>((channels + onehot) * patch_voxels));
    std::vector<int16_t> seg(static_cast<size_t>(seg_channels * patch_voxels));
    augment::NnUNetAugmentScratch scratch;
    ASSERT_OK(augment::ApplyNnUNetAugment(
        params, pipeline, id,
        SampleView<const float>::Contiguous(reinterpret_cast<const float*>(crops[0].data()),
                                            channels, crop_shape),
        SampleView<const int16_t>::Contiguous(reinterpret_cast<const int16_t*>(crops[1].data()),
                                              seg_channels, crop_shape),
        SampleView<float>::Contiguous(image.data(), channels + onehot, patch),
        SampleView<int16_t>::Contiguous(seg.data(), seg_channels, patch), scratch));
    const std::byte* got_image =
        image_view.data + static_cast<int64_t>(j) * image_view.byte_strides[0];
    const std::byte* got_seg = seg_view.data + static_cast<int64_t>(j) * seg_view.byte_strides[0];
    EXPECT_EQ(std::memcmp(got_image, image.data(), image.size() * sizeof(float)), 0)
        << "image of sample " << j << " (batch " << lease.batch_index() << ", "
        << (params.spatial.transforms() ? "resampled" : "cropped") << ")";
    // The batch's segmentation is channel 0 (the cascade's channel 1 made the one-hot ones).
    EXPECT_EQ(std::memcmp(got_seg, seg.data(), static_cast<size_t>(patch_voxels) * sizeof(int16_t)),
              0)
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

// nnU-Net's cascade: each case's previous stage written as nnU-Net does (uint8, no channel axis),
// a random label in every 7th voxel so that the one-hot channels and their random steps see
// several components.
Result<Dataset> WithPreviousStage(const Dataset& ds, const std::string& dir) {
  std::vector<CaseFiles> cases;
  for (int64_t i = 0; i < ds.num_cases(); ++i) {
    PATCHFEED_ASSIGN_OR_RETURN(auto seg, codec::NdArrayReader::Open(ds.path(i, 1)));
    const std::vector<int64_t>& shape = seg.geometry().shape;  // (1, Z, Y, X) int16
    codec::Box all{{0, 0, 0, 0}, shape};
    PATCHFEED_ASSIGN_OR_RETURN(std::vector<std::byte> labels,
                               seg.ReadBox(all, std::vector<std::byte>(2)));
    std::vector<std::byte> previous(labels.size() / 2);
    for (size_t v = 0; v < previous.size(); ++v) {
      int16_t label = 0;
      std::memcpy(&label, labels.data() + 2 * v, 2);
      previous[v] = static_cast<std::byte>(v % 7 == 0 ? (v / 7) % 3 : static_cast<size_t>(label));
    }
    const std::string path = dir + "/" + ds.case_id(i) + "_prev.b2nd";
    codec::B2ndWriteOptions options;
    options.chunkshape = {16, 16, 16};
    options.blockshape = {8, 8, 8};
    PATCHFEED_RETURN_IF_ERROR(
        codec::WriteB2nd(path, previous, {shape[1], shape[2], shape[3]}, "|u1", options));
    cases.push_back({ds.case_id(i), {ds.path(i, 0), ds.path(i, 1), path}});
  }
  return Dataset::FromList({"image", "seg", "prev"}, std::move(cases));
}

TEST(AugmentedLoaderTest, CascadeSamplesEqualTheUnfusedReference) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset plain, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(3)));
  ASSERT_OK_AND_ASSIGN(Dataset ds, WithPreviousStage(plain, dir.path()));
  LoaderConfig c = AugmentedConfig(ds);
  c.sampler.need_to_pad = {12, 12, 12};  // crops reach past the case: -1 there
  c.augment->pipeline.cascade.foreground_labels = {1, 2};
  c.augment->pipeline.cascade.binary_operator.p_apply = 1;
  c.augment->pipeline.cascade.binary_operator.strel_size = {1, 3};
  c.augment->pipeline.cascade.remove_component.p_apply = 1;
  c.augment->previous_seg_array = "prev";
  c.augment->deep_supervision_scales = {{1, 1, 1}, {0.5, 0.5, 0.5}};
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  const auto layout = loader->array_layout();
  ASSERT_EQ(layout.size(), 3u);  // image, seg, seg_ds1: the previous stage is no output
  EXPECT_EQ(layout[0].shape, (std::vector<int64_t>{3, 4, 8, 8, 8}));  // 2 channels + 2 one-hot
  EXPECT_EQ(layout[1].shape, (std::vector<int64_t>{3, 1, 8, 8, 8}));
  int transformed = 0, windowed = 0;
  for (int b = 0; b < 6; ++b) {
    ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
    ExpectMatchesUnfusedReference(lease, ds, c, &transformed, &windowed);
  }
  EXPECT_GT(transformed, 0);
  EXPECT_LT(transformed, 18);  // both read paths
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
                StatusIs(StatusCode::kInvalidArgument, HasSubstr("previous_seg_array")));
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
