// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "storage/remote/http_headers.h"

#include <algorithm>
#include <cctype>

#include "common/str_cat.h"

namespace patchfeed::storage {
namespace {

constexpr size_t kMaxDecimalDigits = 19;  // below 2^64 whatever the digits

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<uint64_t> ParseDecimal(std::string_view text) {
  if (text.empty() || text.size() > kMaxDecimalDigits)
    return std::nullopt;
  uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  return value;
}

std::optional<std::pair<std::string, std::string>> SplitHeaderLine(std::string_view line) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0 || line.starts_with("HTTP/"))
    return std::nullopt;
  std::string name(Trim(line.substr(0, colon)));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::pair{std::move(name), std::string(Trim(line.substr(colon + 1)))};
}

std::optional<int> ParseStatusLine(std::string_view line) {
  if (!line.starts_with("HTTP/"))
    return std::nullopt;
  const size_t space = line.find(' ');
  if (space == std::string_view::npos || line.size() < space + 4)
    return std::nullopt;
  const auto code = ParseDecimal(line.substr(space + 1, 3));
  if (!code || *code < 100 || *code > 999)
    return std::nullopt;
  return static_cast<int>(*code);
}

std::optional<ContentRange> ParseContentRange(std::string_view value) {
  value = Trim(value);
  if (!value.starts_with("bytes "))
    return std::nullopt;
  value.remove_prefix(6);
  const size_t slash = value.find('/');
  if (slash == std::string_view::npos)
    return std::nullopt;
  ContentRange range;
  const std::string_view total = value.substr(slash + 1);
  if (total != "*") {
    range.total = ParseDecimal(total);
    if (!range.total)
      return std::nullopt;
  }
  const std::string_view span = value.substr(0, slash);
  if (span == "*")
    return range.total ? std::optional(range) : std::nullopt;
  const size_t dash = span.find('-');
  if (dash == std::string_view::npos)
    return std::nullopt;
  range.first = ParseDecimal(span.substr(0, dash));
  range.last = ParseDecimal(span.substr(dash + 1));
  if (!range.first || !range.last || *range.last < *range.first)
    return std::nullopt;
  if (range.total && *range.last >= *range.total)
    return std::nullopt;
  return range;
}

std::string DescribeRange(uint64_t offset, uint64_t length) {
  if (length == 0)
    return StrCat("0 bytes at ", offset);
  return StrCat("bytes ", offset, "-", offset + length - 1);
}

Status CheckContentRange(std::string_view content_range, uint64_t offset, uint64_t length,
                         std::string_view label) {
  const std::string asked = DescribeRange(offset, length);
  if (content_range.empty()) {
    return DataLossError(StrCat(label, ": the server answered ", asked,
                                " with 206 Partial Content but no Content-Range"));
  }
  const auto range = ParseContentRange(content_range);
  if (!range || !range->first) {
    return DataLossError(StrCat(label, ": the server answered ", asked,
                                " with a Content-Range it cannot mean: '", content_range, "'"));
  }
  const uint64_t last = offset + length - 1;
  if (*range->first == offset && *range->last == last)
    return Status::Ok();
  if (*range->first == offset && range->total && *range->last + 1 == *range->total &&
      *range->total < offset + length) {
    return DataLossError(StrCat(label, ": ", asked, " pass the end of the object, which holds ",
                                *range->total, " bytes"));
  }
  return DataLossError(
      StrCat(label, ": asked for ", asked, ", the server sent '", content_range, "'"));
}

}  // namespace patchfeed::storage
