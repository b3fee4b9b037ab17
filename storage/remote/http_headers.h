// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_STORAGE_REMOTE_HTTP_HEADERS_H_
#define PATCHFEED_STORAGE_REMOTE_HTTP_HEADERS_H_

/// \file
/// Reading the few response headers a range read depends on, and checking that what a server
/// says it sent is what was asked for. Every number here comes from a server and is
/// untrusted: parsing refuses overflow, signs, and anything after the digits. Stateless.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"

namespace patchfeed::storage {

/// A decimal number of at most 19 digits and nothing else; nullopt otherwise.
std::optional<uint64_t> ParseDecimal(std::string_view text);

/// "Name: value\r\n" -> {"name" (lower case), "value" (trimmed)}; nullopt for a status line,
/// the blank line that ends the headers, or a line without ':'.
std::optional<std::pair<std::string, std::string>> SplitHeaderLine(std::string_view line);

/// The status code of an "HTTP/1.1 206 Partial Content" or "HTTP/2 200" line; nullopt when
/// `line` is not a status line.
std::optional<int> ParseStatusLine(std::string_view line);

/// A `Content-Range: bytes first-last/total` value; `total` is nullopt for "/*".
/// `first`/`last` are nullopt for the "bytes */total" form of a 416 answer.
struct ContentRange {
  std::optional<uint64_t> first;
  std::optional<uint64_t> last;
  std::optional<uint64_t> total;
};

/// nullopt when `value` does not have one of those forms, or says last < first, or
/// last >= total.
std::optional<ContentRange> ParseContentRange(std::string_view value);

/// Checks a 206 answer to a request for `length` bytes at `offset`: the Content-Range it sent
/// (`content_range`, the raw header value, empty when absent) must name exactly that range.
/// kDataLoss naming `label`, the range asked and the range answered otherwise; when the
/// answer is shorter because the object ends first, it says so with the object's size.
Status CheckContentRange(std::string_view content_range, uint64_t offset, uint64_t length,
                         std::string_view label);

/// "bytes 100-199" (inclusive, as HTTP writes ranges) for messages; "bytes 100-99" is never
/// written: an empty range reads "0 bytes at 100".
std::string DescribeRange(uint64_t offset, uint64_t length);

}  // namespace patchfeed::storage

#endif  // PATCHFEED_STORAGE_REMOTE_HTTP_HEADERS_H_
