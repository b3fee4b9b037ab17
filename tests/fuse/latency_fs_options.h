// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_TESTS_FUSE_LATENCY_FS_OPTIONS_H_
#define PATCHFEED_TESTS_FUSE_LATENCY_FS_OPTIONS_H_

/// \file
/// The command line of patchfeed_latency_fs (tests/fuse/latency_fs.cc, which documents what
/// each option does) as a struct.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace patchfeed::latency_fs {

/// What the file system was asked for; immutable once mounted.
struct Options {
  std::string source;
  std::string mountpoint;
  int64_t delay_us = 0;
  double bandwidth_bytes_per_s = 0;  // --bandwidth-mbps * 10^6; 0: unlimited
  uint64_t max_read = 128 * 1024;
  std::string eio_substring;
  uint64_t eio_begin = 0;  // --eio-range: reads overlapping [eio_begin, eio_end) fail
  uint64_t eio_end = std::numeric_limits<uint64_t>::max();
  std::string short_read_substring;
  std::string stats_path;
  bool foreground = false;
  bool debug = false;
  std::vector<std::string> fuse_options;  // -o values passed to libfuse
};

/// Parses `argv` into `options`. Returns false after printing why (and the usage) to stderr;
/// `--help` prints the usage and exits.
bool ParseOptions(int argc, char** argv, Options* options);

}  // namespace patchfeed::latency_fs

#endif  // PATCHFEED_TESTS_FUSE_LATENCY_FS_OPTIONS_H_
