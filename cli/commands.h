// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CLI_COMMANDS_H_
#define PATCHFEED_CLI_COMMANDS_H_

/// \file
/// The `patchfeed` subcommands. Each takes the arguments after its name and returns a Status;
/// main() prints errors to stderr and turns them into the exit code.

#include <string>
#include <vector>

#include "common/status.h"

namespace patchfeed::cli {

/// `patchfeed compress IN OUT --typesize N --codec C --clevel L --filter F [--blosc1] ...`
Status RunCompress(const std::vector<std::string>& args);
/// `patchfeed decompress IN OUT [--max-bytes N]`
Status RunDecompress(const std::vector<std::string>& args);
/// `patchfeed info FILE`: a frame's metadata as JSON.
Status RunInfo(const std::vector<std::string>& args);
/// `patchfeed read FILE [--box a:b,...] [--pad V] --out OUT [--npy]`
Status RunRead(const std::vector<std::string>& args);
/// `patchfeed demo [--dir D] [--cases N] [--steps S] [--threads T] [--batch B] [--patch Z,Y,X]`:
/// writes a small nnU-Net-like dataset and runs the loader over it, printing throughput.
/// `patchfeed demo --codec [--mb N]`: encodes and decodes generated data, prints throughput.
Status RunDemo(const std::vector<std::string>& args);

}  // namespace patchfeed::cli

#endif  // PATCHFEED_CLI_COMMANDS_H_
