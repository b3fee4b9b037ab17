// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "storage/remote/aws_config_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "common/str_cat.h"

namespace patchfeed::storage {
namespace {

constexpr uintmax_t kMaxIniFileBytes = 1 << 20;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

Result<IniSections> ParseIni(std::string_view text, std::string_view label) {
  IniSections sections;
  std::map<std::string, std::string>* current = nullptr;
  int line_number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view raw = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++line_number;
    const std::string_view line = Trim(raw);
    if (line.empty() || line.front() == '#' || line.front() == ';')
      continue;
    if (raw.front() == ' ' || raw.front() == '\t')
      continue;  // a nested setting's continuation
    if (line.front() == '[') {
      if (line.back() != ']') {
        return InvalidArgumentError(
            StrCat(label, " line ", line_number, ": a section header must end with ']'"));
      }
      current = &sections[std::string(Trim(line.substr(1, line.size() - 2)))];
      continue;
    }
    const size_t equals = line.find('=');
    if (equals == std::string_view::npos || current == nullptr) {
      return InvalidArgumentError(StrCat(label, " line ", line_number,
                                         current == nullptr
                                             ? ": a setting before any [section] header"
                                             : ": expected 'name = value'"));
    }
    (*current)[std::string(Trim(line.substr(0, equals)))] =
        std::string(Trim(line.substr(equals + 1)));
  }
  return sections;
}

Result<IniSections> ReadIniFile(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error))
    return IniSections{};
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (error)
    return IoError(StrCat("cannot read ", path, ": ", error.message()));
  if (size > kMaxIniFileBytes) {
    return InvalidArgumentError(
        StrCat(path, " holds ", size, " bytes; an AWS credentials or config file is far smaller"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return IoError(StrCat("cannot open ", path, ": ", std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    return IoError(StrCat("cannot read ", path));
  return ParseIni(text.str(), path);
}

}  // namespace patchfeed::storage
