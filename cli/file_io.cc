// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/file_io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace patchfeed::cli {
namespace {

Status ErrnoError(const std::string& what, const std::string& path) {
  const int err = errno;
  const std::string msg = path + ": cannot " + what + ": " + std::strerror(err);
  return err == ENOENT ? NotFoundError(msg) : IoError(msg);
}

}  // namespace

Result<std::vector<std::byte>> ReadWholeFile(const std::string& path) {
  std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (f == nullptr)
    return ErrnoError("open", path);
  std::vector<std::byte> data;
  std::byte buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0)
    data.insert(data.end(), buf, buf + n);
  const bool failed = std::ferror(f) != 0;
  if (f != stdin)
    std::fclose(f);
  if (failed)
    return ErrnoError("read", path);
  return data;
}

Status WriteWholeFile(const std::string& path, std::span<const std::byte> data,
                      std::span<const std::byte> head) {
  std::FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
  if (f == nullptr)
    return ErrnoError("open for writing", path);
  bool failed = std::fwrite(head.data(), 1, head.size(), f) != head.size();
  failed = failed || std::fwrite(data.data(), 1, data.size(), f) != data.size();
  failed = std::fflush(f) != 0 || failed;
  if (f != stdout && std::fclose(f) != 0)
    return ErrnoError("close", path);
  if (failed)
    return ErrnoError("write", path);
  return Status::Ok();
}

}  // namespace patchfeed::cli
