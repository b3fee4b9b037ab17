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

namespace patchfeed::cli {

namespace {

constexpr std::string_view kUsage =
    "usage: patchfeed <command> [args]\n"
    "commands:\n"
    "  demo [--dir D] [--cases N] [--steps S] [--threads T] [--batch B] [--patch Z,Y,X]\n"
    "        [--io mmap|pread] [--io-depth N]\n"
    "                                  write a small nnU-Net-like dataset, run the loader\n"
    "                                  (pread: N reads in flight, 0 synchronous; default 64)\n"
    "  demo --codec [--mb N]           encode and decode generated data, print throughput\n"
    "  compress IN OUT [options]       encode a raw file as one Blosc chunk\n"
    "      --typesize N --codec blosclz|lz4|lz4hc|zlib|zstd --clevel 0-9\n"
    "      --filter none|shuffle|bitshuffle|delta|trunc_prec|bytedelta[,...]\n"
    "      [--split auto|always|never] [--blocksize B] [--blosc1] [--dict]\n"
    "  decompress IN OUT [--max-bytes N]\n"
    "                                  decode one Blosc1 or Blosc2 chunk to raw bytes\n"
    "                                  (refused above N bytes, default 1 GiB)\n"
    "  info PATH [--level N]           a .b2nd frame's or zarr array's metadata as JSON\n"
    "  read PATH [--box a:b,c:d,...] [--pad V] --out OUT|- [--npy] [--io mmap|pread]\n"
    "        [--level N]               write a box of the array (C order), padded outside;\n"
    "                                  PATH: .b2nd, zarr v2/v3, OME-Zarr (--level)\n";

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

}  // namespace

int RunCli(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs(kUsage.data(), stderr);
    return 2;
  }
  const std::string& command = args[0];
  if (command == "-h" || command == "--help" || command == "help") {
    std::fputs(kUsage.data(), stdout);
    return 0;
  }
  const Command run = FindCommand(command);
  if (run == nullptr) {
    std::fprintf(stderr, "patchfeed: unknown command '%s'\n%s", command.c_str(), kUsage.data());
    return 2;
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
    std::fprintf(stderr, "patchfeed %s: %s\n", command.c_str(), status.ToString().c_str());
    return status.code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  return 0;
}

}  // namespace patchfeed::cli
