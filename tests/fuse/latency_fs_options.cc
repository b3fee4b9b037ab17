// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "tests/fuse/latency_fs_options.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace patchfeed::latency_fs {
namespace {

constexpr const char kUsage[] =
    "usage: patchfeed_latency_fs --source DIR MOUNTPOINT [-f] [-d] [--delay-us N]\n"
    "    [--bandwidth-mbps MB_PER_S] [--max-read BYTES] [--eio-path-substring S]\n"
    "    [--eio-range BEGIN:END] [--short-read-path-substring S] [--stats FILE]\n"
    "    [-o FUSE_OPTIONS]\n";

// libfuse 3 reads requests into buffers of FUSE_MAX_MAX_PAGES (256) pages plus a header, and
// Linux's default fs.fuse.max_pages_limit is 256 pages too: larger requests cannot be had.
constexpr uint64_t kMaxMaxRead = 1 << 20;

template <typename T>
bool ParseNumber(std::string_view text, T* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

}  // namespace

bool ParseOptions(int argc, char** argv, Options* options) {
  std::vector<std::string_view> positional;
  for (int i = 1; i < argc; ++i) {
    const char* option = argv[i];
    const std::string_view arg = option;
    auto value = [&](std::string_view* out) {
      if (i + 1 >= argc)
        return false;
      *out = argv[++i];
      return true;
    };
    std::string_view v;
    bool ok = true;
    if (arg == "-f") {
      options->foreground = true;
    } else if (arg == "-d") {
      options->debug = options->foreground = true;
    } else if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "--source") {
      ok = value(&v);
      options->source = v;
    } else if (arg == "--delay-us") {
      ok = value(&v) && ParseNumber(v, &options->delay_us) && options->delay_us >= 0;
    } else if (arg == "--bandwidth-mbps") {
      double mbps = 0;
      ok = value(&v) && ParseNumber(v, &mbps) && mbps >= 0;
      options->bandwidth_bytes_per_s = mbps * 1e6;
    } else if (arg == "--max-read") {
      ok = value(&v) && ParseNumber(v, &options->max_read) && options->max_read >= 4096 &&
           options->max_read <= kMaxMaxRead;
    } else if (arg == "--eio-path-substring") {
      ok = value(&v) && !v.empty();
      options->eio_substring = v;
    } else if (arg == "--eio-range") {
      ok = value(&v);
      const size_t colon = v.find(':');
      ok = ok && colon != std::string_view::npos &&
           ParseNumber(v.substr(0, colon), &options->eio_begin) &&
           ParseNumber(v.substr(colon + 1), &options->eio_end) &&
           options->eio_begin < options->eio_end;
    } else if (arg == "--short-read-path-substring") {
      ok = value(&v) && !v.empty();
      options->short_read_substring = v;
    } else if (arg == "--stats") {
      ok = value(&v);
      options->stats_path = v;
    } else if (arg == "-o") {
      ok = value(&v);
      options->fuse_options.emplace_back(v);
    } else if (arg.starts_with("-")) {
      std::fprintf(stderr, "latency_fs: unknown option %s\n%s", option, kUsage);
      return false;
    } else {
      positional.push_back(arg);
    }
    if (!ok) {
      std::fprintf(stderr, "latency_fs: bad value for %s\n%s", option, kUsage);
      return false;
    }
  }
  if (options->source.empty() || positional.size() != 1) {
    std::fprintf(stderr, "latency_fs: need --source DIR and one MOUNTPOINT\n%s", kUsage);
    return false;
  }
  options->mountpoint = positional[0];
  return true;
}

}  // namespace patchfeed::latency_fs
