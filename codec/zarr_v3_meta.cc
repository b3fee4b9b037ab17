// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/zarr_v3_meta.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <initializer_list>
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

Status Bad(std::string_view what) { return DataLossError(StrCat("zarr.json: ", what)); }
Status Unsupported(std::string_view what) {
  return UnimplementedError(StrCat("zarr.json: ", what));
}

const Json* Find(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// A JSON value for an error message: scalars as JSON (cut at 64 characters), lists and objects
// by kind only (dumping an untrusted nested value would recurse once per level).
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

// A name from the document for an error message, quoted and cut at 64 characters.
std::string Quoted(std::string_view name) {
  return StrCat("'", name.substr(0, 64), name.size() > 64 ? "...'" : "'");
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

Result<std::vector<int64_t>> IntList(const Json* v, const std::string& path, int64_t min_value) {
  if (v == nullptr || !v->is_array()) {
    return Bad(StrCat(path, " must be a list of integers"));
  }
  if (v->size() > static_cast<size_t>(kMaxDims)) {
    return Unsupported(
        StrCat(path, " has ", v->size(), " dimensions (patchfeed reads at most ", kMaxDims, ")"));
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const std::optional<int64_t> n = AsInt64((*v)[i]);
    if (!n || *n < min_value) {
      return Bad(StrCat(path, "[", i, "] is ", Shown((*v)[i]), " (an integer >= ", min_value,
                        " expected)"));
    }
    out.push_back(*n);
  }
  return out;
}

// An extension point's value (data type, chunk grid, chunk key encoding, codec, storage
// transformer): a short-hand name, or an object with "name" and optional "configuration" and
// "must_understand" (other members are ignored, as zarr-python does).
struct Extension {
  std::string name;
  const Json* configuration = nullptr;  // an object, or nullptr when absent
  bool must_understand = true;
};

// `may_skip`: whether the extension point allows "must_understand": false (the spec forbids it
// for data types, chunk grids and chunk key encodings).
Result<Extension> ParseExtension(const Json& v, const std::string& path, bool may_skip) {
  Extension e;
  if (v.is_string()) {
    e.name = v.get<std::string>();
    return e;
  }
  const Json* name = v.is_object() ? Find(v, "name") : nullptr;
  if (name == nullptr || !name->is_string()) {
    return Bad(StrCat(path, " must be a name or an object with a string 'name'"));
  }
  e.name = name->get<std::string>();
  if (const Json* c = Find(v, "configuration"); c != nullptr) {
    if (!c->is_object()) {
      return Bad(StrCat(path, ".configuration must be an object"));
    }
    e.configuration = c;
  }
  if (const Json* m = Find(v, "must_understand"); m != nullptr) {
    if (!m->is_boolean()) {
      return Bad(StrCat(path, ".must_understand must be true or false"));
    }
    e.must_understand = m->get<bool>();
    if (!e.must_understand && !may_skip) {
      return Bad(StrCat(path, ".must_understand is false, which the spec does not allow here"));
    }
  }
  return e;
}

const Json* Config(const Extension& e, const char* key) {
  return e.configuration == nullptr ? nullptr : Find(*e.configuration, key);
}

// A configuration option outside `known` is a feature patchfeed does not know (zarr-python
// refuses such documents too).
Status CheckConfigKeys(const Extension& e, const std::string& path,
                       std::initializer_list<std::string_view> known) {
  if (e.configuration == nullptr) {
    return Status::Ok();
  }
  for (const auto& item : e.configuration->items()) {
    if (std::find(known.begin(), known.end(), item.key()) == known.end()) {
      return Unsupported(StrCat(path, ".configuration.", Quoted(item.key()), " (", e.name,
                                " has no such option)"));
    }
  }
  return Status::Ok();
}

// A string option: absent (nullopt), one of `allowed`, or kDataLoss naming it.
Result<std::optional<std::string>> EnumOption(const Extension& e, const char* key,
                                              const std::string& path,
                                              std::initializer_list<std::string_view> allowed) {
  const Json* v = Config(e, key);
  if (v == nullptr) {
    return std::optional<std::string>();
  }
  if (v->is_string() && std::find(allowed.begin(), allowed.end(),
                                  v->get_ref<const std::string&>()) != allowed.end()) {
    return std::optional(v->get<std::string>());
  }
  std::string options;
  for (const std::string_view a : allowed) {
    options += StrCat(options.empty() ? "" : ", ", "\"", a, "\"");
  }
  return Bad(StrCat(path, ".configuration.", key, " is ", Shown(*v), " (", options, " expected)"));
}

// An integer option: absent, or within [lo, hi], or kDataLoss naming it.
Status IntOption(const Extension& e, const char* key, const std::string& path, int64_t lo,
                 int64_t hi) {
  const Json* v = Config(e, key);
  if (v == nullptr) {
    return Status::Ok();
  }
  const std::optional<int64_t> n = AsInt64(*v);
  if (!n || *n < lo || *n > hi) {
    return Bad(StrCat(path, ".configuration.", key, " is ", Shown(*v), " (an integer from ", lo,
                      " to ", hi, " expected)"));
  }
  return Status::Ok();
}

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
    return Bad("data_type is missing");
  }
  PATCHFEED_ASSIGN_OR_RETURN(const Extension e,
                             ParseExtension(*v, "data_type", /*may_skip=*/false));
  for (const DataType& t : kDataTypes) {
    if (e.name == t.name) {
      if (e.configuration != nullptr && !e.configuration->empty()) {
        return Unsupported(StrCat("data_type ", Quoted(e.name), " with a configuration"));
      }
      return t;
    }
  }
  return Unsupported(StrCat("data_type ", Quoted(e.name),
                            " (patchfeed reads bool, integers, float16, float32, float64)"));
}

// `itemsize` bytes of `bits`, little-endian.
std::vector<std::byte> Item(uint64_t bits, int64_t itemsize) {
  static_assert(std::endian::native == std::endian::little, "patchfeed targets little-endian");
  std::vector<std::byte> item(static_cast<size_t>(itemsize));
  std::memcpy(item.data(), &bits, item.size());
  return item;
}

// The float nearest to `x`, ties to even, overflowing to infinity (a double beyond the float
// range is undefined behaviour for static_cast).
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

// A float item of `itemsize` bytes nearest to `x` (float16 through float: a double within
// 2^-25 relative of a float16 tie may round the other way than a direct conversion).
std::vector<std::byte> FloatItem(double x, int64_t itemsize) {
  if (itemsize == 8) {
    return Item(std::bit_cast<uint64_t>(x), 8);
  }
  if (itemsize == 4) {
    return Item(std::bit_cast<uint32_t>(ToFloat(x)), 4);
  }
  return Item(FloatToHalfBits(ToFloat(x)), 2);
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
  if (v.is_number()) {
    return FloatItem(v.get<double>(), itemsize);
  }
  if (!v.is_string()) {
    return std::nullopt;
  }
  const auto& s = v.get_ref<const std::string&>();
  if (s == "NaN") {
    constexpr uint64_t kQuietNan[] = {0, 0, 0x7e00, 0, 0x7fc00000, 0, 0, 0, 0x7ff8000000000000};
    return Item(kQuietNan[itemsize], itemsize);
  }
  if (s == "Infinity" || s == "-Infinity") {
    const double inf = std::numeric_limits<double>::infinity();
    return FloatItem(s[0] == '-' ? -inf : inf, itemsize);
  }
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
    return Bad("fill_value is missing");
  }
  const auto bad = [&]() {
    return Bad(StrCat("fill_value ", Shown(*v), " is not a value of data_type ", t.name));
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
    return Bad("chunk_key_encoding is missing");
  }
  PATCHFEED_ASSIGN_OR_RETURN(const Extension e,
                             ParseExtension(*v, "chunk_key_encoding", /*may_skip=*/false));
  if (e.name != "default" && e.name != "v2") {
    return Unsupported(
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
    return Bad("chunk_grid is missing");
  }
  PATCHFEED_ASSIGN_OR_RETURN(const Extension e,
                             ParseExtension(*v, "chunk_grid", /*may_skip=*/false));
  if (e.name != "regular") {
    return Unsupported(StrCat("chunk_grid ", Quoted(e.name), " (patchfeed reads regular grids)"));
  }
  PATCHFEED_RETURN_IF_ERROR(CheckConfigKeys(e, "chunk_grid", {"chunk_shape"}));
  PATCHFEED_ASSIGN_OR_RETURN(
      std::vector<int64_t> chunks,
      IntList(Config(e, "chunk_shape"), "chunk_grid.configuration.chunk_shape", 1));
  if (chunks.size() != static_cast<size_t>(ndim)) {
    return Bad(StrCat("chunk_grid.configuration.chunk_shape has ", chunks.size(), " entries for ",
                      ndim, " dimensions"));
  }
  return chunks;
}

// Product of `extents` times `itemsize` when it is at most `limit`, else nullopt.
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

struct Chain {
  ZarrV3Codecs codecs;
  std::optional<ZarrV3Sharding> sharding;
};

// The array's shape facts a codec chain is checked against.
struct ChainContext {
  int ndim = 0;
  int64_t itemsize = 0;
  const std::vector<int64_t>* chunk_shape = nullptr;  // what the chain encodes
  bool outer = true;                                  // the array's chain (sharding allowed)
};

Result<Chain> ParseCodecChain(const Json* list, const std::string& path, const ChainContext& ctx);

Result<std::vector<int>> ParseTransposeOrder(const Extension& e, const std::string& at, int ndim) {
  PATCHFEED_RETURN_IF_ERROR(CheckConfigKeys(e, at, {"order"}));
  const Json* order = Config(e, "order");
  if (order == nullptr || !order->is_array() || order->size() != static_cast<size_t>(ndim)) {
    return Bad(StrCat(at, ".configuration.order must list the ", ndim, " axes"));
  }
  std::vector<int> out;
  std::vector<bool> seen(static_cast<size_t>(ndim));
  for (const Json& axis : *order) {
    const std::optional<int64_t> n = AsInt64(axis);
    if (!n || *n < 0 || *n >= ndim || seen[static_cast<size_t>(*n)]) {
      return Bad(StrCat(at, ".configuration.order holds ", Shown(axis),
                        " (a permutation of the axes 0 to ", ndim - 1, " expected)"));
    }
    seen[static_cast<size_t>(*n)] = true;
    out.push_back(static_cast<int>(*n));
  }
  return out;
}

// The "bytes" codec's endian: absent (zarr-python: the machine's order, little-endian here),
// "little" or "big"; null only for 1-byte types, which have no byte order.
Result<bool> ParseBigEndian(const Extension& e, const std::string& at, int64_t itemsize) {
  PATCHFEED_RETURN_IF_ERROR(CheckConfigKeys(e, at, {"endian"}));
  if (const Json* endian = Config(e, "endian"); endian != nullptr && endian->is_null()) {
    if (itemsize > 1) {
      return Bad(StrCat(at, ".configuration.endian is null for a ", itemsize, "-byte type"));
    }
    return false;
  }
  PATCHFEED_ASSIGN_OR_RETURN(const std::optional<std::string> endian,
                             EnumOption(e, "endian", at, {"little", "big"}));
  return endian == "big" && itemsize > 1;
}

Status CheckBytesCodecConfig(const Extension& e, const std::string& at) {
  if (e.name == "blosc") {
    PATCHFEED_RETURN_IF_ERROR(
        CheckConfigKeys(e, at, {"cname", "clevel", "shuffle", "typesize", "blocksize"}));
    PATCHFEED_ASSIGN_OR_RETURN(
        const std::optional<std::string> cname,
        EnumOption(e, "cname", at, {"lz4", "lz4hc", "blosclz", "zstd", "zlib", "snappy"}));
    if (cname == "snappy") {
      return Unsupported(StrCat(at,
                                ".configuration.cname \"snappy\" (patchfeed's Blosc reads "
                                "blosclz, lz4, lz4hc, zlib and zstd)"));
    }
    PATCHFEED_RETURN_IF_ERROR(IntOption(e, "clevel", at, 0, 9));
    PATCHFEED_RETURN_IF_ERROR(
        EnumOption(e, "shuffle", at, {"noshuffle", "shuffle", "bitshuffle"}).status());
    PATCHFEED_RETURN_IF_ERROR(IntOption(e, "typesize", at, 1, std::numeric_limits<int32_t>::max()));
    return IntOption(e, "blocksize", at, 0, std::numeric_limits<int32_t>::max());
  }
  if (e.name == "zstd") {
    PATCHFEED_RETURN_IF_ERROR(CheckConfigKeys(e, at, {"level", "checksum"}));
    PATCHFEED_RETURN_IF_ERROR(IntOption(e, "level", at, -(1 << 17), 22));  // ZSTD_minCLevel()
    if (const Json* checksum = Config(e, "checksum");
        checksum != nullptr && !checksum->is_boolean()) {
      return Bad(StrCat(at, ".configuration.checksum must be true or false"));
    }
    return Status::Ok();
  }
  if (e.name == "gzip") {
    PATCHFEED_RETURN_IF_ERROR(CheckConfigKeys(e, at, {"level"}));
    return IntOption(e, "level", at, 0, 9);
  }
  return CheckConfigKeys(e, at, {});  // crc32c
}

// index_codecs: [bytes little] or [bytes little, crc32c] (returns whether crc32c is there);
// absent means zarr-python's default, the latter.
Result<bool> ParseIndexCodecs(const Json* list, const std::string& path) {
  if (list == nullptr) {
    return true;
  }
  if (!list->is_array() || list->empty()) {
    return Bad(StrCat(path, " must be a list of codecs starting with bytes"));
  }
  bool crc32c = false;
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string at = StrCat(path, "[", i, "]");
    PATCHFEED_ASSIGN_OR_RETURN(const Extension e,
                               ParseExtension((*list)[i], at, /*may_skip=*/true));
    if (i == 0 && e.name == "bytes") {
      PATCHFEED_ASSIGN_OR_RETURN(const bool big, ParseBigEndian(e, at, 8));
      if (big) {
        return Unsupported(StrCat(at, ": a big-endian shard index"));
      }
    } else if (i == 1 && e.name == "crc32c") {
      PATCHFEED_RETURN_IF_ERROR(CheckConfigKeys(e, at, {}));
      crc32c = true;
    } else {
      return Unsupported(StrCat(at, ": index codec ", Quoted(e.name),
                                " (patchfeed reads [bytes little] or [bytes little, crc32c])"));
    }
  }
  return crc32c;
}

Result<ZarrV3Sharding> ParseSharding(const Extension& e, const std::string& at,
                                     const ChainContext& ctx) {
  if (e.configuration == nullptr) {
    return Bad(StrCat(at, ".configuration is missing"));
  }
  PATCHFEED_RETURN_IF_ERROR(
      CheckConfigKeys(e, at, {"chunk_shape", "codecs", "index_codecs", "index_location"}));
  const std::string config = StrCat(at, ".configuration");
  ZarrV3Sharding s;
  PATCHFEED_ASSIGN_OR_RETURN(s.inner_chunks,
                             IntList(Config(e, "chunk_shape"), config + ".chunk_shape", 1));
  if (s.inner_chunks.size() != static_cast<size_t>(ctx.ndim)) {
    return Bad(StrCat(config, ".chunk_shape has ", s.inner_chunks.size(), " entries for ", ctx.ndim,
                      " dimensions"));
  }
  const std::vector<int64_t>& shard = *ctx.chunk_shape;
  for (size_t d = 0; d < shard.size(); ++d) {
    if (shard[d] % s.inner_chunks[d] != 0) {
      return Bad(StrCat(config, ".chunk_shape[", d, "] is ", s.inner_chunks[d],
                        ", which does not divide the shard's ", shard[d]));
    }
    s.chunks_per_shard.push_back(shard[d] / s.inner_chunks[d]);
  }
  // The inner chunk and the index are what a read allocates: both bounded here.
  if (!BoundedBytes(s.inner_chunks, ctx.itemsize, kMaxZarrChunkBytes)) {
    return ResourceExhaustedError(
        StrCat("zarr.json: inner chunks of more than ", kMaxZarrChunkBytes, " bytes"));
  }
  if (!BoundedBytes(s.chunks_per_shard, 16, kMaxZarrChunkBytes - 4)) {
    return ResourceExhaustedError(
        StrCat("zarr.json: a shard index of more than ", kMaxZarrChunkBytes, " bytes"));
  }
  if (const Json* codecs = Config(e, "codecs"); codecs != nullptr) {
    ChainContext inner = ctx;
    inner.chunk_shape = &s.inner_chunks;
    inner.outer = false;
    PATCHFEED_ASSIGN_OR_RETURN(Chain chain, ParseCodecChain(codecs, config + ".codecs", inner));
    s.inner = std::move(chain.codecs);
  }  // else zarr-python's default: [bytes], little-endian
  PATCHFEED_ASSIGN_OR_RETURN(s.index_crc32c,
                             ParseIndexCodecs(Config(e, "index_codecs"), config + ".index_codecs"));
  PATCHFEED_ASSIGN_OR_RETURN(const std::optional<std::string> location,
                             EnumOption(e, "index_location", at, {"start", "end"}));
  s.index_at_end = location != "start";
  return s;
}

// A chain: array -> array codecs (one transpose at most), one array -> bytes codec (bytes, or
// sharding_indexed in the array's chain), then bytes -> bytes codecs (none after sharding).
Result<Chain> ParseCodecChain(const Json* list, const std::string& path, const ChainContext& ctx) {
  if (list == nullptr || !list->is_array()) {
    return Bad(StrCat(path, " must be a list of codecs"));
  }
  Chain chain;
  bool transposed = false;
  bool array_to_bytes = false;
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string at = StrCat(path, "[", i, "]");
    PATCHFEED_ASSIGN_OR_RETURN(const Extension e,
                               ParseExtension((*list)[i], at, /*may_skip=*/true));
    const bool bytes_to_bytes =
        e.name == "blosc" || e.name == "zstd" || e.name == "gzip" || e.name == "crc32c";
    if (e.name == "transpose") {
      if (array_to_bytes) {
        return Bad(StrCat(at, " (transpose) follows the array -> bytes codec"));
      }
      if (transposed) {
        return Unsupported(StrCat(at, ": a second transpose codec"));
      }
      transposed = true;
      PATCHFEED_ASSIGN_OR_RETURN(chain.codecs.transpose_order,
                                 ParseTransposeOrder(e, at, ctx.ndim));
    } else if (e.name == "bytes" || e.name == "sharding_indexed") {
      if (array_to_bytes) {
        return Bad(StrCat(at, " (", e.name, ") is a second array -> bytes codec"));
      }
      array_to_bytes = true;
      if (e.name == "bytes") {
        PATCHFEED_ASSIGN_OR_RETURN(chain.codecs.big_endian, ParseBigEndian(e, at, ctx.itemsize));
        continue;
      }
      if (!ctx.outer) {
        return Unsupported(StrCat(at, ": sharding_indexed within sharding_indexed"));
      }
      // zarr-python writes a transpose before sharding_indexed, which transposes the whole
      // shard before it is cut into inner chunks, but checks the inner chunk shape against
      // the untransposed shard and misreads shards where the two differ: not supported
      // (zarr-python's own `filters=` put the transpose inside the shard).
      if (transposed) {
        return Unsupported(StrCat(path, ": a transpose before sharding_indexed"));
      }
      PATCHFEED_ASSIGN_OR_RETURN(chain.sharding, ParseSharding(e, at, ctx));
    } else if (bytes_to_bytes) {
      if (!array_to_bytes) {
        return Bad(StrCat(at, " (", e.name, ") precedes the array -> bytes codec"));
      }
      if (chain.sharding) {
        return Unsupported(StrCat(at, " (", e.name, ") after sharding_indexed"));
      }
      PATCHFEED_RETURN_IF_ERROR(CheckBytesCodecConfig(e, at));
      chain.codecs.bytes_codecs.push_back(e.name == "blosc"  ? ZarrV3BytesCodec::kBlosc
                                          : e.name == "zstd" ? ZarrV3BytesCodec::kZstd
                                          : e.name == "gzip" ? ZarrV3BytesCodec::kGzip
                                                             : ZarrV3BytesCodec::kCrc32c);
    } else if (e.must_understand) {
      return Unsupported(StrCat(at, ": codec ", Quoted(e.name),
                                " (patchfeed reads transpose, bytes, sharding_indexed, blosc, "
                                "zstd, gzip, crc32c)"));
    }  // else an unknown codec the writer marked as safe to ignore
  }
  if (!array_to_bytes) {
    return Bad(StrCat(path, " has no array -> bytes codec (bytes or sharding_indexed)"));
  }
  return chain;
}

Status ParseStorageTransformers(const Json* v) {
  if (v == nullptr || v->is_null()) {  // zarr-python reads null as none
    return Status::Ok();
  }
  if (!v->is_array()) {
    return Bad("storage_transformers must be a list");
  }
  for (size_t i = 0; i < v->size(); ++i) {
    const std::string at = StrCat("storage_transformers[", i, "]");
    PATCHFEED_ASSIGN_OR_RETURN(const Extension e, ParseExtension((*v)[i], at, /*may_skip=*/true));
    if (e.must_understand) {
      return Unsupported(StrCat(at, ": storage transformer ", Quoted(e.name)));
    }
  }
  return Status::Ok();
}

Status CheckOptionalFields(const Json& doc, int ndim) {
  if (const Json* attributes = Find(doc, "attributes");
      attributes != nullptr && !attributes->is_object()) {
    return Bad("attributes must be an object");
  }
  if (const Json* names = Find(doc, "dimension_names"); names != nullptr && !names->is_null()) {
    if (!names->is_array() || names->size() != static_cast<size_t>(ndim)) {
      return Bad(StrCat("dimension_names must be a list of ", ndim, " names"));
    }
    for (size_t i = 0; i < names->size(); ++i) {
      if (!(*names)[i].is_string() && !(*names)[i].is_null()) {
        return Bad(StrCat("dimension_names[", i, "] is ", Shown((*names)[i]),
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
      return Unsupported(StrCat("field ", Quoted(item.key()),
                                " (not in the spec and not marked \"must_understand\": false)"));
    }
  }
  return Status::Ok();
}

// The document as a JSON object with zarr_format 3 and a string node_type.
Result<Json> ParseDocument(std::string_view json) {
  Json doc = Json::parse(json, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return Bad("not valid JSON");
  }
  if (!doc.is_object()) {
    return Bad("not a JSON object");
  }
  const Json* format = Find(doc, "zarr_format");
  if (format == nullptr || AsInt64(*format) != std::optional<int64_t>(3)) {
    return Bad(StrCat("zarr_format is ", format ? Shown(*format) : "missing", ", not 3"));
  }
  const Json* node_type = Find(doc, "node_type");
  if (node_type == nullptr || !node_type->is_string() ||
      (node_type->get_ref<const std::string&>() != "array" &&
       node_type->get_ref<const std::string&>() != "group")) {
    return Bad(StrCat("node_type is ", node_type ? Shown(*node_type) : "missing",
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
  PATCHFEED_ASSIGN_OR_RETURN(meta.shape, IntList(Find(doc, "shape"), "shape", 0));
  PATCHFEED_ASSIGN_OR_RETURN(const DataType type, ParseDataType(Find(doc, "data_type")));
  meta.data_type = type.name;
  meta.numpy_dtype = type.numpy;
  meta.itemsize = type.itemsize;
  if (!BoundedBytes(meta.shape, meta.itemsize, std::numeric_limits<int64_t>::max())) {
    return Bad("shape spans more than 2^63 - 1 bytes");
  }
  PATCHFEED_ASSIGN_OR_RETURN(meta.chunks, ParseChunkGrid(Find(doc, "chunk_grid"), meta.ndim()));
  PATCHFEED_RETURN_IF_ERROR(ParseChunkKeyEncoding(Find(doc, "chunk_key_encoding"), meta));
  PATCHFEED_ASSIGN_OR_RETURN(meta.fill_value, FillValue(Find(doc, "fill_value"), type));
  const ChainContext ctx{meta.ndim(), meta.itemsize, &meta.chunks, /*outer=*/true};
  PATCHFEED_ASSIGN_OR_RETURN(Chain chain, ParseCodecChain(Find(doc, "codecs"), "codecs", ctx));
  meta.codecs = std::move(chain.codecs);
  meta.sharding = std::move(chain.sharding);
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
