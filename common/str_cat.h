// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_COMMON_STR_CAT_H_
#define PATCHFEED_COMMON_STR_CAT_H_

/// \file
/// StrCat(pieces...): an error message or a context in one call, after abseil's StrCat:
/// `StrCat("chunk ", index, " holds ", nbytes, " bytes")`. Pieces are strings, string views,
/// C strings, single chars, integers and floating-point numbers (shortest form that reads back
/// exactly, std::to_chars). One allocation for the result; no locale, no streams. Stateless.

#include <charconv>
#include <concepts>
#include <string>
#include <string_view>
#include <type_traits>

namespace patchfeed {
namespace internal_common {

inline void AppendPiece(std::string& out, std::string_view s) { out.append(s); }
inline void AppendPiece(std::string& out, const char* s) { out.append(s); }
inline void AppendPiece(std::string& out, char c) { out.push_back(c); }
inline void AppendPiece(std::string& out, bool b) { out.append(b ? "true" : "false"); }

template <typename T>
requires(std::integral<T> || std::floating_point<T>) void AppendPiece(std::string& out, T value) {
  char buf[32];  // the longest double or int64
  const auto result = std::to_chars(buf, buf + sizeof(buf), value);
  out.append(buf, result.ptr);
}

}  // namespace internal_common

template <typename... Pieces>
std::string StrCat(const Pieces&... pieces) {
  std::string out;
  (internal_common::AppendPiece(out, pieces), ...);
  return out;
}

}  // namespace patchfeed

#endif  // PATCHFEED_COMMON_STR_CAT_H_
