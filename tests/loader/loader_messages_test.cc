// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// The messages a new user meets when a Loader cannot be made or moved: each says which option
// is wrong, the value given, and what to give instead, in the options' own names.

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "loader/loader.h"
#include "tests/loader/loader_testutil.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::loader {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::TempDir;
using testing::TinyConfig;
using testing::TinyDatasetOptions;

class LoaderMessagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(ds_, WriteSyntheticDataset(dir_.path(), TinyDatasetOptions(2)));
  }

  // The message Create gives for `config`, which must fail with `code`.
  static std::string CreateError(const LoaderConfig& config,
                                 StatusCode code = StatusCode::kInvalidArgument) {
    auto loader = Loader::Create(config);
    EXPECT_FALSE(loader.ok());
    EXPECT_EQ(loader.status().code(), code) << loader.status().ToString();
    return std::string(loader.status().message());
  }

  TempDir dir_;
  Dataset ds_;
};

TEST_F(LoaderMessagesTest, BatchSize) {
  LoaderConfig c = TinyConfig(ds_);
  c.sampler.batch_size = 0;
  EXPECT_EQ(CreateError(c), "sampler: batch_size must be at least 1 (got 0)");
  c.sampler.batch_size = 1;
  c.sampler.world_size = 2;
  EXPECT_THAT(CreateError(c), HasSubstr("the global batch size 1 is smaller than the world size 2"
                                        ": every rank needs a sample; give batch_size >= 2"));
}

TEST_F(LoaderMessagesTest, NegativePositions) {
  LoaderConfig c = TinyConfig(ds_);
  c.sampler.epoch_mode = EpochMode::kFiniteWithoutReplacement;  // 1 batch per epoch
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  EXPECT_THAT(loader->SetEpoch(-1),
              StatusIs(StatusCode::kInvalidArgument, "loader: epoch must be >= 0 (got -1)"));
  EXPECT_THAT(loader->Seek(0, -1),
              StatusIs(StatusCode::kInvalidArgument, "loader: batch index must be >= 0 (got -1)"));
  EXPECT_THAT(
      loader->Seek(0, 5),
      StatusIs(StatusCode::kInvalidArgument,
               "loader: batch index 5 is past the end of the epoch (1 batch); give 0 to 1"));
  c.start_batch = -2;
  EXPECT_THAT(CreateError(c), HasSubstr("(got epoch 0, batch -2)"));
}

TEST_F(LoaderMessagesTest, PatchRankIsCheckedBeforeAnythingReadsTheCases) {
  const std::string shape = "(2, 20, 18, 22)";  // case_000's image
  for (const ErrorPolicy policy : {ErrorPolicy::kFail, ErrorPolicy::kSkip}) {
    LoaderConfig c = TinyConfig(ds_);
    c.error_policy = policy;
    c.sampler.oversample_foreground = 0.33;  // label maps would be indexed next
    c.foreground.cache_dir = "";
    c.sampler.patch_size = {12, 12};
    c.sampler.need_to_pad = {};
    EXPECT_EQ(CreateError(c),
              "loader: patch_size has 2 dimensions but the cases' arrays have 3 spatial "
              "dimensions (array 'image' of case 'case_000' has shape " +
                  shape + "); give 3 sizes, or (1, Y, X) for 2-D patches from 3-D cases");
    c.sampler.patch_size = {1, 12, 12, 12};
    EXPECT_THAT(CreateError(c), AllOf(HasSubstr("patch_size has 4 dimensions"),
                                      HasSubstr("; give 3 sizes"), Not(HasSubstr("(1, Y, X)"))));
  }
  LoaderConfig c = TinyConfig(ds_);
  c.sampler.patch_size = {12, 0, 12};
  EXPECT_EQ(CreateError(c),
            "sampler: patch_size must be at least 1 on every axis (got 0 on axis 1)");
}

TEST_F(LoaderMessagesTest, ConstructionOptions) {
  LoaderConfig c = TinyConfig(ds_);
  c.arrays = {{"image", std::nullopt}, {"label", std::nullopt}};
  EXPECT_EQ(CreateError(c),
            "loader: the dataset has no array 'label'; its arrays are 'image', 'seg'");
  c = TinyConfig(ds_);
  c.ring_size = 0;
  EXPECT_THAT(CreateError(c), HasSubstr("ring_size must be at least 1 (got 0)"));
  c = TinyConfig(ds_);
  c.num_threads = -1;
  EXPECT_EQ(CreateError(c), "loader: num_threads must be at least 0 (got -1); 0 uses every core");
  c = TinyConfig(ds_);
  c.max_redraws = -1;
  EXPECT_EQ(CreateError(c), "loader: max_redraws must be at least 0 (got -1)");
  c = TinyConfig(ds_);
  c.sampler.need_to_pad = {1, 1};
  EXPECT_EQ(CreateError(c),
            "sampler: need_to_pad has 2 entries for a patch_size of 3; give one per axis");
  c = TinyConfig(ds_);
  c.sampler.case_weights = {1};
  EXPECT_EQ(CreateError(c),
            "loader: case_weights has 1 weights for 2 cases; give one per case, in dataset order");
  c = TinyConfig(ds_);
  c.sampler.rank = 2;
  EXPECT_EQ(CreateError(c), "sampler: rank must be in [0, world_size) (got rank 2, world_size 1)");
  c = TinyConfig(ds_);
  c.memory_budget = 64 << 10;
  EXPECT_THAT(
      CreateError(c, StatusCode::kResourceExhausted),
      AllOf(HasSubstr("this configuration needs"), HasSubstr("ring_size 3 x a batch of"),
            HasSubstr("lower batch_size, patch_size or ring_size, or raise memory_budget")));
}

}  // namespace
}  // namespace patchfeed::loader
