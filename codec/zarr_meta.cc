// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/zarr_meta.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

// nlohmann/json (Debian's nlohmann-json3-dev), header-only and used without exceptions: a
// parse error gives a discarded value, and every access below checks the type first.
#include "codec/b2nd_meta.h"
#include "common/half_float.h"
#include "common/str_cat.h"

#include <nlohmann/json.hpp>

namespace patchfeed::codec {
namespace {

using Json = nlohmann::json;

Status Bad(std::string_view what) { return DataLossError(StrCat(".zarray: ", what)); }

const Json* Find(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// A JSON integer as int64_t, or nullopt (not an integer, or out of range).
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

Result<std::vector<int64_t>> IntList(const Json& object, const char* key, int64_t min_value) {
  const Json* v = Find(object, key);
  if (v == nullptr || !v->is_array()) {
    return Bad(StrCat("'", key, "' must be a list of integers"));
  }
  if (v->size() > static_cast<size_t>(kMaxDims)) {
    return UnimplementedError(
        StrCat(".zarray: ", v->size(), " dimensions (patchfeed reads at most ", kMaxDims, ")"));
  }
  std::vector<int64_t> out;
  for (const Json& e : *v) {
    const std::optional<int64_t> n = AsInt64(e);
    if (!n || *n < min_value) {
      return Bad(StrCat("'", key, "' holds ", e.dump(), " (integers >= ", min_value, " expected)"));
    }
    out.push_back(*n);
  }
  return out;
}

// The numeric NumPy dtypes zarr v2 stores patchfeed reads: bool, integers, floats, complex.
Status CheckDtype(const std::string& dtype, int64_t itemsize) {
  const bool order_ok = !dtype.empty() && (dtype[0] == '<' || dtype[0] == '>' || dtype[0] == '|');
  if (!order_ok || dtype.size() < 2) {
    return Bad(StrCat("dtype '", dtype, "' is not a NumPy dtype string"));
  }
  const char kind = dtype[1];
  bool ok = false;
  switch (kind) {
    case 'b':
      ok = itemsize == 1;
      break;
    case 'i':
    case 'u':
      ok = itemsize == 1 || itemsize == 2 || itemsize == 4 || itemsize == 8;
      break;
    case 'f':
      ok = itemsize == 2 || itemsize == 4 || itemsize == 8;
      break;
    case 'c':
      ok = itemsize == 8 || itemsize == 16;
      break;
    default:
      return UnimplementedError(
          StrCat(".zarray: dtype '", dtype, "' (only bool, integer, float and complex arrays)"));
  }
  if (!ok) {
    return Bad(StrCat("dtype '", dtype, "' is not a valid numeric NumPy dtype"));
  }
  return Status::Ok();
}

// A scalar of `itemsize` bytes at `native` (native order: little-endian) in the dtype's order.
// Complex items are built from two such scalars, each swapped on its own.
std::vector<std::byte> ItemBytes(const void* native, int64_t itemsize, bool big_endian) {
  static_assert(std::endian::native == std::endian::little, "patchfeed targets little-endian");
  std::vector<std::byte> item(static_cast<size_t>(itemsize));
  std::memcpy(item.data(), native, item.size());
  if (big_endian) {
    std::reverse(item.begin(), item.end());
  }
  return item;
}

// A float fill value: a JSON number or "NaN", "Infinity", "-Infinity".
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

Result<std::optional<std::vector<std::byte>>> FillValue(const Json& v, const std::string& dtype,
                                                        int64_t itemsize) {
  if (v.is_null()) {
    return std::optional<std::vector<std::byte>>();
  }
  const char kind = dtype[1];
  const bool big = dtype[0] == '>';
  const auto bad = [&]() {
    return Bad(StrCat("fill_value ", v.dump(), " is not a value of dtype '", dtype, "'"));
  };
  if (kind == 'b') {
    const std::optional<int64_t> n =
        v.is_boolean() ? std::optional<int64_t>(v.get<bool>()) : AsInt64(v);
    if (!n || (*n != 0 && *n != 1)) {
      return bad();
    }
    const auto b = static_cast<uint8_t>(*n);
    return std::optional(ItemBytes(&b, 1, false));
  }
  if (kind == 'i' || kind == 'u') {
    const int bits = static_cast<int>(itemsize * 8);
    if (kind == 'u' && v.is_number_unsigned()) {
      const auto u = v.get<uint64_t>();
      if (bits < 64 && u >> bits != 0) {
        return bad();
      }
      return std::optional(ItemBytes(&u, itemsize, big));
    }
    const std::optional<int64_t> n = AsInt64(v);
    if (!n) {
      return bad();
    }
    const bool fits = kind == 'u' ? *n >= 0 && (bits == 64 || *n >> bits == 0)
                                  : bits == 64 || (*n >= -(int64_t{1} << (bits - 1)) &&
                                                   *n < (int64_t{1} << (bits - 1)));
    if (!fits) {
      return bad();
    }
    return std::optional(ItemBytes(&*n, itemsize, big));
  }
  if (kind == 'f') {
    const std::optional<double> x = AsFloat(v);
    if (!x) {
      return bad();
    }
    if (itemsize == 8) {
      return std::optional(ItemBytes(&*x, 8, big));
    }
    if (itemsize == 4) {
      const auto f = static_cast<float>(*x);
      return std::optional(ItemBytes(&f, 4, big));
    }
    // Through float: a double within 2^-25 relative of a float16 tie may round the other way
    // than NumPy's direct conversion (never for values written as float16 in the first place).
    const uint16_t h = FloatToHalfBits(static_cast<float>(*x));
    return std::optional(ItemBytes(&h, 2, big));
  }
  // Complex: [real, imaginary], each a float fill value.
  if (!v.is_array() || v.size() != 2 || !AsFloat(v[0]) || !AsFloat(v[1])) {
    return bad();
  }
  std::vector<std::byte> item;
  for (int k = 0; k < 2; ++k) {
    const double part = *AsFloat(v[static_cast<size_t>(k)]);
    std::vector<std::byte> half;
    if (itemsize == 16) {
      half = ItemBytes(&part, 8, big);
    } else {
      const auto f = static_cast<float>(part);
      half = ItemBytes(&f, 4, big);
    }
    item.insert(item.end(), half.begin(), half.end());
  }
  return std::optional(std::move(item));
}

Result<ZarrCompressor> Compressor(const Json& v) {
  if (v.is_null()) {
    return ZarrCompressor::kNone;
  }
  const Json* id = v.is_object() ? Find(v, "id") : nullptr;
  if (id == nullptr || !id->is_string()) {
    return Bad("'compressor' must be null or an object with a string 'id'");
  }
  const auto& name = id->get_ref<const std::string&>();
  for (const ZarrCompressor c :
       {ZarrCompressor::kBlosc, ZarrCompressor::kZstd, ZarrCompressor::kLz4, ZarrCompressor::kGzip,
        ZarrCompressor::kZlib}) {
    if (name == ZarrCompressorName(c)) {
      return c;
    }
  }
  return UnimplementedError(StrCat(".zarray: compressor '", name,
                                   "' (patchfeed reads blosc, zstd, lz4, gzip, zlib or none)"));
}

}  // namespace

int64_t ZarrV2Meta::chunk_nbytes() const {
  int64_t n = itemsize;
  for (const int64_t c : chunks) {
    n *= c;
  }
  return n;
}

const char* ZarrCompressorName(ZarrCompressor compressor) {
  switch (compressor) {
    case ZarrCompressor::kNone:
      return "null";
    case ZarrCompressor::kBlosc:
      return "blosc";
    case ZarrCompressor::kZstd:
      return "zstd";
    case ZarrCompressor::kLz4:
      return "lz4";
    case ZarrCompressor::kGzip:
      return "gzip";
    case ZarrCompressor::kZlib:
      return "zlib";
  }
  return "?";
}

Result<ZarrV2Meta> ParseZarrV2Meta(std::string_view json) {
  const Json doc = Json::parse(json, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return Bad("not valid JSON");
  }
  if (!doc.is_object()) {
    return Bad("not a JSON object");
  }
  const Json* format = Find(doc, "zarr_format");
  if (format == nullptr || AsInt64(*format) != std::optional<int64_t>(2)) {
    return Bad(StrCat("'zarr_format' is ", format ? format->dump() : "missing", ", not 2"));
  }
  ZarrV2Meta meta;
  PATCHFEED_ASSIGN_OR_RETURN(meta.shape, IntList(doc, "shape", 0));
  PATCHFEED_ASSIGN_OR_RETURN(meta.chunks, IntList(doc, "chunks", 1));
  if (meta.chunks.size() != meta.shape.size()) {
    return Bad(StrCat("'chunks' has ", meta.chunks.size(), " entries for ", meta.shape.size(),
                      " dimensions"));
  }
  const Json* dtype = Find(doc, "dtype");
  if (dtype != nullptr && dtype->is_array()) {
    return UnimplementedError(".zarray: a structured dtype (only bool, integer, float, complex)");
  }
  if (dtype == nullptr || !dtype->is_string()) {
    return Bad("'dtype' must be a string");
  }
  meta.dtype = dtype->get<std::string>();
  meta.itemsize = ItemSizeOfDtype(meta.dtype);
  PATCHFEED_RETURN_IF_ERROR(CheckDtype(meta.dtype, meta.itemsize));
  // The chunk's size bounds every buffer a read allocates: checked before anything uses it.
  int64_t bytes = meta.itemsize;
  for (const int64_t c : meta.chunks) {
    if (c > kMaxZarrChunkBytes / bytes) {
      return ResourceExhaustedError(
          StrCat(".zarray: chunks of more than ", kMaxZarrChunkBytes, " bytes"));
    }
    bytes *= c;
  }
  const Json* order = Find(doc, "order");
  if (order == nullptr || !order->is_string() ||
      (order->get_ref<const std::string&>() != "C" &&
       order->get_ref<const std::string&>() != "F")) {
    return Bad("'order' must be \"C\" or \"F\"");
  }
  if (order->get_ref<const std::string&>() == "F") {
    return UnimplementedError(".zarray: order \"F\" (patchfeed reads C-order chunks)");
  }
  if (const Json* filters = Find(doc, "filters"); filters != nullptr && !filters->is_null()) {
    if (!filters->is_array()) {
      return Bad("'filters' must be null or a list");
    }
    if (!filters->empty()) {
      return UnimplementedError(StrCat(".zarray: filters ", filters->dump()));
    }
  }
  if (const Json* sep = Find(doc, "dimension_separator"); sep != nullptr) {
    if (!sep->is_string() ||
        (sep->get_ref<const std::string&>() != "." && sep->get_ref<const std::string&>() != "/")) {
      return Bad("'dimension_separator' must be \".\" or \"/\"");
    }
    meta.dimension_separator = sep->get_ref<const std::string&>()[0];
  }
  const Json* compressor = Find(doc, "compressor");
  if (compressor == nullptr) {
    return Bad("'compressor' is missing");
  }
  PATCHFEED_ASSIGN_OR_RETURN(meta.compressor, Compressor(*compressor));
  const Json* fill = Find(doc, "fill_value");
  if (fill == nullptr) {
    return Bad("'fill_value' is missing");
  }
  PATCHFEED_ASSIGN_OR_RETURN(meta.fill_value, FillValue(*fill, meta.dtype, meta.itemsize));
  return meta;
}

std::string ZarrV2ChunkKey(const ZarrV2Meta& meta, std::span<const int64_t> index) {
  if (index.empty()) {
    return "0";
  }
  std::string key;
  for (size_t d = 0; d < index.size(); ++d) {
    if (d > 0) {
      key += meta.dimension_separator;
    }
    key += std::to_string(index[d]);
  }
  return key;
}

}  // namespace patchfeed::codec
