// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Loader: batches equal naive single-threaded reads of the same SampleSpecs; the same batches
// with 1, 2 and 4 threads; exact resume from a saved state; ranks disjoint and complete over a
// finite epoch; lease and ring rules; the memory budget; early destruction. Tiny arrays, no
// timing asserts.

#include "loader/loader.h"

#include <algorithm>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "loader/internal/pinned_memory.h"
#include "tests/loader/loader_testutil.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::loader {
namespace {

using internal_loader::PageSize;
using internal_loader::RoundUpToPage;
using testing::BatchSnapshot;
using testing::ExpectMatchesNaiveRead;
using ::testing::HasSubstr;
using testing::Snapshot;
using testing::TempDir;
using testing::TinyConfig;
using testing::TinyDatasetOptions;

// The next `n` batches, skipping end-of-epoch markers.
std::vector<BatchSnapshot> Take(Loader& loader, int n) {
  std::vector<BatchSnapshot> out;
  while (static_cast<int>(out.size()) < n) {
    auto lease = loader.Next();
    EXPECT_TRUE(lease.ok()) << lease.status().ToString();
    if (!lease.ok()) {
      break;
    }
    if (*lease) {
      out.push_back(Snapshot(*lease));
    }
  }
  return out;
}

TEST(LoaderTest, BatchesEqualNaiveReads) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(5)));
  for (const int64_t min_task_bytes : {int64_t{0}, int64_t{1024}, int64_t{1} << 30}) {
    LoaderConfig c = TinyConfig(ds);
    c.min_task_bytes = min_task_bytes;  // every cell a task / runs of cells / all inline
    ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
    const auto layout = loader->array_layout();
    ASSERT_EQ(layout.size(), 2u);
    EXPECT_EQ(layout[0].name, "image");
    EXPECT_EQ(layout[0].dtype, "<f4");
    EXPECT_EQ(layout[0].shape, (std::vector<int64_t>{3, 2, 12, 12, 12}));
    EXPECT_EQ(layout[1].dtype, "<i2");
    EXPECT_EQ(layout[1].shape, (std::vector<int64_t>{3, 1, 12, 12, 12}));
    bool padded = false;
    for (int64_t b = 0; b < 6; ++b) {
      ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
      ASSERT_TRUE(lease);
      EXPECT_EQ(lease.batch_index(), b);
      EXPECT_EQ(lease.epoch(), 0);
      ASSERT_EQ(lease.samples().size(), 3u);
      ExpectMatchesNaiveRead(lease, ds, c.sampler.patch_size);
      const ArrayView* seg = lease.array("seg");
      ASSERT_NE(seg, nullptr);
      const auto* labels = reinterpret_cast<const int16_t*>(seg->data);
      padded |= std::any_of(labels, labels + seg->nbytes / 2, [](int16_t v) { return v == -1; });
      EXPECT_EQ(lease.array("nope"), nullptr);
    }
    EXPECT_TRUE(padded) << "need_to_pad should push some boxes over the border";
  }
}

TEST(LoaderTest, ForegroundOversamplingCentresOnLabels) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(3)));
  LoaderConfig c = TinyConfig(ds);
  c.sampler.oversample_foreground = 0.5;  // foreground mode kAuto builds the indexes
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  int forced = 0;
  for (int b = 0; b < 8; ++b) {
    ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
    ExpectMatchesNaiveRead(lease, ds, c.sampler.patch_size);
    const ArrayView* seg = lease.array("seg");
    for (size_t j = 0; j < lease.samples().size(); ++j) {
      const SampleSpec& s = lease.samples()[j];
      if (!s.forced_foreground) {
        continue;
      }
      ASSERT_GE(s.foreground_class, 0) << "every synthetic case has foreground";
      ++forced;
      const auto* labels = reinterpret_cast<const int16_t*>(seg->data + j * seg->byte_strides[0]);
      EXPECT_TRUE(std::any_of(labels, labels + 12 * 12 * 12, [](int16_t v) { return v > 0; }));
    }
  }
  EXPECT_GT(forced, 0);
}

TEST(LoaderTest, SameBatchesWithOneTwoAndFourThreads) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(4)));
  std::vector<BatchSnapshot> reference;
  for (const int threads : {1, 2, 4}) {
    LoaderConfig c = TinyConfig(ds);
    c.num_threads = threads;
    c.min_task_bytes = 0;
    ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
    EXPECT_EQ(loader->num_threads(), threads);
    auto batches = Take(*loader, 8);
    ASSERT_EQ(batches.size(), 8u);
    if (reference.empty()) {
      reference = std::move(batches);
    } else {
      EXPECT_TRUE(batches == reference) << "batches differ with " << threads << " threads";
    }
  }
}

TEST(LoaderTest, ResumesExactlyFromItsState) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(4)));
  for (const EpochMode mode : {EpochMode::kInfinite, EpochMode::kFiniteWithoutReplacement}) {
    LoaderConfig c = TinyConfig(ds);
    c.sampler.epoch_mode = mode;
    c.sampler.batch_size = 2;  // finite: 2 batches per epoch
    ASSERT_OK_AND_ASSIGN(auto first, Loader::Create(c));
    for (int i = 0; i < 3; ++i) {
      ASSERT_OK_AND_ASSIGN(Lease lease, first->Next());
      if (mode != EpochMode::kInfinite && i == 2) {
        EXPECT_TRUE(lease.end_of_epoch());
      }
    }
    const LoaderState state = first->state();
    EXPECT_EQ(state.seed, 7u);
    EXPECT_EQ(state.epoch, mode == EpochMode::kInfinite ? 0 : 1);
    EXPECT_EQ(state.next_batch, mode == EpochMode::kInfinite ? 3 : 0);
    const auto expected = Take(*first, 3);  // crosses an epoch end in the finite mode

    LoaderConfig resumed = TinyConfig(ds);
    resumed.sampler.epoch_mode = mode;
    resumed.sampler.batch_size = 2;
    resumed.sampler.seed = 99;  // overwritten by the state
    resumed.ResumeFrom(state);
    resumed.num_threads = 1;
    ASSERT_OK_AND_ASSIGN(auto second, Loader::Create(resumed));
    EXPECT_EQ(second->state().next_batch, state.next_batch);
    EXPECT_TRUE(Take(*second, 3) == expected);
    if (mode != EpochMode::kInfinite) {
      EXPECT_EQ(expected[2].epoch, 2);
    }
  }
}

TEST(LoaderTest, SetEpochMatchesAFreshLoader) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(4)));
  LoaderConfig c = TinyConfig(ds);
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  ASSERT_OK_AND_ASSIGN(Lease held, loader->Next());  // survives the seek
  Take(*loader, 1);
  ASSERT_OK(loader->SetEpoch(5));
  const auto after_seek = Take(*loader, 3);
  c.start_epoch = 5;
  ASSERT_OK_AND_ASSIGN(auto fresh, Loader::Create(c));
  EXPECT_TRUE(Take(*fresh, 3) == after_seek);
  EXPECT_EQ(after_seek[0].epoch, 5);
  EXPECT_EQ(held.batch_index(), 0);
  ExpectMatchesNaiveRead(held, ds, c.sampler.patch_size);
  ASSERT_OK(loader->Seek(2, 7));
  EXPECT_EQ(Take(*loader, 1)[0].batch, 7);
}

TEST(LoaderTest, RanksAreDisjointAndCompleteOverAFiniteEpoch) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(8)));
  constexpr int kWorld = 2;
  for (const int64_t epoch : {0, 1}) {
    std::multiset<int64_t> seen;
    for (int rank = 0; rank < kWorld; ++rank) {
      LoaderConfig c = TinyConfig(ds);
      c.sampler.batch_size = 4;  // global: 2 per rank, 2 batches per epoch
      c.sampler.epoch_mode = EpochMode::kFiniteWithoutReplacement;
      c.sampler.rank = rank;
      c.sampler.world_size = kWorld;
      c.start_epoch = epoch;
      ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
      EXPECT_EQ(loader->batches_per_epoch(), 2);
      EXPECT_EQ(loader->local_batch_size(), 2);
      for (int b = 0; b < 2; ++b) {
        ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
        ASSERT_TRUE(lease);
        EXPECT_EQ(lease.epoch(), epoch);
        ExpectMatchesNaiveRead(lease, ds, c.sampler.patch_size);
        for (const SampleSpec& s : lease.samples()) {
          seen.insert(s.case_index);
        }
      }
      ASSERT_OK_AND_ASSIGN(Lease end, loader->Next());
      EXPECT_FALSE(end);
      EXPECT_TRUE(end.end_of_epoch());
      EXPECT_EQ(end.epoch(), epoch);
      ASSERT_OK_AND_ASSIGN(Lease next_epoch, loader->Next());
      EXPECT_EQ(next_epoch.epoch(), epoch + 1);
      EXPECT_EQ(next_epoch.batch_index(), 0);
    }
    EXPECT_EQ(seen, (std::multiset<int64_t>{0, 1, 2, 3, 4, 5, 6, 7})) << "epoch " << epoch;
  }
}

TEST(LoaderTest, LeasesHoldSlotsUntilReleased) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(2)));
  LoaderConfig c = TinyConfig(ds);
  c.ring_size = 2;
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  ASSERT_OK_AND_ASSIGN(Lease a, loader->Next());
  ASSERT_OK_AND_ASSIGN(Lease b, loader->Next());
  EXPECT_THAT(loader->Next(), StatusIs(StatusCode::kResourceExhausted, HasSubstr("all 2")));
  LoaderMetrics m = loader->metrics();
  EXPECT_EQ(m.slots, 2);
  EXPECT_EQ(m.slots_leased, 2);
  Lease moved = std::move(a);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): moved-from leases are empty
  EXPECT_TRUE(moved);
  EXPECT_EQ(moved.batch_index(), 0);
  moved.Release();
  EXPECT_FALSE(moved);
  EXPECT_TRUE(moved.arrays().empty());
  ASSERT_OK_AND_ASSIGN(Lease c2, loader->Next());
  EXPECT_EQ(c2.batch_index(), 2);
  b = std::move(c2);  // releases batch 1's slot
  ASSERT_OK_AND_ASSIGN(Lease d, loader->Next());
  EXPECT_EQ(d.batch_index(), 3);
  m = loader->metrics();
  EXPECT_EQ(m.batches_delivered, 4);
  EXPECT_EQ(m.samples_delivered, 12);
  EXPECT_EQ(m.slots_free + m.slots_producing + m.slots_ready + m.slots_leased, 2);
  EXPECT_GT(m.bytes_decoded, 0);
  EXPECT_GT(m.bytes_read, 0);
  EXPECT_LT(m.bytes_read, m.bytes_decoded);
  int64_t slot_bytes = 0;
  for (const ArrayView& v : d.arrays()) {
    slot_bytes += static_cast<int64_t>(RoundUpToPage(static_cast<size_t>(v.nbytes)));
  }
  EXPECT_EQ(m.bytes_delivered, 4 * slot_bytes);
  EXPECT_GE(m.files_opened, 4);
}

TEST(LoaderTest, RingIsPageAlignedAndPinnedOnlyWithCuda) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(2)));
  LoaderConfig c = TinyConfig(ds);
  c.pin_memory = PinMode::kAuto;
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
  for (const ArrayView& v : lease.arrays()) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data) % PageSize(), 0u) << v.name;
  }
  EXPECT_EQ(lease.pinned(), loader->pinned());
  if (!loader->pinned()) {
    // No CUDA runtime, or one without a device: plain memory, and the reason why.
    EXPECT_THAT(loader->unpinned_reason(),
                ::testing::AnyOf(HasSubstr("libcudart"), HasSubstr("cudaHostRegister")));
    c.pin_memory = PinMode::kRequire;
    EXPECT_FALSE(Loader::Create(c).ok());
  }
}

TEST(LoaderTest, RefusesConfigurationsOverTheMemoryBudget) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(2)));
  LoaderConfig c = TinyConfig(ds);
  c.memory_budget = 64 << 10;
  EXPECT_THAT(Loader::Create(c), StatusIs(StatusCode::kResourceExhausted,
                                          ::testing::AllOf(HasSubstr("ring_size 3"),
                                                           HasSubstr("raise memory_budget"))));
}

TEST(LoaderTest, RejectsInconsistentArraysAndOptions) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(2)));
  LoaderConfig c = TinyConfig(ds);
  c.sampler.patch_size = {12, 12};  // 2-D patches of 4-D arrays
  c.sampler.need_to_pad = {0, 0};
  EXPECT_THAT(Loader::Create(c), StatusIs(StatusCode::kInvalidArgument, HasSubstr("dimensions")));
  c = TinyConfig(ds);
  c.arrays = {{"seg", std::nullopt}, {"labels", std::nullopt}};
  EXPECT_THAT(Loader::Create(c), StatusIs(StatusCode::kInvalidArgument, HasSubstr("'labels'")));
  c = TinyConfig(ds);
  c.ring_size = 0;
  EXPECT_THAT(Loader::Create(c), StatusIs(StatusCode::kInvalidArgument, HasSubstr("ring_size")));
  // Only the seg array, with a custom pad value.
  c = TinyConfig(ds);
  c.arrays = {{"seg", 7.0}};
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  ASSERT_EQ(loader->array_layout().size(), 1u);
}

TEST(LoaderTest, DestroyingWithBatchesInFlightNeitherHangsNorLeaks) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(3)));
  for (int round = 0; round < 5; ++round) {
    LoaderConfig c = TinyConfig(ds);
    c.num_threads = 1 + round % 3;
    c.ring_size = 4;
    c.min_task_bytes = 0;
    ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
    if (round == 0) {
      continue;  // destroyed right after Create
    }
    Lease kept;
    { ASSERT_OK_AND_ASSIGN(kept, loader->Next()); }
    loader.reset();  // three batches still in flight
    // The lease outlives the loader: its memory stays valid until it is released.
    ASSERT_TRUE(kept);
    ExpectMatchesNaiveRead(kept, ds, c.sampler.patch_size);
  }
  // A lease released on another thread after the loader is gone.
  LoaderConfig c = TinyConfig(ds);
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
  loader.reset();
  std::thread([l = std::move(lease)]() mutable { l.Release(); }).join();
}

TEST(DatasetTest, FollowsNnUNetNaming) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds, WriteSyntheticDataset(dir.path(), TinyDatasetOptions(3)));
  EXPECT_EQ(ds.array_names(), (std::vector<std::string>{"image", "seg"}));
  ASSERT_EQ(ds.num_cases(), 3);
  EXPECT_EQ(ds.case_id(2), "case_002");
  EXPECT_EQ(ds.path(1, 1), dir.path() + "/case_001_seg.b2nd");
  std::ofstream(dir.path() + "/case_001.pkl") << "ignored";
  std::ofstream(dir.path() + "/extra.b2nd") << "no seg";
  EXPECT_THAT(Dataset::FromNnUNetFolder(dir.path()),
              StatusIs(StatusCode::kNotFound, HasSubstr("extra_seg.b2nd")));
  EXPECT_THAT(Dataset::FromNnUNetFolder(dir.path() + "/missing"),
              StatusIs(StatusCode::kNotFound, HasSubstr("does not exist")));
  ASSERT_OK_AND_ASSIGN(Dataset listed, Dataset::FromList({"image"}, {{"a", {ds.path(0, 0)}},
                                                                     {"", {ds.path(1, 0)}}}));
  EXPECT_EQ(listed.case_id(1), "case_1");
  EXPECT_THAT(Dataset::FromList({"image", "seg"}, {{"a", {ds.path(0, 0)}}}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("1 paths for 2 arrays")));
}

}  // namespace
}  // namespace patchfeed::loader
