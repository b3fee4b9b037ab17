// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CLI_ARGS_H_
#define PATCHFEED_CLI_ARGS_H_

/// \file
/// A small command-line parser for the `patchfeed` subcommands: positional arguments plus
/// `--name value` / `--name=value` options and `--flag` switches. Unknown options are errors.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"

namespace patchfeed::cli {

struct ParsedArgs {
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> options;  // repeated options accumulate
  std::set<std::string> flags;

  bool has_flag(const std::string& name) const { return flags.count(name) > 0; }
  std::optional<std::string> Get(const std::string& name) const;
  /// The integer value of option `name`, or `fallback` when absent.
  Result<long long> GetInt(const std::string& name, long long fallback) const;
};

/// Parses `args`; `value_options` take a value, `flag_options` do not.
Result<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                             const std::set<std::string>& value_options,
                             const std::set<std::string>& flag_options);

}  // namespace patchfeed::cli

#endif  // PATCHFEED_CLI_ARGS_H_
