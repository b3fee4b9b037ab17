// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// The `patchfeed` command: dispatches to one subcommand; errors go to stderr, exit code 1
// (2 for usage errors).

#include "cli/run_cli.h"

#include <cstdio>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "cli/help_text.h"

namespace patchfeed::cli {

namespace {

using Command = Status (*)(const std::vector<std::string>&);

// nullptr for an unknown command.
Command FindCommand(std::string_view name) {
  if (name == "compress")
    return RunCompress;
  if (name == "decompress")
    return RunDecompress;
  if (name == "info")
    return RunInfo;
  if (name == "read")
    return RunRead;
  if (name == "demo")
    return RunDemo;
  return nullptr;
}

bool AsksForHelp(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "-h" || args[i] == "--help")
      return true;
  }
  return false;
}

}  // namespace

int RunCli(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs(OverviewHelp().data(), stderr);
    return 2;
  }
  const std::string& command = args[0];
  if (command == "-h" || command == "--help" || command == "help") {
    const std::string_view help = args.size() > 1 ? CommandHelp(args[1]) : OverviewHelp();
    std::fputs(help.empty() ? OverviewHelp().data() : help.data(), stdout);
    return 0;
  }
  if (command == "-V" || command == "--version") {
    std::fputs(VersionLine().data(), stdout);
    return 0;
  }
  const Command run = FindCommand(command);
  if (run == nullptr) {
    std::fprintf(stderr, "patchfeed: unknown command '%s'\n%s", command.c_str(),
                 OverviewHelp().data());
    return 2;
  }
  if (AsksForHelp(args)) {
    std::fputs(CommandHelp(command).data(), stdout);
    return 0;
  }
  Status status;
  try {
    status = run(std::vector<std::string>(args.begin() + 1, args.end()));
  } catch (const std::bad_alloc&) {
    // Commands size what they allocate from checked fields and report what does not fit;
    // this is the last line of defence, so a failed allocation is never an abort.
    status = ResourceExhaustedError("out of memory");
  }
  if (!status.ok()) {
    // Users read the message alone; the status code only picks the exit code.
    std::fprintf(stderr, "patchfeed %s: %.*s\n", command.c_str(),
                 static_cast<int>(status.message().size()), status.message().data());
    if (status.code() == StatusCode::kInvalidArgument) {
      std::fprintf(stderr, "(patchfeed %s --help lists its arguments and options)\n",
                   command.c_str());
      return 2;
    }
    return 1;
  }
  return 0;
}

}  // namespace patchfeed::cli
