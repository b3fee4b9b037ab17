// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// The sampler against nnU-Net's rules (../shared/reference/nnunet-pipeline.md section 2): the
// forced-position table, the DDP split and per-rank oversampling, get_bbox's bounds and forced
// boxes, class and case choice. Distribution checks use fixed seeds and bounds of ~6 sigma:
// deterministic.

#include "loader/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/loader/distribution_checks.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::loader {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

SamplerConfig Config(int64_t batch, std::vector<int64_t> patch = {8, 8, 8}) {
  SamplerConfig c;
  c.patch_size = std::move(patch);
  c.batch_size = batch;
  c.seed = 42;
  return c;
}

std::vector<CaseInfo> Cases(int64_t n, std::vector<int64_t> shape = {40, 40, 40},
                            std::vector<int64_t> counts = {}) {
  return std::vector<CaseInfo>(n, CaseInfo{std::move(shape), std::move(counts)});
}

// Voxel i of key k sits at (k + i) on every axis, kept inside a 40^3 case.
Result<std::vector<int64_t>> FakeVoxel(int64_t, int64_t key, int64_t i) {
  return std::vector<int64_t>(3, (key + i) % 40);
}

std::vector<SampleSpec> MustBatch(const Sampler& s, int64_t epoch, int64_t batch,
                                  const ForegroundVoxelFn& fn = FakeVoxel) {
  Result<std::vector<SampleSpec>> r = s.Batch(epoch, batch, fn);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *std::move(r) : std::vector<SampleSpec>{};
}

TEST(SamplerTest, ForcedPositionsMatchNnunetTable) {  // reference section 2.3
  const std::map<int64_t, int64_t> first_forced = {{1, 1},  {2, 1},  {3, 2},  {4, 3}, {5, 3},
                                                   {6, 4},  {7, 5},  {8, 5},  {9, 6}, {10, 7},
                                                   {11, 7}, {12, 8}, {16, 11}};
  for (const auto& [b, first] : first_forced) {
    EXPECT_EQ(FirstForcedPosition(b, 0.33), first) << "B = " << b;
    ASSERT_OK_AND_ASSIGN(const Sampler s, Sampler::Create(Config(b), Cases(3, {40, 40, 40}, {5})));
    const std::vector<SampleSpec> batch = MustBatch(s, 0, 0);
    for (int64_t j = 0; j < b; ++j) {
      EXPECT_EQ(batch[j].forced_foreground, j >= first) << "B = " << b << ", j = " << j;
    }
  }
}

// nnU-Net's _set_batch_size_and_oversample followed by each rank's _oversample_last_XX_percent,
// with Python's round() as std::nearbyint (ties to even in the default rounding mode).
std::vector<std::vector<bool>> NnunetRankForced(int64_t b, int w, double p) {
  std::vector<int64_t> sizes(w, b / w);
  for (int i = 0; i < w; ++i) {
    sizes[i] += sizes[i] * w + i < b ? 1 : 0;
  }
  std::vector<bool> over(b);
  for (int64_t i = 0; i < b; ++i) {
    over[i] = !(i < std::nearbyint(static_cast<double>(b) * (1 - p)));
  }
  std::vector<std::vector<bool>> out;
  int64_t low = 0;
  for (int r = 0; r < w; ++r) {
    const int64_t high = low + sizes[r];
    double rank_p = p;  // a single process leaves oversample untouched
    if (w > 1) {
      if (static_cast<double>(high) / b < 1 - p) {
        rank_p = 0;
      } else if (static_cast<double>(low) / b > 1 - p) {
        rank_p = 1;
      } else {
        rank_p = static_cast<double>(std::count(over.begin() + low, over.begin() + high, true)) /
                 static_cast<double>(sizes[r]);
      }
    }
    std::vector<bool> forced(sizes[r]);
    for (int64_t j = 0; j < sizes[r]; ++j) {
      forced[j] = !(j < std::nearbyint(static_cast<double>(sizes[r]) * (1 - rank_p)));
    }
    out.push_back(forced);
    low = high;
  }
  return out;
}

TEST(SamplerTest, DdpSplitAndForcedPositionsMatchNnunet) {
  for (const double p : {0.33, 0.0, 1.0, 0.5, 0.25, 0.1, 0.66, 0.9}) {
    for (int64_t b = 1; b <= 24; ++b) {
      for (int w = 1; w <= std::min<int64_t>(b, 6); ++w) {
        const std::vector<std::vector<bool>> want = NnunetRankForced(b, w, p);
        for (int r = 0; r < w; ++r) {
          SamplerConfig c = Config(b);
          c.oversample_foreground = p;
          c.world_size = w;
          c.rank = r;
          ASSERT_OK_AND_ASSIGN(const Sampler s, Sampler::Create(c, Cases(2)));
          ASSERT_EQ(s.local_batch_size(), static_cast<int64_t>(want[r].size()));
          const std::vector<SampleSpec> batch = MustBatch(s, 0, 0);
          for (size_t j = 0; j < batch.size(); ++j) {
            EXPECT_EQ(batch[j].forced_foreground, want[r][j])
                << "p " << p << " B " << b << " world " << w << " rank " << r << " j " << j;
          }
        }
      }
    }
  }
}

TEST(SamplerTest, DeterministicAndKeyedByEpochBatchAndRank) {
  SamplerConfig c = Config(4);
  c.world_size = 2;
  ASSERT_OK_AND_ASSIGN(const Sampler a, Sampler::Create(c, Cases(1000, {40, 40, 40}, {9})));
  ASSERT_OK_AND_ASSIGN(const Sampler b, Sampler::Create(c, Cases(1000, {40, 40, 40}, {9})));
  c.rank = 1;
  ASSERT_OK_AND_ASSIGN(const Sampler r1, Sampler::Create(c, Cases(1000, {40, 40, 40}, {9})));
  c.world_size = 1;
  c.rank = 0;
  ASSERT_OK_AND_ASSIGN(const Sampler whole, Sampler::Create(c, Cases(1000, {40, 40, 40}, {9})));
  EXPECT_EQ(MustBatch(a, 3, 5), MustBatch(b, 3, 5));
  EXPECT_NE(MustBatch(a, 3, 5), MustBatch(a, 3, 6));
  EXPECT_NE(MustBatch(a, 3, 5), MustBatch(a, 4, 5));
  EXPECT_NE(MustBatch(a, 3, 5), MustBatch(r1, 3, 5));
  // Draws follow the global position: the ranks' batches make up the single-process batch.
  std::vector<SampleSpec> joined = MustBatch(a, 3, 5);
  for (const SampleSpec& s : MustBatch(r1, 3, 5)) {
    joined.push_back(s);
  }
  EXPECT_EQ(joined, MustBatch(whole, 3, 5));
}

TEST(SamplerTest, FiniteWithoutReplacementRanksAreDisjointAndComplete) {
  for (const int64_t num_cases : {24, 25}) {
    for (int w = 1; w <= 4; ++w) {
      std::vector<int64_t> seen(num_cases);
      int64_t total = 0;
      for (int r = 0; r < w; ++r) {
        SamplerConfig c = Config(4);
        c.epoch_mode = EpochMode::kFiniteWithoutReplacement;
        c.world_size = w;
        c.rank = r;
        ASSERT_OK_AND_ASSIGN(const Sampler s, Sampler::Create(c, Cases(num_cases)));
        ASSERT_EQ(s.batches_per_epoch(), (num_cases + 3) / 4);
        for (int64_t i = 0; i < s.batches_per_epoch(); ++i) {
          for (const SampleSpec& spec : MustBatch(s, 1, i)) {
            ++seen[spec.case_index];
            ++total;
          }
        }
      }
      SCOPED_TRACE("cases " + std::to_string(num_cases) + " world " + std::to_string(w));
      EXPECT_EQ(total, (num_cases + 3) / 4 * 4);
      // 24 cases: each exactly once. 25: the last batch is topped up from the next pass.
      EXPECT_EQ(*std::min_element(seen.begin(), seen.end()), 1);
      EXPECT_EQ(*std::max_element(seen.begin(), seen.end()), num_cases == 24 ? 1 : 2);
    }
  }
}

TEST(SamplerTest, EpochsRepeatPassesAndDiffer) {
  SamplerConfig c = Config(5);
  c.epoch_mode = EpochMode::kFiniteWithoutReplacement;
  c.samples_per_epoch = 25;  // 2.5 passes over 10 cases
  ASSERT_OK_AND_ASSIGN(const Sampler s, Sampler::Create(c, Cases(10)));
  std::vector<int64_t> per_epoch[2];
  for (int e = 0; e < 2; ++e) {
    std::vector<int64_t> seen(10);
    for (int64_t i = 0; i < s.batches_per_epoch(); ++i) {
      for (const SampleSpec& spec : MustBatch(s, e, i)) {
        ++seen[spec.case_index];
        per_epoch[e].push_back(spec.case_index);
      }
    }
    for (const int64_t n : seen) {
      EXPECT_TRUE(n == 2 || n == 3);
    }
  }
  EXPECT_NE(per_epoch[0], per_epoch[1]);
  EXPECT_THAT(s.Batch(0, 5, FakeVoxel), StatusIs(StatusCode::kInvalidArgument, HasSubstr("past")));
  c.epoch_mode = EpochMode::kInfinite;
  ASSERT_OK_AND_ASSIGN(const Sampler inf, Sampler::Create(c, Cases(10)));
  EXPECT_EQ(inf.batches_per_epoch(), -1);
  c.epoch_mode = EpochMode::kFiniteWithReplacement;
  ASSERT_OK_AND_ASSIGN(const Sampler with, Sampler::Create(c, Cases(10)));
  EXPECT_EQ(with.batches_per_epoch(), 5);
}

TEST(SamplerTest, RandomCornerBoundsFollowGetBbox) {
  using Range = std::pair<int64_t, int64_t>;
  const auto bounds = [](int64_t s, int64_t q, int64_t n) {
    const CornerBounds b = RandomCornerBounds(std::vector<int64_t>{s}, std::vector<int64_t>{q},
                                              std::vector<int64_t>{n});
    return std::pair(b.lb[0], b.ub[0]);
  };
  EXPECT_EQ(bounds(100, 40, 0), Range(0, 60));
  EXPECT_EQ(bounds(100, 40, 7), Range(-4, 64));  // floor(-7/2), odd pad
  EXPECT_EQ(bounds(40, 40, 0), Range(0, 0));
  EXPECT_EQ(bounds(10, 40, 0), Range(-15, -15));  // smaller: centred
  EXPECT_EQ(bounds(11, 40, 0), Range(-15, -14));  // n = 29
  EXPECT_EQ(bounds(30, 40, 20), Range(-10, 0));
}

TEST(SamplerTest, RandomBoxesCoverBoundsUniformly) {
  SamplerConfig c = Config(1, {40, 40, 40});
  c.need_to_pad = {7, 0, 0};
  c.oversample_foreground = 0;
  ASSERT_OK_AND_ASSIGN(const Sampler s, Sampler::Create(c, Cases(1, {100, 11, 40})));
  std::vector<int64_t> bins(69);  // axis 0: [-4, 64]
  std::vector<int64_t> lo(3, 1000), hi(3, -1000);
  for (int64_t i = 0; i < 20000; ++i) {
    const SampleSpec spec = MustBatch(s, 0, i)[0];
    EXPECT_EQ(spec.foreground_class, -1);
    for (int d = 0; d < 3; ++d) {
      lo[d] = std::min(lo[d], spec.box_start[d]);
      hi[d] = std::max(hi[d], spec.box_start[d]);
    }
    ++bins[spec.box_start[0] + 4];
  }
  EXPECT_THAT(lo, ElementsAre(-4, -15, 0));
  EXPECT_THAT(hi, ElementsAre(64, -14, 0));
  ExpectChiSquareOk(bins, std::vector<double>(69, 1.0 / 69));
}

TEST(SamplerTest, ForcedBoxIsCentredWithOnlyTheLowerClamp) {
  SamplerConfig c = Config(1, {20, 21});
  c.oversample_foreground = 1.0;  // round(1 * 0) = 0: every sample forced
  ASSERT_OK_AND_ASSIGN(const Sampler s, Sampler::Create(c, Cases(1, {50, 50}, {0, 1})));
  std::vector<int64_t> voxel;
  const ForegroundVoxelFn fn = [&voxel](int64_t, int64_t key, int64_t i) {
    EXPECT_EQ(key, 1);
    EXPECT_EQ(i, 0);
    return Result<std::vector<int64_t>>(voxel);
  };
  voxel = {48, 25};  // random corners end at ub = 30: this one reaches past it
  ASSERT_OK_AND_ASSIGN(auto batch, s.Batch(0, 0, fn));
  EXPECT_TRUE(batch[0].forced_foreground);
  EXPECT_EQ(batch[0].foreground_class, 1);
  EXPECT_THAT(batch[0].box_start, ElementsAre(38, 15));  // 48 - 20/2, 25 - 21/2
  voxel = {3, 4};
  ASSERT_OK_AND_ASSIGN(batch, s.Batch(0, 0, fn));
  EXPECT_THAT(batch[0].box_start, ElementsAre(0, 0));  // clamped up to lb = 0
}

TEST(SamplerTest, ForcedWithoutForegroundFallsBackToRandom) {
  SamplerConfig c = Config(1);
  c.oversample_foreground = 1.0;
  ASSERT_OK_AND_ASSIGN(const Sampler s, Sampler::Create(c, Cases(1, {40, 40, 40}, {0, 0})));
  const ForegroundVoxelFn never = [](int64_t, int64_t, int64_t) -> Result<std::vector<int64_t>> {
    ADD_FAILURE() << "voxel_fn called";
    return InternalError("unexpected");
  };
  for (int64_t i = 0; i < 50; ++i) {
    const SampleSpec spec = MustBatch(s, 0, i, never)[0];
    EXPECT_TRUE(spec.forced_foreground);
    EXPECT_EQ(spec.foreground_class, -1);
    for (const int64_t v : spec.box_start) {
      EXPECT_TRUE(v >= 0 && v <= 32);
    }
  }
}

TEST(SamplerTest, ClassesAreUniformAmongEligibleKeysAndVoxelsUniform) {
  SamplerConfig c = Config(1);
  c.oversample_foreground = 1.0;
  ASSERT_OK_AND_ASSIGN(const Sampler s,
                       Sampler::Create(c, Cases(1, {40, 40, 40}, {0, 10, 900, 3})));
  std::vector<int64_t> classes(4), voxels(10);
  const ForegroundVoxelFn fn = [&voxels](int64_t, int64_t key, int64_t i) {
    if (key == 1) {
      ++voxels[i];
    }
    return FakeVoxel(0, key, i);
  };
  for (int64_t i = 0; i < 9000; ++i) {
    ++classes[MustBatch(s, 2, i, fn)[0].foreground_class];
  }
  ExpectChiSquareOk(classes, {0, 1.0 / 3, 1.0 / 3, 1.0 / 3});  // not weighted by count
  ExpectChiSquareOk(voxels, std::vector<double>(10, 0.1));
}

TEST(SamplerTest, AnnotatedKeyRules) {
  const auto classes_of = [](double p, std::vector<int64_t> counts) {
    SamplerConfig c = Config(1);
    c.oversample_foreground = p;
    c.annotated_key = 0;
    std::set<int64_t> out;
    Result<Sampler> s = Sampler::Create(c, Cases(1, {40, 40, 40}, std::move(counts)));
    for (int64_t i = 0; s.ok() && i < 200; ++i) {
      out.insert(MustBatch(*s, 0, i)[0].foreground_class);
    }
    return out;
  };
  EXPECT_EQ(classes_of(1.0, {100, 0, 7}), std::set<int64_t>{2});  // dropped beside a class
  EXPECT_EQ(classes_of(1.0, {100, 0, 0}), std::set<int64_t>{0});  // the only eligible key
  EXPECT_EQ(classes_of(0.0, {100, 0, 7}), std::set<int64_t>{0});  // unforced: annotated voxels
  EXPECT_EQ(classes_of(0.0, {0, 0, 7}), std::set<int64_t>{-1});   // none annotated: random
}

TEST(SamplerTest, CaseDrawsUniformOrWeighted) {
  SamplerConfig c = Config(4);
  ASSERT_OK_AND_ASSIGN(const Sampler uniform, Sampler::Create(c, Cases(7)));
  c.case_weights = {1, 0, 3, 6};
  ASSERT_OK_AND_ASSIGN(const Sampler weighted, Sampler::Create(c, Cases(4)));
  std::vector<int64_t> u(7), w(4);
  for (int64_t i = 0; i < 5000; ++i) {
    for (const SampleSpec& spec : MustBatch(uniform, 0, i)) {
      ++u[spec.case_index];
    }
    for (const SampleSpec& spec : MustBatch(weighted, 0, i)) {
      ++w[spec.case_index];
    }
  }
  ExpectChiSquareOk(u, std::vector<double>(7, 1.0 / 7));
  ExpectChiSquareOk(w, {0.1, 0, 0.3, 0.6});
}

TEST(SamplerTest, ProbabilisticOversamplingFraction) {
  SamplerConfig c = Config(2);
  c.probabilistic_oversampling = true;
  ASSERT_OK_AND_ASSIGN(const Sampler s, Sampler::Create(c, Cases(3)));
  int64_t forced = 0;
  for (int64_t i = 0; i < 15000; ++i) {
    for (const SampleSpec& spec : MustBatch(s, 0, i)) {
      forced += spec.forced_foreground ? 1 : 0;
    }
  }
  EXPECT_NEAR(static_cast<double>(forced) / 30000, 0.33, 6 * std::sqrt(0.33 * 0.67 / 30000));
}

TEST(SamplerTest, RejectsBadConfigsAndReportsVoxelErrors) {
  const auto create = [](SamplerConfig c, std::vector<CaseInfo> cases = Cases(3)) {
    return Sampler::Create(std::move(c), std::move(cases)).status();
  };
  SamplerConfig c = Config(2);
  c.world_size = 3;
  EXPECT_THAT(create(c), StatusIs(StatusCode::kInvalidArgument, HasSubstr("world size")));
  c = Config(2);
  c.rank = 1;
  EXPECT_THAT(create(c), StatusIs(StatusCode::kInvalidArgument, HasSubstr("rank")));
  EXPECT_THAT(create(Config(2), Cases(3, {40, 40})),
              StatusIs(StatusCode::kInvalidArgument, ::testing::_));
  c = Config(2);
  c.need_to_pad = {1, -1, 0};
  EXPECT_THAT(create(c), StatusIs(StatusCode::kInvalidArgument, HasSubstr("need_to_pad")));
  c = Config(2);
  c.oversample_foreground = 1.5;
  EXPECT_THAT(create(c), StatusIs(StatusCode::kInvalidArgument, ::testing::_));
  for (const std::vector<double>& w :
       std::vector<std::vector<double>>{{1, 2}, {1, -1, 1}, {0, 0, 0}, {1, NAN, 1}}) {
    c = Config(2);
    c.case_weights = w;
    EXPECT_THAT(create(c), StatusIs(StatusCode::kInvalidArgument, HasSubstr("weight")));
  }
  c.case_weights = {1, 1, 1};
  c.epoch_mode = EpochMode::kFiniteWithoutReplacement;
  EXPECT_THAT(create(c), StatusIs(StatusCode::kInvalidArgument, HasSubstr("replacement")));

  c = Config(1);
  c.oversample_foreground = 1.0;
  ASSERT_OK_AND_ASSIGN(const Sampler s, Sampler::Create(c, Cases(1, {40, 40, 40}, {0, 4})));
  const auto failing = [](int64_t, int64_t, int64_t) -> Result<std::vector<int64_t>> {
    return NotFoundError("index gone");
  };
  EXPECT_THAT(s.Batch(0, 0, failing),
              StatusIs(StatusCode::kNotFound, HasSubstr("case 0, class key 1, stored voxel")));
  const auto outside = [](int64_t, int64_t, int64_t) {
    return Result<std::vector<int64_t>>(std::vector<int64_t>{1, 40, 1});
  };
  EXPECT_THAT(s.Batch(0, 0, outside), StatusIs(StatusCode::kDataLoss, HasSubstr("outside")));
  const auto short_voxel = [](int64_t, int64_t, int64_t) {
    return Result<std::vector<int64_t>>(std::vector<int64_t>{1, 1});
  };
  EXPECT_THAT(s.Batch(0, 0, short_voxel), StatusIs(StatusCode::kInvalidArgument, ::testing::_));
  EXPECT_THAT(s.Batch(0, 0, nullptr), StatusIs(StatusCode::kInvalidArgument, ::testing::_));
}

TEST(SamplerTest, ConcurrentBatchesMatchSequentialOnes) {
  SamplerConfig c = Config(3);
  c.epoch_mode = EpochMode::kFiniteWithoutReplacement;
  c.samples_per_epoch = 300;
  ASSERT_OK_AND_ASSIGN(const Sampler s, Sampler::Create(c, Cases(50, {40, 40, 40}, {3})));
  std::vector<std::vector<SampleSpec>> want;
  for (int64_t e = 0; e < 3; ++e) {
    for (int64_t i = 0; i < s.batches_per_epoch(); ++i) {
      want.push_back(MustBatch(s, e, i));
    }
  }
  std::vector<std::vector<SampleSpec>> got(want.size());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t k = t; k < got.size(); k += 4) {
        got[k] = *s.Batch(static_cast<int64_t>(k) / 100, static_cast<int64_t>(k) % 100, FakeVoxel);
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace patchfeed::loader
