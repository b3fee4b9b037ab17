// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "storage/remote/remote_options.h"

#include <cmath>
#include <optional>

#include "common/str_cat.h"
#include "storage/remote/aws_config_file.h"

extern char** environ;  // NOLINT(readability-identifier-naming): POSIX names it

namespace patchfeed::storage {
namespace {

constexpr int kMaxIoDepth = 4096;
constexpr int kMaxRetries = 100;
constexpr char kGcsEndpoint[] = "https://storage.googleapis.com";

std::string_view Get(const Environment& env, std::string_view name) {
  const auto it = env.find(name);
  return it == env.end() ? std::string_view() : std::string_view(it->second);
}

std::string_view FirstSet(std::initializer_list<std::string_view> values) {
  for (const std::string_view v : values) {
    if (!v.empty())
      return v;
  }
  return {};
}

Result<std::string> CheckEndpoint(std::string_view endpoint, std::string_view where) {
  std::string_view trimmed = endpoint;
  while (!trimmed.empty() && trimmed.back() == '/')
    trimmed.remove_suffix(1);
  auto parsed = ParseRemoteUrl(trimmed);
  if (!parsed.ok() || parsed->is_bucket() || parsed->path != "/") {
    return InvalidArgumentError(StrCat("the endpoint '", endpoint, "' (from ", where,
                                       ") must be http://host[:port] or https://host[:port]"));
  }
  return parsed->origin;
}

// The files a profile may live in, with the section name each gives it.
struct ProfileFiles {
  std::string credentials_path;
  std::string config_path;
  IniSections credentials;
  IniSections config;
};

// "" without HOME: then there is no such file to read.
std::string HomePath(const Environment& env, std::string_view rest) {
  const std::string_view home = Get(env, "HOME");
  return home.empty() ? std::string() : StrCat(home, "/", rest);
}

Result<ProfileFiles> ReadProfileFiles(const Environment& env) {
  ProfileFiles files;
  files.credentials_path = std::string(FirstSet({Get(env, "AWS_SHARED_CREDENTIALS_FILE")}));
  if (files.credentials_path.empty())
    files.credentials_path = HomePath(env, ".aws/credentials");
  files.config_path = std::string(FirstSet({Get(env, "AWS_CONFIG_FILE")}));
  if (files.config_path.empty())
    files.config_path = HomePath(env, ".aws/config");
  PATCHFEED_ASSIGN_OR_RETURN(files.credentials, ReadIniFile(files.credentials_path));
  PATCHFEED_ASSIGN_OR_RETURN(files.config, ReadIniFile(files.config_path));
  return files;
}

using Settings = std::map<std::string, std::string>;

const Settings* FindSection(const IniSections& sections, const std::string& name) {
  const auto it = sections.find(name);
  return it == sections.end() ? nullptr : &it->second;
}

std::string_view Setting(const Settings* settings, const std::string& name) {
  if (settings == nullptr)
    return {};
  const auto it = settings->find(name);
  return it == settings->end() ? std::string_view() : std::string_view(it->second);
}

struct Credentials {
  std::string key;
  std::string secret;
  std::string token;
  std::string source;
  bool found() const { return !key.empty(); }
};

Result<Credentials> PairOrError(std::string_view key, std::string_view secret,
                                std::string_view token, std::string source) {
  if (key.empty() != secret.empty()) {
    return InvalidArgumentError(StrCat("the credentials from ", source, " have ",
                                       key.empty() ? "a secret but no key" : "a key but no secret",
                                       "; give both"));
  }
  return Credentials{std::string(key), std::string(secret), std::string(token), std::move(source)};
}

Result<RemoteAccess> ResolveS3(const RemoteOptions& options, const Environment& env) {
  PATCHFEED_ASSIGN_OR_RETURN(const ProfileFiles files, ReadProfileFiles(env));
  const bool profile_named = !options.profile.empty() || !Get(env, "AWS_PROFILE").empty();
  const std::string profile(FirstSet({options.profile, Get(env, "AWS_PROFILE"), "default"}));
  const Settings* profile_credentials = FindSection(files.credentials, profile);
  const Settings* profile_config =
      FindSection(files.config, profile == "default" ? profile : "profile " + profile);
  if (profile_named && profile_credentials == nullptr && profile_config == nullptr) {
    return InvalidArgumentError(StrCat("the AWS profile '", profile, "' (from ",
                                       options.profile.empty() ? "AWS_PROFILE" : "the options",
                                       ") is in neither ", files.credentials_path, " nor ",
                                       files.config_path));
  }
  const std::string profile_label =
      !options.profile.empty()           ? StrCat("profile ", profile, " (from the options)")
      : !Get(env, "AWS_PROFILE").empty() ? StrCat("AWS_PROFILE=", profile)
                                         : std::string("profile default");

  Credentials credentials;
  if (options.anon) {
    credentials.source = "no credentials (anon is set)";
  } else if (!options.key.empty() || !options.secret.empty()) {
    PATCHFEED_ASSIGN_OR_RETURN(credentials, PairOrError(options.key, options.secret, options.token,
                                                        "the storage options (key, secret)"));
  }
  // A profile named in the options outranks the environment's keys, as in boto3's
  // Session(profile_name=...).
  const auto from_profile = [&]() -> Result<Credentials> {
    for (const auto& [settings, path] : {std::pair{profile_credentials, &files.credentials_path},
                                         std::pair{profile_config, &files.config_path}}) {
      const std::string_view key = Setting(settings, "aws_access_key_id");
      const std::string_view secret = Setting(settings, "aws_secret_access_key");
      if (!key.empty() || !secret.empty()) {
        return PairOrError(key, secret, Setting(settings, "aws_session_token"),
                           StrCat(profile_label, " in ", *path));
      }
    }
    return Credentials{};
  };
  if (!options.anon && !credentials.found() && !options.profile.empty()) {
    PATCHFEED_ASSIGN_OR_RETURN(credentials, from_profile());
  }
  if (!options.anon && !credentials.found()) {
    const std::string_view key = Get(env, "AWS_ACCESS_KEY_ID");
    const std::string_view secret = Get(env, "AWS_SECRET_ACCESS_KEY");
    if (!key.empty() || !secret.empty()) {
      PATCHFEED_ASSIGN_OR_RETURN(
          credentials, PairOrError(key, secret, Get(env, "AWS_SESSION_TOKEN"),
                                   "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY in the environment"));
    }
  }
  if (!options.anon && !credentials.found()) {
    PATCHFEED_ASSIGN_OR_RETURN(credentials, from_profile());
  }

  RemoteAccess access;
  access.region =
      std::string(FirstSet({options.region, Get(env, "AWS_REGION"), Get(env, "AWS_DEFAULT_REGION"),
                            Setting(profile_config, "region"), "us-east-1"}));
  std::string_view endpoint_from = "the storage options (endpoint_url)";
  std::string_view endpoint = options.endpoint_url;
  for (const auto& [value, from] :
       {std::pair{Get(env, "AWS_ENDPOINT_URL_S3"), std::string_view("AWS_ENDPOINT_URL_S3")},
        std::pair{Get(env, "AWS_ENDPOINT_URL"), std::string_view("AWS_ENDPOINT_URL")},
        std::pair{Setting(profile_config, "endpoint_url"), std::string_view(files.config_path)}}) {
    if (endpoint.empty() && !value.empty()) {
      endpoint = value;
      endpoint_from = from;
    }
  }
  if (endpoint.empty()) {
    access.endpoint = StrCat("https://s3.", access.region, ".amazonaws.com");
  } else {
    PATCHFEED_ASSIGN_OR_RETURN(access.endpoint, CheckEndpoint(endpoint, endpoint_from));
  }
  if (credentials.found()) {
    access.auth = RemoteAuth::kAwsSigV4;
    access.key = std::move(credentials.key);
    access.secret = std::move(credentials.secret);
    access.token = std::move(credentials.token);
    access.source = std::move(credentials.source);
  } else {
    access.source = credentials.source.empty() ? "no credentials (anonymous)" : credentials.source;
  }
  return access;
}

Result<RemoteAccess> ResolveGs(const RemoteOptions& options, const Environment& env) {
  RemoteAccess access;
  access.region = "auto";
  access.endpoint = kGcsEndpoint;
  if (!options.endpoint_url.empty()) {
    PATCHFEED_ASSIGN_OR_RETURN(access.endpoint,
                               CheckEndpoint(options.endpoint_url, "the storage options"));
  }
  access.source = "no credentials (anonymous)";
  if (options.anon) {
    access.source = "no credentials (anon is set)";
    return access;
  }
  Credentials hmac;
  if (!options.key.empty() || !options.secret.empty()) {
    PATCHFEED_ASSIGN_OR_RETURN(
        hmac, PairOrError(options.key, options.secret, "", "the storage options (key, secret)"));
  } else if (!options.token.empty()) {
    access.auth = RemoteAuth::kBearer;
    access.token = options.token;
    access.source = "the bearer token in the storage options (token)";
    return access;
  } else if (!Get(env, "GS_ACCESS_KEY_ID").empty() || !Get(env, "GS_SECRET_ACCESS_KEY").empty()) {
    PATCHFEED_ASSIGN_OR_RETURN(
        hmac, PairOrError(Get(env, "GS_ACCESS_KEY_ID"), Get(env, "GS_SECRET_ACCESS_KEY"), "",
                          "GS_ACCESS_KEY_ID / GS_SECRET_ACCESS_KEY in the environment"));
  } else if (!Get(env, "GOOGLE_OAUTH_ACCESS_TOKEN").empty()) {
    access.auth = RemoteAuth::kBearer;
    access.token = std::string(Get(env, "GOOGLE_OAUTH_ACCESS_TOKEN"));
    access.source = "GOOGLE_OAUTH_ACCESS_TOKEN in the environment";
    return access;
  }
  if (hmac.found()) {
    access.auth = RemoteAuth::kGoogSigV4;
    access.key = std::move(hmac.key);
    access.secret = std::move(hmac.secret);
    access.source = std::move(hmac.source);
  }
  return access;
}

}  // namespace

Status ValidateRemoteOptions(const RemoteOptions& options) {
  const auto positive = [](double v) { return std::isfinite(v) && v > 0; };
  if (!positive(options.request_timeout_s)) {
    return InvalidArgumentError(
        StrCat("request_timeout_s is ", options.request_timeout_s, "; give seconds above 0"));
  }
  if (!positive(options.connect_timeout_s)) {
    return InvalidArgumentError(
        StrCat("connect_timeout_s is ", options.connect_timeout_s, "; give seconds above 0"));
  }
  if (options.max_retries < 0 || options.max_retries > kMaxRetries) {
    return InvalidArgumentError(
        StrCat("max_retries is ", options.max_retries, "; give 0 to ", kMaxRetries));
  }
  if (options.io_depth < 1 || options.io_depth > kMaxIoDepth) {
    return InvalidArgumentError(
        StrCat("io_depth is ", options.io_depth, "; give 1 to ", kMaxIoDepth));
  }
  return Status::Ok();
}

Environment ProcessEnvironment() {
  Environment env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const size_t equals = text.find('=');
    if (equals != std::string_view::npos)
      env.emplace(text.substr(0, equals), text.substr(equals + 1));
  }
  return env;
}

Result<RemoteAccess> ResolveRemoteAccess(const RemoteUrl& url, const RemoteOptions& options,
                                         const Environment& env) {
  PATCHFEED_RETURN_IF_ERROR(ValidateRemoteOptions(options));
  switch (url.scheme) {
    case RemoteScheme::kS3:
      return ResolveS3(options, env);
    case RemoteScheme::kGs:
      return ResolveGs(options, env);
    case RemoteScheme::kHttp:
    case RemoteScheme::kHttps:
      break;
  }
  RemoteAccess access;
  access.endpoint = url.origin;
  access.source = "no credentials (anonymous)";
  if (!options.token.empty() && !options.anon) {
    access.auth = RemoteAuth::kBearer;
    access.token = options.token;
    access.source = "the bearer token in the storage options (token)";
  }
  return access;
}

}  // namespace patchfeed::storage
