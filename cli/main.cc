// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// The `patchfeed` binary: RunCli (run_cli.h) does the work, shared with the Python package.

#include <string>
#include <vector>

#include "cli/run_cli.h"

int main(int argc, char** argv) {
  return patchfeed::cli::RunCli(std::vector<std::string>(argv + 1, argv + argc));
}
