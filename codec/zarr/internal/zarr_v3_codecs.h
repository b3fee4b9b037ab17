// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CODEC_ZARR_INTERNAL_ZARR_V3_CODECS_H_
#define PATCHFEED_CODEC_ZARR_INTERNAL_ZARR_V3_CODECS_H_

/// \file
/// The parts of `zarr.json` parsing that codec/zarr/zarr_v3_meta.cc shares with the codec chain:
/// extension points (a name, or an object with "name", "configuration" and "must_understand"),
/// their options, integer lists, and the codec chain itself (transpose, bytes,
/// sharding_indexed with its inner chain and index codecs, blosc/zstd/gzip/crc32c). Errors name
/// the field by its path in the document, as codec/zarr/zarr_v3_meta.h describes. The returned
/// pointers point into the caller's document. Stateless; safe to call concurrently.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codec/internal/metadata_json.h"
#include "common/result.h"

namespace patchfeed::codec {
// zarr_v3_meta.h: the chain is parsed into these (this header stays below it).
struct ZarrV3Codecs;
struct ZarrV3Sharding;
}  // namespace patchfeed::codec

namespace patchfeed::internal_codec {

/// kDataLoss "zarr.json: `what`": a malformed field.
Status ZarrV3DataLoss(std::string_view what);
/// kUnimplemented "zarr.json: `what`": a valid feature patchfeed does not read.
Status ZarrV3Unimplemented(std::string_view what);

/// `v` as a list of at most kMaxDims integers >= `min_value`; errors name `path`.
Result<std::vector<int64_t>> ZarrV3IntList(const Json* v, const std::string& path,
                                           int64_t min_value);

/// An extension point's value (data type, chunk grid, chunk key encoding, codec, storage
/// transformer): a short-hand name, or an object with "name" and optional "configuration" and
/// "must_understand" (other members are ignored, as zarr-python does).
struct ZarrV3Extension {
  std::string name;
  const Json* configuration = nullptr;  ///< an object, or nullptr when absent
  bool must_understand = true;
};

/// Parses the extension at `path`. `may_skip`: whether the extension point allows
/// "must_understand": false (the spec forbids it for data types, chunk grids and chunk key
/// encodings).
Result<ZarrV3Extension> ParseZarrV3Extension(const Json& v, const std::string& path, bool may_skip);

/// The configuration option `key`, or nullptr.
const Json* Config(const ZarrV3Extension& e, const char* key);

/// kUnimplemented for a configuration option outside `known`: a feature patchfeed does not know
/// (zarr-python refuses such documents too).
Status CheckConfigKeys(const ZarrV3Extension& e, const std::string& path,
                       std::initializer_list<std::string_view> known);

/// A string option: absent (nullopt), one of `allowed`, or kDataLoss naming it.
Result<std::optional<std::string>> EnumOption(const ZarrV3Extension& e, const char* key,
                                              const std::string& path,
                                              std::initializer_list<std::string_view> allowed);

/// The array's shape facts a codec chain is checked against.
struct ZarrV3ChainContext {
  int ndim = 0;
  int64_t itemsize = 0;
  const std::vector<int64_t>* chunk_shape = nullptr;  ///< what the chain encodes
  bool outer = true;  ///< the array's chain (sharding allowed), not a shard's inner chain
};

/// Parses the codec list at `path` into `*codecs`, and its sharding codec, when the chain has
/// one, into `*sharding`: array -> array codecs (one transpose at most), one array -> bytes
/// codec (bytes, or sharding_indexed in the array's chain), then bytes -> bytes codecs (none
/// after sharding). Inner chunks and shard indexes larger than codec::kMaxZarrChunkBytes are
/// kResourceExhausted.
Status ParseZarrV3CodecChain(const Json* list, const std::string& path,
                             const ZarrV3ChainContext& ctx, codec::ZarrV3Codecs* codecs,
                             std::optional<codec::ZarrV3Sharding>* sharding);

}  // namespace patchfeed::internal_codec

#endif  // PATCHFEED_CODEC_ZARR_INTERNAL_ZARR_V3_CODECS_H_
