// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "storage/remote/url.h"
#include "tests/testutil/status_matchers.h"

namespace patchfeed::storage {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(RemoteUrlTest, ParsesBucketUrls) {
  ASSERT_OK_AND_ASSIGN(RemoteUrl s3, ParseRemoteUrl("s3://my-bucket/data/case 1.b2nd"));
  EXPECT_EQ(s3.scheme, RemoteScheme::kS3);
  EXPECT_EQ(s3.bucket, "my-bucket");
  EXPECT_EQ(s3.key, "data/case 1.b2nd");
  EXPECT_TRUE(s3.is_bucket());
  EXPECT_EQ(s3.ToString(), "s3://my-bucket/data/case 1.b2nd");

  ASSERT_OK_AND_ASSIGN(RemoteUrl gs, ParseRemoteUrl("GS://under_score.bucket"));
  EXPECT_EQ(gs.scheme, RemoteScheme::kGs);
  EXPECT_EQ(gs.bucket, "under_score.bucket");
  EXPECT_EQ(gs.key, "");
  ASSERT_OK_AND_ASSIGN(RemoteUrl slash, ParseRemoteUrl("s3://b/"));
  EXPECT_EQ(slash.key, "");
}

TEST(RemoteUrlTest, ParsesHttpUrls) {
  ASSERT_OK_AND_ASSIGN(RemoteUrl plain, ParseRemoteUrl("http://127.0.0.1:8080/a/b%20c.zarr"));
  EXPECT_EQ(plain.scheme, RemoteScheme::kHttp);
  EXPECT_EQ(plain.origin, "http://127.0.0.1:8080");
  EXPECT_EQ(plain.path, "/a/b%20c.zarr");
  EXPECT_FALSE(plain.is_bucket());

  ASSERT_OK_AND_ASSIGN(RemoteUrl bare, ParseRemoteUrl("HTTPS://Example.ORG"));
  EXPECT_EQ(bare.scheme, RemoteScheme::kHttps);
  EXPECT_EQ(bare.origin, "https://example.org");
  EXPECT_EQ(bare.path, "/");

  ASSERT_OK_AND_ASSIGN(RemoteUrl v6, ParseRemoteUrl("http://[::1]:9000/x"));
  EXPECT_EQ(v6.origin, "http://[::1]:9000");
}

TEST(RemoteUrlTest, RefusesBadUrlsNamingThem) {
  const auto refused = [](std::string_view url, std::string_view why) {
    EXPECT_THAT(ParseRemoteUrl(url), StatusIs(StatusCode::kInvalidArgument,
                                              AllOf(HasSubstr(std::string(url)), HasSubstr(why))))
        << url;
  };
  refused("ftp://host/x", "scheme");
  refused("/local/path", "scheme");
  refused("s3://", "bucket name is missing");
  refused("s3:///key", "bucket name is missing");
  refused("s3://bad bucket/key", "bucket name");
  refused("gs://b/key\nwith newline", "control character");
  refused("http:///path", "host name is missing");
  refused("http://host:0/x", "port");
  refused("http://host:65536/x", "port");
  refused("http://host:12a/x", "port");
  refused("http://host:/x", "port");
  refused("http://user:pw@host/x", "user names and passwords");
  refused("https://host/x?X-Amz-Signature=1", "queries and fragments");
  refused("https://host/x#frag", "queries and fragments");
  refused("http://host/a b", "space");
  refused("http://[::1/x", "IPv6");
  refused("http://ho$t/x", "host name");
}

TEST(RemoteUrlTest, KnowsRemoteFromLocal) {
  EXPECT_TRUE(IsRemoteUrl("s3://b/k"));
  EXPECT_TRUE(IsRemoteUrl("Gs://b"));
  EXPECT_TRUE(IsRemoteUrl("http://h/"));
  EXPECT_TRUE(IsRemoteUrl("HTTPS://h/"));
  EXPECT_FALSE(IsRemoteUrl("/data/s3://x"));
  EXPECT_FALSE(IsRemoteUrl("s3:/b"));
  EXPECT_FALSE(IsRemoteUrl("file:///x"));
}

// The encodings Signature V4 canonicalizes to (AWS's UriEncode rules): unreserved characters
// stay, everything else is %XX with upper-case hex, '/' only kept in paths.
TEST(RemoteUrlTest, EncodesAsSignatureV4Canonicalizes) {
  EXPECT_EQ(UriEncode("AZaz09-_.~", false), "AZaz09-_.~");
  EXPECT_EQ(UriEncode("a b+c=d/e", true), "a%20b%2Bc%3Dd/e");
  EXPECT_EQ(UriEncode("a/b", false), "a%2Fb");
  EXPECT_EQ(UriEncode("\xc3\xa9*", false), "%C3%A9%2A");
  EXPECT_EQ(CanonicalQuery({{"prefix", "a b/"}, {"list-type", "2"}, {"delimiter", "/"}}),
            "delimiter=%2F&list-type=2&prefix=a%20b%2F");
  EXPECT_EQ(CanonicalQuery({{"continuation-token", "x+y="}, {"b", ""}}),
            "b=&continuation-token=x%2By%3D");
}

}  // namespace
}  // namespace patchfeed::storage
