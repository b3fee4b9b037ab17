// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_STORAGE_REMOTE_AWS_CONFIG_FILE_H_
#define PATCHFEED_STORAGE_REMOTE_AWS_CONFIG_FILE_H_

/// \file
/// The AWS shared credentials and config files (~/.aws/credentials, ~/.aws/config): INI text
/// with `[section]` headers and `name = value` lines. Indented lines continue a nested setting
/// (`s3 =` followed by `  addressing_style = path`) and are skipped: nothing patchfeed reads
/// is nested. Comments start with '#' or ';'. Stateless, safe from any thread.

#include <map>
#include <string>
#include <string_view>

#include "common/result.h"

namespace patchfeed::storage {

/// Section name -> (setting name -> value). Names are as written, values trimmed.
using IniSections = std::map<std::string, std::map<std::string, std::string>, std::less<>>;

/// The sections of `text`. Lines that are neither headers, settings, comments nor indented
/// continuations are kInvalidArgument naming `label` and the line number.
Result<IniSections> ParseIni(std::string_view text, std::string_view label);

/// Reads and parses the file at `path`. An absent file is an empty result, not an error (the
/// AWS tools treat it so); a file that exists but cannot be read is kIoError, one larger than
/// 1 MiB is kInvalidArgument (no credentials file is that large).
Result<IniSections> ReadIniFile(const std::string& path);

}  // namespace patchfeed::storage

#endif  // PATCHFEED_STORAGE_REMOTE_AWS_CONFIG_FILE_H_
