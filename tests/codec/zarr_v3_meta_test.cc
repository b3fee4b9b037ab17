// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Zarr v3 `zarr.json` parsing: documents exactly as zarr-python 3.1.6 wrote them (one per
// codec, sharding with the index at either end, bool, float16, big-endian, special and hex
// fill values), every fill-value kind, chunk keys of every encoding, the extension-definition
// forms of the spec, and one damaged or unsupported field at a time with the error it must
// give.

#include "codec/zarr/zarr_v3_meta.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/testutil/status_matchers.h"

namespace patchfeed::codec {
namespace {

using ::testing::HasSubstr;

std::vector<std::byte> Bytes(std::initializer_list<int> v) {
  std::vector<std::byte> out;
  for (const int b : v) {
    out.push_back(static_cast<std::byte>(b));
  }
  return out;
}

// zarr.create_array(store, zarr_format=3, shape=(10, 20, 30), chunks=(4, 8, 16),
// dtype="uint16", compressors=BloscCodec(cname="lz4", clevel=5, shuffle="shuffle"),
// fill_value=7): the document zarr-python writes, whitespace and all.
constexpr char kBloscU2[] = R"({
  "shape": [
    10,
    20,
    30
  ],
  "data_type": "uint16",
  "chunk_grid": {
    "name": "regular",
    "configuration": {
      "chunk_shape": [
        4,
        8,
        16
      ]
    }
  },
  "chunk_key_encoding": {
    "name": "default",
    "configuration": {
      "separator": "/"
    }
  },
  "fill_value": 7,
  "codecs": [
    {
      "name": "bytes",
      "configuration": {
        "endian": "little"
      }
    },
    {
      "name": "blosc",
      "configuration": {
        "typesize": 2,
        "cname": "lz4",
        "clevel": 5,
        "shuffle": "shuffle",
        "blocksize": 0
      }
    }
  ],
  "attributes": {},
  "zarr_format": 3,
  "node_type": "array",
  "storage_transformers": []
})";

// zarr.create_array(store, zarr_format=3, shape=(30, 40, 50), chunks=(5, 10, 10),
// shards={"shape": (10, 20, 50), "index_location": "start"}, dtype="float32",
// filters=[TransposeCodec(order=(2, 1, 0))], serializer=BytesCodec(endian="big"),
// compressors=[GzipCodec(level=1)], fill_value=float("-inf")), through json.dumps.
constexpr char kSharded[] =
    R"({"shape": [30, 40, 50], "data_type": "float32", "chunk_grid": {"name": "regular", )"
    R"("configuration": {"chunk_shape": [10, 20, 50]}}, "chunk_key_encoding": {"name": )"
    R"("default", "configuration": {"separator": "/"}}, "fill_value": "-Infinity", "codecs": )"
    R"([{"name": "sharding_indexed", "configuration": {"chunk_shape": [5, 10, 10], "codecs": )"
    R"([{"name": "transpose", "configuration": {"order": [2, 1, 0]}}, {"name": "bytes", )"
    R"("configuration": {"endian": "big"}}, {"name": "gzip", "configuration": {"level": 1}}], )"
    R"("index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": )"
    R"("crc32c"}], "index_location": "start"}}], "attributes": {}, "zarr_format": 3, )"
    R"("node_type": "array", "storage_transformers": []})";

// The text of `doc` from `from` up to `to`.
std::string Between(const std::string& doc, const std::string& from, const std::string& to) {
  const size_t begin = doc.find(from);
  return doc.substr(begin, doc.find(to) - begin);
}

// Pieces of kBloscU2 that cases replace whole: the codec list (up to "attributes"), the data
// type, the fill value, the shape and the chunk shape.
const std::string kCodecs = Between(kBloscU2, "\"codecs\": [", "\"attributes\"");
const std::string kTypeFill = "\"data_type\": \"uint16\",";
const std::string kFill = "\"fill_value\": 7,";
const std::string kShape = "\"shape\": [\n    10,\n    20,\n    30\n  ],";
const std::string kChunkShape = "\"chunk_shape\": [\n        4,\n        8,\n        16\n      ]";

// A document with one piece of text replaced.
std::string With(const std::string& base, const std::string& field,
                 const std::string& replacement) {
  std::string doc = base;
  const size_t at = doc.find(field);
  EXPECT_NE(at, std::string::npos) << field;
  return at == std::string::npos ? doc : doc.replace(at, field.size(), replacement);
}
std::string With(const std::string& field, const std::string& replacement) {
  return With(kBloscU2, field, replacement);
}
// kBloscU2 with its codecs replaced by `codecs` (a JSON list).
std::string WithCodecs(const std::string& codecs) {
  return With(kCodecs, "\"codecs\": " + codecs + ",\n  ");
}
// kBloscU2 with another data type and fill value.
std::string WithFill(const std::string& data_type, const std::string& fill) {
  return With(With(kTypeFill, "\"data_type\": \"" + data_type + "\","), kFill,
              "\"fill_value\": " + fill + ",");
}

TEST(ZarrV3MetaTest, ParsesWhatZarrPythonWrites) {
  ASSERT_OK_AND_ASSIGN(const ZarrV3Meta m, ParseZarrV3Meta(kBloscU2));
  EXPECT_EQ(m.shape, (std::vector<int64_t>{10, 20, 30}));
  EXPECT_EQ(m.chunks, (std::vector<int64_t>{4, 8, 16}));
  EXPECT_EQ(m.ndim(), 3);
  EXPECT_EQ(m.data_type, "uint16");
  EXPECT_EQ(m.numpy_dtype, "<u2");
  EXPECT_EQ(m.itemsize, 2);
  EXPECT_EQ(m.fill_value, Bytes({7, 0}));
  EXPECT_EQ(m.chunk_key_separator, '/');
  EXPECT_FALSE(m.v2_chunk_keys);
  EXPECT_TRUE(m.codecs.transpose_order.empty());
  EXPECT_FALSE(m.codecs.big_endian);
  EXPECT_EQ(m.codecs.bytes_codecs, std::vector<ZarrV3BytesCodec>{ZarrV3BytesCodec::kBlosc});
  EXPECT_FALSE(m.sharding.has_value());
  EXPECT_EQ(m.inner_chunks(), m.chunks);
  EXPECT_EQ(m.inner_chunk_nbytes(), 4 * 8 * 16 * 2);

  ASSERT_OK_AND_ASSIGN(const ZarrV3Meta s, ParseZarrV3Meta(kSharded));
  EXPECT_EQ(s.chunks, (std::vector<int64_t>{10, 20, 50}));
  EXPECT_EQ(s.numpy_dtype, "<f4");
  EXPECT_EQ(s.fill_value, Bytes({0, 0, 0x80, 0xff}));  // -inf
  EXPECT_TRUE(s.codecs.bytes_codecs.empty());
  ASSERT_TRUE(s.sharding.has_value());
  EXPECT_EQ(s.sharding->inner_chunks, (std::vector<int64_t>{5, 10, 10}));
  EXPECT_EQ(s.sharding->chunks_per_shard, (std::vector<int64_t>{2, 2, 5}));
  EXPECT_EQ(s.sharding->num_inner_chunks(), 20);
  EXPECT_EQ(s.sharding->index_nbytes(), 20 * 16 + 4);
  EXPECT_FALSE(s.sharding->index_at_end);
  EXPECT_TRUE(s.sharding->index_crc32c);
  EXPECT_EQ(s.sharding->inner.transpose_order, (std::vector<int>{2, 1, 0}));
  EXPECT_TRUE(s.sharding->inner.big_endian);
  EXPECT_EQ(s.sharding->inner.bytes_codecs, std::vector<ZarrV3BytesCodec>{ZarrV3BytesCodec::kGzip});
  EXPECT_EQ(s.inner_chunks(), s.sharding->inner_chunks);
  EXPECT_EQ(s.inner_chunk_nbytes(), 5 * 10 * 10 * 4);
}

// What each seed of the fuzzer (tests/fuzz/zarr_v3_meta_corpus) must parse to. The seeds are
// the zarr.json files zarr-python 3.1.6 wrote for (all zarr.create_array(store,
// zarr_format=3, ...), codecs from zarr.codecs):
//   plain: shape=(10, 20, 30), chunks=(4, 8, 16), dtype="float32", compressors=None,
//     fill_value=0.5
//   blosc: as kBloscU2
//   zstd: shape=(100,), chunks=(7,), dtype="int16", compressors=ZstdCodec(level=3,
//     checksum=True), fill_value=-3
//   gzip: shape=(5, 5), chunks=(2, 2), dtype="float64", compressors=GzipCodec(level=5),
//     fill_value=float("nan")
//   crc32c: shape=(6, 7), chunks=(3, 3), dtype="int32", compressors=[ZstdCodec(level=1),
//     Crc32cCodec()], fill_value=0
//   transpose: shape=(8, 9, 10), chunks=(4, 3, 5), dtype="float32",
//     filters=[TransposeCodec(order=(2, 0, 1))], compressors=BloscCodec(cname="zstd",
//     clevel=3, shuffle="bitshuffle"), fill_value=float("inf")
//   sharded_end: shape=(64, 64), shards=(32, 32), chunks=(8, 16), dtype="uint8",
//     compressors=ZstdCodec(level=1), fill_value=0
//   sharded_start: as kSharded
//   bool: shape=(5, 5), chunks=(2, 2), dtype="bool", fill_value=True
//   float16: shape=(6,), chunks=(4,), dtype="float16", fill_value=-2.5
//   big_endian: shape=(3, 4), chunks=(2, 2), dtype="uint64",
//     serializer=BytesCodec(endian="big"), fill_value=2**64 - 1
//   zero_d: shape=(), chunks=(), dtype="int64", fill_value=-2**63
//   v2_keys: shape=(10, 10), chunks=(5, 5), dtype="int8",
//     chunk_key_encoding={"name": "v2", "separator": "."}, fill_value=-128
//   dot_sep: shape=(10, 10), chunks=(5, 5), dtype="uint32",
//     chunk_key_encoding={"name": "default", "separator": "."}, fill_value=2**32 - 1,
//     dimension_names=["y", "x"], attributes={"foo": [1, 2]}
//   hex_f32, hex_f64, hex_f16: shape=(4, 4), chunks=(2, 2), dtype float32/float64/float16,
//     compressors=None, fill_value=float("nan"), then fill_value edited to "0x7fc00001",
//     "0xfff0000000000000", "0x3c00" (zarr-python writes only "NaN"; zarr.open_array reads
//     the edited files as NaN with that payload, -inf and 1.0)
//   ome_0.5_s0: the full-resolution array ome-zarr 0.18.0's write_image(np.zeros((2, 16, 32,
//     32), np.uint16), group, axes="czyx", fmt=FormatV05(), scale_factors=[2]) wrote
struct Expected {
  std::string numpy_dtype;
  std::vector<std::byte> fill;
  std::vector<ZarrV3BytesCodec> bytes_codecs;  // the inner chain's when sharded
  bool big_endian = false;
  std::vector<int> transpose;
  int sharded = 0;  // 0: no, 1: index at the end, 2: index at the start
  std::string first_key;
};

TEST(ZarrV3MetaTest, ParsesEveryDocumentOfTheFuzzCorpus) {
  using C = ZarrV3BytesCodec;
  const std::map<std::string, Expected> expected = {
      {"plain", {"<f4", Bytes({0, 0, 0, 0x3f}), {}, false, {}, 0, "c/0/0/0"}},
      {"blosc", {"<u2", Bytes({7, 0}), {C::kBlosc}, false, {}, 0, "c/0/0/0"}},
      {"zstd", {"<i2", Bytes({0xfd, 0xff}), {C::kZstd}, false, {}, 0, "c/0"}},
      {"gzip", {"<f8", Bytes({0, 0, 0, 0, 0, 0, 0xf8, 0x7f}), {C::kGzip}, false, {}, 0, "c/0/0"}},
      {"crc32c", {"<i4", Bytes({0, 0, 0, 0}), {C::kZstd, C::kCrc32c}, false, {}, 0, "c/0/0"}},
      {"transpose",
       {"<f4", Bytes({0, 0, 0x80, 0x7f}), {C::kBlosc}, false, {2, 0, 1}, 0, "c/0/0/0"}},
      {"sharded_end", {"|u1", Bytes({0}), {C::kZstd}, false, {}, 1, "c/0/0"}},
      {"sharded_start",
       {"<f4", Bytes({0, 0, 0x80, 0xff}), {C::kGzip}, true, {2, 1, 0}, 2, "c/0/0/0"}},
      {"bool", {"|b1", Bytes({1}), {C::kZstd}, false, {}, 0, "c/0/0"}},
      {"float16", {"<f2", Bytes({0x00, 0xc1}), {C::kZstd}, false, {}, 0, "c/0"}},
      {"big_endian",
       {"<u8",
        Bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}),
        {C::kZstd},
        true,
        {},
        0,
        "c/0/0"}},
      {"zero_d", {"<i8", Bytes({0, 0, 0, 0, 0, 0, 0, 0x80}), {C::kZstd}, false, {}, 0, "c"}},
      {"v2_keys", {"|i1", Bytes({0x80}), {C::kZstd}, false, {}, 0, "0.0"}},
      {"dot_sep", {"<u4", Bytes({0xff, 0xff, 0xff, 0xff}), {C::kZstd}, false, {}, 0, "c.0.0"}},
      {"hex_f32", {"<f4", Bytes({0x01, 0, 0xc0, 0x7f}), {}, false, {}, 0, "c/0/0"}},
      {"hex_f64", {"<f8", Bytes({0, 0, 0, 0, 0, 0, 0xf0, 0xff}), {}, false, {}, 0, "c/0/0"}},
      {"hex_f16", {"<f2", Bytes({0x00, 0x3c}), {}, false, {}, 0, "c/0/0"}},
      {"ome_0.5_s0", {"<u2", Bytes({0, 0}), {C::kZstd}, false, {}, 0, "c/0/0/0/0"}},
  };
  int parsed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(PATCHFEED_SOURCE_TESTS_DIR) / "fuzz" / "zarr_v3_meta_corpus")) {
    std::ifstream in(entry.path());
    const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    SCOPED_TRACE(entry.path().string());
    ASSERT_OK_AND_ASSIGN(const ZarrV3Meta m, ParseZarrV3Meta(doc));
    ASSERT_OK_AND_ASSIGN(const std::string node, ZarrV3NodeType(doc));
    EXPECT_EQ(node, "array");
    const auto it = expected.find(entry.path().stem().string());
    ASSERT_NE(it, expected.end()) << "a seed without expectations";
    const Expected& e = it->second;
    EXPECT_EQ(m.numpy_dtype, e.numpy_dtype);
    EXPECT_EQ(m.fill_value, e.fill);
    const ZarrV3Codecs& chain = m.sharding ? m.sharding->inner : m.codecs;
    EXPECT_EQ(chain.bytes_codecs, e.bytes_codecs);
    EXPECT_EQ(chain.big_endian, e.big_endian);
    EXPECT_EQ(chain.transpose_order, e.transpose);
    EXPECT_EQ(m.sharding.has_value(), e.sharded != 0);
    if (m.sharding) {
      EXPECT_EQ(m.sharding->index_at_end, e.sharded == 1);
      EXPECT_TRUE(m.sharding->index_crc32c);
    }
    const std::vector<int64_t> first(m.shape.size(), 0);
    EXPECT_EQ(ZarrV3ChunkKey(m, first), e.first_key);
    ++parsed;
  }
  EXPECT_EQ(parsed, static_cast<int>(expected.size()));
}

TEST(ZarrV3MetaTest, FillValuesOfEveryKind) {
  const struct {
    std::string data_type, fill;
    std::vector<std::byte> bytes;
  } cases[] = {
      {"bool", "false", Bytes({0})},
      {"int8", "-128", Bytes({0x80})},
      {"int8", "127", Bytes({0x7f})},
      {"uint8", "255", Bytes({0xff})},
      {"int16", "-32768", Bytes({0x00, 0x80})},
      {"uint16", "65535", Bytes({0xff, 0xff})},
      {"int32", "-2", Bytes({0xfe, 0xff, 0xff, 0xff})},
      {"uint32", "4294967295", Bytes({0xff, 0xff, 0xff, 0xff})},
      {"int64", "9223372036854775807", Bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})},
      {"uint64", "0", Bytes({0, 0, 0, 0, 0, 0, 0, 0})},
      {"float32", "1", Bytes({0, 0, 0x80, 0x3f})},
      {"float32", "-0.0", Bytes({0, 0, 0, 0x80})},
      {"float32", "1e300", Bytes({0, 0, 0x80, 0x7f})},  // rounds to infinity
      {"float32", "-1e300", Bytes({0, 0, 0x80, 0xff})},
      {"float32", "3.4028235e38", Bytes({0xff, 0xff, 0x7f, 0x7f})},  // above the largest float
      {"float32", "\"NaN\"", Bytes({0, 0, 0xc0, 0x7f})},
      {"float32", "\"Infinity\"", Bytes({0, 0, 0x80, 0x7f})},
      {"float32", "\"0xFF800001\"", Bytes({0x01, 0, 0x80, 0xff})},  // bits, case-insensitive
      {"float32", "\"0x3c00\"", Bytes({0, 0, 0x80, 0x3f})},  // a float16's value, as zarr-python
      {"float64", "\"NaN\"", Bytes({0, 0, 0, 0, 0, 0, 0xf8, 0x7f})},
      {"float64", "\"-Infinity\"", Bytes({0, 0, 0, 0, 0, 0, 0xf0, 0xff})},
      {"float64", "\"0x3f800000\"", Bytes({0, 0, 0, 0, 0, 0, 0xf0, 0x3f})},  // float32 1.0
      {"float64", "0.1", Bytes({0x9a, 0x99, 0x99, 0x99, 0x99, 0x99, 0xb9, 0x3f})},
      {"float16", "\"NaN\"", Bytes({0x00, 0x7e})},
      {"float16", "\"-Infinity\"", Bytes({0x00, 0xfc})},
      {"float16", "65520", Bytes({0x00, 0x7c})},  // rounds to infinity
      {"float16", "\"0x0001\"", Bytes({0x01, 0x00})},
      {"float16", "\"0x4000000000000000\"", Bytes({0x00, 0x40})},  // a float64's 2.0
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.data_type + " " + c.fill);
    ASSERT_OK_AND_ASSIGN(const ZarrV3Meta m, ParseZarrV3Meta(WithFill(c.data_type, c.fill)));
    EXPECT_EQ(m.fill_value, c.bytes);
    EXPECT_EQ(static_cast<int64_t>(m.fill_value.size()), m.itemsize);
  }
}

TEST(ZarrV3MetaTest, ChunkKeysOfEveryEncoding) {
  ASSERT_OK_AND_ASSIGN(ZarrV3Meta m, ParseZarrV3Meta(kBloscU2));
  const int64_t index[3] = {2, 0, 11};
  EXPECT_EQ(ZarrV3ChunkKey(m, index), "c/2/0/11");
  EXPECT_EQ(ZarrV3ChunkKey(m, {}), "c");
  ASSERT_OK_AND_ASSIGN(m, ParseZarrV3Meta(With(R"("separator": "/")", R"("separator": ".")")));
  EXPECT_EQ(ZarrV3ChunkKey(m, index), "c.2.0.11");
  EXPECT_EQ(ZarrV3ChunkKey(m, {}), "c");
  // "v2": '.' unless configured, no "c" prefix, "0" for a 0-d array; short-hand names too.
  ASSERT_OK_AND_ASSIGN(m, ParseZarrV3Meta(With(R"("name": "default")", R"("name": "v2")")));
  EXPECT_TRUE(m.v2_chunk_keys);
  EXPECT_EQ(ZarrV3ChunkKey(m, index), "2/0/11");
  const std::string encoding =
      "\"chunk_key_encoding\": {\n    \"name\": \"default\",\n    \"configuration\": {\n      "
      "\"separator\": \"/\"\n    }\n  }";
  ASSERT_OK_AND_ASSIGN(m, ParseZarrV3Meta(With(encoding, R"("chunk_key_encoding": "v2")")));
  EXPECT_EQ(m.chunk_key_separator, '.');
  EXPECT_EQ(ZarrV3ChunkKey(m, index), "2.0.11");
  EXPECT_EQ(ZarrV3ChunkKey(m, {}), "0");
  ASSERT_OK_AND_ASSIGN(m, ParseZarrV3Meta(With(encoding, R"("chunk_key_encoding": "default")")));
  EXPECT_EQ(ZarrV3ChunkKey(m, index), "c/2/0/11");
  ASSERT_OK_AND_ASSIGN(
      m, ParseZarrV3Meta(With(encoding, R"("chunk_key_encoding": {"name": "default"})")));
  EXPECT_EQ(m.chunk_key_separator, '/');
}

// The spec's extension-definition forms (short-hand names, "must_understand": false) and
// zarr-python's defaults for what the spec requires but zarr-python fills in.
TEST(ZarrV3MetaTest, ExtensionFormsAndDefaults) {
  ASSERT_OK_AND_ASSIGN(ZarrV3Meta m,
                       ParseZarrV3Meta(WithCodecs(R"(["bytes", "crc32c", {"name": "zstd"}])")));
  EXPECT_EQ(m.codecs.bytes_codecs,
            (std::vector<ZarrV3BytesCodec>{ZarrV3BytesCodec::kCrc32c, ZarrV3BytesCodec::kZstd}));
  EXPECT_FALSE(m.codecs.big_endian);  // no endian: zarr-python's machine order, little
  // An unknown codec the writer marked as safe to ignore is left out; a known one so marked is
  // still read.
  ASSERT_OK_AND_ASSIGN(
      m, ParseZarrV3Meta(WithCodecs(R"([{"name": "bytes", "configuration": {"endian": "big"}},
          {"name": "x-stats", "must_understand": false, "configuration": {"n": 1}},
          {"name": "gzip", "must_understand": false}])")));
  EXPECT_TRUE(m.codecs.big_endian);
  EXPECT_EQ(m.codecs.bytes_codecs, std::vector<ZarrV3BytesCodec>{ZarrV3BytesCodec::kGzip});
  ASSERT_OK_AND_ASSIGN(m, ParseZarrV3Meta(With(kTypeFill, R"("data_type": {"name": "uint16"},)")));
  EXPECT_EQ(m.numpy_dtype, "<u2");
  // 1-byte types: the endian does not matter, and may be null.
  ASSERT_OK_AND_ASSIGN(
      m,
      ParseZarrV3Meta(With(WithCodecs(R"([{"name": "bytes", "configuration": {"endian": null}}])"),
                           kTypeFill, R"("data_type": "uint8",)")));
  EXPECT_FALSE(m.codecs.big_endian);
  ASSERT_OK_AND_ASSIGN(
      m,
      ParseZarrV3Meta(With(WithCodecs(R"([{"name": "bytes", "configuration": {"endian": "big"}}])"),
                           kTypeFill, R"("data_type": "int8",)")));
  EXPECT_FALSE(m.codecs.big_endian);
  // Extra top-level fields marked "must_understand": false, null or absent optional fields,
  // storage transformers that may be ignored.
  ASSERT_OK_AND_ASSIGN(m, ParseZarrV3Meta(With(R"("attributes": {},)",
                                               R"("x-extra": {"must_understand": false, "v": [1]},
                                 "dimension_names": null,
                                 "storage_transformers": [{"name": "x", "must_understand": false}],)")));
  ASSERT_OK(ParseZarrV3Meta(With(R"("attributes": {},)", "")));
  ASSERT_OK(
      ParseZarrV3Meta(With(R"("storage_transformers": [])", R"("storage_transformers": null)")));
  ASSERT_OK(ParseZarrV3Meta(With(R"(  "node_type": "array",
  "storage_transformers": [])",
                                 R"(  "node_type": "array")")));
  // Sharding without codecs, index_codecs or index_location: zarr-python's defaults.
  ASSERT_OK_AND_ASSIGN(
      m, ParseZarrV3Meta(WithCodecs(
             R"([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 4, 16]}}])")));
  ASSERT_TRUE(m.sharding.has_value());
  EXPECT_TRUE(m.sharding->index_at_end);
  EXPECT_TRUE(m.sharding->index_crc32c);
  EXPECT_TRUE(m.sharding->inner.bytes_codecs.empty());
  EXPECT_EQ(m.sharding->chunks_per_shard, (std::vector<int64_t>{2, 2, 1}));
  ASSERT_OK_AND_ASSIGN(
      m, ParseZarrV3Meta(WithCodecs(R"([{"name": "sharding_indexed", "configuration": {
          "chunk_shape": [4, 8, 16], "codecs": ["bytes"], "index_codecs": ["bytes"],
          "index_location": "end"}}])")));
  EXPECT_FALSE(m.sharding->index_crc32c);
  EXPECT_EQ(m.sharding->index_nbytes(), 16);
}

TEST(ZarrV3MetaTest, NodeType) {
  ASSERT_OK_AND_ASSIGN(const std::string array, ZarrV3NodeType(kBloscU2));
  EXPECT_EQ(array, "array");
  // zarr.create_group(store, zarr_format=3): its zarr.json.
  ASSERT_OK_AND_ASSIGN(
      const std::string group,
      ZarrV3NodeType(
          "{\n  \"attributes\": {},\n  \"zarr_format\": 3,\n  \"node_type\": \"group\"\n}"));
  EXPECT_EQ(group, "group");
  for (const char* bad :
       {"", "{", "[3]", R"({"zarr_format": 2, "node_type": "array"})", R"({"node_type": "array"})",
        R"({"zarr_format": 3})", R"({"zarr_format": 3, "node_type": "tree"})",
        R"({"zarr_format": 3, "node_type": 1})"}) {
    SCOPED_TRACE(bad);
    EXPECT_THAT(ZarrV3NodeType(bad), StatusIs(StatusCode::kDataLoss, HasSubstr("zarr.json: ")));
  }
  EXPECT_THAT(ParseZarrV3Meta(R"({"zarr_format": 3, "node_type": "group"})"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("a group, not an array")));
}

struct Damage {
  std::string doc;
  StatusCode code;
  std::string message;
};

std::string Sharded(const std::string& field, const std::string& replacement) {
  return With(kSharded, field, replacement);
}

TEST(ZarrV3MetaTest, EachDamagedOrUnsupportedFieldNamesItself) {
  constexpr StatusCode kLoss = StatusCode::kDataLoss;
  constexpr StatusCode kUnimpl = StatusCode::kUnimplemented;
  constexpr StatusCode kBig = StatusCode::kResourceExhausted;
  const std::string shard_codecs = R"("codecs": [{"name": "transpose")";
  const std::string index_codecs =
      R"("index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": )"
      R"("crc32c"}])";
  const std::vector<Damage> cases = {
      // The document, zarr_format, node_type, fields outside the spec.
      {"{\"shape\": [1", kLoss, "zarr.json: not valid JSON"},
      {"[3]", kLoss, "not a JSON object"},
      {With(R"("zarr_format": 3)", R"("zarr_format": 2)"), kLoss, "zarr_format is 2, not 3"},
      {With(R"("zarr_format": 3,)", ""), kLoss, "zarr_format is missing"},
      {With(R"("node_type": "array")", R"("node_type": "Array")"), kLoss, "node_type is \"Array\""},
      {With(R"("attributes": {},)", R"("x-extra": 1,)"), kUnimpl, "field 'x-extra'"},
      {With(R"("attributes": {},)", R"("x-extra": {"must_understand": true},)"), kUnimpl,
       "field 'x-extra'"},
      {With(R"("attributes": {},)", R"("x-extra": {"name": "x"},)"), kUnimpl, "field 'x-extra'"},
      // shape.
      {With(kShape, R"("shape": 5,)"), kLoss, "shape must be a list of integers"},
      {With("    10,\n", "    -10,\n"), kLoss, "shape[0] is -10 (an integer >= 0 expected)"},
      {With("    10,\n", "    10.0,\n"), kLoss, "shape[0] is 10.0"},
      {With("    10,\n", "    99999999999999999999,\n"), kLoss, "shape[0]"},
      {With("    10,\n", "    9223372036854775808,\n"), kLoss, "shape[0] is 9223372036854775808"},
      {With(kShape, R"("shape": [2097152, 2097152, 2097152],)"), kLoss,
       "shape spans more than 2^63 - 1 bytes"},
      {With(kShape, R"("shape": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],)"), kUnimpl,
       "shape has 17 dimensions"},
      // data_type.
      {With(kTypeFill, ""), kLoss, "data_type is missing"},
      {With(kTypeFill, R"("data_type": 2,)"), kLoss, "data_type must be a name or an object"},
      {With(kTypeFill, R"("data_type": {"name": 2},)"), kLoss, "data_type must be a name"},
      {With(kTypeFill, R"("data_type": {"name": "uint16", "configuration": 1},)"), kLoss,
       "data_type.configuration must be an object"},
      {With(kTypeFill, R"("data_type": {"name": "uint16", "must_understand": false},)"), kLoss,
       "data_type.must_understand is false"},
      {With(kTypeFill, R"("data_type": {"name": "uint16", "must_understand": 0},)"), kLoss,
       "data_type.must_understand must be true or false"},
      {With(kTypeFill, R"("data_type": {"name": "uint16", "configuration": {"endian": "big"}},)"),
       kUnimpl, "data_type 'uint16' with a configuration"},
      {WithFill("complex64", "[0, 0]"), kUnimpl, "data_type 'complex64'"},
      {WithFill("complex128", "[0, 0]"), kUnimpl, "data_type 'complex128'"},
      {WithFill("r16", "[0, 0]"), kUnimpl, "data_type 'r16'"},
      {WithFill("string", "\"\""), kUnimpl, "data_type 'string'"},
      {WithFill("numpy.datetime64", "0"), kUnimpl, "data_type 'numpy.datetime64'"},
      {WithFill("Float32", "0"), kUnimpl, "data_type 'Float32'"},
      // chunk_grid.
      {With(R"("name": "regular")", R"("name": "rectilinear")"), kUnimpl,
       "chunk_grid 'rectilinear'"},
      {With(kChunkShape, "\"chunk_shape\": [4, 8, 0]"), kLoss,
       "zarr.json: chunk_grid.configuration.chunk_shape[2] is 0"},
      {With(kChunkShape, "\"chunk_shape\": [4, 8]"), kLoss,
       "chunk_grid.configuration.chunk_shape has 2 entries for 3 dimensions"},
      {With(kChunkShape, "\"chunk_shape\": {}"), kLoss,
       "chunk_grid.configuration.chunk_shape must be a list"},
      {With(kChunkShape, "\"chunk_shape\": [4, 8, 16], \"x\": 1"), kUnimpl,
       "chunk_grid.configuration.'x'"},
      {With(kChunkShape, "\"chunk_shape\": [40000000, 8, 16]"), kBig, "chunks of more than"},
      {With(Between(kBloscU2, "\"chunk_grid\"", "\"chunk_key_encoding\""), ""), kLoss,
       "chunk_grid is missing"},
      // chunk_key_encoding.
      {With(Between(kBloscU2, "\"chunk_key_encoding\"", "\"fill_value\""), ""), kLoss,
       "chunk_key_encoding is missing"},
      {With(R"("name": "default")", R"("name": "v3")"), kUnimpl, "chunk_key_encoding 'v3'"},
      {With(R"("separator": "/")", R"("separator": "-")"), kLoss,
       "chunk_key_encoding.configuration.separator is \"-\""},
      {With(R"("separator": "/")", R"("separator": "/", "x": 1)"), kUnimpl,
       "chunk_key_encoding.configuration.'x'"},
      // fill_value.
      {With(kFill, ""), kLoss, "fill_value is missing"},
      {With(kFill, R"("fill_value": null,)"), kLoss, "fill_value null is not a value of"},
      {WithFill("uint16", "65536"), kLoss, "fill_value 65536 is not a value of data_type uint16"},
      {WithFill("uint16", "-1"), kLoss, "fill_value -1"},
      {WithFill("uint64", "-1"), kLoss, "fill_value -1"},
      {WithFill("int8", "128"), kLoss, "fill_value 128"},
      {WithFill("int8", "-129"), kLoss, "fill_value -129"},
      {WithFill("int64", "9223372036854775808"), kLoss, "fill_value 9223372036854775808"},
      {WithFill("int16", "1.0"), kLoss, "fill_value 1.0"},
      {WithFill("int16", "\"1\""), kLoss, "fill_value \"1\""},
      {WithFill("int16", "true"), kLoss, "fill_value true"},
      {WithFill("bool", "1"), kLoss, "fill_value 1 is not a value of data_type bool"},
      {WithFill("float32", "\"nan\""), kLoss, "fill_value \"nan\""},
      {WithFill("float32", "\"1.5\""), kLoss, "fill_value \"1.5\""},
      {WithFill("float32", "\"0x7fc0000\""), kLoss, "fill_value \"0x7fc0000\""},
      {WithFill("float32", "\"0x7fc0000g\""), kLoss, "fill_value"},
      {WithFill("float32", "\"0x\""), kLoss, "fill_value"},
      {WithFill("float32", "\"0x7fc00000000000000\""), kLoss, "fill_value"},
      {WithFill("float32", "[0]"), kLoss, "fill_value a list is not a value"},
      // append, not operator+: GCC 12's -Wrestrict misfires on "..." + std::string at -O3.
      {WithFill("float32", std::string("\"").append(100, '9').append("\"")), kLoss,
       std::string("fill_value \"").append(63, '9').append("... is not a value")},
      {WithFill("float32", "{}"), kLoss, "fill_value an object"},
      {WithFill("float32", std::string(70, '[') + std::string(70, ']')), kLoss,
       "fill_value a list"},
      // The codec chain.
      {With(kCodecs, ""), kLoss, "codecs must be a list of codecs"},
      {WithCodecs("[]"), kLoss, "codecs has no array -> bytes codec"},
      {WithCodecs("[7]"), kLoss, "codecs[0] must be a name or an object"},
      {WithCodecs(R"([{"configuration": {}}])"), kLoss, "codecs[0] must be a name"},
      {WithCodecs(R"(["gzip", "bytes"])"), kLoss, "codecs[0] (gzip) precedes the array -> bytes"},
      {WithCodecs(R"(["bytes", {"name": "transpose", "configuration": {"order": [0, 1, 2]}}])"),
       kLoss, "codecs[1] (transpose) follows the array -> bytes codec"},
      {WithCodecs(R"(["bytes", "bytes"])"), kLoss, "codecs[1] (bytes) is a second array -> bytes"},
      {WithCodecs(R"([{"name": "transpose", "configuration": {"order": [0, 1, 2]}},
                      {"name": "transpose", "configuration": {"order": [0, 1, 2]}}, "bytes"])"),
       kUnimpl, "codecs[1]: a second transpose codec"},
      {WithCodecs(R"([{"name": "transpose", "configuration": {"order": [0, 0, 1]}}, "bytes"])"),
       kLoss, "codecs[0].configuration.order holds 0 (a permutation of the axes 0 to 2"},
      {WithCodecs(R"([{"name": "transpose", "configuration": {"order": [0, 1, 3]}}, "bytes"])"),
       kLoss, "codecs[0].configuration.order holds 3"},
      {WithCodecs(R"([{"name": "transpose", "configuration": {"order": [1, 0]}}, "bytes"])"), kLoss,
       "codecs[0].configuration.order must list the 3 axes"},
      {WithCodecs(R"([{"name": "transpose", "configuration": {"order": "C"}}, "bytes"])"), kLoss,
       "codecs[0].configuration.order must list"},
      {WithCodecs(R"(["transpose", "bytes"])"), kLoss, "codecs[0].configuration.order must list"},
      {WithCodecs(R"([{"name": "transpose", "configuration": {"order": [0, 1, 2], "x": 1}},
                      "bytes"])"),
       kUnimpl, "codecs[0].configuration.'x' (transpose has no such option)"},
      {WithCodecs(R"(["vlen-utf8"])"), kUnimpl, "codecs[0]: codec 'vlen-utf8'"},
      {WithCodecs(R"(["bytes", {"name": "numcodecs.lz4", "configuration": {}}])"), kUnimpl,
       "codecs[1]: codec 'numcodecs.lz4'"},
      {WithCodecs(R"(["bytes", {"name": "lz4", "must_understand": true}])"), kUnimpl,
       "codecs[1]: codec 'lz4'"},
      {WithCodecs(R"([{"name": "bytes", "configuration": {"endian": "middle"}}])"), kLoss,
       R"(codecs[0].configuration.endian is "middle" ("little", "big" expected))"},
      {WithCodecs(R"([{"name": "bytes", "configuration": {"endian": null}}])"), kLoss,
       "codecs[0].configuration.endian is null for a 2-byte type"},
      {WithCodecs(R"([{"name": "bytes", "configuration": {"order": "C"}}])"), kUnimpl,
       "codecs[0].configuration.'order' (bytes has no such option)"},
      // bytes -> bytes codecs' configurations.
      {With(R"("cname": "lz4")", R"("cname": "snappy")"), kUnimpl, "cname \"snappy\""},
      {With(R"("cname": "lz4")", R"("cname": "lz5")"), kLoss,
       "codecs[1].configuration.cname is \"lz5\""},
      {With(R"("clevel": 5)", R"("clevel": 10)"), kLoss,
       "codecs[1].configuration.clevel is 10 (an integer from 0 to 9 expected)"},
      {With(R"("shuffle": "shuffle")", R"("shuffle": 1)"), kLoss,
       "codecs[1].configuration.shuffle is 1"},
      {With(R"("typesize": 2)", R"("typesize": 0)"), kLoss, "codecs[1].configuration.typesize"},
      {With(R"("blocksize": 0)", R"("blocksize": -1)"), kLoss, "codecs[1].configuration.blocksize"},
      {With(R"("blocksize": 0)", R"("blocksize": 0, "nthreads": 2)"), kUnimpl,
       "codecs[1].configuration.'nthreads' (blosc has no such option)"},
      {WithCodecs(R"(["bytes", {"name": "zstd", "configuration": {"level": 23}}])"), kLoss,
       "codecs[1].configuration.level is 23"},
      {WithCodecs(R"(["bytes", {"name": "zstd", "configuration": {"level": -131073}}])"), kLoss,
       "codecs[1].configuration.level is -131073"},
      {WithCodecs(R"(["bytes", {"name": "zstd", "configuration": {"checksum": 1}}])"), kLoss,
       "codecs[1].configuration.checksum must be true or false"},
      {WithCodecs(R"(["bytes", {"name": "zstd", "configuration": {"dict": "a"}}])"), kUnimpl,
       "codecs[1].configuration.'dict' (zstd has no such option)"},
      {WithCodecs(R"(["bytes", {"name": "gzip", "configuration": {"level": 10}}])"), kLoss,
       "codecs[1].configuration.level is 10"},
      {WithCodecs(R"(["bytes", {"name": "gzip", "configuration": {"level": 1, "x": 1}}])"), kUnimpl,
       "(gzip has no such option)"},
      {WithCodecs(R"(["bytes", {"name": "crc32c", "configuration": {"x": 1}}])"), kUnimpl,
       "codecs[1].configuration.'x' (crc32c has no such option)"},
      {WithCodecs(R"(["bytes", {"name": "gzip", "configuration": []}])"), kLoss,
       "codecs[1].configuration must be an object"},
      // Sharding.
      {Sharded(shard_codecs, R"("codecs": [{"name": "sharding_indexed", "configuration": )"
                             R"({"chunk_shape": [5, 10, 10]}}, {"name": "transpose")"),
       kUnimpl, "sharding_indexed within sharding_indexed"},
      {Sharded(R"("codecs": [{"name": "sharding_indexed")",
               R"("codecs": [{"name": "transpose", "configuration": {"order": [0, 1, 2]}}, )"
               R"({"name": "sharding_indexed")"),
       kUnimpl, "codecs: a transpose before sharding_indexed"},
      {Sharded(R"("index_location": "start"}})", R"("index_location": "start"}}, "crc32c")"),
       kUnimpl, "codecs[1] (crc32c) after sharding_indexed"},
      {Sharded(R"("chunk_shape": [5, 10, 10])", R"("chunk_shape": [5, 10])"), kLoss,
       "codecs[0].configuration.chunk_shape has 2 entries for 3 dimensions"},
      {Sharded(R"("chunk_shape": [5, 10, 10])", R"("chunk_shape": [5, 10, 7])"), kLoss,
       "codecs[0].configuration.chunk_shape[2] is 7, which does not divide the shard's 50"},
      {Sharded(R"("chunk_shape": [5, 10, 10])", R"("chunk_shape": [5, 0, 10])"), kLoss,
       "codecs[0].configuration.chunk_shape[1] is 0"},
      {WithCodecs(R"(["sharding_indexed"])"), kLoss, "codecs[0].configuration is missing"},
      {Sharded(R"("index_location": "start")", R"("index_location": "start", "x": 1)"), kUnimpl,
       "codecs[0].configuration.'x' (sharding_indexed has no such option)"},
      {Sharded(R"("index_location": "start")", R"("index_location": "middle")"), kLoss,
       R"(codecs[0].configuration.index_location is "middle" ("start", "end" expected))"},
      {Sharded(index_codecs,
               R"("index_codecs": [{"name": "bytes", "configuration": {"endian": "big"}}])"),
       kUnimpl, "codecs[0].configuration.index_codecs[0]: a big-endian shard index"},
      {Sharded(index_codecs, R"("index_codecs": ["bytes", "gzip"])"), kUnimpl,
       "codecs[0].configuration.index_codecs[1]: index codec 'gzip'"},
      {Sharded(index_codecs, R"("index_codecs": ["crc32c", "bytes"])"), kUnimpl,
       "index_codecs[0]: index codec 'crc32c'"},
      {Sharded(index_codecs, R"("index_codecs": ["bytes", "crc32c", "crc32c"])"), kUnimpl,
       "index_codecs[2]: index codec 'crc32c'"},
      {Sharded(index_codecs, R"("index_codecs": [])"), kLoss,
       "codecs[0].configuration.index_codecs must be a list of codecs starting with bytes"},
      {Sharded(index_codecs, R"("index_codecs": [7])"), kLoss,
       "codecs[0].configuration.index_codecs[0] must be a name"},
      {Sharded(R"("codecs": [{"name": "transpose", "configuration": {"order": [2, 1, 0]}}, )"
               R"({"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip", )"
               R"("configuration": {"level": 1}}])",
               R"("codecs": ["gzip"])"),
       kLoss, "codecs[0].configuration.codecs[0] (gzip) precedes the array -> bytes codec"},
      {Sharded(R"({"name": "gzip", "configuration": {"level": 1}})",
               R"({"name": "gzip", "configuration": {"level": -1}})"),
       kLoss, "codecs[0].configuration.codecs[2].configuration.level is -1"},
      {With(Sharded(R"("chunk_shape": [10, 20, 50])", R"("chunk_shape": [1000, 1000, 1000])"),
            R"("chunk_shape": [5, 10, 10])", R"("chunk_shape": [1000, 1000, 1000])"),
       kBig, "zarr.json: inner chunks of more than"},
      // Optional fields.
      {With(R"("attributes": {},)", R"("attributes": [],)"), kLoss, "attributes must be an object"},
      {With(R"("attributes": {},)", R"("dimension_names": ["x"],)"), kLoss,
       "dimension_names must be a list of 3 names"},
      {With(R"("attributes": {},)", R"("dimension_names": ["x", 1, null],)"), kLoss,
       "dimension_names[1] is 1 (a string or null expected)"},
      {With(R"("storage_transformers": [])", R"("storage_transformers": {})"), kLoss,
       "storage_transformers must be a list"},
      {With(R"("storage_transformers": [])", R"("storage_transformers": [3])"), kLoss,
       "storage_transformers[0] must be a name"},
      {With(R"("storage_transformers": [])", R"("storage_transformers": ["sharding"])"), kUnimpl,
       "storage_transformers[0]: storage transformer 'sharding'"},
  };
  for (const Damage& d : cases) {
    SCOPED_TRACE(d.doc);
    EXPECT_THAT(ParseZarrV3Meta(d.doc), StatusIs(d.code, HasSubstr(d.message)));
  }
  // An index of 2^27 entries of 16 bytes is refused before anything could allocate it.
  EXPECT_THAT(ParseZarrV3Meta(With(WithCodecs(R"([{"name": "sharding_indexed", "configuration": {
                                       "chunk_shape": [1, 1, 1], "codecs": ["bytes"]}}])"),
                                   kChunkShape, R"("chunk_shape": [1024, 1024, 128])")),
              StatusIs(StatusCode::kResourceExhausted, HasSubstr("a shard index of more than")));
}

// Values 100000 lists deep are shown by kind in errors and parsed without recursion: errors,
// not stack overflows (codec/internal/metadata_json.h).
TEST(ZarrV3MetaTest, DeeplyNestedValuesAreErrorsNotCrashes) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_THAT(ParseZarrV3Meta(WithFill("float32", deep)),
              StatusIs(StatusCode::kDataLoss, HasSubstr("fill_value a list is not a value")));
  EXPECT_THAT(ParseZarrV3Meta(WithCodecs("[" + deep + "]")),
              StatusIs(StatusCode::kDataLoss, HasSubstr("codecs[0] must be a name or an object")));
  EXPECT_THAT(ParseZarrV3Meta(With(kShape, "\"shape\": [" + deep + "],")),
              StatusIs(StatusCode::kDataLoss, HasSubstr("shape[0] is a list")));
  EXPECT_THAT(ParseZarrV3Meta(With(kFill, kFill + " \"deep\": " + deep + ",")),
              StatusIs(StatusCode::kUnimplemented, HasSubstr("field 'deep'")));
  EXPECT_THAT(ZarrV3NodeType(R"({"zarr_format": 3, "node_type": )" + deep + "}"),
              StatusIs(StatusCode::kDataLoss, HasSubstr("node_type is a list")));
}

}  // namespace
}  // namespace patchfeed::codec
