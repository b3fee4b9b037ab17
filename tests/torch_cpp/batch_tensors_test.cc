// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Batches as libtorch tensors: over the slot itself, equal to the loader's own bytes, and the
// slot returned only when the last tensor (or view) is gone.
#include "bindings/torch_cpp/batch_tensors.h"

#include <chrono>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/loader/loader_testutil.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::torch_cpp {
namespace {

using loader::Dataset;
using loader::Lease;
using loader::Loader;
using loader::LoaderConfig;
using testing::HasSubstr;

constexpr auto kShortWait = std::chrono::milliseconds(200);

std::unique_ptr<Loader> MakeLoader(const loader::testing::TempDir& dir, int ring_size) {
  auto dataset = loader::WriteSyntheticDataset(dir.path(), loader::testing::TinyDatasetOptions(3));
  EXPECT_OK(dataset.status());
  LoaderConfig config = loader::testing::TinyConfig(std::move(*dataset));
  config.ring_size = ring_size;
  auto created = Loader::Create(std::move(config));
  EXPECT_OK(created.status());
  return std::move(*created);
}

TEST(BatchTensorsTest, TensorsViewTheSlotWithTheLoadersShapesAndValues) {
  loader::testing::TempDir dir;
  std::unique_ptr<Loader> loader = MakeLoader(dir, 3);
  ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
  // What the lease shows, copied before it moves into the tensors.
  std::vector<const std::byte*> data;
  std::vector<std::vector<std::byte>> bytes;
  for (const loader::ArrayView& view : lease.arrays()) {
    data.push_back(view.data);
    bytes.emplace_back(view.data, view.data + view.nbytes);
  }
  ASSERT_OK_AND_ASSIGN(const BatchTensors batch, ToTensors(std::move(lease)));
  ASSERT_EQ(batch.names, (std::vector<std::string>{"image", "seg"}));
  const at::Tensor& image = *batch.find("image");
  const at::Tensor& seg = *batch.find("seg");
  EXPECT_EQ(image.scalar_type(), at::kFloat);
  EXPECT_EQ(seg.scalar_type(), at::kShort);
  EXPECT_EQ(image.sizes().vec(), (std::vector<int64_t>{3, 2, 12, 12, 12}));
  EXPECT_EQ(seg.sizes().vec(), (std::vector<int64_t>{3, 1, 12, 12, 12}));
  EXPECT_TRUE(image.is_contiguous());
  EXPECT_EQ(batch.find("label"), nullptr);
  for (size_t i = 0; i < batch.tensors.size(); ++i) {
    const at::Tensor& t = batch.tensors[i];
    // Zero-copy: the tensor's memory is the slot's.
    EXPECT_EQ(static_cast<const void*>(t.data_ptr()), static_cast<const void*>(data[i]));
    ASSERT_EQ(t.nbytes(), bytes[i].size());
    EXPECT_EQ(std::memcmp(t.data_ptr(), bytes[i].data(), bytes[i].size()), 0);
  }
  // Torch computes on them like on any tensor.
  EXPECT_TRUE(at::isfinite(image).all().item<bool>());
  EXPECT_EQ(batch.epoch, 0);
  EXPECT_EQ(batch.batch_index, 0);
}

TEST(BatchTensorsTest, TheSlotReturnsWhenTheLastTensorOrViewDies) {
  loader::testing::TempDir dir;
  std::unique_ptr<Loader> loader = MakeLoader(dir, 1);  // one slot: the next batch needs it
  ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
  std::optional<BatchTensors> batch;
  {
    auto made = ToTensors(std::move(lease));
    ASSERT_OK(made.status());
    batch = std::move(*made);
  }
  at::Tensor view = batch->tensors[0].slice(/*dim=*/0, 0, 1);  // keeps the slot on its own
  batch.reset();
  // The loader sees the consumer still holding its only slot.
  EXPECT_THAT(loader->NextFor(kShortWait).status(),
              StatusIs(StatusCode::kResourceExhausted, HasSubstr("holds all 1 ring slots")));
  view = at::Tensor();
  ASSERT_OK_AND_ASSIGN(std::optional<Lease> next, loader->NextFor(std::chrono::seconds(30)));
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->batch_index(), 1);
}

TEST(BatchTensorsTest, ToDeviceOnTheCpuIsTheSameMemory) {
  loader::testing::TempDir dir;
  std::unique_ptr<Loader> loader = MakeLoader(dir, 2);
  ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
  ASSERT_OK_AND_ASSIGN(const BatchTensors batch, ToTensors(std::move(lease)));
  const BatchTensors moved = ToDevice(batch, at::Device(at::kCPU));
  ASSERT_EQ(moved.tensors.size(), batch.tensors.size());
  for (size_t i = 0; i < batch.tensors.size(); ++i) {
    EXPECT_EQ(moved.tensors[i].data_ptr(), batch.tensors[i].data_ptr());
  }
}

TEST(BatchTensorsTest, RefusesLeasesWithoutABatchAndDtypesTorchLacks) {
  EXPECT_THAT(ToTensors(Lease()).status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("holds no batch")));
  EXPECT_THAT(ScalarTypeOf(">f4").status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("'>f4'")));
  EXPECT_THAT(ScalarTypeOf("<c8").status(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("'<c8'")));
  ASSERT_OK_AND_ASSIGN(const at::ScalarType b1, ScalarTypeOf("|b1"));
  EXPECT_EQ(b1, at::kBool);
  ASSERT_OK_AND_ASSIGN(const at::ScalarType u2, ScalarTypeOf("<u2"));
  EXPECT_EQ(u2, at::kUInt16);
}

}  // namespace
}  // namespace patchfeed::torch_cpp
