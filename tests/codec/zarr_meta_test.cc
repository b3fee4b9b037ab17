// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Zarr v2 `.zarray` parsing: documents exactly as zarr-python 3.1.6 wrote them (one per
// compressor, fill-value kind and separator), chunk keys, and one damaged or unsupported field
// at a time with the error it must give.

#include "codec/zarr/zarr_meta.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
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

// zarr.create_array(..., zarr_format=2, compressors=numcodecs.Blosc("lz4", 5, 1),
// fill_value=0.5): the document zarr-python writes, whitespace and all.
constexpr char kBloscF4[] = R"({
  "shape": [
    10,
    20,
    30
  ],
  "chunks": [
    4,
    8,
    16
  ],
  "dtype": "<f4",
  "fill_value": 0.5,
  "order": "C",
  "filters": null,
  "dimension_separator": ".",
  "compressor": {
    "id": "blosc",
    "cname": "lz4",
    "clevel": 5,
    "shuffle": 1,
    "blocksize": 0
  },
  "zarr_format": 2
})";

// The dtype and fill-value lines of kBloscF4, replaced together by the dtype cases.
const std::string kDtypeFill = "\"dtype\": \"<f4\",\n  \"fill_value\": 0.5";

// A document with one field replaced (the field's whole "key": value text).
std::string With(const std::string& field, const std::string& replacement) {
  std::string doc = kBloscF4;
  const size_t at = doc.find(field);
  EXPECT_NE(at, std::string::npos) << field;
  return doc.replace(at, field.size(), replacement);
}

TEST(ZarrV2MetaTest, ParsesWhatZarrPythonWrites) {
  ASSERT_OK_AND_ASSIGN(const ZarrV2Meta m, ParseZarrV2Meta(kBloscF4));
  EXPECT_EQ(m.shape, (std::vector<int64_t>{10, 20, 30}));
  EXPECT_EQ(m.chunks, (std::vector<int64_t>{4, 8, 16}));
  EXPECT_EQ(m.dtype, "<f4");
  EXPECT_EQ(m.itemsize, 4);
  EXPECT_EQ(m.dimension_separator, '.');
  EXPECT_EQ(m.compressor, ZarrCompressor::kBlosc);
  EXPECT_EQ(m.chunk_nbytes(), 4 * 8 * 16 * 4);
  EXPECT_EQ(m.fill_value, Bytes({0x00, 0x00, 0x00, 0x3f}));  // 0.5f

  // numcodecs.Zstd(3), '/' separator, a negative big-endian int16 fill value.
  ASSERT_OK_AND_ASSIGN(const ZarrV2Meta b, ParseZarrV2Meta(R"({"shape": [100], "chunks": [7],
      "dtype": ">i2", "fill_value": -3, "order": "C", "filters": null,
      "dimension_separator": "/", "compressor": {"id": "zstd", "level": 3}, "zarr_format": 2})"));
  EXPECT_EQ(b.compressor, ZarrCompressor::kZstd);
  EXPECT_EQ(b.dimension_separator, '/');
  EXPECT_EQ(b.fill_value, Bytes({0xff, 0xfd}));

  // No compressor, NaN fill.
  ASSERT_OK_AND_ASSIGN(const ZarrV2Meta c, ParseZarrV2Meta(R"({"shape": [5, 5], "chunks": [2, 2],
      "dtype": "<f8", "fill_value": "NaN", "order": "C", "filters": null,
      "dimension_separator": ".", "compressor": null, "zarr_format": 2})"));
  EXPECT_EQ(c.compressor, ZarrCompressor::kNone);
  EXPECT_EQ(c.fill_value, Bytes({0, 0, 0, 0, 0, 0, 0xf8, 0x7f}));

  // Bool with gzip; 0-d with numcodecs' LZ4; float16 -Infinity with zlib.
  ASSERT_OK_AND_ASSIGN(const ZarrV2Meta d, ParseZarrV2Meta(R"({"shape": [5, 5], "chunks": [2, 2],
      "dtype": "|b1", "fill_value": true, "order": "C", "filters": null,
      "dimension_separator": ".", "compressor": {"id": "gzip", "level": 5}, "zarr_format": 2})"));
  EXPECT_EQ(d.compressor, ZarrCompressor::kGzip);
  EXPECT_EQ(d.fill_value, Bytes({1}));
  ASSERT_OK_AND_ASSIGN(const ZarrV2Meta e, ParseZarrV2Meta(R"({"shape": [], "chunks": [],
      "dtype": "<u8", "fill_value": 0, "order": "C", "filters": null,
      "dimension_separator": ".", "compressor": {"id": "lz4", "acceleration": 1},
      "zarr_format": 2})"));
  EXPECT_EQ(e.ndim(), 0);
  EXPECT_EQ(e.compressor, ZarrCompressor::kLz4);
  EXPECT_EQ(e.chunk_nbytes(), 8);
  ASSERT_OK_AND_ASSIGN(const ZarrV2Meta f, ParseZarrV2Meta(R"({"shape": [6], "chunks": [4],
      "dtype": "<f2", "fill_value": "-Infinity", "order": "C", "filters": null,
      "dimension_separator": ".", "compressor": {"id": "zlib", "level": 1}, "zarr_format": 2})"));
  EXPECT_EQ(f.compressor, ZarrCompressor::kZlib);
  EXPECT_EQ(f.fill_value, Bytes({0x00, 0xfc}));
}

// The fuzzer's seeds are documents zarr-python 3.1.6 wrote (complex and null fills, every
// compressor, both separators, 0 to 4 axes): each parses.
TEST(ZarrV2MetaTest, ParsesEveryDocumentOfTheFuzzCorpus) {
  int parsed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(PATCHFEED_SOURCE_TESTS_DIR) / "fuzz" / "zarr_meta_corpus")) {
    std::ifstream in(entry.path());
    const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    SCOPED_TRACE(entry.path().string());
    ASSERT_OK_AND_ASSIGN(const ZarrV2Meta m, ParseZarrV2Meta(doc));
    EXPECT_EQ(m.chunks.size(), m.shape.size());
    ++parsed;
  }
  EXPECT_GE(parsed, 8);
}

TEST(ZarrV2MetaTest, OlderDocumentsAndOtherFillValues) {
  // zarr-python 2 left out the separator (meaning "."); null fill; complex and uint64 fills.
  ASSERT_OK_AND_ASSIGN(const ZarrV2Meta a,
                       ParseZarrV2Meta(With(R"("dimension_separator": ".",)", "")));
  EXPECT_EQ(a.dimension_separator, '.');
  ASSERT_OK_AND_ASSIGN(const ZarrV2Meta b,
                       ParseZarrV2Meta(With(R"("fill_value": 0.5)", R"("fill_value": null)")));
  EXPECT_FALSE(b.fill_value.has_value());
  ASSERT_OK_AND_ASSIGN(
      const ZarrV2Meta c,
      ParseZarrV2Meta(With(kDtypeFill, R"("dtype": ">c8", "fill_value": [1.0, "-Infinity"])")));
  EXPECT_EQ(c.fill_value, Bytes({0x3f, 0x80, 0, 0, 0xff, 0x80, 0, 0}));
  ASSERT_OK_AND_ASSIGN(
      const ZarrV2Meta d,
      ParseZarrV2Meta(With(kDtypeFill, R"("dtype": "<u8", "fill_value": 18446744073709551615)")));
  EXPECT_EQ(d.fill_value, Bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
}

TEST(ZarrV2MetaTest, ChunkKeys) {
  ASSERT_OK_AND_ASSIGN(ZarrV2Meta m, ParseZarrV2Meta(kBloscF4));
  const int64_t index[3] = {2, 0, 11};
  EXPECT_EQ(ZarrV2ChunkKey(m, index), "2.0.11");
  m.dimension_separator = '/';
  EXPECT_EQ(ZarrV2ChunkKey(m, index), "2/0/11");
  EXPECT_EQ(ZarrV2ChunkKey(m, {}), "0");
}

struct Damage {
  std::string field, replacement;
  StatusCode code;
  std::string message;
};

TEST(ZarrV2MetaTest, EachDamagedOrUnsupportedFieldNamesItself) {
  const std::vector<Damage> cases = {
      {R"("zarr_format": 2)", R"("zarr_format": 3)", StatusCode::kDataLoss, "zarr_format"},
      {R"("zarr_format": 2)", R"("zarr_format": "2")", StatusCode::kDataLoss, "zarr_format"},
      {"    10,\n", "    -10,\n", StatusCode::kDataLoss, "'shape' holds -10"},
      {"    10,\n", "    10.5,\n", StatusCode::kDataLoss, "'shape' holds 10.5"},
      {"    10,\n", "    99999999999999999999,\n", StatusCode::kDataLoss, "'shape'"},
      // 2^62 x 20 x 30 float32 items: each extent fits int64, the byte size does not.
      {"    10,\n", "    4611686018427387904,\n", StatusCode::kDataLoss,
       "shape spans more than 2^63 - 1 bytes"},
      {"    4,\n", "    0,\n", StatusCode::kDataLoss, "'chunks' holds 0"},
      {"    4,\n", "", StatusCode::kDataLoss, "'chunks' has 2 entries for 3"},
      {"    4,\n", "    40000000,\n", StatusCode::kResourceExhausted, "chunks of more than"},
      {R"("dtype": "<f4")", R"("dtype": "<U4")", StatusCode::kUnimplemented, "'<U4'"},
      {R"("dtype": "<f4")", R"("dtype": "|O")", StatusCode::kUnimplemented, "'|O'"},
      {R"("dtype": "<f4")", R"("dtype": [["a", "<f4"]])", StatusCode::kUnimplemented, "structured"},
      {R"("dtype": "<f4")", R"("dtype": "<f3")", StatusCode::kDataLoss, "'<f3'"},
      {R"("dtype": "<f4")", R"("dtype": "f4")", StatusCode::kDataLoss, "'f4'"},
      {R"("dtype": "<f4")", R"("dtype": 4)", StatusCode::kDataLoss, "'dtype'"},
      {R"("order": "C")", R"("order": "F")", StatusCode::kUnimplemented, "order \"F\""},
      {R"("order": "C")", R"("order": "X")", StatusCode::kDataLoss, "'order'"},
      {R"("filters": null)", R"("filters": [{"id": "delta", "dtype": "<f4"}])",
       StatusCode::kUnimplemented, "delta"},
      {R"("filters": null)", R"("filters": 3)", StatusCode::kDataLoss, "'filters'"},
      {R"("dimension_separator": ".")", R"("dimension_separator": "-")", StatusCode::kDataLoss,
       "dimension_separator"},
      {R"("id": "blosc")", R"("id": "bz2")", StatusCode::kUnimplemented, "compressor 'bz2'"},
      {R"("id": "blosc")", R"("id": 7)", StatusCode::kDataLoss, "'compressor'"},
      {R"("fill_value": 0.5)", R"("fill_value": "nan")", StatusCode::kDataLoss, "fill_value"},
      {R"("fill_value": 0.5,)", "", StatusCode::kDataLoss, "'fill_value' is missing"},
      {kDtypeFill, R"("dtype": "|u1", "fill_value": 256)", StatusCode::kDataLoss, "fill_value 256"},
      {kDtypeFill, R"("dtype": "<u2", "fill_value": -1)", StatusCode::kDataLoss, "fill_value -1"},
      {kDtypeFill, R"("dtype": "<i2", "fill_value": 1.5)", StatusCode::kDataLoss, "fill_value 1.5"},
      {kDtypeFill, R"("dtype": "|b1", "fill_value": 2)", StatusCode::kDataLoss, "fill_value 2"},
      {kDtypeFill, R"("dtype": "<c8", "fill_value": [1])", StatusCode::kDataLoss, "fill_value [1]"},
  };
  for (const Damage& d : cases) {
    SCOPED_TRACE(d.replacement);
    EXPECT_THAT(ParseZarrV2Meta(With(d.field, d.replacement)),
                StatusIs(d.code, HasSubstr(d.message)));
  }
  EXPECT_THAT(ParseZarrV2Meta("{\"shape\": [1"),
              StatusIs(StatusCode::kDataLoss, HasSubstr("not valid JSON")));
  EXPECT_THAT(ParseZarrV2Meta("[2]"), StatusIs(StatusCode::kDataLoss, HasSubstr("object")));
  EXPECT_THAT(ParseZarrV2Meta(""), StatusIs(StatusCode::kDataLoss, HasSubstr("not valid JSON")));
  std::string many = R"({"zarr_format": 2, "shape": [)";
  for (int d = 0; d < 17; ++d) {
    many += d ? ", 1" : "1";
  }
  EXPECT_THAT(ParseZarrV2Meta(many + "]}"),
              StatusIs(StatusCode::kUnimplemented, HasSubstr("17 dimensions")));
}

// A value nested `depth` lists deep around `inner`.
std::string Nested(int depth, const std::string& inner) {
  return std::string(static_cast<size_t>(depth), '[') + inner +
         std::string(static_cast<size_t>(depth), ']');
}

// Error messages show untrusted values without dumping them (dump() recurses once per level),
// and nlohmann/json parses and frees such documents with heap stacks of its own: a hostile
// document 100000 levels deep is an error, not a stack overflow.
TEST(ZarrV2MetaTest, DeeplyNestedValuesAreErrorsNotCrashes) {
  constexpr int kDepth = 100000;
  const std::string deep = Nested(kDepth, "1");
  EXPECT_THAT(ParseZarrV2Meta(With(R"("filters": null)", R"("filters": )" + deep)),
              StatusIs(StatusCode::kUnimplemented, HasSubstr("filters a list")));
  EXPECT_THAT(
      ParseZarrV2Meta(With(R"("filters": null)", R"("filters": [{"id": "delta"}, )" + deep + "]")),
      StatusIs(StatusCode::kUnimplemented, HasSubstr("filters 'delta', a list")));
  EXPECT_THAT(ParseZarrV2Meta(With("    10,\n", deep + ",\n")),
              StatusIs(StatusCode::kDataLoss, HasSubstr("'shape' holds a list")));
  EXPECT_THAT(ParseZarrV2Meta(With(R"("zarr_format": 2)", R"("zarr_format": )" + deep)),
              StatusIs(StatusCode::kDataLoss, HasSubstr("'zarr_format' is a list, not 2")));
  EXPECT_THAT(ParseZarrV2Meta(With(kDtypeFill, R"("dtype": "<c8", "fill_value": )" + deep)),
              StatusIs(StatusCode::kDataLoss, HasSubstr("fill_value a list is not a value")));
  EXPECT_OK(ParseZarrV2Meta(With(R"("order": "C")", R"("order": "C", "extra": )" + deep)));
  // Unbalanced: the parser gives up without recursing either.
  EXPECT_THAT(
      ParseZarrV2Meta(With(R"("filters": null)", R"("filters": )" + std::string(kDepth, '['))),
      StatusIs(StatusCode::kDataLoss, HasSubstr("not valid JSON")));
}

}  // namespace
}  // namespace patchfeed::codec
