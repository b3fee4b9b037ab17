// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// The loader over an object store (SeaweedFS's S3 gateway, started by the test): its batches
// are the local files' batches, byte for byte, with every chunk fetched ahead through the
// store's engine (ReadAsync, completions on the engine's thread) and none read by a task.
// Built into its own binary because it needs storage_remote; make tsan-test runs it too.

#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "loader/loader.h"
#include "loader/synthetic_dataset.h"
#include "storage/remote/store_for.h"
#include "tests/loader/loader_testutil.h"
#include "tests/storage/remote_test_servers.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::loader {
namespace {

using patchfeed::testing::SeaweedServer;
using ::testing::HasSubstr;
using testing::Snapshot;
using testing::TempDir;
using testing::TinyConfig;
using testing::TinyDatasetOptions;

std::string FileBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

class RemoteLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    server_ = SeaweedServer::Start(&why);
    if (server_ == nullptr)
      GTEST_SKIP() << why;
    ASSERT_OK_AND_ASSIGN(local_, WriteSyntheticDataset(dir_.path(), TinyDatasetOptions(3)));
    ASSERT_OK(server_->CreateBucket("cases"));
    std::vector<CaseFiles> cases;
    for (int64_t i = 0; i < local_.num_cases(); ++i) {
      CaseFiles c{local_.case_id(i), {}};
      for (int a = 0; a < static_cast<int>(local_.array_names().size()); ++a) {
        const std::string name = local_.case_id(i) + "_" + local_.array_names()[a] + ".b2nd";
        ASSERT_OK(server_->PutObject("cases", "set/" + name, FileBytes(local_.path(i, a))));
        c.paths.push_back("s3://cases/set/" + name);
      }
      cases.push_back(std::move(c));
    }
    storage::RemoteOptions options;
    options.endpoint_url = server_->endpoint();
    options.key = server_->admin_key();
    options.secret = server_->admin_secret();
    ASSERT_OK_AND_ASSIGN(auto store, storage::StoreFor("s3://cases/set", options));
    ASSERT_OK_AND_ASSIGN(remote_, Dataset::FromList(local_.array_names(), cases, store));
  }

  TempDir dir_;
  std::unique_ptr<SeaweedServer> server_;
  Dataset local_;
  Dataset remote_;
};

TEST_F(RemoteLoaderTest, BatchesEqualTheLocalOnesAllFetchedAhead) {
  LoaderConfig want_config = TinyConfig(local_);
  want_config.io_mode = storage::IoMode::kPread;
  ASSERT_OK_AND_ASSIGN(auto want_loader, Loader::Create(want_config));
  ASSERT_OK_AND_ASSIGN(auto got_loader, Loader::Create(TinyConfig(remote_)));
  for (int b = 0; b < 6; ++b) {
    ASSERT_OK_AND_ASSIGN(Lease want, want_loader->Next());
    ASSERT_OK_AND_ASSIGN(Lease got, got_loader->Next());
    EXPECT_EQ(Snapshot(got), Snapshot(want)) << "batch " << b;
  }
  const LoaderMetrics m = got_loader->metrics();
  EXPECT_GT(m.io_requests, 0);
  EXPECT_EQ(m.io_fallback_reads, 0);
  EXPECT_EQ(m.io_backend, "libcurl");
  EXPECT_EQ(m.io_depth, 64);
  EXPECT_GE(m.io_max_in_flight, 2);  // a batch's chunks fetched together
  EXPECT_LE(m.io_max_in_flight, 64);
  EXPECT_EQ(m.io_retries, 0);
  EXPECT_EQ(m.io_errors, 0);
}

TEST_F(RemoteLoaderTest, ARemovedObjectIsAnErrorNamingCaseAndUrl) {
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(TinyConfig(remote_)));
  ASSERT_OK(loader->Next().status());
  // Close drops what was read ahead and cancels the store's requests in flight.
  loader->Close();
  ASSERT_OK_AND_ASSIGN(const patchfeed::testing::PlainResponse deleted,
                       patchfeed::testing::PlainRequest(
                           "DELETE", server_->endpoint() + "/cases/set/case_002_seg.b2nd", {},
                           server_->admin_key(), server_->admin_secret()));
  ASSERT_EQ(deleted.status, 204) << deleted.body;
  LoaderConfig c = TinyConfig(remote_);
  EXPECT_THAT(Loader::Create(c).status(),
              StatusIs(StatusCode::kNotFound, HasSubstr("s3://cases/set/case_002_seg.b2nd")));
}

}  // namespace
}  // namespace patchfeed::loader
