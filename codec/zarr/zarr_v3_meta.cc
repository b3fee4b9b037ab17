// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/zarr/zarr_v3_meta.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <string>

#include "codec/internal/metadata_json.h"
#include "codec/zarr/internal/zarr_v3_codecs.h"
#include "common/half_float.h"
#include "common/str_cat.h"

namespace patchfeed::codec {
namespace {

using internal_codec::AsFloat;
using internal_codec::AsInt64;
using internal_codec::BoundedBytes;
using internal_codec::CheckConfigKeys;
using internal_codec::Config;
using internal_codec::EnumOption;
using internal_codec::Find;
using internal_codec::FloatItem;
using internal_codec::Item;
using internal_codec::Json;
using internal_codec::ParseZarrV3CodecChain;
using internal_codec::ParseZarrV3Extension;
using internal_codec::Quoted;
using internal_codec::Shown;
using internal_codec::ZarrV3ChainContext;
using internal_codec::ZarrV3DataLoss;
using internal_codec::ZarrV3Extension;
using internal_codec::ZarrV3IntList;
using internal_codec::ZarrV3Unimplemented;

// The core data types patchfeed reads, with the NumPy dtype a reader returns.
struct DataType {
  std::string_view name;
  std::string_view numpy;
  int64_t itemsize;
  char kind;  // 'b', 'i', 'u' or 'f'
};

constexpr DataType kDataTypes[] = {
    {"bool", "|b1", 1, 'b'},    {"int8", "|i1", 1, 'i'},    {"int16", "<i2", 2, 'i'},
    {"int32", "<i4", 4, 'i'},   {"int64", "<i8", 8, 'i'},   {"uint8", "|u1", 1, 'u'},
    {"uint16", "<u2", 2, 'u'},  {"uint32", "<u4", 4, 'u'},  {"uint64", "<u8", 8, 'u'},
    {"float16", "<f2", 2, 'f'}, {"float32", "<f4", 4, 'f'}, {"float64", "<f8", 8, 'f'},
};

Result<DataType> ParseDataType(const Json* v) {
  if (v == nullptr) {
    return ZarrV3DataLoss("data_type is missing");
  }
  PATCHFEED_ASSIGN_OR_RETURN(const ZarrV3Extension e,
                             ParseZarrV3Extension(*v, "data_type", /*may_skip=*/false));
  for (const DataType& t : kDataTypes) {
    if (e.name == t.name) {
      if (e.configuration != nullptr && !e.configuration->empty()) {
        return ZarrV3Unimplemented(StrCat("data_type ", Quoted(e.name), " with a configuration"));
      }
      return t;
    }
  }
  return ZarrV3Unimplemented(
      StrCat("data_type ", Quoted(e.name),
             " (patchfeed reads bool, integers, float16, float32, float64)"));
}

// "0x" and 1 to 16 hex digits: their value and how many digits; nullopt otherwise.
std::optional<uint64_t> HexBits(const std::string& s, size_t* digits) {
  if (s.size() < 3 || s.size() > 18 || s[0] != '0' || s[1] != 'x') {
    return std::nullopt;
  }
  uint64_t bits = 0;
  for (size_t i = 2; i < s.size(); ++i) {
    const char c = s[i];
    uint64_t d = 0;
    if (c >= '0' && c <= '9') {
      d = static_cast<uint64_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      d = static_cast<uint64_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      d = static_cast<uint64_t>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
    bits = bits << 4 | d;
  }
  *digits = s.size() - 2;
  return bits;
}

// A float fill value per the spec: a number (rounded to the type), "NaN" (the quiet NaN with
// no payload), "Infinity", "-Infinity", or "0x" and the item's bits as 2 * itemsize hex
// digits. zarr-python also reads hex of another float width (4, 8 or 16 digits) as that
// width's value, converted: so do we.
std::optional<std::vector<std::byte>> FloatFill(const Json& v, int64_t itemsize) {
  if (const std::optional<double> x = AsFloat(v)) {
    return FloatItem(*x, itemsize);
  }
  if (!v.is_string()) {
    return std::nullopt;
  }
  const auto& s = v.get_ref<const std::string&>();
  size_t digits = 0;
  const std::optional<uint64_t> bits = HexBits(s, &digits);
  if (!bits) {
    return std::nullopt;
  }
  if (digits == static_cast<size_t>(2 * itemsize)) {
    return Item(*bits, itemsize);
  }
  switch (digits) {
    case 4:
      return FloatItem(HalfBitsToFloat(static_cast<uint16_t>(*bits)), itemsize);
    case 8:
      return FloatItem(std::bit_cast<float>(static_cast<uint32_t>(*bits)), itemsize);
    case 16:
      return FloatItem(std::bit_cast<double>(*bits), itemsize);
    default:
      return std::nullopt;
  }
}

// The fill value per the spec: bool true/false; integers without fraction or exponent within
// the type's range; floats as FloatFill.
Result<std::vector<std::byte>> FillValue(const Json* v, const DataType& t) {
  if (v == nullptr) {
    return ZarrV3DataLoss("fill_value is missing");
  }
  const auto bad = [&]() {
    return ZarrV3DataLoss(
        StrCat("fill_value ", Shown(*v), " is not a value of data_type ", t.name));
  };
  if (t.kind == 'b') {
    if (!v->is_boolean()) {
      return bad();
    }
    return Item(v->get<bool>() ? 1 : 0, 1);
  }
  if (t.kind == 'f') {
    std::optional<std::vector<std::byte>> item = FloatFill(*v, t.itemsize);
    if (!item) {
      return bad();
    }
    return std::move(*item);
  }
  const int bits = static_cast<int>(t.itemsize * 8);
  if (v->is_number_unsigned()) {  // nlohmann/json: every non-negative integer
    const auto u = v->get<uint64_t>();
    const int value_bits = t.kind == 'u' ? bits : bits - 1;
    if (value_bits < 64 && u >> value_bits != 0) {
      return bad();
    }
    return Item(u, t.itemsize);
  }
  if (v->is_number_integer()) {  // negative
    const auto n = v->get<int64_t>();
    if (t.kind == 'u' || (bits < 64 && n < -(int64_t{1} << (bits - 1)))) {
      return bad();
    }
    return Item(static_cast<uint64_t>(n), t.itemsize);
  }
  return bad();
}

Status ParseChunkKeyEncoding(const Json* v, ZarrV3Meta& meta) {
  if (v == nullptr) {
    return ZarrV3DataLoss("chunk_key_encoding is missing");
  }
  PATCHFEED_ASSIGN_OR_RETURN(const ZarrV3Extension e,
                             ParseZarrV3Extension(*v, "chunk_key_encoding", /*may_skip=*/false));
  if (e.name != "default" && e.name != "v2") {
    return ZarrV3Unimplemented(
        StrCat("chunk_key_encoding ", Quoted(e.name), " (patchfeed reads default and v2)"));
  }
  meta.v2_chunk_keys = e.name == "v2";
  meta.chunk_key_separator = meta.v2_chunk_keys ? '.' : '/';
  PATCHFEED_RETURN_IF_ERROR(CheckConfigKeys(e, "chunk_key_encoding", {"separator"}));
  PATCHFEED_ASSIGN_OR_RETURN(const std::optional<std::string> sep,
                             EnumOption(e, "separator", "chunk_key_encoding", {"/", "."}));
  if (sep) {
    meta.chunk_key_separator = (*sep)[0];
  }
  return Status::Ok();
}

Result<std::vector<int64_t>> ParseChunkGrid(const Json* v, int ndim) {
  if (v == nullptr) {
    return ZarrV3DataLoss("chunk_grid is missing");
  }
  PATCHFEED_ASSIGN_OR_RETURN(const ZarrV3Extension e,
                             ParseZarrV3Extension(*v, "chunk_grid", /*may_skip=*/false));
  if (e.name != "regular") {
    return ZarrV3Unimplemented(
        StrCat("chunk_grid ", Quoted(e.name), " (patchfeed reads regular grids)"));
  }
  PATCHFEED_RETURN_IF_ERROR(CheckConfigKeys(e, "chunk_grid", {"chunk_shape"}));
  PATCHFEED_ASSIGN_OR_RETURN(
      std::vector<int64_t> chunks,
      ZarrV3IntList(Config(e, "chunk_shape"), "chunk_grid.configuration.chunk_shape", 1));
  if (chunks.size() != static_cast<size_t>(ndim)) {
    return ZarrV3DataLoss(StrCat("chunk_grid.configuration.chunk_shape has ", chunks.size(),
                                 " entries for ", ndim, " dimensions"));
  }
  return chunks;
}

Status ParseStorageTransformers(const Json* v) {
  if (v == nullptr || v->is_null()) {  // zarr-python reads null as none
    return Status::Ok();
  }
  if (!v->is_array()) {
    return ZarrV3DataLoss("storage_transformers must be a list");
  }
  for (size_t i = 0; i < v->size(); ++i) {
    const std::string at = StrCat("storage_transformers[", i, "]");
    PATCHFEED_ASSIGN_OR_RETURN(const ZarrV3Extension e,
                               ParseZarrV3Extension((*v)[i], at, /*may_skip=*/true));
    if (e.must_understand) {
      return ZarrV3Unimplemented(StrCat(at, ": storage transformer ", Quoted(e.name)));
    }
  }
  return Status::Ok();
}

Status CheckOptionalFields(const Json& doc, int ndim) {
  if (const Json* attributes = Find(doc, "attributes");
      attributes != nullptr && !attributes->is_object()) {
    return ZarrV3DataLoss("attributes must be an object");
  }
  if (const Json* names = Find(doc, "dimension_names"); names != nullptr && !names->is_null()) {
    if (!names->is_array() || names->size() != static_cast<size_t>(ndim)) {
      return ZarrV3DataLoss(StrCat("dimension_names must be a list of ", ndim, " names"));
    }
    for (size_t i = 0; i < names->size(); ++i) {
      if (!(*names)[i].is_string() && !(*names)[i].is_null()) {
        return ZarrV3DataLoss(StrCat("dimension_names[", i, "] is ", Shown((*names)[i]),
                                     " (a string or null expected)"));
      }
    }
  }
  return ParseStorageTransformers(Find(doc, "storage_transformers"));
}

// Fields the spec does not define must be objects with "must_understand": false (the spec's
// rule, and zarr-python's); anything else is a feature patchfeed would have to understand.
Status CheckExtraFields(const Json& doc) {
  static constexpr std::string_view kKnown[] = {
      "zarr_format",     "node_type",         "shape",
      "data_type",       "chunk_grid",        "fill_value",
      "codecs",          "attributes",        "storage_transformers",
      "dimension_names", "chunk_key_encoding"};
  for (const auto& item : doc.items()) {
    if (std::find(std::begin(kKnown), std::end(kKnown), item.key()) != std::end(kKnown)) {
      continue;
    }
    const Json* must = item.value().is_object() ? Find(item.value(), "must_understand") : nullptr;
    if (must == nullptr || !must->is_boolean() || must->get<bool>()) {
      return ZarrV3Unimplemented(
          StrCat("field ", Quoted(item.key()),
                 " (not in the spec and not marked \"must_understand\": false)"));
    }
  }
  return Status::Ok();
}

// The document as a JSON object with zarr_format 3 and a string node_type.
Result<Json> ParseDocument(std::string_view json) {
  PATCHFEED_ASSIGN_OR_RETURN(Json doc, internal_codec::ParseJsonObject(json, "zarr.json"));
  const Json* format = Find(doc, "zarr_format");
  if (format == nullptr || AsInt64(*format) != std::optional<int64_t>(3)) {
    return ZarrV3DataLoss(
        StrCat("zarr_format is ", format ? Shown(*format) : "missing", ", not 3"));
  }
  const Json* node_type = Find(doc, "node_type");
  if (node_type == nullptr || !node_type->is_string() ||
      (node_type->get_ref<const std::string&>() != "array" &&
       node_type->get_ref<const std::string&>() != "group")) {
    return ZarrV3DataLoss(StrCat("node_type is ", node_type ? Shown(*node_type) : "missing",
                                 " (\"array\" or \"group\" expected)"));
  }
  return doc;
}

}  // namespace

int64_t ZarrV3Sharding::num_inner_chunks() const {
  int64_t n = 1;
  for (const int64_t c : chunks_per_shard) {
    n *= c;
  }
  return n;
}

int64_t ZarrV3Sharding::index_nbytes() const {
  return 16 * num_inner_chunks() + (index_crc32c ? 4 : 0);
}

const std::vector<int64_t>& ZarrV3Meta::inner_chunks() const {
  return sharding ? sharding->inner_chunks : chunks;
}

int64_t ZarrV3Meta::inner_chunk_nbytes() const {
  int64_t n = itemsize;
  for (const int64_t c : inner_chunks()) {
    n *= c;
  }
  return n;
}

Result<ZarrV3Meta> ParseZarrV3Meta(std::string_view json) {
  PATCHFEED_ASSIGN_OR_RETURN(const Json doc, ParseDocument(json));
  if (Find(doc, "node_type")->get_ref<const std::string&>() == "group") {
    return InvalidArgumentError("zarr.json: node_type is \"group\": a group, not an array");
  }
  PATCHFEED_RETURN_IF_ERROR(CheckExtraFields(doc));
  ZarrV3Meta meta;
  PATCHFEED_ASSIGN_OR_RETURN(meta.shape, ZarrV3IntList(Find(doc, "shape"), "shape", 0));
  PATCHFEED_ASSIGN_OR_RETURN(const DataType type, ParseDataType(Find(doc, "data_type")));
  meta.data_type = type.name;
  meta.numpy_dtype = type.numpy;
  meta.itemsize = type.itemsize;
  if (!BoundedBytes(meta.shape, meta.itemsize, std::numeric_limits<int64_t>::max())) {
    return ZarrV3DataLoss("shape spans more than 2^63 - 1 bytes");
  }
  PATCHFEED_ASSIGN_OR_RETURN(meta.chunks, ParseChunkGrid(Find(doc, "chunk_grid"), meta.ndim()));
  PATCHFEED_RETURN_IF_ERROR(ParseChunkKeyEncoding(Find(doc, "chunk_key_encoding"), meta));
  PATCHFEED_ASSIGN_OR_RETURN(meta.fill_value, FillValue(Find(doc, "fill_value"), type));
  const ZarrV3ChainContext ctx{meta.ndim(), meta.itemsize, &meta.chunks, /*outer=*/true};
  PATCHFEED_RETURN_IF_ERROR(
      ParseZarrV3CodecChain(Find(doc, "codecs"), "codecs", ctx, &meta.codecs, &meta.sharding));
  if (!meta.sharding && !BoundedBytes(meta.chunks, meta.itemsize, kMaxZarrChunkBytes)) {
    return ResourceExhaustedError(
        StrCat("zarr.json: chunks of more than ", kMaxZarrChunkBytes, " bytes"));
  }
  PATCHFEED_RETURN_IF_ERROR(CheckOptionalFields(doc, meta.ndim()));
  return meta;
}

std::string ZarrV3ChunkKey(const ZarrV3Meta& meta, std::span<const int64_t> index) {
  if (meta.v2_chunk_keys && index.empty()) {
    return "0";
  }
  std::string key = meta.v2_chunk_keys ? "" : "c";
  for (size_t d = 0; d < index.size(); ++d) {
    if (d > 0 || !meta.v2_chunk_keys) {
      key += meta.chunk_key_separator;
    }
    key += std::to_string(index[d]);
  }
  return key;
}

Result<std::string> ZarrV3NodeType(std::string_view json) {
  PATCHFEED_ASSIGN_OR_RETURN(const Json doc, ParseDocument(json));
  return Find(doc, "node_type")->get<std::string>();
}

}  // namespace patchfeed::codec
