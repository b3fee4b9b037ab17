// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// A mapped `.b2nd` file truncated by someone else while open: reads return kDataLoss naming
// the file instead of raising SIGBUS (storage/mapping_fault_guard.h), for good; a file that was
// never truncated keeps reading; a SIGBUS outside any mapping of ours still kills.

#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "codec/b2nd/frame_writer.h"
#include "codec/b2nd/nd_reader.h"
#include "tests/testutil/status_matchers.h"

// clang spells "built with AddressSanitizer" as a feature, gcc as a macro.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PATCHFEED_HAS_ASAN_FEATURE 1
#endif
#endif
#ifndef PATCHFEED_HAS_ASAN_FEATURE
#define PATCHFEED_HAS_ASAN_FEATURE 0
#endif

namespace patchfeed::codec {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string WriteArray(const std::string& name, std::vector<int32_t>& values) {
  const std::string path =
      (std::filesystem::temp_directory_path() / (name + std::to_string(getpid()) + ".b2nd"))
          .string();
  values.resize(64 * 64 * 64);
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<int32_t>(i * 2654435761u >> 7);  // incompressible-ish: many pages
  }
  B2ndWriteOptions o;
  o.chunkshape = {16, 64, 64};
  o.blockshape = {8, 32, 64};
  o.encode.codec = Codec::kLZ4;
  EXPECT_OK(WriteB2nd(path, std::as_bytes(std::span(values)), {64, 64, 64}, "<i4", o));
  return path;
}

TEST(MappedTruncationTest, ReadsAfterTruncationAreDataLossNotSigbus) {
  std::vector<int32_t> values;
  const std::string path = WriteArray("truncated", values);
  std::vector<int32_t> other_values;
  const std::string other = WriteArray("intact", other_values);
  ASSERT_OK_AND_ASSIGN(const NdArrayReader array, NdArrayReader::Open(path));
  ASSERT_OK_AND_ASSIGN(const NdArrayReader intact, NdArrayReader::Open(other));
  const std::vector<std::byte> pad(4);
  const Box last{{48, 0, 0}, {64, 64, 64}};  // the last chunk: at the end of the file
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> before, array.ReadBox(last, pad));
  EXPECT_EQ(std::memcmp(before.data(), values.data() + 48 * 64 * 64, before.size()), 0);

  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  const auto shrank = StatusIs(StatusCode::kDataLoss,
                               AllOf(HasSubstr(path), HasSubstr("shrank while it was mapped")));
  EXPECT_THAT(array.ReadBox(last, pad), shrank);
  // The mapping stays marked: even a box whose pages still exist is refused now.
  EXPECT_THAT(array.ReadBox(Box{{0, 0, 0}, {1, 1, 1}}, pad), shrank);
  // Other mappings are untouched.
  ASSERT_OK_AND_ASSIGN(std::vector<std::byte> still, intact.ReadBox(last, pad));
  EXPECT_EQ(std::memcmp(still.data(), other_values.data() + 48 * 64 * 64, still.size()), 0);
  // Reopening sees the truncated file for what it is.
  EXPECT_THAT(NdArrayReader::Open(path).status(), StatusIs(StatusCode::kDataLoss, HasSubstr(path)));
  std::filesystem::remove(path);
  std::filesystem::remove(other);
}

TEST(MappedTruncationTest, PreadReadsOfATruncatedFileAreDataLoss) {
  std::vector<int32_t> values;
  const std::string path = WriteArray("pread", values);
  ASSERT_OK_AND_ASSIGN(const NdArrayReader array,
                       NdArrayReader::Open(path, FrameOpenOptions{storage::IoMode::kPread}));
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  EXPECT_THAT(array.ReadBox(Box{{48, 0, 0}, {64, 64, 64}}, std::vector<std::byte>(4)),
              StatusIs(StatusCode::kDataLoss, HasSubstr(path)));
  std::filesystem::remove(path);
}

TEST(MappedTruncationDeathTest, OtherSigbusStillKills) {
  std::vector<int32_t> values;
  const std::string path = WriteArray("handler", values);
  ASSERT_OK(NdArrayReader::Open(path).status());  // installs the handler
  std::filesystem::remove(path);
  // Not a fault in a mapping of ours: what would have happened without patchfeed. That is the
  // default action (killed by SIGBUS), or, under AddressSanitizer, the handler it installed
  // first, which reports the fault and exits with 1: either way it is passed on, not swallowed.
#if defined(__SANITIZE_ADDRESS__) || PATCHFEED_HAS_ASAN_FEATURE
  EXPECT_EXIT(raise(SIGBUS), ::testing::ExitedWithCode(1), "AddressSanitizer: BUS");
#else
  EXPECT_EXIT(raise(SIGBUS), ::testing::KilledBySignal(SIGBUS), "");
#endif
}

}  // namespace
}  // namespace patchfeed::codec
