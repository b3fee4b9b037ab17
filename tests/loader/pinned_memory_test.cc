// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// HostBuffer and the ring's pinning: page-aligned zeroed memory, plain without a CUDA runtime,
// registered and unregistered through a dlopen'd libcudart.so when there is one (ctest runs
// the *FakeRuntime* cases again with tests/loader/fake_cudart.cc first on LD_LIBRARY_PATH).

#include "loader/internal/pinned_memory.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "loader/loader.h"
#include "tests/loader/loader_testutil.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::loader::internal_loader {
namespace {

using ::testing::HasSubstr;

bool FakeRuntime() { return std::getenv("PATCHFEED_FAKE_CUDART") != nullptr; }

long FakeCounter(const char* name) {
  void* lib = dlopen("libcudart.so", RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) {
    return -1;
  }
  auto fn = reinterpret_cast<long (*)()>(dlsym(lib, name));
  const long value = fn ? fn() : -1;
  dlclose(lib);
  return value;
}

TEST(PinnedMemoryTest, BuffersArePageAlignedZeroedAndMovable) {
  ASSERT_OK_AND_ASSIGN(HostBuffer a, HostBuffer::Allocate(10000, PinMode::kOff));
  EXPECT_EQ(a.size(), RoundUpToPage(10000));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % PageSize(), 0u);
  EXPECT_TRUE(
      std::all_of(a.data(), a.data() + a.size(), [](std::byte b) { return b == std::byte{0}; }));
  EXPECT_FALSE(a.pinned());
  std::byte* data = a.data();
  HostBuffer b = std::move(a);
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move)
}

TEST(PinnedMemoryTest, BuffersOfHugePagesAreAlignedToThem) {
  // A ring slot of 2 MiB or more lies on 2 MiB boundaries, so transparent huge pages can back
  // all of it; it is still zeroed and at least as large as asked.
  constexpr size_t kHugePage = size_t{2} << 20;
  ASSERT_OK_AND_ASSIGN(HostBuffer a, HostBuffer::Allocate(kHugePage + 10000, PinMode::kOff));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % kHugePage, 0u);
  EXPECT_EQ(a.size(), 2 * kHugePage);
  EXPECT_TRUE(
      std::all_of(a.data(), a.data() + a.size(), [](std::byte b) { return b == std::byte{0}; }));
}

TEST(PinnedMemoryTest, AutoFallsBackToPlainMemoryAndSaysWhy) {
  ASSERT_OK_AND_ASSIGN(HostBuffer a, HostBuffer::Allocate(100, PinMode::kAuto));
  if (a.pinned()) {
    GTEST_SKIP() << "pinned: this machine has a CUDA runtime and a device";
  }
  // No runtime at all, or a runtime without a device (CUDA installed on a CPU machine).
  std::printf("unpinned because: %s\n", a.unpinned_reason().c_str());
  EXPECT_THAT(a.unpinned_reason(), ::testing::AnyOf(HasSubstr("could not be loaded"),
                                                    HasSubstr("cudaHostRegister failed")));
  const auto required = HostBuffer::Allocate(100, PinMode::kRequire);
  EXPECT_FALSE(required.ok());
  EXPECT_THAT(required.status().message(),
              HasSubstr(CudaRuntimeAvailable() ? "cudaHostRegister" : "cannot pin"));
}

TEST(PinnedMemoryTest, FakeRuntimeRegistersAndUnregisters) {
  if (!FakeRuntime()) {
    GTEST_SKIP() << "ctest runs this with a fake libcudart.so (loader_test_with_fake_cudart)";
  }
  ASSERT_TRUE(CudaRuntimeAvailable());
  {
    ASSERT_OK_AND_ASSIGN(HostBuffer a, HostBuffer::Allocate(10000, PinMode::kRequire));
    EXPECT_TRUE(a.pinned());
    EXPECT_EQ(FakeCounter("fake_cudart_live_registrations"), 1);
    HostBuffer moved = std::move(a);  // still one registration, released once
    EXPECT_EQ(FakeCounter("fake_cudart_live_registrations"), 1);
    ASSERT_OK_AND_ASSIGN(HostBuffer plain, HostBuffer::Allocate(100, PinMode::kOff));
    EXPECT_FALSE(plain.pinned());
  }
  EXPECT_EQ(FakeCounter("fake_cudart_live_registrations"), 0);
}

TEST(PinnedMemoryTest, FakeRuntimePinsTheWholeRing) {
  if (!FakeRuntime()) {
    GTEST_SKIP() << "ctest runs this with a fake libcudart.so (loader_test_with_fake_cudart)";
  }
  loader::testing::TempDir dir;
  ASSERT_OK_AND_ASSIGN(Dataset ds,
                       WriteSyntheticDataset(dir.path(), loader::testing::TinyDatasetOptions(2)));
  LoaderConfig c = loader::testing::TinyConfig(ds);
  c.pin_memory = PinMode::kRequire;
  c.ring_size = 4;
  const long before = FakeCounter("fake_cudart_live_registrations");
  ASSERT_OK_AND_ASSIGN(auto loader, Loader::Create(c));
  EXPECT_TRUE(loader->pinned());
  EXPECT_EQ(loader->unpinned_reason(), "");
  EXPECT_EQ(FakeCounter("fake_cudart_live_registrations"), before + 4);
  ASSERT_OK_AND_ASSIGN(Lease lease, loader->Next());
  EXPECT_TRUE(lease.pinned());
  testing::ExpectMatchesNaiveRead(lease, ds, c.sampler.patch_size);
  loader.reset();
  EXPECT_EQ(FakeCounter("fake_cudart_live_registrations"), before + 4);  // the lease keeps them
  lease.Release();
  EXPECT_EQ(FakeCounter("fake_cudart_live_registrations"), before);
}

}  // namespace
}  // namespace patchfeed::loader::internal_loader
