// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CLI_RUN_CLI_H_
#define PATCHFEED_CLI_RUN_CLI_H_

/// \file
/// The `patchfeed` command as a function, so that the binary's main() and the Python package
/// (`python -m patchfeed`, through _core.run_cli) run the same code. Writes to the process's
/// stdout/stderr; not reentrant in any useful sense (commands print), but touches no global
/// state of its own.

#include <string>
#include <vector>

namespace patchfeed::cli {

/// Runs `patchfeed <args...>` (`args` excludes the program name) and returns the exit code:
/// 0 on success, 2 for usage errors, 1 for other failures (message on stderr).
int RunCli(const std::vector<std::string>& args);

}  // namespace patchfeed::cli

#endif  // PATCHFEED_CLI_RUN_CLI_H_
