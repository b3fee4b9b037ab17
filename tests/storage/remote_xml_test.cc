// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "storage/remote/s3_xml.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::storage {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// SeaweedFS 4.48's answers, as captured from its S3 gateway.
constexpr char kSeaweedNoSuchKey[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchKey</Code><Message>The "
    "specified key does not exist.</Message><Resource>/bkt/nokey</Resource><RequestId>"
    "18ED9DBA954A363DF663808D</RequestId><Key>nokey</Key><BucketName>bkt</BucketName></Error>";
constexpr char kSeaweedListing[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult "
    "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>bkt</Name><Prefix>dir/</Prefix>"
    "<MaxKeys>1000</MaxKeys><Delimiter>/</Delimiter><IsTruncated>false</IsTruncated><Contents>"
    "<Key>dir/obj.bin</Key><ETag>&#34;6dcdf14c2c81b0300db5d91fb68e6d1c&#34;</ETag><Size>100000"
    "</Size><StorageClass>STANDARD</StorageClass><LastModified>2026-12-03T02:34:11Z"
    "</LastModified></Contents><CommonPrefixes><Prefix>dir/sub/</Prefix></CommonPrefixes>"
    "<KeyCount>2</KeyCount></ListBucketResult>";
// AWS's documented form, paged, with entities and CDATA.
constexpr char kAwsTruncated[] =
    "<?xml version=\"1.0\"?>\r\n<!-- page 1 -->\n<ListBucketResult>\n  <IsTruncated>true"
    "</IsTruncated>\n  <Contents><Key>a&amp;b &lt;1&gt;.zarr</Key></Contents>\n  <Contents>"
    "<Key><![CDATA[c<d>]]></Key></Contents>\n  <Contents><Key>caf&#xE9;&#20013;</Key>"
    "</Contents>\n  <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM="
    "</NextContinuationToken>\n  <CommonPrefixes/>\n</ListBucketResult>\n";

TEST(S3XmlTest, ParsesErrorDocuments) {
  const auto error = ParseS3Error(kSeaweedNoSuchKey);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, "NoSuchKey");
  EXPECT_EQ(error->message, "The specified key does not exist.");

  EXPECT_FALSE(ParseS3Error("").has_value());
  EXPECT_FALSE(ParseS3Error("<html><body>403 Forbidden</body></html>").has_value());
  EXPECT_FALSE(ParseS3Error("<Error><Message>no code</Message></Error>").has_value());
  EXPECT_FALSE(ParseS3Error("<Error><Code>Cut").has_value());
  // A Code deeper down is not the error's code.
  EXPECT_FALSE(ParseS3Error("<Error><Detail><Code>X</Code></Detail></Error>").has_value());
}

TEST(S3XmlTest, ParsesListObjectsV2Pages) {
  ASSERT_OK_AND_ASSIGN(ListPage page, ParseListObjectsV2(kSeaweedListing, "s3://bkt/dir/"));
  EXPECT_THAT(page.keys, ElementsAre("dir/obj.bin"));
  EXPECT_THAT(page.prefixes, ElementsAre("dir/sub/"));
  EXPECT_FALSE(page.truncated);

  ASSERT_OK_AND_ASSIGN(page, ParseListObjectsV2(kAwsTruncated, "s3://b/"));
  EXPECT_THAT(page.keys, ElementsAre("a&b <1>.zarr", "c<d>", "caf\xC3\xA9\xE4\xB8\xAD"));
  EXPECT_TRUE(page.prefixes.empty());  // <CommonPrefixes/> holds no Prefix
  EXPECT_TRUE(page.truncated);
  EXPECT_EQ(page.next_token, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");

  ASSERT_OK_AND_ASSIGN(page, ParseListObjectsV2("<ListBucketResult></ListBucketResult>", "x"));
  EXPECT_TRUE(page.keys.empty());
}

TEST(S3XmlTest, RefusesWhatIsNotAListing) {
  const auto refused = [](std::string_view body, std::string_view why) {
    EXPECT_THAT(ParseListObjectsV2(body, "s3://b/p/"),
                StatusIs(StatusCode::kDataLoss,
                         ::testing::AllOf(HasSubstr("s3://b/p/"), HasSubstr(std::string(why)))))
        << body;
  };
  refused(kSeaweedNoSuchKey, "root element is <Error>");
  refused("<ListBucketResult><IsTruncated>maybe</IsTruncated></ListBucketResult>", "maybe");
  refused("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
          "no continuation token");
  refused("", "no root element");
  refused("   ", "no root element");
  refused("<a></b>", "closes no open element");
  refused("<a><b></a></b>", "closes no open element");
  refused("<a>", "not closed");
  refused("<ListBucketResult></ListBucketResult><b></b>", "second root");
  refused("text<a></a>", "outside the root");
  refused("<a>&bogus;</a>", "predefined entity");
  refused("<a>&#0;</a>", "not a character");
  refused("<a>&#xD800;</a>", "not a character");
  refused("<a>&#x110000;</a>", "past the last");
  refused("<a>&#12a;</a>", "not a character reference");
  refused("<a>& no semicolon for a while</a>", "not closed by ';'");
  refused("<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>", "document type");
  refused("<a><!-- open comment </a>", "comment");
  refused("<a><![CDATA[open</a>", "CDATA");
  refused("<a attr=\"x>\"", "not closed by '>'");
  refused("<>", "starts no element name");
  // A folder that does not end with the delimiter asked for (a fuzzer's find).
  refused(
      "<ListBucketResult><CommonPrefixes><Prefix>cases/a.b2nd</Prefix></CommonPrefixes>"
      "</ListBucketResult>",
      "'cases/a.b2nd' does not end with the delimiter '/'");
  refused(
      "<ListBucketResult><CommonPrefixes><Prefix></Prefix></CommonPrefixes>"
      "</ListBucketResult>",
      "does not end with the delimiter");
}

TEST(S3XmlTest, BoundsNesting) {
  std::string deep;
  for (int i = 0; i < 100000; ++i)
    deep += "<a>";
  EXPECT_THAT(ParseListObjectsV2(deep, "x"),
              StatusIs(StatusCode::kDataLoss, HasSubstr("nest deeper than 32")));
  std::string ok;
  for (int i = 0; i < 32; ++i)
    ok += "<a>";
  for (int i = 0; i < 32; ++i)
    ok += "</a>";
  EXPECT_OK(ScanXmlLeaves(ok, [](auto, std::string&&) { return Status::Ok(); }));
}

TEST(S3XmlTest, HugeListingsParseLinearly) {
  std::string body = "<ListBucketResult><IsTruncated>false</IsTruncated>";
  for (int i = 0; i < 50000; ++i)
    body += "<Contents><Key>case_" + std::to_string(i) + ".b2nd</Key><Size>1</Size></Contents>";
  body += "</ListBucketResult>";
  ASSERT_OK_AND_ASSIGN(ListPage page, ParseListObjectsV2(body, "x"));
  ASSERT_EQ(page.keys.size(), 50000u);
  EXPECT_EQ(page.keys[49999], "case_49999.b2nd");
}

// Every prefix and many random corruptions of real documents: an answer or an error, never a
// crash, a hang or a read outside the input (the sanitizer builds check the last).
TEST(S3XmlTest, SurvivesTruncationAndCorruption) {
  std::mt19937 random(24);
  for (const std::string& doc :
       {std::string(kSeaweedListing), std::string(kAwsTruncated), std::string(kSeaweedNoSuchKey)}) {
    for (size_t n = 0; n <= doc.size(); ++n) {
      (void)ParseListObjectsV2(std::string_view(doc).substr(0, n), "x");
      (void)ParseS3Error(std::string_view(doc).substr(0, n));
    }
    for (int trial = 0; trial < 2000; ++trial) {
      std::string mutated = doc;
      const int edits = 1 + static_cast<int>(random() % 4);
      for (int e = 0; e < edits; ++e) {
        const size_t at = random() % mutated.size();
        switch (random() % 3) {
          case 0:
            mutated[at] = static_cast<char>(random() % 256);
            break;
          case 1:
            mutated.erase(at, 1 + random() % 8);
            break;
          default:
            mutated = mutated.substr(0, at) + "<>&/;#x]!?\"'"[random() % 12] + mutated.substr(at);
        }
        if (mutated.empty())
          mutated.push_back('<');
      }
      (void)ParseListObjectsV2(mutated, "x");
      (void)ParseS3Error(mutated);
    }
  }
}

}  // namespace
}  // namespace patchfeed::storage
