// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "codec/zarr/internal/zarr_v3_codecs.h"

#include <algorithm>
#include <limits>

#include "codec/nd_geometry.h"
#include "codec/zarr/zarr_v3_meta.h"
#include "common/str_cat.h"

namespace patchfeed::internal_codec {

using codec::kMaxDims;
using codec::kMaxZarrChunkBytes;
using codec::ZarrV3BytesCodec;
using codec::ZarrV3Sharding;

Status ZarrV3DataLoss(std::string_view what) { return DataLossError(StrCat("zarr.json: ", what)); }

Status ZarrV3Unimplemented(std::string_view what) {
  return UnimplementedError(StrCat("zarr.json: ", what));
}

Result<std::vector<int64_t>> ZarrV3IntList(const Json* v, const std::string& path,
                                           int64_t min_value) {
  if (v == nullptr || !v->is_array()) {
    return ZarrV3DataLoss(StrCat(path, " must be a list of integers"));
  }
  if (v->size() > static_cast<size_t>(kMaxDims)) {
    return ZarrV3Unimplemented(
        StrCat(path, " has ", v->size(), " dimensions (patchfeed reads at most ", kMaxDims, ")"));
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const std::optional<int64_t> n = AsInt64((*v)[i]);
    if (!n || *n < min_value) {
      return ZarrV3DataLoss(StrCat(path, "[", i, "] is ", Shown((*v)[i]),
                                   " (an integer >= ", min_value, " expected)"));
    }
    out.push_back(*n);
  }
  return out;
}

Result<ZarrV3Extension> ParseZarrV3Extension(const Json& v, const std::string& path,
                                             bool may_skip) {
  ZarrV3Extension e;
  if (v.is_string()) {
    e.name = v.get<std::string>();
    return e;
  }
  const Json* name = v.is_object() ? Find(v, "name") : nullptr;
  if (name == nullptr || !name->is_string()) {
    return ZarrV3DataLoss(StrCat(path, " must be a name or an object with a string 'name'"));
  }
  e.name = name->get<std::string>();
  if (const Json* c = Find(v, "configuration"); c != nullptr) {
    if (!c->is_object()) {
      return ZarrV3DataLoss(StrCat(path, ".configuration must be an object"));
    }
    e.configuration = c;
  }
  if (const Json* m = Find(v, "must_understand"); m != nullptr) {
    if (!m->is_boolean()) {
      return ZarrV3DataLoss(StrCat(path, ".must_understand must be true or false"));
    }
    e.must_understand = m->get<bool>();
    if (!e.must_understand && !may_skip) {
      return ZarrV3DataLoss(
          StrCat(path, ".must_understand is false, which the spec does not allow here"));
    }
  }
  return e;
}

const Json* Config(const ZarrV3Extension& e, const char* key) {
  return e.configuration == nullptr ? nullptr : Find(*e.configuration, key);
}

Status CheckConfigKeys(const ZarrV3Extension& e, const std::string& path,
                       std::initializer_list<std::string_view> known) {
  if (e.configuration == nullptr) {
    return Status::Ok();
  }
  for (const auto& item : e.configuration->items()) {
    if (std::find(known.begin(), known.end(), item.key()) == known.end()) {
      return ZarrV3Unimplemented(StrCat(path, ".configuration.", Quoted(item.key()), " (", e.name,
                                        " has no such option)"));
    }
  }
  return Status::Ok();
}

Result<std::optional<std::string>> EnumOption(const ZarrV3Extension& e, const char* key,
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
  return ZarrV3DataLoss(
      StrCat(path, ".configuration.", key, " is ", Shown(*v), " (", options, " expected)"));
}

namespace {

// An integer option: absent, or within [lo, hi], or kDataLoss naming it.
Status IntOption(const ZarrV3Extension& e, const char* key, const std::string& path, int64_t lo,
                 int64_t hi) {
  const Json* v = Config(e, key);
  if (v == nullptr) {
    return Status::Ok();
  }
  const std::optional<int64_t> n = AsInt64(*v);
  if (!n || *n < lo || *n > hi) {
    return ZarrV3DataLoss(StrCat(path, ".configuration.", key, " is ", Shown(*v),
                                 " (an integer from ", lo, " to ", hi, " expected)"));
  }
  return Status::Ok();
}

Result<std::vector<int>> ParseTransposeOrder(const ZarrV3Extension& e, const std::string& at,
                                             int ndim) {
  PATCHFEED_RETURN_IF_ERROR(CheckConfigKeys(e, at, {"order"}));
  const Json* order = Config(e, "order");
  if (order == nullptr || !order->is_array() || order->size() != static_cast<size_t>(ndim)) {
    return ZarrV3DataLoss(StrCat(at, ".configuration.order must list the ", ndim, " axes"));
  }
  std::vector<int> out;
  std::vector<bool> seen(static_cast<size_t>(ndim));
  for (const Json& axis : *order) {
    const std::optional<int64_t> n = AsInt64(axis);
    if (!n || *n < 0 || *n >= ndim || seen[static_cast<size_t>(*n)]) {
      return ZarrV3DataLoss(StrCat(at, ".configuration.order holds ", Shown(axis),
                                   " (a permutation of the axes 0 to ", ndim - 1, " expected)"));
    }
    seen[static_cast<size_t>(*n)] = true;
    out.push_back(static_cast<int>(*n));
  }
  return out;
}

// The "bytes" codec's endian: absent (zarr-python: the machine's order, little-endian here),
// "little" or "big"; null only for 1-byte types, which have no byte order.
Result<bool> ParseBigEndian(const ZarrV3Extension& e, const std::string& at, int64_t itemsize) {
  PATCHFEED_RETURN_IF_ERROR(CheckConfigKeys(e, at, {"endian"}));
  if (const Json* endian = Config(e, "endian"); endian != nullptr && endian->is_null()) {
    if (itemsize > 1) {
      return ZarrV3DataLoss(
          StrCat(at, ".configuration.endian is null for a ", itemsize, "-byte type"));
    }
    return false;
  }
  PATCHFEED_ASSIGN_OR_RETURN(const std::optional<std::string> endian,
                             EnumOption(e, "endian", at, {"little", "big"}));
  return endian == "big" && itemsize > 1;
}

Status CheckBytesCodecConfig(const ZarrV3Extension& e, const std::string& at) {
  if (e.name == "blosc") {
    PATCHFEED_RETURN_IF_ERROR(
        CheckConfigKeys(e, at, {"cname", "clevel", "shuffle", "typesize", "blocksize"}));
    PATCHFEED_ASSIGN_OR_RETURN(
        const std::optional<std::string> cname,
        EnumOption(e, "cname", at, {"lz4", "lz4hc", "blosclz", "zstd", "zlib", "snappy"}));
    if (cname == "snappy") {
      return ZarrV3Unimplemented(StrCat(at,
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
      return ZarrV3DataLoss(StrCat(at, ".configuration.checksum must be true or false"));
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
    return ZarrV3DataLoss(StrCat(path, " must be a list of codecs starting with bytes"));
  }
  bool crc32c = false;
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string at = StrCat(path, "[", i, "]");
    PATCHFEED_ASSIGN_OR_RETURN(const ZarrV3Extension e,
                               ParseZarrV3Extension((*list)[i], at, /*may_skip=*/true));
    if (i == 0 && e.name == "bytes") {
      PATCHFEED_ASSIGN_OR_RETURN(const bool big, ParseBigEndian(e, at, 8));
      if (big) {
        return ZarrV3Unimplemented(StrCat(at, ": a big-endian shard index"));
      }
    } else if (i == 1 && e.name == "crc32c") {
      PATCHFEED_RETURN_IF_ERROR(CheckConfigKeys(e, at, {}));
      crc32c = true;
    } else {
      return ZarrV3Unimplemented(
          StrCat(at, ": index codec ", Quoted(e.name),
                 " (patchfeed reads [bytes little] or [bytes little, crc32c])"));
    }
  }
  return crc32c;
}

Result<ZarrV3Sharding> ParseSharding(const ZarrV3Extension& e, const std::string& at,
                                     const ZarrV3ChainContext& ctx) {
  if (e.configuration == nullptr) {
    return ZarrV3DataLoss(StrCat(at, ".configuration is missing"));
  }
  PATCHFEED_RETURN_IF_ERROR(
      CheckConfigKeys(e, at, {"chunk_shape", "codecs", "index_codecs", "index_location"}));
  const std::string config = StrCat(at, ".configuration");
  ZarrV3Sharding s;
  PATCHFEED_ASSIGN_OR_RETURN(s.inner_chunks,
                             ZarrV3IntList(Config(e, "chunk_shape"), config + ".chunk_shape", 1));
  if (s.inner_chunks.size() != static_cast<size_t>(ctx.ndim)) {
    return ZarrV3DataLoss(StrCat(config, ".chunk_shape has ", s.inner_chunks.size(),
                                 " entries for ", ctx.ndim, " dimensions"));
  }
  const std::vector<int64_t>& shard = *ctx.chunk_shape;
  for (size_t d = 0; d < shard.size(); ++d) {
    if (shard[d] % s.inner_chunks[d] != 0) {
      return ZarrV3DataLoss(StrCat(config, ".chunk_shape[", d, "] is ", s.inner_chunks[d],
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
    ZarrV3ChainContext inner = ctx;
    inner.chunk_shape = &s.inner_chunks;
    inner.outer = false;
    std::optional<ZarrV3Sharding> nested;  // refused: `inner` is not the outer chain
    PATCHFEED_RETURN_IF_ERROR(
        ParseZarrV3CodecChain(codecs, config + ".codecs", inner, &s.inner, &nested));
  }  // else zarr-python's default: [bytes], little-endian
  PATCHFEED_ASSIGN_OR_RETURN(s.index_crc32c,
                             ParseIndexCodecs(Config(e, "index_codecs"), config + ".index_codecs"));
  PATCHFEED_ASSIGN_OR_RETURN(const std::optional<std::string> location,
                             EnumOption(e, "index_location", at, {"start", "end"}));
  s.index_at_end = location != "start";
  return s;
}

}  // namespace

Status ParseZarrV3CodecChain(const Json* list, const std::string& path,
                             const ZarrV3ChainContext& ctx, codec::ZarrV3Codecs* codecs,
                             std::optional<codec::ZarrV3Sharding>* sharding) {
  if (list == nullptr || !list->is_array()) {
    return ZarrV3DataLoss(StrCat(path, " must be a list of codecs"));
  }
  struct {
    codec::ZarrV3Codecs codecs;
    std::optional<ZarrV3Sharding> sharding;
  } chain;
  bool transposed = false;
  bool array_to_bytes = false;
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string at = StrCat(path, "[", i, "]");
    PATCHFEED_ASSIGN_OR_RETURN(const ZarrV3Extension e,
                               ParseZarrV3Extension((*list)[i], at, /*may_skip=*/true));
    const bool bytes_to_bytes =
        e.name == "blosc" || e.name == "zstd" || e.name == "gzip" || e.name == "crc32c";
    if (e.name == "transpose") {
      if (array_to_bytes) {
        return ZarrV3DataLoss(StrCat(at, " (transpose) follows the array -> bytes codec"));
      }
      if (transposed) {
        return ZarrV3Unimplemented(StrCat(at, ": a second transpose codec"));
      }
      transposed = true;
      PATCHFEED_ASSIGN_OR_RETURN(chain.codecs.transpose_order,
                                 ParseTransposeOrder(e, at, ctx.ndim));
    } else if (e.name == "bytes" || e.name == "sharding_indexed") {
      if (array_to_bytes) {
        return ZarrV3DataLoss(StrCat(at, " (", e.name, ") is a second array -> bytes codec"));
      }
      array_to_bytes = true;
      if (e.name == "bytes") {
        PATCHFEED_ASSIGN_OR_RETURN(chain.codecs.big_endian, ParseBigEndian(e, at, ctx.itemsize));
        continue;
      }
      if (!ctx.outer) {
        return ZarrV3Unimplemented(StrCat(at, ": sharding_indexed within sharding_indexed"));
      }
      // zarr-python writes a transpose before sharding_indexed, which transposes the whole
      // shard before it is cut into inner chunks, but checks the inner chunk shape against
      // the untransposed shard and misreads shards where the two differ: not supported
      // (zarr-python's own `filters=` put the transpose inside the shard).
      if (transposed) {
        return ZarrV3Unimplemented(StrCat(path, ": a transpose before sharding_indexed"));
      }
      PATCHFEED_ASSIGN_OR_RETURN(chain.sharding, ParseSharding(e, at, ctx));
    } else if (bytes_to_bytes) {
      if (!array_to_bytes) {
        return ZarrV3DataLoss(StrCat(at, " (", e.name, ") precedes the array -> bytes codec"));
      }
      if (chain.sharding) {
        return ZarrV3Unimplemented(StrCat(at, " (", e.name, ") after sharding_indexed"));
      }
      PATCHFEED_RETURN_IF_ERROR(CheckBytesCodecConfig(e, at));
      chain.codecs.bytes_codecs.push_back(e.name == "blosc"  ? ZarrV3BytesCodec::kBlosc
                                          : e.name == "zstd" ? ZarrV3BytesCodec::kZstd
                                          : e.name == "gzip" ? ZarrV3BytesCodec::kGzip
                                                             : ZarrV3BytesCodec::kCrc32c);
    } else if (e.must_understand) {
      return ZarrV3Unimplemented(
          StrCat(at, ": codec ", Quoted(e.name),
                 " (patchfeed reads transpose, bytes, sharding_indexed, blosc, "
                 "zstd, gzip, crc32c)"));
    }  // else an unknown codec the writer marked as safe to ignore
  }
  if (!array_to_bytes) {
    return ZarrV3DataLoss(StrCat(path, " has no array -> bytes codec (bytes or sharding_indexed)"));
  }
  *codecs = std::move(chain.codecs);
  *sharding = std::move(chain.sharding);
  return Status::Ok();
}

}  // namespace patchfeed::internal_codec
