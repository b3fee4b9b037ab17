// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_TESTS_LOADER_LOADER_TESTUTIL_H_
#define PATCHFEED_TESTS_LOADER_LOADER_TESTUTIL_H_

/// \file
/// Helpers for the loader tests: a temporary folder per test, a tiny synthetic dataset with
/// many small chunks, the naive single-threaded read a batch must equal, batch snapshots, and
/// in-place corruption of a frame's chunks.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codec/b2nd/frame_reader.h"
#include "codec/b2nd/frame_writer.h"
#include "codec/b2nd/nd_reader.h"
#include "codec/dtype.h"
#include "loader/loader.h"
#include "loader/synthetic_dataset.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::loader::testing {

class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("patchfeed_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" +
             std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

/// Tiny cases (2 channels, ~20^3 voxels) in chunks of 8^3 and blocks of 4x4x8, so a 12^3
/// patch crosses several chunks and, with need_to_pad, the border.
inline SyntheticDatasetOptions TinyDatasetOptions(int num_cases) {
  SyntheticDatasetOptions o;
  o.num_cases = num_cases;
  o.channels = 2;
  o.spatial_shape = {20, 18, 22};
  o.patch_size = {12, 12, 12};
  o.chunkshape = {1, 8, 8, 8};
  o.blockshape = {1, 4, 4, 8};
  o.codec = codec::Codec::kLZ4;
  o.clevel = 5;
  return o;
}

inline LoaderConfig TinyConfig(Dataset dataset) {
  LoaderConfig c;
  c.dataset = std::move(dataset);
  c.sampler.patch_size = {12, 12, 12};
  c.sampler.need_to_pad = {6, 6, 6};
  c.sampler.batch_size = 3;
  c.sampler.oversample_foreground = 0;
  c.sampler.seed = 7;
  c.num_threads = 2;
  c.ring_size = 3;
  c.min_task_bytes = 1024;  // small: exercises splitting, grouping and stealing
  c.pin_memory = PinMode::kOff;
  return c;
}

/// A batch's bytes and samples, kept after its lease is released.
struct BatchSnapshot {
  int64_t epoch = 0;
  int64_t batch = 0;
  std::vector<int64_t> cases;
  std::vector<std::vector<int64_t>> corners;
  std::vector<std::vector<std::byte>> arrays;

  friend bool operator==(const BatchSnapshot&, const BatchSnapshot&) = default;
};

inline BatchSnapshot Snapshot(const Lease& lease) {
  BatchSnapshot s;
  s.epoch = lease.epoch();
  s.batch = lease.batch_index();
  for (const SampleSpec& spec : lease.samples()) {
    s.cases.push_back(spec.case_index);
    s.corners.push_back(spec.box_start);
  }
  for (const ArrayView& v : lease.arrays()) {
    s.arrays.emplace_back(v.data, v.data + v.nbytes);
  }
  return s;
}

/// Compares every sample of `lease` with NdArrayReader::ReadBox of the same box, read alone
/// on this thread into a separate buffer.
inline void ExpectMatchesNaiveRead(const Lease& lease, const Dataset& dataset,
                                   const std::vector<int64_t>& patch) {
  for (const ArrayView& view : lease.arrays()) {
    const int array = dataset.array_index(view.name);
    ASSERT_GE(array, 0);
    const double pad_value = view.name == "seg" ? -1.0 : 0.0;
    for (size_t j = 0; j < lease.samples().size(); ++j) {
      const SampleSpec& spec = lease.samples()[j];
      ASSERT_OK_AND_ASSIGN(auto reader,
                           codec::NdArrayReader::Open(dataset.path(spec.case_index, array)));
      ASSERT_OK_AND_ASSIGN(auto pad, codec::ItemFromDouble(view.dtype, view.itemsize, pad_value));
      codec::Box box{{0}, {view.shape[1]}};
      for (size_t d = 0; d < patch.size(); ++d) {
        box.start.push_back(spec.box_start[d]);
        box.stop.push_back(spec.box_start[d] + patch[d]);
      }
      ASSERT_OK_AND_ASSIGN(std::vector<std::byte> expected, reader.ReadBox(box, pad));
      const std::byte* got = view.data + static_cast<int64_t>(j) * view.byte_strides[0];
      ASSERT_EQ(static_cast<int64_t>(expected.size()), view.byte_strides[0]);
      EXPECT_TRUE(std::equal(expected.begin(), expected.end(), got))
          << view.name << " of sample " << j << " (case " << spec.case_index << ", batch "
          << lease.batch_index() << ") differs from the naive read";
    }
  }
}

/// Overwrites the uncompressed-size field of every stored (non-special) chunk of the frame at
/// `path` in place, so reading any of them fails with kDataLoss naming the chunk. In place:
/// readers that mapped the file see it.
inline void CorruptEveryChunk(const std::string& path) {
  auto frame = codec::FrameReader::Open(path, {storage::IoMode::kPread});
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  size_t from = static_cast<size_t>(frame->info().header_len);
  int corrupted = 0;
  for (int64_t i = 0; i < frame->nchunks(); ++i) {
    std::vector<std::byte> scratch;
    auto chunk = frame->GetChunk(i, scratch);
    ASSERT_TRUE(chunk.ok());
    if (chunk->size() <= 32) {
      continue;  // special chunks live in the offsets
    }
    auto it = std::search(bytes.begin() + static_cast<std::ptrdiff_t>(from), bytes.end(),
                          reinterpret_cast<const char*>(chunk->data()),
                          reinterpret_cast<const char*>(chunk->data()) + 32);
    ASSERT_NE(it, bytes.end());
    const auto pos = static_cast<off_t>(it - bytes.begin());
    const uint32_t bogus = 12345;  // nbytes (header bytes 4-7) no longer matches the array
    ASSERT_EQ(::pwrite(fd, &bogus, sizeof(bogus), pos + 4), static_cast<ssize_t>(sizeof(bogus)));
    from = static_cast<size_t>(pos) + chunk->size();
    ++corrupted;
  }
  ::close(fd);
  ASSERT_GT(corrupted, 0);
}

/// Reads the whole array at `path`, lets `edit(bytes, shape, dtype)` change its items, shape
/// or dtype (C order), and writes it back in place with the same chunk and block shapes.
template <typename Edit>
void RewriteArray(const std::string& path, Edit edit) {
  std::vector<std::byte> bytes;
  std::vector<int64_t> shape;
  std::string dtype;
  codec::B2ndWriteOptions options;
  {
    auto reader = codec::NdArrayReader::Open(path);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    const codec::NdGeometry& g = reader->geometry();
    codec::Box box;
    for (const int64_t extent : g.shape) {
      box.start.push_back(0);
      box.stop.push_back(extent);
    }
    auto read = reader->ReadBox(box, std::vector<std::byte>(static_cast<size_t>(g.itemsize)));
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    bytes = std::move(*read);
    shape = g.shape;
    dtype = reader->dtype();
    options.chunkshape.assign(g.chunkshape.begin(), g.chunkshape.end());
    options.blockshape.assign(g.blockshape.begin(), g.blockshape.end());
    options.encode.codec = codec::Codec::kLZ4;
  }
  edit(bytes, shape, dtype);
  const Status written = codec::WriteB2nd(path, bytes, shape, dtype, options);
  ASSERT_TRUE(written.ok()) << written.ToString();
}

/// Calls Next() until it fails (at most `limit` times); returns the error, or OK.
inline Status FirstError(Loader& loader, int limit) {
  for (int i = 0; i < limit; ++i) {
    auto lease = loader.Next();
    if (!lease.ok()) {
      return lease.status();
    }
  }
  return Status::Ok();
}

}  // namespace patchfeed::loader::testing

#endif  // PATCHFEED_TESTS_LOADER_LOADER_TESTUTIL_H_
