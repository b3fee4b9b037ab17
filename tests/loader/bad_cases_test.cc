// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Cases Loader::Create cannot use: with ErrorPolicy::kFail one error lists every one of them
// with its file and reason; with kSkip they are left out (excluded_cases(), metrics), and the
// loader draws from the rest exactly as a loader over only those cases would; with none left
// it fails either way. Five tiny cases, two damaged in different ways.

#include <cstdint>
#include <cstring>
#include <filesystem>
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

// Case 1's image is cut inside its header; case 3's label map is rewritten as int32 (the
// others are int16).
class BadCasesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(ds_, WriteSyntheticDataset(dir_.path(), TinyDatasetOptions(5)));
    std::filesystem::resize_file(ds_.path(1, 0), 40);
    testing::RewriteArray(ds_.path(3, 1),
                          [](std::vector<std::byte>& bytes, const std::vector<int64_t>& /*shape*/,
                             std::string& dtype) {
                            std::vector<std::byte> wide(bytes.size() * 2);
                            for (size_t i = 0; i < bytes.size() / 2; ++i) {
                              int16_t v;
                              std::memcpy(&v, bytes.data() + 2 * i, 2);
                              const int32_t w = v;
                              std::memcpy(wide.data() + 4 * i, &w, 4);
                            }
                            bytes = std::move(wide);
                            dtype = "<i4";
                          });
  }

  LoaderConfig Config(ErrorPolicy policy) const {
    LoaderConfig c = TinyConfig(ds_);
    c.error_policy = policy;
    c.sampler.oversample_foreground = 0.33;  // label maps are indexed too
    c.foreground.cache_dir = "";
    return c;
  }

  TempDir dir_;
  Dataset ds_;
};

TEST_F(BadCasesTest, FailListsEveryBadCaseWithItsFileAndReason) {
  // The first bad case's code: its header is cut short.
  EXPECT_THAT(
      Loader::Create(Config(ErrorPolicy::kFail)),
      StatusIs(StatusCode::kDataLoss,
               AllOf(HasSubstr("2 of 5 cases cannot be used"),
                     HasSubstr("case 'case_001' (#1): array 'image'"), HasSubstr(ds_.path(1, 0)),
                     HasSubstr("case 'case_003' (#3)"), HasSubstr(ds_.path(3, 1)),
                     HasSubstr("'<i4'"), HasSubstr("3 other cases have 1 channel of '<i2'"),
                     HasSubstr("error_policy"), Not(HasSubstr("case_002")))));
}

TEST_F(BadCasesTest, SkipLeavesThemOutAndDrawsFromTheRestAsAloneTheyWouldBe) {
  // The good cases alone, as a dataset of their own: the same draws, case for case.
  const std::vector<int64_t> kept = {0, 2, 4};
  std::vector<CaseFiles> good;
  for (const int64_t i : kept) {
    good.push_back(ds_.cases()[static_cast<size_t>(i)]);
  }
  ASSERT_OK_AND_ASSIGN(Dataset alone, Dataset::FromList(ds_.array_names(), good));
  LoaderConfig reference_config = Config(ErrorPolicy::kSkip);
  reference_config.dataset = alone;
  ASSERT_OK_AND_ASSIGN(auto reference, Loader::Create(reference_config));
  std::vector<testing::BatchSnapshot> want;
  for (int b = 0; b < 8; ++b) {
    ASSERT_OK_AND_ASSIGN(Lease lease, reference->Next());
    want.push_back(testing::Snapshot(lease));
    for (int64_t& c : want.back().cases) {
      c = kept[static_cast<size_t>(c)];
    }
  }
  for (const int threads : {1, 3}) {
    LoaderConfig c = Config(ErrorPolicy::kSkip);
    c.num_threads = threads;
    ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
    ASSERT_EQ(loader->excluded_cases().size(), 2u);
    const ExcludedCase& image = loader->excluded_cases()[0];
    const ExcludedCase& seg = loader->excluded_cases()[1];
    EXPECT_EQ(image.case_index, 1);
    EXPECT_EQ(image.case_id, "case_001");
    EXPECT_THAT(image.reason, AllOf(HasSubstr("array 'image'"), HasSubstr(ds_.path(1, 0))));
    EXPECT_EQ(seg.case_index, 3);
    EXPECT_THAT(seg.reason,
                AllOf(HasSubstr("array 'seg'"), HasSubstr(ds_.path(3, 1)), HasSubstr("'<i4'")));
    EXPECT_EQ(loader->num_cases(), 3);
    EXPECT_EQ(loader->metrics().cases_excluded, 2);
    for (int b = 0; b < 8; ++b) {
      ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
      testing::ExpectMatchesNaiveRead(lease, ds_, c.sampler.patch_size);
      EXPECT_TRUE(testing::Snapshot(lease) == want[static_cast<size_t>(b)]) << "batch " << b;
    }
    EXPECT_EQ(loader->metrics().samples_skipped, 0);
  }
}

TEST_F(BadCasesTest, CaseWeightsStayWithTheirCases) {
  LoaderConfig c = Config(ErrorPolicy::kSkip);
  c.sampler.case_weights = {0, 5, 0, 5, 1};  // of the cases kept, only case 4 has weight
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  for (int b = 0; b < 4; ++b) {
    ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
    for (const SampleSpec& s : lease.samples()) {
      EXPECT_EQ(s.case_index, 4);
    }
  }
  c.sampler.case_weights = {1, 1, 1};
  EXPECT_THAT(Loader::Create(c),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("3 weights for 5 cases")));
}

TEST_F(BadCasesTest, NoCaseLeftFailsEvenWhenSkipping) {
  std::vector<CaseFiles> bad = {ds_.cases()[1], ds_.cases()[3]};
  bad[1].paths[1] = dir_.path() + "/nowhere_seg.b2nd";  // alone, case 3's int32 map would do
  ASSERT_OK_AND_ASSIGN(Dataset only_bad, Dataset::FromList(ds_.array_names(), bad));
  LoaderConfig c = Config(ErrorPolicy::kSkip);
  c.dataset = only_bad;
  EXPECT_THAT(Loader::Create(c),
              StatusIs(StatusCode::kDataLoss,
                       AllOf(HasSubstr("none of the 2 cases can be used"),
                             HasSubstr("case 'case_001' (#0)"), HasSubstr("case 'case_003' (#1)"),
                             Not(HasSubstr("error_policy")))));
}

TEST(BadCaseTest, ALabelMapThatCannotBeIndexedIsABadCase) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(3)));
  testing::CorruptEveryChunk(ds.path(2, 1));  // opens, but reading its voxels fails
  LoaderConfig c = TinyConfig(ds);
  c.sampler.oversample_foreground = 0.33;
  c.foreground.cache_dir = "";
  EXPECT_THAT(
      Loader::Create(c),
      StatusIs(StatusCode::kDataLoss,
               AllOf(HasSubstr("1 of 3 cases cannot be used"),
                     HasSubstr("case 'case_002' (#2): foreground index of " + ds.path(2, 1)))));
  c.error_policy = ErrorPolicy::kSkip;
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  ASSERT_EQ(loader->excluded_cases().size(), 1u);
  EXPECT_EQ(loader->excluded_cases()[0].case_index, 2);
  ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
  EXPECT_EQ(loader->metrics().read_errors, 0);
}

TEST(BadCaseTest, AMissingFileIsABadCase) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(3)));
  std::filesystem::remove(ds.path(0, 1));
  LoaderConfig c = TinyConfig(ds);
  EXPECT_THAT(Loader::Create(c),
              StatusIs(StatusCode::kNotFound, AllOf(HasSubstr("case 'case_000' (#0): array 'seg'"),
                                                    HasSubstr(ds.path(0, 1)))));
  c.error_policy = ErrorPolicy::kSkip;
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  ASSERT_EQ(loader->excluded_cases().size(), 1u);
  EXPECT_EQ(loader->excluded_cases()[0].case_index, 0);
}

}  // namespace
}  // namespace patchfeed::loader
