// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_TESTS_CODEC_TEST_DATA_FILES_H_
#define PATCHFEED_TESTS_CODEC_TEST_DATA_FILES_H_

/// \file
/// Locates and reads the codec test data (tests/codec/testdata). ctest sets PATCHFEED_TESTDATA
/// to the repository's tests/ folder; a binary run by hand falls back to the source path
/// compiled in.

#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace patchfeed::testing {

inline std::filesystem::path CodecTestDataDir() {
  const char* env = std::getenv("PATCHFEED_TESTDATA");
  std::filesystem::path root = env != nullptr ? env : PATCHFEED_SOURCE_TESTS_DIR;
  return root / "codec" / "testdata";
}

inline std::vector<std::byte> ReadFileBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  for (size_t i = 0; i < chars.size(); ++i)
    out[i] = static_cast<std::byte>(chars[i]);
  return out;
}

/// The golden chunk files (NAME.chunk with NAME.raw beside it), sorted by name.
inline std::vector<std::filesystem::path> GoldenChunkFiles() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(CodecTestDataDir() / "golden")) {
    if (e.path().extension() == ".chunk")
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace patchfeed::testing

#endif  // PATCHFEED_TESTS_CODEC_TEST_DATA_FILES_H_
