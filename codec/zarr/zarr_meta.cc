// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/zarr/zarr_meta.h"

#include <algorithm>
#include <limits>
#include <string>

#include "codec/dtype.h"
#include "codec/internal/metadata_json.h"
#include "codec/nd_geometry.h"
#include "common/str_cat.h"

namespace patchfeed::codec {
namespace {

using internal_codec::AsFloat;
using internal_codec::AsInt64;
using internal_codec::Find;
using internal_codec::FloatItem;
using internal_codec::Item;
using internal_codec::Json;
using internal_codec::Quoted;
using internal_codec::Shown;

Status Bad(std::string_view what) { return DataLossError(StrCat(".zarray: ", what)); }

// A fill value for an error message: as Shown(), but a list of scalars (a complex value) is
// shown as JSON too, cut at 64 characters.
std::string ShownFill(const Json& v) {
  if (!v.is_array() ||
      std::any_of(v.begin(), v.end(), [](const Json& e) { return e.is_structured(); })) {
    return Shown(v);
  }
  std::string s = "[";
  for (const Json& e : v) {
    if (s.size() > 64) {
      break;
    }
    s += StrCat(s.size() > 1 ? "," : "", Shown(e));
  }
  if (s.size() > 64) {
    s.resize(64);
    return s + "...";
  }
  return s + "]";
}

// The filters of a `.zarray` for an error message: their ids (or values), the first four.
std::string ShownFilters(const Json& filters) {
  std::string s;
  for (size_t i = 0; i < filters.size() && i < 4; ++i) {
    const Json* id = Find(filters[i], "id");
    const std::string name = id != nullptr && id->is_string()
                                 ? Quoted(id->get_ref<const std::string&>())
                                 : Shown(filters[i]);
    s += StrCat(i > 0 ? ", " : "", name);
  }
  return filters.size() > 4 ? s + ", ..." : s;
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
      return Bad(StrCat("'", key, "' holds ", Shown(e), " (integers >= ", min_value, " expected)"));
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

Result<std::optional<std::vector<std::byte>>> FillValue(const Json& v, const std::string& dtype,
                                                        int64_t itemsize) {
  if (v.is_null()) {
    return std::optional<std::vector<std::byte>>();
  }
  const char kind = dtype[1];
  const bool big = dtype[0] == '>';
  const auto bad = [&]() {
    return Bad(StrCat("fill_value ", ShownFill(v), " is not a value of dtype '", dtype, "'"));
  };
  if (kind == 'b') {
    const std::optional<int64_t> n =
        v.is_boolean() ? std::optional<int64_t>(v.get<bool>()) : AsInt64(v);
    if (!n || (*n != 0 && *n != 1)) {
      return bad();
    }
    return std::optional(Item(static_cast<uint64_t>(*n), 1));
  }
  if (kind == 'i' || kind == 'u') {
    const int bits = static_cast<int>(itemsize * 8);
    if (kind == 'u' && v.is_number_unsigned()) {
      const auto u = v.get<uint64_t>();
      if (bits < 64 && u >> bits != 0) {
        return bad();
      }
      return std::optional(Item(u, itemsize, big));
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
    return std::optional(Item(static_cast<uint64_t>(*n), itemsize, big));
  }
  if (kind == 'f') {
    const std::optional<double> x = AsFloat(v);
    if (!x) {
      return bad();
    }
    return std::optional(FloatItem(*x, itemsize, big));
  }
  // Complex: [real, imaginary], each a float fill value, each swapped on its own.
  if (!v.is_array() || v.size() != 2 || !AsFloat(v[0]) || !AsFloat(v[1])) {
    return bad();
  }
  std::vector<std::byte> item = FloatItem(*AsFloat(v[0]), itemsize / 2, big);
  const std::vector<std::byte> imaginary = FloatItem(*AsFloat(v[1]), itemsize / 2, big);
  item.insert(item.end(), imaginary.begin(), imaginary.end());
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
  PATCHFEED_ASSIGN_OR_RETURN(const Json doc, internal_codec::ParseJsonObject(json, ".zarray"));
  const Json* format = Find(doc, "zarr_format");
  if (format == nullptr || AsInt64(*format) != std::optional<int64_t>(2)) {
    return Bad(StrCat("'zarr_format' is ", format ? Shown(*format) : "missing", ", not 2"));
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
  if (!internal_codec::BoundedBytes(meta.shape, meta.itemsize,
                                    std::numeric_limits<int64_t>::max())) {
    return Bad("shape spans more than 2^63 - 1 bytes");
  }
  // The chunk's size bounds every buffer a read allocates: checked before anything uses it.
  if (!internal_codec::BoundedBytes(meta.chunks, meta.itemsize, kMaxZarrChunkBytes)) {
    return ResourceExhaustedError(
        StrCat(".zarray: chunks of more than ", kMaxZarrChunkBytes, " bytes"));
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
      return UnimplementedError(StrCat(".zarray: filters ", ShownFilters(*filters),
                                       " (patchfeed reads arrays without filters)"));
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
