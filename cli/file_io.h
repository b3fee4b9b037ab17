// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CLI_FILE_IO_H_
#define PATCHFEED_CLI_FILE_IO_H_

/// \file
/// Whole-file reads and writes for the command-line tools ("-" is stdin/stdout). Errors name
/// the path and the system's reason.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"

namespace patchfeed::cli {

Result<std::vector<std::byte>> ReadWholeFile(const std::string& path);
/// Writes `head` then `data` (two writes, no concatenated copy of a large `data`).
Status WriteWholeFile(const std::string& path, std::span<const std::byte> data,
                      std::span<const std::byte> head = {});

}  // namespace patchfeed::cli

#endif  // PATCHFEED_CLI_FILE_IO_H_
