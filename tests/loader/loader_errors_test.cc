// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Loader errors: a corrupt chunk, a file deleted mid-epoch and one truncated under its mapping
// reach the caller at Next(),
// naming case, array, file, chunk and patch box; ErrorPolicy::kSkip redraws deterministically
// and counts; destruction after an error is clean.

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
using testing::ExpectMatchesNaiveRead;
using testing::FirstError;
using ::testing::HasSubstr;
using testing::Snapshot;
using testing::TempDir;
using testing::TinyConfig;
using testing::TinyDatasetOptions;

TEST(LoaderErrorsTest, CorruptChunkSurfacesAtNextNamingWhereItIs) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(2)));
  for (const storage::IoMode io : {storage::IoMode::kMmap, storage::IoMode::kPread}) {
    ASSERT_OK_AND_ASSIGN(ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(2)));
    LoaderConfig c = TinyConfig(ds);
    c.io_mode = io;
    ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
    ASSERT_OK(FirstError(*loader, 3));  // healthy so far
    // Mid-epoch, in place: mapped readers see the new bytes.
    testing::CorruptEveryChunk(ds.path(1, 0));
    ASSERT_OK(loader->Seek(0, 100));  // drop what was read ahead
    const Status error = FirstError(*loader, 50);
    EXPECT_THAT(error, StatusIs(StatusCode::kDataLoss,
                                AllOf(HasSubstr("case 'case_001' (#1)"), HasSubstr("array 'image'"),
                                      HasSubstr(ds.path(1, 0)), HasSubstr(": chunk "),
                                      HasSubstr("patch box [0:2, "))));
    // Not fatal: later batches that avoid the case still come.
    const LoaderMetrics m = loader->metrics();
    EXPECT_GE(m.read_errors, 1);
    EXPECT_GE(m.batches_failed, 1);
  }
}

TEST(LoaderErrorsTest, FileDeletedMidEpochSurfacesAtNext) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(3)));
  LoaderConfig c = TinyConfig(ds);
  c.max_open_files = 1;  // every read reopens, as on a dataset larger than the LRU
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  ASSERT_OK(FirstError(*loader, 2));
  std::filesystem::remove(ds.path(2, 1));
  ASSERT_OK(loader->Seek(0, 50));
  EXPECT_THAT(
      FirstError(*loader, 50),
      StatusIs(StatusCode::kNotFound,
               AllOf(HasSubstr("case 'case_002' (#2)"), HasSubstr("array 'seg'"),
                     HasSubstr(ds.path(2, 1)), HasSubstr("chunk"), HasSubstr("patch box"))));
  loader.reset();  // with the error's batch and others in flight
}

TEST(LoaderErrorsTest, FileTruncatedUnderTheMappingSurfacesAtNext) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(2)));
  LoaderConfig c = TinyConfig(ds);
  c.io_mode = storage::IoMode::kMmap;
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  ASSERT_OK(FirstError(*loader, 3));  // the files are open and mapped
  // Another process rewrites a case in place: the mapped pages past the new end are gone,
  // which used to be a SIGBUS that killed the process.
  std::filesystem::resize_file(ds.path(1, 0), 0);  // every mapped page faults
  ASSERT_OK(loader->Seek(0, 100));
  // The first read of the old mapping reports the shrinking; a batch read ahead may have
  // done that already, and the faulted reader was then dropped: the next read reopened the
  // file and reports what it is now. Either way the case and file are named.
  const auto truncated = StatusIs(
      StatusCode::kDataLoss,
      AllOf(HasSubstr("case 'case_001' (#1)"), HasSubstr("array 'image'"), HasSubstr(ds.path(1, 0)),
            ::testing::AnyOf(HasSubstr("shrank while it was mapped"), HasSubstr("too short"))));
  EXPECT_THAT(FirstError(*loader, 50), truncated);
  EXPECT_THAT(FirstError(*loader, 50), truncated);  // batches without the case came between
  EXPECT_GE(loader->metrics().batches_failed, 2);
}

TEST(LoaderErrorsTest, SkipPolicyRedrawsDeterministicallyAndCounts) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(4)));
  testing::CorruptEveryChunk(ds.path(2, 0));  // case 2 image: every read of it fails
  std::vector<testing::BatchSnapshot> first_run;
  for (const int threads : {1, 3}) {
    LoaderConfig c = TinyConfig(ds);
    c.error_policy = ErrorPolicy::kSkip;
    c.num_threads = threads;
    ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
    std::vector<testing::BatchSnapshot> run;
    for (int b = 0; b < 10; ++b) {
      ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
      for (const SampleSpec& s : lease.samples()) {
        EXPECT_NE(s.case_index, 2);
      }
      ExpectMatchesNaiveRead(lease, ds, c.sampler.patch_size);
      run.push_back(Snapshot(lease));
    }
    const LoaderMetrics m = loader->metrics();
    EXPECT_GT(m.samples_skipped, 0);
    EXPECT_GE(m.read_errors, m.samples_skipped);
    EXPECT_EQ(m.batches_failed, 0);
    if (first_run.empty()) {
      first_run = std::move(run);
    } else {
      EXPECT_TRUE(run == first_run) << "redraws must not depend on threads or timing";
    }
  }
}

TEST(LoaderErrorsTest, SkipPolicyGivesUpAfterMaxRedraws) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(1)));
  testing::CorruptEveryChunk(ds.path(0, 0));  // the only case
  LoaderConfig c = TinyConfig(ds);
  c.error_policy = ErrorPolicy::kSkip;
  c.max_redraws = 2;
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  EXPECT_THAT(loader->Next(), StatusIs(StatusCode::kDataLoss, HasSubstr("after 2 redraws")));
}

TEST(LoaderErrorsTest, OpenErrorsAtCreateNameTheCase) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(2)));
  std::filesystem::remove(ds.path(1, 0));
  EXPECT_THAT(Loader::Create(TinyConfig(ds)),
              StatusIs(StatusCode::kNotFound,
                       AllOf(HasSubstr("case 'case_001'"), HasSubstr(ds.path(1, 0)))));
}

}  // namespace
}  // namespace patchfeed::loader
