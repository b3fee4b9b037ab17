// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Reads in flight (issue 15): FetchedSource's discovery and serving, and the loader with
// io_mode kPread and io_depth > 0 on both backends: the same batches as synchronous and mapped
// reads (plain and augmented), everything fetched ahead (no fallback reads), the metrics, the
// option checks. The same over a file system with latency: tests/python/test_fuse_bed.py.

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codec/open_array.h"
#include "loader/internal/fetched_source.h"
#include "loader/loader.h"
#include "storage/io_engine.h"
#include "tests/loader/loader_testutil.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::loader {
namespace {

using internal_loader::FetchedSource;
using storage::IoEngine;
using ::testing::AllOf;
using testing::FirstError;
using ::testing::HasSubstr;
using testing::Snapshot;
using testing::TempDir;
using testing::TinyConfig;
using testing::TinyDatasetOptions;

bool UringRefused() {
  static const bool refused = !storage::IoEngine::Create(storage::IoBackend::kIoUring, 1).ok();
  return refused;
}

// The first case's image, opened for pread, and a FetchedSource over it.
struct FetchedFixture {
  TempDir dir;
  Dataset ds;
  std::shared_ptr<const codec::ArrayReader> array;
  std::atomic<int64_t> fallbacks{0};
  internal_loader::ByteArena arena;
  std::unique_ptr<FetchedSource> source;

  FetchedFixture() {
    auto written = WriteSyntheticDataset(dir.path(), TinyDatasetOptions(1));
    EXPECT_OK(written.status());
    ds = *written;
    auto opened = codec::OpenArray(ds.path(0, 0), {storage::IoMode::kPread});
    EXPECT_OK(opened.status());
    array = std::move(*opened);
    source = std::make_unique<FetchedSource>(
        std::shared_ptr<const storage::ByteSource>(array, array->file()), &arena, &fallbacks);
  }
  // The file's bytes [offset, offset + length), read directly.
  std::vector<std::byte> FileBytes(uint64_t offset, size_t length) const {
    std::vector<std::byte> out(length);
    EXPECT_OK(array->file()->ReadAt(offset, out));
    return out;
  }
  void Fetch(storage::FileRange range) {
    const std::vector<std::byte> bytes = FileBytes(range.offset, range.length);
    std::span<std::byte> into = source->AddFetch(range);
    std::memcpy(into.data(), bytes.data(), bytes.size());
  }
};

TEST(FetchedSourceTest, DiscoveryRecordsMissesThenServesWhatWasFetched) {
  FetchedFixture f;
  FetchedSource& s = *f.source;
  EXPECT_EQ(s.name(), f.array->file()->name());
  EXPECT_EQ(s.size(), f.array->file()->size());
  EXPECT_GE(s.fd(), 0);
  EXPECT_EQ(s.Data(0, 1), nullptr);  // the codec must see a pread file

  std::vector<std::byte> out(16);
  s.BeginDiscovery();
  EXPECT_THAT(s.ReadAt(100, out), StatusIs(StatusCode::kCancelled, ::testing::_));
  EXPECT_THAT(s.ReadAt(400, std::span(out).first(8)),
              StatusIs(StatusCode::kCancelled, ::testing::_));
  std::vector<storage::FileRange> missing = s.TakeMissing();
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_EQ(missing[0].offset, 100u);
  EXPECT_EQ(missing[0].length, 16u);
  EXPECT_EQ(missing[1].offset, 400u);
  EXPECT_EQ(missing[1].length, 8u);
  EXPECT_TRUE(s.TakeMissing().empty());

  // Two overlapping fetches: a read inside either one is served, whichever holds it whole.
  f.Fetch({90, 40});
  f.Fetch({120, 300});
  EXPECT_EQ(s.fetched_bytes(), 340);
  for (const uint64_t at : {90u, 100u, 114u, 125u, 400u, 404u}) {
    ASSERT_OK(s.ReadAt(at, out));
    EXPECT_EQ(out, f.FileBytes(at, out.size())) << "at " << at;
  }
  EXPECT_TRUE(s.TakeMissing().empty());  // hits record nothing

  // WillRead: the chunk gets an image holding the header bytes fetched so far; what is not
  // fetched is recorded, and the piece stops there (no decoding in discovery), even for bytes
  // that are in.
  const storage::FileRange chunk{90, 2100};
  const storage::FileRange hint[] = {{130, 10}, {1000, 50}, {2000, 8}};
  s.WillRead(chunk, hint);
  EXPECT_THAT(s.ReadAt(130, std::span(out).first(10)),
              StatusIs(StatusCode::kCancelled, ::testing::_));
  missing = s.TakeMissing();
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_EQ(missing[0].offset, 1000u);
  EXPECT_EQ(missing[1].offset, 2000u);
  EXPECT_EQ(s.ImageAt(89), -1);
  EXPECT_EQ(s.ImageAt(90), 0);
  EXPECT_EQ(s.ImageAt(2189), 0);
  EXPECT_EQ(s.ImageAt(2190), -1);
  EXPECT_EQ(s.ChunkImage(90, 2100, {}), nullptr);  // never during discovery
  // Fetches inside the image land in it; the codec then decodes in place.
  f.Fetch({1000, 50});
  f.Fetch({1990, 30});
  // The next piece starts afresh.
  s.BeginDiscovery();
  ASSERT_OK(s.ReadAt(130, std::span(out).first(10)));
  s.EndDiscovery();
  EXPECT_EQ(f.fallbacks.load(), 0);

  const storage::FileRange header[] = {{90, 40}};
  const storage::FileRange streams[] = {{1000, 50}, {2000, 8}};
  const std::byte* image = s.ChunkImage(90, 2100, streams);
  ASSERT_NE(image, nullptr);
  EXPECT_EQ(s.ChunkImage(90, 2100, header), image);  // the header bytes were copied in
  const std::vector<std::byte> file = f.FileBytes(90, 2100);
  EXPECT_TRUE(std::equal(image, image + 40, file.begin()));
  EXPECT_TRUE(std::equal(image + 910, image + 960, file.begin() + 910));
  EXPECT_TRUE(std::equal(image + 1900, image + 1930, file.begin() + 1900));
  // Not fetched, or not this image: no image, so the codec reads (and nothing unfetched is
  // ever decoded).
  const storage::FileRange gap[] = {{500, 8}};
  EXPECT_EQ(s.ChunkImage(90, 2100, gap), nullptr);
  EXPECT_EQ(s.ChunkImage(90, 2000, streams), nullptr);
  EXPECT_EQ(s.ChunkImage(100, 2090, {}), nullptr);

  // Serving: bytes never fetched are read from the file and counted, never refused.
  ASSERT_OK(s.ReadAt(500, out));
  EXPECT_EQ(out, f.FileBytes(500, out.size()));
  EXPECT_EQ(f.fallbacks.load(), 1);
  ASSERT_OK(s.ReadAt(1010, out));  // from the image
  EXPECT_EQ(out, f.FileBytes(1010, out.size()));
  EXPECT_EQ(f.fallbacks.load(), 1);
  EXPECT_TRUE(s.TakeMissing().empty());
  s.WillRead(chunk, hint);  // ignored outside discovery
  EXPECT_TRUE(s.TakeMissing().empty());
  ASSERT_OK(s.ReadAt(130, std::span(out).first(10)));
}

// The reads a box needs, found by replaying its pieces in discovery until nothing is missing,
// then the box read through the source equals a read of the file; no fallback.
TEST(FetchedSourceTest, ReplayingTheCodecsReadFindsEveryByteItNeeds) {
  FetchedFixture f;
  codec::BoxPlan plan;
  const codec::Box box{{0, 3, 2, 5}, {2, 17, 15, 20}};
  ASSERT_OK(codec::PlanBox(f.array->geometry(), box, {}, &plan));
  std::vector<std::byte> want, got(want.size());
  const std::vector<std::byte> pad(static_cast<size_t>(f.array->itemsize()));
  { ASSERT_OK_AND_ASSIGN(want, f.array->ReadBox(box, pad)); }
  got.assign(want.size(), std::byte{0x5A});
  const StridedView dst = StridedView::Contiguous(got.data(), plan.shape(), f.array->itemsize());
  codec::BoxReadScratch scratch;
  scratch.source = f.source.get();
  int rounds = 0;
  for (;; ++rounds) {
    ASSERT_LT(rounds, 5);
    std::vector<storage::FileRange> missing;
    for (int64_t p = 0; p < plan.num_pieces(); ++p) {
      f.source->BeginDiscovery();
      (void)f.array->ReadPiece(plan, plan.piece(p), dst, pad, scratch);
      const auto m = f.source->TakeMissing();
      missing.insert(missing.end(), m.begin(), m.end());
    }
    f.source->EndDiscovery();
    if (missing.empty())
      break;
    for (const storage::FileRange& r : missing)
      f.Fetch(r);
  }
  // Headers first (32 bytes each, as asked), then the block offsets and streams, then done.
  EXPECT_EQ(rounds, 3);
  for (int64_t p = 0; p < plan.num_pieces(); ++p)
    ASSERT_OK(f.array->ReadPiece(plan, plan.piece(p), dst, pad, scratch));
  EXPECT_EQ(got, want);
  EXPECT_EQ(f.fallbacks.load(), 0);
  // Every chunk piece was decoded in place, from the image its streams were fetched into
  // (twice per chunk: for the header and offsets, then for the streams).
  int64_t chunk_pieces = 0;
  for (int64_t p = 0; p < plan.num_pieces(); ++p)
    chunk_pieces += plan.piece(p).chunk >= 0;
  EXPECT_GT(chunk_pieces, 1);
  EXPECT_EQ(f.source->images_served(), 2 * chunk_pieces);
  EXPECT_LT(f.source->fetched_bytes(), static_cast<int64_t>(f.array->file()->size()));
}

struct Depth {
  storage::IoBackend backend;
  int depth;
};

class ReadsInFlightTest : public ::testing::TestWithParam<Depth> {
 protected:
  void SetUp() override {
    if (GetParam().backend == storage::IoBackend::kIoUring && UringRefused())
      GTEST_SKIP() << "io_uring is refused on this machine";
  }
};

std::vector<testing::BatchSnapshot> Batches(const LoaderConfig& c, int n, LoaderMetrics* m) {
  std::vector<testing::BatchSnapshot> out;
  auto loader = Loader::Create(c);
  EXPECT_OK(loader.status());
  if (!loader.ok())
    return out;
  for (int b = 0; b < n; ++b) {
    auto lease = (*loader)->Next();
    EXPECT_OK(lease.status());
    if (!lease.ok())
      break;
    out.push_back(Snapshot(*lease));
  }
  if (m != nullptr)
    *m = (*loader)->metrics();
  return out;
}

TEST_P(ReadsInFlightTest, BatchesEqualSynchronousAndMappedReads) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(4)));
  LoaderConfig c = TinyConfig(ds);
  c.io_mode = storage::IoMode::kMmap;
  const auto mapped = Batches(c, 12, nullptr);
  c.io_mode = storage::IoMode::kPread;
  c.io_depth = 0;
  LoaderMetrics sync_metrics;
  const auto synchronous = Batches(c, 12, &sync_metrics);
  EXPECT_EQ(sync_metrics.io_backend, "");
  EXPECT_EQ(sync_metrics.io_requests, 0);
  c.io_depth = GetParam().depth;
  c.io_backend = GetParam().backend;
  LoaderMetrics m;
  const auto ahead = Batches(c, 12, &m);
  ASSERT_EQ(ahead.size(), 12u);
  EXPECT_TRUE(ahead == mapped);
  EXPECT_TRUE(ahead == synchronous);
  EXPECT_EQ(m.io_backend,
            GetParam().backend == storage::IoBackend::kIoUring ? "io_uring" : "pread pool");
  EXPECT_EQ(m.io_depth, GetParam().depth);
  EXPECT_GT(m.io_requests, 0);
  EXPECT_GT(m.io_bytes, 0);
  EXPECT_GE(m.io_max_in_flight, 1);
  EXPECT_LE(m.io_max_in_flight, GetParam().depth);
  EXPECT_EQ(m.io_fallback_reads, 0) << "a read the prefetch did not foresee";
  EXPECT_EQ(m.read_errors, 0);
}

TEST_P(ReadsInFlightTest, AugmentedBatchesEqualSynchronousReads) {
  TempDir dir;
  SyntheticDatasetOptions o = TinyDatasetOptions(3);
  o.channels = 1;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), o));
  LoaderConfig c = TinyConfig(ds);
  c.sampler.patch_size = {16, 16, 16};
  c.sampler.need_to_pad = {8, 8, 8};
  AugmentOptions aug;
  aug.pipeline = augment::NnUNetAugmentConfig::Default(std::vector<int64_t>{10, 10, 10});
  aug.pipeline.spatial.p_rotation = 0.7;  // windows read through the footprint filter
  aug.pipeline.spatial.p_scaling = 0.5;
  c.augment = aug;
  c.io_mode = storage::IoMode::kPread;
  c.io_depth = 0;
  const auto synchronous = Batches(c, 10, nullptr);
  c.io_depth = GetParam().depth;
  c.io_backend = GetParam().backend;
  LoaderMetrics m;
  const auto ahead = Batches(c, 10, &m);
  ASSERT_EQ(ahead.size(), 10u);
  EXPECT_TRUE(ahead == synchronous);
  EXPECT_GT(m.io_requests, 0);
  EXPECT_EQ(m.io_fallback_reads, 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, ReadsInFlightTest,
                         ::testing::Values(Depth{storage::IoBackend::kIoUring, 64},
                                           Depth{storage::IoBackend::kPreadPool, 64},
                                           Depth{storage::IoBackend::kIoUring, 1},
                                           Depth{storage::IoBackend::kPreadPool, 3}),
                         [](const auto& param_info) {
                           return std::string(param_info.param.backend ==
                                                      storage::IoBackend::kIoUring
                                                  ? "IoUring"
                                                  : "PreadPool") +
                                  std::to_string(param_info.param.depth);
                         });

TEST(ReadsInFlightErrorsTest, FileCutShortNamesCaseFileAndRange) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(2)));
  LoaderConfig c = TinyConfig(ds);
  c.io_mode = storage::IoMode::kPread;
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  ASSERT_OK(FirstError(*loader, 3));
  // Another process cuts the file after its header: the open frame still knows its chunks,
  // whose reads now end early.
  std::filesystem::resize_file(ds.path(1, 0), 300);
  ASSERT_OK(loader->Seek(0, 100));  // drop what was read ahead
  EXPECT_THAT(FirstError(*loader, 50),
              StatusIs(StatusCode::kDataLoss,
                       AllOf(HasSubstr("case 'case_001' (#1)"), HasSubstr("array 'image'"),
                             HasSubstr("short read"), HasSubstr("at offset"),
                             HasSubstr(ds.path(1, 0)), HasSubstr("patch box"))));
  EXPECT_GE(loader->metrics().io_requests, 1);
}

TEST(ReadsInFlightErrorsTest, FileRemovedIsReportedWhenItIsReopened) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(3)));
  LoaderConfig c = TinyConfig(ds);
  c.io_mode = storage::IoMode::kPread;
  c.max_open_files = 1;  // every read reopens, as on a dataset larger than the LRU
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  ASSERT_OK(FirstError(*loader, 2));
  std::filesystem::remove(ds.path(2, 1));
  ASSERT_OK(loader->Seek(0, 50));
  EXPECT_THAT(FirstError(*loader, 50),
              StatusIs(StatusCode::kNotFound,
                       AllOf(HasSubstr("case 'case_002' (#2)"), HasSubstr("array 'seg'"),
                             HasSubstr(ds.path(2, 1)), HasSubstr("patch box"))));
}

TEST(ReadsInFlightOptionsTest, DepthIsCheckedAndIgnoredWithMappedFiles) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(2)));
  LoaderConfig c = TinyConfig(ds);
  c.io_mode = storage::IoMode::kPread;
  for (const int bad : {-1, storage::IoEngine::kMaxUringDepth + 1}) {
    c.io_depth = bad;
    EXPECT_THAT(Loader::Create(c).status(),
                StatusIs(StatusCode::kInvalidArgument, HasSubstr("io_depth must be in [0, ")));
  }
  c.io_mode = storage::IoMode::kMmap;
  c.io_depth = 64;
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  ASSERT_OK(loader->Next().status());
  EXPECT_EQ(loader->metrics().io_backend, "");
  EXPECT_EQ(loader->metrics().io_requests, 0);
}

}  // namespace
}  // namespace patchfeed::loader
