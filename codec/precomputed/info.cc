// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/precomputed/info.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

#include "codec/internal/metadata_json.h"
#include "common/str_cat.h"

namespace patchfeed::codec::precomputed {
namespace {

using internal_codec::AsFloat;
using internal_codec::AsInt64;
using internal_codec::Find;
using internal_codec::Json;
using internal_codec::Quoted;
using internal_codec::Shown;

Status Bad(std::string_view what) { return DataLossError(StrCat("info: ", what)); }

struct DataType {
  const char* name;
  const char* dtype;
  int64_t itemsize;
};
constexpr DataType kDataTypes[] = {
    {"uint8", "|u1", 1},   {"int8", "|i1", 1},    {"uint16", "<u2", 2}, {"int16", "<i2", 2},
    {"uint32", "<u4", 4},  {"int32", "<i4", 4},   {"uint64", "<u8", 8}, {"int64", "<i8", 8},
    {"float32", "<f4", 4}, {"float64", "<f8", 8},
};

// A list of three integers at `key` of `object`, each at least `min`; `where` names it.
Result<Vec3> Triple(const Json& object, const char* key, int64_t min, const std::string& where) {
  const Json* v = Find(object, key);
  if (v == nullptr)
    return Bad(StrCat(where, ": '", key, "' is missing"));
  if (!v->is_array() || v->size() != 3)
    return Bad(StrCat(where, ": '", key, "' must be a list of 3 integers, not ", Shown(*v)));
  Vec3 out{};
  for (size_t i = 0; i < 3; ++i) {
    const std::optional<int64_t> x = AsInt64((*v)[i]);
    if (!x || *x < min || *x > (int64_t{1} << 52)) {
      return Bad(StrCat(where, ": '", key, "'[", i, "] is ", Shown((*v)[i]),
                        ", not an integer in [", min, ", 2^52]"));
    }
    out[i] = *x;
  }
  return out;
}

Result<Sharding> ParseSharding(const Json& s, const std::string& where) {
  const std::string at = where + ": sharding";
  if (!s.is_object())
    return Bad(StrCat(at, " must be an object, not ", Shown(s)));
  const Json* type = Find(s, "@type");
  if (type == nullptr || !type->is_string() ||
      type->get_ref<const std::string&>() != "neuroglancer_uint64_sharded_v1") {
    return UnimplementedError(StrCat("info: ", at, ": '@type' ", type ? Shown(*type) : "missing",
                                     " (patchfeed reads neuroglancer_uint64_sharded_v1)"));
  }
  Sharding out;
  const auto bits = [&](const char* key, int max, int* field) -> Status {
    const Json* v = Find(s, key);
    const std::optional<int64_t> x = v ? AsInt64(*v) : std::nullopt;
    if (!x || *x < 0 || *x > max)
      return Bad(
          StrCat(at, ": '", key, "' is ", v ? Shown(*v) : "missing", ", not in [0, ", max, "]"));
    *field = static_cast<int>(*x);
    return Status::Ok();
  };
  PATCHFEED_RETURN_IF_ERROR(bits("preshift_bits", 64, &out.preshift_bits));
  PATCHFEED_RETURN_IF_ERROR(bits("minishard_bits", 32, &out.minishard_bits));
  PATCHFEED_RETURN_IF_ERROR(bits("shard_bits", 64, &out.shard_bits));
  if (out.minishard_bits + out.shard_bits > 64)
    return Bad(StrCat(at, ": minishard_bits + shard_bits exceed 64"));
  const Json* hash = Find(s, "hash");
  if (hash == nullptr || !hash->is_string() ||
      (hash->get_ref<const std::string&>() != "identity" &&
       hash->get_ref<const std::string&>() != "murmurhash3_x86_128")) {
    return Bad(StrCat(at, ": 'hash' is ", hash ? Shown(*hash) : "missing",
                      ", not \"identity\" or \"murmurhash3_x86_128\""));
  }
  out.murmurhash = hash->get_ref<const std::string&>() == "murmurhash3_x86_128";
  const auto encoding = [&](const char* key, bool* gzip) -> Status {
    const Json* v = Find(s, key);
    if (v == nullptr) {
      *gzip = false;  // "raw" when absent
      return Status::Ok();
    }
    if (!v->is_string() ||
        (v->get_ref<const std::string&>() != "raw" && v->get_ref<const std::string&>() != "gzip")) {
      return Bad(StrCat(at, ": '", key, "' is ", Shown(*v), ", not \"raw\" or \"gzip\""));
    }
    *gzip = v->get_ref<const std::string&>() == "gzip";
    return Status::Ok();
  };
  PATCHFEED_RETURN_IF_ERROR(encoding("minishard_index_encoding", &out.minishard_index_gzip));
  PATCHFEED_RETURN_IF_ERROR(encoding("data_encoding", &out.data_gzip));
  return out;
}

Result<Scale> ParseScale(const Json& s, size_t index, const Info& info) {
  const std::string where = StrCat("scale ", index);
  if (!s.is_object())
    return Bad(StrCat(where, " must be an object, not ", Shown(s)));
  Scale out;
  const Json* key = Find(s, "key");
  if (key == nullptr || !key->is_string() || key->get_ref<const std::string&>().empty())
    return Bad(StrCat(where, ": 'key' must be a non-empty string"));
  out.key = key->get<std::string>();
  // A key names a folder under the layer: never one above it or at another root.
  if (out.key.find("..") != std::string::npos || out.key.front() == '/')
    return Bad(StrCat(where, ": 'key' ", Quoted(out.key), " leaves the layer's folder"));
  PATCHFEED_ASSIGN_OR_RETURN(out.size, Triple(s, "size", 1, where));
  if (Find(s, "voxel_offset") != nullptr) {
    PATCHFEED_ASSIGN_OR_RETURN(out.voxel_offset,
                               Triple(s, "voxel_offset", -(int64_t{1} << 52), where));
  }
  const Json* chunk_sizes = Find(s, "chunk_sizes");
  if (chunk_sizes == nullptr || !chunk_sizes->is_array() || chunk_sizes->empty())
    return Bad(StrCat(where, ": 'chunk_sizes' must be a non-empty list"));
  Json first = Json::object();
  first["chunk_size"] = (*chunk_sizes)[0];
  PATCHFEED_ASSIGN_OR_RETURN(out.chunk_size, Triple(first, "chunk_size", 1, where));
  int64_t chunk_bytes = info.itemsize * info.num_channels;
  for (const int64_t c : out.chunk_size) {
    if (__builtin_mul_overflow(chunk_bytes, c, &chunk_bytes) || chunk_bytes > kMaxChunkBytes) {
      return ResourceExhaustedError(
          StrCat("info: ", where, ": chunks of more than ", kMaxChunkBytes, " bytes"));
    }
  }
  int64_t voxels = info.num_channels;
  int64_t volume_bytes = 0;
  for (const int64_t n : out.size) {
    if (__builtin_mul_overflow(voxels, n, &voxels) ||
        __builtin_mul_overflow(voxels, info.itemsize, &volume_bytes)) {
      return Bad(StrCat(where, ": 'size' spans more than 2^63 bytes"));
    }
  }
  const Json* resolution = Find(s, "resolution");
  if (resolution == nullptr || !resolution->is_array() || resolution->size() != 3)
    return Bad(StrCat(where, ": 'resolution' must be a list of 3 numbers"));
  for (size_t i = 0; i < 3; ++i) {
    const std::optional<double> r = AsFloat((*resolution)[i]);
    if (!r || !std::isfinite(*r) || *r <= 0)
      return Bad(StrCat(where, ": 'resolution'[", i, "] is ", Shown((*resolution)[i]),
                        ", not a positive number"));
    out.resolution[i] = *r;
  }
  const Json* encoding = Find(s, "encoding");
  if (encoding == nullptr || !encoding->is_string())
    return Bad(StrCat(where, ": 'encoding' must be a string"));
  out.encoding = encoding->get<std::string>();
  if (out.encoding == "raw") {
    out.kind = Encoding::kRaw;
  } else if (out.encoding == "compressed_segmentation") {
    out.kind = Encoding::kCompressedSegmentation;
    PATCHFEED_ASSIGN_OR_RETURN(out.segmentation_block,
                               Triple(s, "compressed_segmentation_block_size", 1, where));
  } else if (out.encoding == "jpeg") {
    out.kind = Encoding::kJpeg;
  } else if (out.encoding == "png") {
    out.kind = Encoding::kPng;
  } else {
    out.kind = Encoding::kOther;  // refused when read, naming it
  }
  if (const Json* sharding = Find(s, "sharding"); sharding != nullptr && !sharding->is_null()) {
    PATCHFEED_ASSIGN_OR_RETURN(Sharding sh, ParseSharding(*sharding, where));
    out.sharding = sh;
  }
  return out;
}

}  // namespace

Result<Info> ParseInfo(std::string_view json) {
  PATCHFEED_ASSIGN_OR_RETURN(const Json doc, internal_codec::ParseJsonObject(json, "info"));
  Info info;
  const Json* data_type = Find(doc, "data_type");
  if (data_type == nullptr || !data_type->is_string())
    return Bad("'data_type' must be a string");
  info.data_type = data_type->get<std::string>();
  for (const DataType& t : kDataTypes) {
    if (info.data_type == t.name) {
      info.dtype = t.dtype;
      info.itemsize = t.itemsize;
    }
  }
  if (info.itemsize == 0) {
    return UnimplementedError(StrCat("info: data_type ", Quoted(info.data_type),
                                     " (patchfeed reads (u)int8-64, float32 and float64)"));
  }
  const Json* channels = Find(doc, "num_channels");
  const std::optional<int64_t> c = channels ? AsInt64(*channels) : std::nullopt;
  if (!c || *c < 1 || *c > kMaxChannels)
    return Bad(StrCat("'num_channels' is ", channels ? Shown(*channels) : "missing",
                      ", not an integer in [1, ", kMaxChannels, "]"));
  info.num_channels = *c;
  if (const Json* type = Find(doc, "type"); type != nullptr && type->is_string())
    info.type = type->get<std::string>();
  const Json* scales = Find(doc, "scales");
  if (scales == nullptr || !scales->is_array() || scales->empty())
    return Bad("'scales' must be a non-empty list");
  for (size_t i = 0; i < scales->size(); ++i) {
    PATCHFEED_ASSIGN_OR_RETURN(Scale scale, ParseScale((*scales)[i], i, info));
    info.scales.push_back(std::move(scale));
  }
  return info;
}

Result<int> FindScale(const Info& info, std::string_view selector) {
  for (size_t i = 0; i < info.scales.size(); ++i) {
    if (info.scales[i].key == selector)
      return static_cast<int>(i);
  }
  // A resolution: three numbers separated by commas.
  std::array<double, 3> want{};
  size_t parsed = 0;
  std::string_view rest = selector;
  while (parsed < 3 && !rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string part(rest.substr(0, comma));
    char* end = nullptr;
    want[parsed] = std::strtod(part.c_str(), &end);
    if (part.empty() || end != part.c_str() + part.size())
      break;
    ++parsed;
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  if (parsed == 3 && rest.empty()) {
    for (size_t i = 0; i < info.scales.size(); ++i) {
      bool same = true;
      for (size_t d = 0; d < 3; ++d)
        same &= std::abs(info.scales[i].resolution[d] - want[d]) <= 1e-3 * std::abs(want[d]);
      if (same)
        return static_cast<int>(i);
    }
  }
  std::string keys;
  for (const Scale& s : info.scales)
    keys += (keys.empty() ? "" : ", ") + Quoted(s.key);
  return NotFoundError(
      StrCat("no scale with key or resolution ", Quoted(selector), " (the scales: ", keys, ")"));
}

ChunkBounds ChunkBoundsAt(const Scale& scale, const Vec3& index) {
  ChunkBounds b;
  for (size_t d = 0; d < 3; ++d) {
    b.lo[d] = scale.voxel_offset[d] + index[d] * scale.chunk_size[d];
    b.hi[d] = std::min(b.lo[d] + scale.chunk_size[d], scale.voxel_offset[d] + scale.size[d]);
  }
  return b;
}

std::string ChunkName(const ChunkBounds& b) {
  return StrCat(b.lo[0], "-", b.hi[0], "_", b.lo[1], "-", b.hi[1], "_", b.lo[2], "-", b.hi[2]);
}

}  // namespace patchfeed::codec::precomputed
