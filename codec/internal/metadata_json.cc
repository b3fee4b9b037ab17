// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/internal/metadata_json.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/half_float.h"
#include "common/str_cat.h"

namespace patchfeed::internal_codec {

std::optional<int64_t> BoundedBytes(const std::vector<int64_t>& extents, int64_t itemsize,
                                    int64_t limit) {
  int64_t bytes = itemsize;
  for (const int64_t e : extents) {
    if (e != 0 && bytes > limit / e) {
      return std::nullopt;
    }
    bytes *= e;
  }
  return bytes;
}

Result<Json> ParseJsonObject(std::string_view text, std::string_view doc) {
  Json json = Json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return DataLossError(StrCat(doc, ": not valid JSON"));
  }
  if (!json.is_object()) {
    return DataLossError(StrCat(doc, ": not a JSON object"));
  }
  return json;
}

const Json* Find(const Json& object, const char* key) {
  if (!object.is_object()) {
    return nullptr;
  }
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::optional<int64_t> AsInt64(const Json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) {
    return v.get<int64_t>();
  }
  return std::nullopt;
}

std::optional<double> AsFloat(const Json& v) {
  if (v.is_number()) {
    return v.get<double>();
  }
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == "NaN") {
      return std::numeric_limits<double>::quiet_NaN();
    }
    if (s == "Infinity") {
      return std::numeric_limits<double>::infinity();
    }
    if (s == "-Infinity") {
      return -std::numeric_limits<double>::infinity();
    }
  }
  return std::nullopt;
}

std::string Shown(const Json& v) {
  if (v.is_array()) {
    return "a list";
  }
  if (v.is_object()) {
    return "an object";
  }
  std::string s = v.dump();
  if (s.size() > 64) {
    s.resize(64);
    s += "...";
  }
  return s;
}

std::string Quoted(std::string_view name, char quote) {
  return StrCat(quote, name.substr(0, 64), name.size() > 64 ? "..." : "", quote);
}

std::vector<std::byte> Item(uint64_t bits, int64_t itemsize, bool big_endian) {
  static_assert(std::endian::native == std::endian::little, "patchfeed targets little-endian");
  std::vector<std::byte> item(static_cast<size_t>(itemsize));
  std::memcpy(item.data(), &bits, item.size());
  if (big_endian) {
    std::reverse(item.begin(), item.end());
  }
  return item;
}

float ToFloat(double x) {
  constexpr double kMax = std::numeric_limits<float>::max();
  if (std::isfinite(x) && std::fabs(x) > kMax) {
    const bool to_infinity = std::fabs(x) >= 0x1.ffffffp127;  // the tie rounds to even: 2^128
    const float magnitude =
        to_infinity ? std::numeric_limits<float>::infinity() : static_cast<float>(kMax);
    return x < 0 ? -magnitude : magnitude;
  }
  return static_cast<float>(x);
}

std::vector<std::byte> FloatItem(double x, int64_t itemsize, bool big_endian) {
  if (itemsize == 8) {
    return Item(std::bit_cast<uint64_t>(x), 8, big_endian);
  }
  if (itemsize == 4) {
    return Item(std::bit_cast<uint32_t>(ToFloat(x)), 4, big_endian);
  }
  return Item(FloatToHalfBits(ToFloat(x)), 2, big_endian);
}

}  // namespace patchfeed::internal_codec
