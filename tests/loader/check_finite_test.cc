// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// LoaderConfig::check_finite: a NaN and an Inf planted in one case's image fail the samples of
// that case (naming the case, array, file, box and the count) under kFail and are redrawn under
// kSkip, with and without augmentation; off, they are delivered as before. The counter itself:
// every float type in both byte orders, integers never, only the view's items.

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/byte_order.h"
#include "loader/internal/nonfinite_count.h"
#include "loader/loader.h"
#include "tests/loader/loader_testutil.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::loader {
namespace {

using internal_loader::CountNonFinite;
using internal_loader::NonFiniteTestFor;
using ::testing::AllOf;
using testing::FirstError;
using ::testing::HasSubstr;
using testing::Snapshot;
using testing::TempDir;
using testing::TinyConfig;
using testing::TinyDatasetOptions;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

template <typename T>
StridedView ViewOf(std::vector<T>& items) {
  return StridedView::Contiguous(reinterpret_cast<std::byte*>(items.data()),
                                 {static_cast<int64_t>(items.size())}, sizeof(T));
}

template <typename T>
std::vector<T> Swapped(std::vector<T> items) {
  for (T& x : items) {
    x = ByteSwap(x);
  }
  return items;
}

TEST(NonFiniteCountTest, FindsNanAndInfOfEveryFloatTypeInEitherByteOrder) {
  const std::vector<float> f32 = {1.0f,
                                  kNaN,
                                  -kInf,
                                  0.0f,
                                  -0.0f,
                                  kInf,
                                  std::numeric_limits<float>::max(),
                                  std::numeric_limits<float>::denorm_min()};
  std::vector<uint32_t> f32_bits;
  for (const float f : f32) {
    f32_bits.push_back(std::bit_cast<uint32_t>(f));
  }
  std::vector<uint64_t> f64_bits;
  for (const float f : f32) {
    f64_bits.push_back(std::bit_cast<uint64_t>(static_cast<double>(f)));
  }
  // float16: 1, +Inf, -Inf, a quiet and a signalling NaN, the largest finite, a subnormal.
  std::vector<uint16_t> f16_bits = {0x3C00, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0x7BFF, 0x0001};
  for (const char* order : {"<", "=", ">"}) {
    const bool big = order[0] == '>';
    std::vector<uint32_t> a = big ? Swapped(f32_bits) : f32_bits;
    std::vector<uint64_t> b = big ? Swapped(f64_bits) : f64_bits;
    std::vector<uint16_t> h = big ? Swapped(f16_bits) : f16_bits;
    auto t4 = NonFiniteTestFor(std::string(order) + "f4");
    auto t8 = NonFiniteTestFor(std::string(order) + "f8");
    auto t2 = NonFiniteTestFor(std::string(order) + "f2");
    ASSERT_TRUE(t4 && t8 && t2) << order;
    EXPECT_EQ(CountNonFinite(ViewOf(a), *t4), 3) << order;
    EXPECT_EQ(CountNonFinite(ViewOf(b), *t8), 3) << order;
    EXPECT_EQ(CountNonFinite(ViewOf(h), *t2), 4) << order;
  }
  // Integers whose bits look like a float's NaN are never checked.
  for (const char* dtype : {"<i4", "<u4", "<i2", "<i8", "|b1", "|u1", "<c8", "<M8[s]", ""}) {
    EXPECT_FALSE(NonFiniteTestFor(dtype).has_value()) << dtype;
  }
}

TEST(NonFiniteCountTest, CountsOnlyTheItemsOfAStridedView) {
  // A (3, 4, 6) float32 block; the view is [1:3, 0:4:2, 1:5:2]: 2 x 2 x 2 items, its last
  // axis strided. NaNs inside the view count, those beside it do not.
  std::vector<float> block(3 * 4 * 6, 1.0f);
  const auto at = [](int z, int y, int x) { return static_cast<size_t>((z * 4 + y) * 6 + x); };
  block[at(1, 0, 1)] = kNaN;   // in
  block[at(2, 2, 3)] = -kInf;  // in
  block[at(1, 0, 2)] = kNaN;   // between two of the view's items on the last axis
  block[at(1, 1, 1)] = kNaN;   // a row the view steps over
  block[at(0, 0, 1)] = kInf;   // a plane outside
  StridedView v;
  v.data = reinterpret_cast<std::byte*>(&block[at(1, 0, 1)]);
  v.shape = {2, 2, 2};
  v.byte_strides = {4 * 6 * 4, 2 * 6 * 4, 2 * 4};
  EXPECT_EQ(CountNonFinite(v, *NonFiniteTestFor("<f4")), 2);
  v.byte_strides[2] = 4;  // contiguous rows: [1:3, 0:4:2, 1:3]
  EXPECT_EQ(CountNonFinite(v, *NonFiniteTestFor("<f4")), 2);
  v.shape[0] = 0;
  EXPECT_EQ(CountNonFinite(v, *NonFiniteTestFor("<f4")), 0);
}

// Three cases of one shape; case 1's image holds a NaN (channel 0) and an Inf (channel 1),
// both near the centre. Patches as large as the cases, without need_to_pad: every box is the
// whole case, so a sample of case 1 holds exactly those two.
class CheckFiniteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SyntheticDatasetOptions o = TinyDatasetOptions(3);
    o.vary_shapes = false;
    ASSERT_OK_AND_ASSIGN(ds_, WriteSyntheticDataset(dir_.path(), o));
    testing::RewriteArray(
        ds_.path(1, 0), [](std::vector<std::byte>& bytes, const std::vector<int64_t>& shape,
                           const std::string& dtype) {
          ASSERT_EQ(dtype, "<f4");
          const auto put = [&](int64_t c, int64_t z, int64_t y, int64_t x, float value) {
            const int64_t i = ((c * shape[1] + z) * shape[2] + y) * shape[3] + x;
            std::memcpy(bytes.data() + i * 4, &value, 4);
          };
          put(0, 10, 9, 11, kNaN);
          put(1, 9, 8, 10, kInf);
        });
  }

  LoaderConfig Config() const {
    LoaderConfig c = TinyConfig(ds_);
    c.sampler.patch_size = {20, 18, 22};
    c.sampler.need_to_pad = {0, 0, 0};
    c.check_finite = true;
    return c;
  }

  // Adds nnU-Net's augmentation with an (8, 8, 8) patch at the centre of the case-sized crop.
  static void Augment(LoaderConfig& c) {
    AugmentOptions a;
    a.pipeline = augment::NnUNetAugmentConfig::Default(std::vector<int64_t>{8, 8, 8});
    c.augment = a;
  }

  static bool HasCase(const Lease& lease, int64_t case_index) {
    for (const SampleSpec& s : lease.samples()) {
      if (s.case_index == case_index) {
        return true;
      }
    }
    return false;
  }

  static bool AllFinite(const ArrayView& image) {
    const auto* f = reinterpret_cast<const float*>(image.data);
    for (int64_t i = 0; i < image.nbytes / 4; ++i) {
      if (!std::isfinite(f[i])) {
        return false;
      }
    }
    return true;
  }

  TempDir dir_;
  Dataset ds_;
};

TEST_F(CheckFiniteTest, OffDeliversTheValuesAsTheyAre) {
  LoaderConfig c = Config();
  c.check_finite = false;
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  int seen = 0;
  for (int b = 0; b < 10; ++b) {
    ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
    testing::ExpectMatchesNaiveRead(lease, ds_, c.sampler.patch_size);
    seen += HasCase(lease, 1) ? 1 : 0;
  }
  EXPECT_GT(seen, 0);
  EXPECT_EQ(loader->metrics().samples_nonfinite, 0);
}

TEST_F(CheckFiniteTest, FailPolicyNamesTheSampleAndTheCount) {
  for (const storage::IoMode io : {storage::IoMode::kMmap, storage::IoMode::kPread}) {
    LoaderConfig c = Config();
    c.io_mode = io;
    ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
    EXPECT_THAT(
        FirstError(*loader, 30),
        StatusIs(
            StatusCode::kDataLoss,
            AllOf(HasSubstr("case 'case_001' (#1)"), HasSubstr("array 'image'"),
                  HasSubstr(ds_.path(1, 0)), HasSubstr("patch box [0:2, 0:20, 0:18, 0:22]"),
                  HasSubstr(": 2 values are NaN or infinite (<f4"), HasSubstr("error_policy"))));
    const LoaderMetrics m = loader->metrics();
    EXPECT_GE(m.samples_nonfinite, 1);
    EXPECT_GE(m.batches_failed, 1);
    EXPECT_EQ(m.read_errors, 0);
  }
}

TEST_F(CheckFiniteTest, SkipPolicyRedrawsDeterministically) {
  std::vector<testing::BatchSnapshot> first_run;
  for (const int threads : {1, 3}) {
    LoaderConfig c = Config();
    c.error_policy = ErrorPolicy::kSkip;
    c.num_threads = threads;
    ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
    std::vector<testing::BatchSnapshot> run;
    for (int b = 0; b < 10; ++b) {
      ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
      EXPECT_FALSE(HasCase(lease, 1));
      EXPECT_TRUE(AllFinite(*lease.array("image")));
      run.push_back(Snapshot(lease));
    }
    const LoaderMetrics m = loader->metrics();
    // Batches read ahead keep counting while this runs: no equality between counters.
    EXPECT_GT(m.samples_nonfinite, 0);
    EXPECT_GT(m.samples_skipped, 0);
    EXPECT_EQ(m.read_errors, 0);
    EXPECT_EQ(m.batches_failed, 0);
    if (first_run.empty()) {
      first_run = std::move(run);
    } else {
      EXPECT_TRUE(run == first_run) << "redraws must not depend on threads or timing";
    }
  }
}

TEST_F(CheckFiniteTest, AugmentedSamplesAreCheckedAsDelivered) {
  LoaderConfig c = Config();
  Augment(c);
  {
    ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
    EXPECT_THAT(FirstError(*loader, 30),
                StatusIs(StatusCode::kDataLoss,
                         AllOf(HasSubstr("case 'case_001' (#1)"), HasSubstr("array 'image'"),
                               HasSubstr("NaN or infinite"))));
  }
  c.error_policy = ErrorPolicy::kSkip;
  c.num_threads = 3;
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  for (int b = 0; b < 10; ++b) {
    ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
    EXPECT_FALSE(HasCase(lease, 1));
    EXPECT_TRUE(AllFinite(*lease.array("image")));
  }
  EXPECT_GT(loader->metrics().samples_nonfinite, 0);
}

TEST_F(CheckFiniteTest, RejectsANonFinitePadValue) {
  LoaderConfig c = Config();
  c.arrays = {{"image", static_cast<double>(kNaN)}, {"seg", std::nullopt}};
  EXPECT_THAT(Loader::Create(c),
              StatusIs(StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("pad value of 'image'"), HasSubstr("check_finite"))));
  c.check_finite = false;  // then it is the user's choice
  EXPECT_OK(Loader::Create(c).status());
}

}  // namespace
}  // namespace patchfeed::loader
