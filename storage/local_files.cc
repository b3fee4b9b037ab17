// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// LocalFiles(): the Store over the local file system, and ReadSmallFile for every store.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <span>

#include "common/str_cat.h"
#include "storage/store.h"

namespace patchfeed::storage {
namespace {

class LocalFileStore final : public Store {
 public:
  Result<std::shared_ptr<ByteSource>> Open(const std::string& path, IoMode mode) const override {
    return OpenFile(path, mode);
  }

  Result<EntryKind> Stat(const std::string& path) const override {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR)
        return EntryKind::kNone;
      return IoError(StrCat(path, ": cannot stat: ", std::strerror(errno)));
    }
    if (S_ISDIR(st.st_mode))
      return EntryKind::kFolder;
    // Anything else open(2) reads (a file, a link to one, a FIFO in tests) is a file.
    return EntryKind::kFile;
  }

  Result<std::vector<std::string>> List(const std::string& folder) const override {
    std::error_code ec;
    std::filesystem::directory_iterator it(folder, ec);
    if (ec) {
      if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory)
        return NotFoundError(StrCat(folder, ": no such folder"));
      return IoError(StrCat(folder, ": cannot list: ", ec.message()));
    }
    std::vector<std::string> names;
    for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (it->is_directory(ec))
        name += '/';
      names.push_back(std::move(name));
    }
    if (ec)
      return IoError(StrCat(folder, ": cannot list: ", ec.message()));
    std::sort(names.begin(), names.end());
    return names;
  }
};

}  // namespace

const std::shared_ptr<const Store>& LocalFiles() {
  static const std::shared_ptr<const Store> store = std::make_shared<LocalFileStore>();
  return store;
}

std::string JoinPath(const std::string& folder, const std::string& name) {
  if (folder.empty() || folder.back() == '/')
    return folder + name;
  return folder + "/" + name;
}

Result<std::string> ReadSmallFile(const Store& store, const std::string& path, uint64_t max_bytes) {
  PATCHFEED_ASSIGN_OR_RETURN(auto source, store.Open(path, IoMode::kPread));
  if (source->size() > max_bytes) {
    return DataLossError(StrCat(path, ": ", source->size(), " bytes, more than the ", max_bytes,
                                " a file of this kind can hold"));
  }
  std::string text(static_cast<size_t>(source->size()), '\0');
  PATCHFEED_RETURN_IF_ERROR(
      source->ReadAt(0, std::as_writable_bytes(std::span(text.data(), text.size()))));
  return text;
}

}  // namespace patchfeed::storage
