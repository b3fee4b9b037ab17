// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_TESTS_TESTUTIL_TEMP_DIR_H_
#define PATCHFEED_TESTS_TESTUTIL_TEMP_DIR_H_

/// \file
/// A fresh directory per test, named after the test and the process, removed at the end.

#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace patchfeed::testing {

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
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path() const { return path_.string(); }
  /// The path of `name` inside the directory.
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace patchfeed::testing

#endif  // PATCHFEED_TESTS_TESTUTIL_TEMP_DIR_H_
