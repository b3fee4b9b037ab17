// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CLI_HELP_TEXT_H_
#define PATCHFEED_CLI_HELP_TEXT_H_

/// \file
/// What `patchfeed --help`, `patchfeed CMD --help` and `patchfeed --version` print.

#include <string_view>

namespace patchfeed::cli {

/// The overview: every command in a line or two.
std::string_view OverviewHelp();

/// The full help of `command` (what it does, each option with its default, an example), or an
/// empty view for an unknown command.
std::string_view CommandHelp(std::string_view command);

/// "patchfeed X.Y.Z": the version CMake's project() declares.
std::string_view VersionLine();

}  // namespace patchfeed::cli

#endif  // PATCHFEED_CLI_HELP_TEXT_H_
