// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "storage/remote/remote_options.h"

#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "storage/remote/aws_config_file.h"
#include "tests/testutil/status_matchers.h"
#include "tests/testutil/temp_dir.h"

namespace patchfeed::storage {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

class RemoteOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_["HOME"] = dir_.path();
    std::filesystem::create_directories(dir_ / ".aws");
  }

  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }

  Result<RemoteAccess> Resolve(std::string_view url, const RemoteOptions& options = {}) {
    auto parsed = ParseRemoteUrl(url);
    EXPECT_OK(parsed);
    return ResolveRemoteAccess(*parsed, options, env_);
  }

  testing::TempDir dir_;
  Environment env_;
};

TEST_F(RemoteOptionsTest, AnonymousAwsDefaultsWithoutAnything) {
  ASSERT_OK_AND_ASSIGN(RemoteAccess a, Resolve("s3://b/k"));
  EXPECT_EQ(a.auth, RemoteAuth::kAnonymous);
  EXPECT_EQ(a.region, "us-east-1");
  EXPECT_EQ(a.endpoint, "https://s3.us-east-1.amazonaws.com");
  EXPECT_THAT(a.source, HasSubstr("anonymous"));
}

TEST_F(RemoteOptionsTest, EnvironmentKeysAndSettings) {
  env_["AWS_ACCESS_KEY_ID"] = "AKENV";
  env_["AWS_SECRET_ACCESS_KEY"] = "envsecret";
  env_["AWS_SESSION_TOKEN"] = "envtoken";
  env_["AWS_DEFAULT_REGION"] = "eu-west-1";
  env_["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9000/";
  ASSERT_OK_AND_ASSIGN(RemoteAccess a, Resolve("s3://b/k"));
  EXPECT_EQ(a.auth, RemoteAuth::kAwsSigV4);
  EXPECT_EQ(a.key, "AKENV");
  EXPECT_EQ(a.secret, "envsecret");
  EXPECT_EQ(a.token, "envtoken");
  EXPECT_EQ(a.region, "eu-west-1");
  EXPECT_EQ(a.endpoint, "http://127.0.0.1:9000");
  EXPECT_THAT(a.source, HasSubstr("AWS_ACCESS_KEY_ID"));

  // The more specific names win.
  env_["AWS_REGION"] = "ap-south-1";
  env_["AWS_ENDPOINT_URL_S3"] = "https://minio.example:9443";
  ASSERT_OK_AND_ASSIGN(a, Resolve("s3://b/k"));
  EXPECT_EQ(a.region, "ap-south-1");
  EXPECT_EQ(a.endpoint, "https://minio.example:9443");
}

TEST_F(RemoteOptionsTest, ExplicitOptionsWinOverEnvironmentAndFiles) {
  env_["AWS_ACCESS_KEY_ID"] = "AKENV";
  env_["AWS_SECRET_ACCESS_KEY"] = "envsecret";
  env_["AWS_REGION"] = "eu-west-1";
  env_["AWS_ENDPOINT_URL"] = "http://env.example";
  Write(".aws/credentials", "[default]\naws_access_key_id = AKFILE\naws_secret_access_key = f\n");
  RemoteOptions options;
  options.key = "AKOPT";
  options.secret = "optsecret";
  options.region = "us-west-2";
  options.endpoint_url = "http://opt.example:8333";
  ASSERT_OK_AND_ASSIGN(RemoteAccess a, Resolve("s3://b/k", options));
  EXPECT_EQ(a.key, "AKOPT");
  EXPECT_EQ(a.secret, "optsecret");
  EXPECT_TRUE(a.token.empty());
  EXPECT_EQ(a.region, "us-west-2");
  EXPECT_EQ(a.endpoint, "http://opt.example:8333");
  EXPECT_THAT(a.source, HasSubstr("storage options"));

  options.anon = true;
  ASSERT_OK_AND_ASSIGN(a, Resolve("s3://b/k", options));
  EXPECT_EQ(a.auth, RemoteAuth::kAnonymous);
  EXPECT_THAT(a.source, HasSubstr("anon"));
}

TEST_F(RemoteOptionsTest, ProfilesFromTheSharedFiles) {
  Write(".aws/credentials",
        "# comment\n[default]\naws_access_key_id = AKDEF\naws_secret_access_key = defsecret\n"
        "\n[work]\naws_access_key_id=AKWORK\naws_secret_access_key=worksecret\n"
        "aws_session_token = worktoken\n");
  Write(".aws/config",
        "[default]\nregion = eu-central-1\n"
        "[profile work]\nregion = us-west-1\nendpoint_url = http://127.0.0.1:8333\n"
        "s3 =\n  addressing_style = path\n");
  ASSERT_OK_AND_ASSIGN(RemoteAccess a, Resolve("s3://b/k"));
  EXPECT_EQ(a.key, "AKDEF");
  EXPECT_EQ(a.region, "eu-central-1");
  EXPECT_EQ(a.endpoint, "https://s3.eu-central-1.amazonaws.com");
  EXPECT_THAT(a.source, HasSubstr("profile default in " + dir_ / ".aws/credentials"));

  env_["AWS_PROFILE"] = "work";
  ASSERT_OK_AND_ASSIGN(a, Resolve("s3://b/k"));
  EXPECT_EQ(a.key, "AKWORK");
  EXPECT_EQ(a.token, "worktoken");
  EXPECT_EQ(a.region, "us-west-1");
  EXPECT_EQ(a.endpoint, "http://127.0.0.1:8333");
  EXPECT_EQ(a.source, "AWS_PROFILE=work in " + dir_ / ".aws/credentials");

  // Keys in the environment outrank AWS_PROFILE's, but not a profile named in the options.
  env_["AWS_ACCESS_KEY_ID"] = "AKENV";
  env_["AWS_SECRET_ACCESS_KEY"] = "envsecret";
  ASSERT_OK_AND_ASSIGN(a, Resolve("s3://b/k"));
  EXPECT_EQ(a.key, "AKENV");
  RemoteOptions options;
  options.profile = "work";
  ASSERT_OK_AND_ASSIGN(a, Resolve("s3://b/k", options));
  EXPECT_EQ(a.key, "AKWORK");
  EXPECT_THAT(a.source, HasSubstr("profile work (from the options)"));
}

TEST_F(RemoteOptionsTest, FileLocationsFromTheEnvironment) {
  Write("creds.ini", "[default]\naws_access_key_id = AKX\naws_secret_access_key = x\n");
  Write("conf.ini", "[default]\nregion = sa-east-1\n");
  env_["AWS_SHARED_CREDENTIALS_FILE"] = dir_ / "creds.ini";
  env_["AWS_CONFIG_FILE"] = dir_ / "conf.ini";
  ASSERT_OK_AND_ASSIGN(RemoteAccess a, Resolve("s3://b/k"));
  EXPECT_EQ(a.key, "AKX");
  EXPECT_EQ(a.region, "sa-east-1");
  EXPECT_THAT(a.source, HasSubstr(dir_ / "creds.ini"));
}

TEST_F(RemoteOptionsTest, CredentialsInTheConfigFile) {
  Write(".aws/config",
        "[profile cfg]\naws_access_key_id = AKCFG\naws_secret_access_key = cfgsecret\n");
  env_["AWS_PROFILE"] = "cfg";
  ASSERT_OK_AND_ASSIGN(RemoteAccess a, Resolve("s3://b/k"));
  EXPECT_EQ(a.key, "AKCFG");
  EXPECT_EQ(a.source, "AWS_PROFILE=cfg in " + dir_ / ".aws/config");
}

TEST_F(RemoteOptionsTest, RefusesContradictions) {
  env_["AWS_PROFILE"] = "missing";
  EXPECT_THAT(Resolve("s3://b/k"), StatusIs(StatusCode::kInvalidArgument,
                                            AllOf(HasSubstr("'missing'"), HasSubstr("AWS_PROFILE"),
                                                  HasSubstr(".aws/credentials"))));
  env_.erase("AWS_PROFILE");

  RemoteOptions options;
  options.key = "AKONLY";
  EXPECT_THAT(Resolve("s3://b/k", options),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("a key but no secret")));
  env_["AWS_SECRET_ACCESS_KEY"] = "x";
  EXPECT_THAT(Resolve("s3://b/k"),
              StatusIs(StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("a secret but no key"), HasSubstr("AWS_ACCESS_KEY_ID"))));
  env_.erase("AWS_SECRET_ACCESS_KEY");

  options = {};
  options.endpoint_url = "ftp://host";
  EXPECT_THAT(Resolve("s3://b/k", options),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("'ftp://host'")));
  options.endpoint_url = "http://host/with/path";
  EXPECT_THAT(Resolve("s3://b/k", options),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("http://host[:port]")));

  options = {};
  options.io_depth = 0;
  EXPECT_THAT(Resolve("s3://b/k", options),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("io_depth")));
  options = {};
  options.request_timeout_s = 0;
  EXPECT_THAT(Resolve("s3://b/k", options),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("request_timeout_s")));
  options = {};
  options.max_retries = -1;
  EXPECT_THAT(Resolve("s3://b/k", options),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("max_retries")));

  Write(".aws/credentials", "aws_access_key_id = AKX\n");
  EXPECT_THAT(Resolve("s3://b/k"),
              StatusIs(StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("credentials line 1"), HasSubstr("before any [section]"))));
}

TEST_F(RemoteOptionsTest, GcsHmacKeysBearerTokensOrAnonymous) {
  ASSERT_OK_AND_ASSIGN(RemoteAccess a, Resolve("gs://b/k"));
  EXPECT_EQ(a.auth, RemoteAuth::kAnonymous);
  EXPECT_EQ(a.endpoint, "https://storage.googleapis.com");

  env_["GOOGLE_OAUTH_ACCESS_TOKEN"] = "ya29.token";
  ASSERT_OK_AND_ASSIGN(a, Resolve("gs://b/k"));
  EXPECT_EQ(a.auth, RemoteAuth::kBearer);
  EXPECT_EQ(a.token, "ya29.token");
  EXPECT_THAT(a.source, HasSubstr("GOOGLE_OAUTH_ACCESS_TOKEN"));

  env_["GS_ACCESS_KEY_ID"] = "GOOGHMAC";
  env_["GS_SECRET_ACCESS_KEY"] = "hmacsecret";
  ASSERT_OK_AND_ASSIGN(a, Resolve("gs://b/k"));
  EXPECT_EQ(a.auth, RemoteAuth::kGoogSigV4);
  EXPECT_EQ(a.key, "GOOGHMAC");

  // AWS's variables do not apply to GCS.
  env_.clear();
  env_["AWS_ACCESS_KEY_ID"] = "AKENV";
  env_["AWS_SECRET_ACCESS_KEY"] = "envsecret";
  ASSERT_OK_AND_ASSIGN(a, Resolve("gs://b/k"));
  EXPECT_EQ(a.auth, RemoteAuth::kAnonymous);

  RemoteOptions options;
  options.token = "opt-token";
  options.endpoint_url = "http://127.0.0.1:4443";
  ASSERT_OK_AND_ASSIGN(a, Resolve("gs://b/k", options));
  EXPECT_EQ(a.auth, RemoteAuth::kBearer);
  EXPECT_EQ(a.token, "opt-token");
  EXPECT_EQ(a.endpoint, "http://127.0.0.1:4443");
}

TEST_F(RemoteOptionsTest, HttpIsAnonymousUnlessGivenAToken) {
  env_["AWS_ACCESS_KEY_ID"] = "AKENV";
  env_["AWS_SECRET_ACCESS_KEY"] = "envsecret";
  ASSERT_OK_AND_ASSIGN(RemoteAccess a, Resolve("https://data.example.org/x"));
  EXPECT_EQ(a.auth, RemoteAuth::kAnonymous);
  EXPECT_EQ(a.endpoint, "https://data.example.org");
  RemoteOptions options;
  options.token = "t";
  ASSERT_OK_AND_ASSIGN(a, Resolve("https://data.example.org/x", options));
  EXPECT_EQ(a.auth, RemoteAuth::kBearer);
}

TEST(AwsConfigFileTest, ParsesSectionsCommentsAndNestedSettings) {
  ASSERT_OK_AND_ASSIGN(IniSections s, ParseIni("; c\n[a]\nx = 1 \r\n\n[ b ]\ny=two words\n"
                                               "s3 =\n    nested = skipped\nz = 3",
                                               "f"));
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s["a"]["x"], "1");
  EXPECT_EQ(s["b"]["y"], "two words");
  EXPECT_EQ(s["b"]["s3"], "");
  EXPECT_EQ(s["b"].count("nested"), 0u);
  EXPECT_EQ(s["b"]["z"], "3");
  EXPECT_THAT(ParseIni("[a\n", "f"), StatusIs(StatusCode::kInvalidArgument, HasSubstr("f line 1")));
  EXPECT_THAT(ParseIni("[a]\nno equals\n", "f"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("f line 2")));
}

TEST(AwsConfigFileTest, AbsentFileIsEmptyHugeFileIsRefused) {
  testing::TempDir dir;
  ASSERT_OK_AND_ASSIGN(IniSections none, ReadIniFile(dir / "absent"));
  EXPECT_TRUE(none.empty());
  {
    std::ofstream out(dir / "huge");
    out << "[a]\n" << std::string(2 << 20, '#');
  }
  EXPECT_THAT(ReadIniFile(dir / "huge"),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("far smaller")));
}

}  // namespace
}  // namespace patchfeed::storage
