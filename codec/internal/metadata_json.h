// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_INTERNAL_METADATA_JSON_H_
#define PATCHFEED_CODEC_INTERNAL_METADATA_JSON_H_

/// \file
/// The JSON helpers the zarr metadata parsers share (`.zarray`, `zarr.json`, OME-Zarr
/// attributes): parsing an untrusted document into an object, typed look-ups, values shown in
/// error messages without recursing into them, and fill-value items. nlohmann/json is used
/// without exceptions: a parse error gives a discarded value, and every access checks the type
/// first. Its parser and destructor keep their own stacks, so a deeply nested document costs
/// heap, not call stack; only dump() recurses, which is why messages go through Shown().
/// Stateless; safe to call concurrently.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

#include <nlohmann/json.hpp>

namespace patchfeed::internal_codec {

using Json = nlohmann::json;

/// Product of `extents` times `itemsize` when it is at most `limit`, else nullopt: how the
/// metadata parsers bound an array's or chunk's byte size before anything multiplies it out.
std::optional<int64_t> BoundedBytes(const std::vector<int64_t>& extents, int64_t itemsize,
                                    int64_t limit);

/// `text` as a JSON object; kDataLoss "`doc`: not valid JSON" or "`doc`: not a JSON object".
Result<Json> ParseJsonObject(std::string_view text, std::string_view doc);

/// The member `key` of `object`, or nullptr (absent, or `object` is not an object).
const Json* Find(const Json& object, const char* key);

/// A JSON integer as int64_t, or nullopt (not an integer, or out of range).
std::optional<int64_t> AsInt64(const Json& v);

/// A JSON number, "NaN", "Infinity" or "-Infinity" as a double, or nullopt.
std::optional<double> AsFloat(const Json& v);

/// A JSON value for an error message: scalars as JSON (cut at 64 characters), lists and
/// objects by kind only ("a list", "an object"): dumping an untrusted nested value would
/// recurse once per level.
std::string Shown(const Json& v);

/// A name from a document for an error message, between `quote`s and cut at 64 characters.
std::string Quoted(std::string_view name, char quote = '\'');

/// The low `itemsize` bytes of `bits`, little-endian, or big-endian when `big_endian`.
std::vector<std::byte> Item(uint64_t bits, int64_t itemsize, bool big_endian = false);

/// The float nearest to `x`, ties to even, overflowing to infinity (a double beyond the float
/// range is undefined behaviour for static_cast).
float ToFloat(double x);

/// A float item of `itemsize` (2, 4 or 8) bytes nearest to `x`, as Item() orders bytes.
/// float16 goes through float: a double within 2^-25 relative of a float16 tie may round the
/// other way than a direct conversion (never for values written as float16 in the first place).
std::vector<std::byte> FloatItem(double x, int64_t itemsize, bool big_endian = false);

}  // namespace patchfeed::internal_codec

#endif  // PATCHFEED_CODEC_INTERNAL_METADATA_JSON_H_
