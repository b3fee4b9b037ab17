// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// OME-Zarr multiscale paths: the group documents ome-zarr-py writes for OME-NGFF 0.4 and 0.5,
// documents written by hand after the specifications' examples, groups without multiscales,
// and each malformed field or unsafe path with the error it must give.

#include "codec/zarr/ome_zarr.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/testutil/status_matchers.h"

namespace patchfeed::codec {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ome-zarr 0.18.0: write_image(np.zeros((2, 16, 32, 32), np.uint16), zarr.group(store,
// zarr_format=2), axes="czyx", fmt=FormatV04(), scale_factors=[2]); the .zattrs it wrote,
// through json.dumps.
constexpr char kOmeZarr04[] =
    R"({"multiscales": [{"axes": [{"name": "c", "type": "channel"}, {"name": "z", "type": )"
    R"("space"}, {"name": "y", "type": "space"}, {"name": "x", "type": "space"}], "datasets": )"
    R"([{"path": "s0", "coordinateTransformations": [{"type": "scale", "scale": [1.0, 1.0, )"
    R"(1.0, 1.0]}, {"type": "translation", "translation": [0.0, 0.0, 0.0, 0.0]}]}, {"path": )"
    R"("s1", "coordinateTransformations": [{"type": "scale", "scale": [1.0, 1.0, 2.0, 2.0]}, )"
    R"({"type": "translation", "translation": [0.0, 0.0, 0.5, 0.5]}]}], "name": "image", )"
    R"("version": "0.4"}]})";

// The same with zarr_format=3 and fmt=FormatV05(): the group's zarr.json.
constexpr char kOmeZarr05[] =
    R"({"attributes": {"ome": {"version": "0.5", "multiscales": [{"axes": [{"name": "c", )"
    R"("type": "channel"}, {"name": "z", "type": "space"}, {"name": "y", "type": "space"}, )"
    R"({"name": "x", "type": "space"}], "datasets": [{"path": "s0", )"
    R"("coordinateTransformations": [{"type": "scale", "scale": [1.0, 1.0, 1.0, 1.0]}, )"
    R"({"type": "translation", "translation": [0.0, 0.0, 0.0, 0.0]}]}, {"path": "s1", )"
    R"("coordinateTransformations": [{"type": "scale", "scale": [1.0, 1.0, 2.0, 2.0]}, )"
    R"({"type": "translation", "translation": [0.0, 0.0, 0.5, 0.5]}]}], "name": "image"}]}}, )"
    R"("zarr_format": 3, "node_type": "group"})";

// By hand after https://ngff.openmicroscopy.org/0.4/#multiscale-md: three levels named "0",
// "1", "2", and a second multiscale (ignored: the first one is the image).
constexpr char kSpec04[] = R"({
  "multiscales": [
    {
      "version": "0.4",
      "name": "example",
      "axes": [
        {"name": "t", "type": "time", "unit": "millisecond"},
        {"name": "c", "type": "channel"},
        {"name": "z", "type": "space", "unit": "micrometer"},
        {"name": "y", "type": "space", "unit": "micrometer"},
        {"name": "x", "type": "space", "unit": "micrometer"}
      ],
      "datasets": [
        {"path": "0", "coordinateTransformations": [{"type": "scale", "scale": [1.0, 1.0, 0.5, 0.5, 0.5]}]},
        {"path": "1", "coordinateTransformations": [{"type": "scale", "scale": [1.0, 1.0, 1.0, 1.0, 1.0]}]},
        {"path": "2", "coordinateTransformations": [{"type": "scale", "scale": [1.0, 1.0, 2.0, 2.0, 2.0]}]}
      ],
      "coordinateTransformations": [{"type": "scale", "scale": [0.1, 1.0, 1.0, 1.0, 1.0]}],
      "type": "gaussian",
      "metadata": {"method": "skimage.transform.pyramid_gaussian", "version": "0.16.1"}
    },
    {"version": "0.4", "datasets": [{"path": "other"}]}
  ],
  "omero": {"channels": []}
})";

// By hand after https://ngff.openmicroscopy.org/0.5/#multiscale-md: a zarr.json of a group
// whose levels live in nested groups.
constexpr char kSpec05[] = R"({
  "zarr_format": 3,
  "node_type": "group",
  "attributes": {
    "ome": {
      "version": "0.5",
      "multiscales": [{
        "name": "example",
        "axes": [{"name": "y", "type": "space"}, {"name": "x", "type": "space"}],
        "datasets": [
          {"path": "scale0/image", "coordinateTransformations": [{"type": "scale", "scale": [1, 1]}]},
          {"path": "scale1/image", "coordinateTransformations": [{"type": "scale", "scale": [2, 2]}]}
        ]
      }]
    }
  }
})";

// `kSpec04` with its first dataset path replaced.
std::string WithPath(const std::string& path) {
  std::string doc = kSpec04;
  const std::string first = R"({"path": "0",)";
  return doc.replace(doc.find(first), first.size(), R"({"path": )" + path + ",");
}

TEST(OmeZarrTest, ReadsWhatOmeZarrPyWrites) {
  ASSERT_OK_AND_ASSIGN(const std::vector<std::string> v04, ParseOmeMultiscalePaths(kOmeZarr04));
  EXPECT_THAT(v04, ElementsAre("s0", "s1"));
  ASSERT_OK_AND_ASSIGN(const std::vector<std::string> v05, ParseOmeMultiscalePaths(kOmeZarr05));
  EXPECT_THAT(v05, ElementsAre("s0", "s1"));
}

TEST(OmeZarrTest, ReadsTheSpecificationsExamples) {
  ASSERT_OK_AND_ASSIGN(const std::vector<std::string> v04, ParseOmeMultiscalePaths(kSpec04));
  EXPECT_THAT(v04, ElementsAre("0", "1", "2"));
  ASSERT_OK_AND_ASSIGN(const std::vector<std::string> v05, ParseOmeMultiscalePaths(kSpec05));
  EXPECT_THAT(v05, ElementsAre("scale0/image", "scale1/image"));
  // Only the paths matter: a bare list of datasets is enough.
  ASSERT_OK_AND_ASSIGN(
      const std::vector<std::string> bare,
      ParseOmeMultiscalePaths(R"({"multiscales": [{"datasets": [{"path": "a"}]}]})"));
  EXPECT_THAT(bare, ElementsAre("a"));
}

TEST(OmeZarrTest, GroupsWithoutMultiscalesAreNotFound) {
  for (const char* doc : {
           "{}",
           R"({"omero": {}})",
           R"({"zarr_format": 3, "node_type": "group", "attributes": {}})",
           R"({"zarr_format": 3, "node_type": "group", "attributes": {"ome": {"version": "0.5"}}})",
           R"({"zarr_format": 3, "node_type": "group", "attributes": 3})",
           R"({"zarr_format": 3, "node_type": "group", "attributes": {"ome": []}})",
           R"({"shape": [1], "data_type": "uint8", "zarr_format": 3, "node_type": "array"})",
       }) {
    SCOPED_TRACE(doc);
    EXPECT_THAT(ParseOmeMultiscalePaths(doc),
                StatusIs(StatusCode::kNotFound, HasSubstr("no multiscales")));
  }
}

TEST(OmeZarrTest, EachMalformedFieldOrUnsafePathNamesItself) {
  const std::string datasets0 = "multiscales[0].datasets[0].path";
  const struct {
    std::string doc, message;
  } cases[] = {
      {"", "OME-Zarr attributes: not valid JSON"},
      {"{\"multiscales\": [", "not valid JSON"},
      {"[1]", "not a JSON object"},
      {R"({"multiscales": {}})", "multiscales must be a non-empty list"},
      {R"({"multiscales": []})", "multiscales must be a non-empty list"},
      {R"({"attributes": {"ome": {"multiscales": null}}})",
       "attributes.ome.multiscales must be a non-empty list"},
      {R"({"multiscales": [3]})", "multiscales[0].datasets must be a non-empty list"},
      {R"({"multiscales": [{}]})", "multiscales[0].datasets must be a non-empty list"},
      {R"({"multiscales": [{"datasets": []}]})", "multiscales[0].datasets must be"},
      {R"({"multiscales": [{"datasets": {"path": "0"}}]})", "multiscales[0].datasets must be"},
      {R"({"attributes": {"ome": {"multiscales": [{"datasets": [{"path": 0}]}]}}})",
       "attributes.ome.multiscales[0].datasets[0].path must be a string"},
      {R"({"multiscales": [{"datasets": [{"path": "0"}, "1"]}]})",
       "multiscales[0].datasets[1].path must be a string"},
      {WithPath(R"("")"), datasets0 + " \"\" is empty"},
      {WithPath(R"("/data/0")"), datasets0 + " \"/data/0\" is absolute"},
      {WithPath(R"("a\\b")"), datasets0 + " \"a\\b\" holds a backslash"},
      {WithPath(R"("C:\\0")"), "holds a backslash"},
      {WithPath(R"("..")"), datasets0 + " \"..\" has an empty, \".\" or \"..\" component"},
      {WithPath(R"("../secret")"), "\"../secret\" has an empty"},
      {WithPath(R"("a/../../b")"), "has an empty"},
      {WithPath(R"("0/..")"), "has an empty"},
      {WithPath(R"("./0")"), "has an empty"},
      {WithPath(R"("a//b")"), "has an empty"},
      {WithPath(R"("0/")"), "has an empty"},
      {WithPath(R"("0\u0000")"), "holds a NUL character"},
      {WithPath(R"("1")"), "multiscales[0].datasets[1].path \"1\" repeats an earlier dataset"},
      {WithPath("\"" + std::string(100, 'x') + "/..\""), "\"" + std::string(64, 'x') + "...\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.doc);
    EXPECT_THAT(ParseOmeMultiscalePaths(c.doc),
                StatusIs(StatusCode::kDataLoss, HasSubstr(c.message)));
  }
}

// A path 100000 lists deep is a malformed field, not a stack overflow.
TEST(OmeZarrTest, DeeplyNestedValuesAreErrorsNotCrashes) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_THAT(ParseOmeMultiscalePaths(WithPath(deep)),
              StatusIs(StatusCode::kDataLoss, HasSubstr("datasets[0].path must be a string")));
  EXPECT_THAT(ParseOmeMultiscalePaths(R"({"multiscales": )" + deep + "}"),
              StatusIs(StatusCode::kDataLoss,
                       HasSubstr("multiscales[0].datasets must be a non-empty list")));
}

}  // namespace
}  // namespace patchfeed::codec
