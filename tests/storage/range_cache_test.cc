// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// CachedStore over local files (the cache works over any store; local files make the tests
// fast and the bytes easy to change): reads equal the file, every page read lands in the
// cache and is served from it afterwards, a changed file is another key, the
// folder stays within its bound, and reads from many threads at once agree (TSan).

#include "storage/remote/range_cache.h"

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"

namespace patchfeed::storage {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::vector<std::byte> Pattern(size_t n, int seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<std::byte>((i * 131 + static_cast<size_t>(seed) * 7) % 251);
  return v;
}

void WriteFile(const std::string& path, const std::vector<std::byte>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

uint64_t FolderBytes(const std::string& folder) {
  uint64_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(folder))
    n += e.is_regular_file() ? e.file_size() : 0;
  return n;
}

class RangeCacheTest : public ::testing::Test {
 protected:
  RangeCacheOptions Options(uint64_t max_bytes = uint64_t{1} << 30) const {
    RangeCacheOptions o;
    o.folder = dir_.path() + "/cache";
    o.max_bytes = max_bytes;
    o.page_bytes = 4096;
    return o;
  }
  std::string File(const std::string& name) const { return dir_.path() + "/" + name; }

  TempDir dir_;
};

TEST_F(RangeCacheTest, ServesWhatItReadAfterTheFileIsGone) {
  const auto data = Pattern(50'000, 1);
  WriteFile(File("a.bin"), data);
  ASSERT_OK_AND_ASSIGN(auto store, CachedStore(LocalFiles(), Options()));
  ASSERT_OK_AND_ASSIGN(auto source, store->Open(File("a.bin"), IoMode::kPread));
  std::vector<std::byte> out(12'345);
  ASSERT_OK(source->ReadAt(5'000, out));
  EXPECT_TRUE(std::equal(out.begin(), out.end(), data.begin() + 5'000));
  // Pages 1 to 4 (4 KiB each) were fetched and kept.
  EXPECT_EQ(FolderBytes(Options().folder), 4u * 4096);
  // The same bytes again come from the cache: overwritten in place (same size: local files
  // have no version, so the key is the same), the file says otherwise, the cache does not.
  const auto other = Pattern(50'000, 9);
  WriteFile(File("a.bin"), other);
  std::vector<std::byte> again(10'000);
  ASSERT_OK(source->ReadAt(6'000, again));
  EXPECT_TRUE(std::equal(again.begin(), again.end(), data.begin() + 6'000));
  // Past what was cached, the read goes to the file.
  std::vector<std::byte> beyond(100);
  ASSERT_OK(source->ReadAt(40'000, beyond));
  EXPECT_TRUE(std::equal(beyond.begin(), beyond.end(), other.begin() + 40'000));
}

TEST_F(RangeCacheTest, AChangedFileIsReadAnewNotMixed) {
  WriteFile(File("b.bin"), Pattern(20'000, 1));
  ASSERT_OK_AND_ASSIGN(auto store, CachedStore(LocalFiles(), Options()));
  std::vector<std::byte> out(20'000);
  {
    ASSERT_OK_AND_ASSIGN(auto source, store->Open(File("b.bin"), IoMode::kPread));
    ASSERT_OK(source->ReadAt(0, out));
  }
  // Local files have no version: a new size is another key. (Remote objects add their ETag.)
  const auto changed = Pattern(20'001, 2);
  WriteFile(File("b.bin"), changed);
  ASSERT_OK_AND_ASSIGN(auto source, store->Open(File("b.bin"), IoMode::kPread));
  ASSERT_OK(source->ReadAt(0, out));
  EXPECT_TRUE(std::equal(out.begin(), out.end(), changed.begin()));
}

TEST_F(RangeCacheTest, StaysWithinItsBound) {
  const uint64_t bound = 64 * 1024;
  ASSERT_OK_AND_ASSIGN(auto store, CachedStore(LocalFiles(), Options(bound)));
  for (int i = 0; i < 8; ++i) {
    const auto data = Pattern(40'000, i);
    std::string path = File("f");
    path += std::to_string(i);  // (GCC 12 warns, wrongly, about "f" + std::to_string(i))
    WriteFile(path, data);
    ASSERT_OK_AND_ASSIGN(auto source, store->Open(path, IoMode::kPread));
    std::vector<std::byte> out(data.size());
    ASSERT_OK(source->ReadAt(0, out));
    ASSERT_EQ(out, data);
    EXPECT_LE(FolderBytes(Options().folder), bound);
  }
}

TEST_F(RangeCacheTest, ConcurrentReadersAgree) {
  const auto data = Pattern(200'000, 3);
  WriteFile(File("c.bin"), data);
  ASSERT_OK_AND_ASSIGN(auto store, CachedStore(LocalFiles(), Options(100'000)));
  ASSERT_OK_AND_ASSIGN(auto source, store->Open(File("c.bin"), IoMode::kPread));
  std::vector<std::thread> threads;
  std::vector<int> wrong(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 40; ++k) {
        const size_t offset = static_cast<size_t>((t * 7919 + k * 104'729) % 190'000);
        std::vector<std::byte> out(5'000);
        if (!source->ReadAt(offset, out).ok() ||
            !std::equal(out.begin(), out.end(), data.begin() + static_cast<ptrdiff_t>(offset)))
          ++wrong[static_cast<size_t>(t)];
      }
    });
  }
  for (auto& th : threads)
    th.join();
  EXPECT_THAT(wrong, ::testing::Each(0));
}

TEST_F(RangeCacheTest, RefusesOptionsThatCannotWork) {
  RangeCacheOptions o = Options();
  o.folder.clear();
  EXPECT_THAT(CachedStore(LocalFiles(), o).status(),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("cache_dir")));
  o = Options(0);
  EXPECT_THAT(CachedStore(LocalFiles(), o).status(),
              StatusIs(StatusCode::kInvalidArgument, ::testing::HasSubstr("above 0")));
}

}  // namespace
}  // namespace patchfeed::storage
