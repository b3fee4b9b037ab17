// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// `patchfeed demo`: the README's first command. Until the loader exists it generates a smooth
// float32 volume and a uint8 label volume, encodes them as 1 MiB chunks with the codecs a
// training set uses, decodes them back, checks every byte and prints ratio and throughput.

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "codec/block_decoder.h"
#include "codec/chunk_encoder.h"

namespace patchfeed::cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kChunkBytes = 1 << 20;

struct DemoCase {
  const char* name;
  codec::Codec codec;
  int clevel;
  codec::Filter filter;
};

// A CT-like field: smooth intensity with a few blobs, stored as float32.
std::vector<std::byte> MakeImage(size_t nbytes) {
  const size_t n = nbytes / sizeof(float);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(i % 256), y = static_cast<double>((i / 256) % 256);
    const double z = static_cast<double>(i / 65536);
    v[i] = static_cast<float>(100.0 * std::sin(x / 17.0) * std::cos(y / 23.0) + z * 0.5 +
                              40.0 * std::exp(-((x - 128) * (x - 128) + (y - 96) * (y - 96)) /
                                              900.0));
  }
  std::vector<std::byte> out(n * sizeof(float));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// A segmentation: background with two nested labelled spheres per 256^2 slab.
std::vector<std::byte> MakeLabels(size_t nbytes) {
  std::vector<std::byte> out(nbytes);
  for (size_t i = 0; i < nbytes; ++i) {
    const long x = static_cast<long>(i % 256) - 128, y = static_cast<long>((i / 256) % 256) - 128;
    const long r2 = x * x + y * y;
    out[i] = std::byte{static_cast<uint8_t>(r2 < 900 ? 2 : (r2 < 3600 ? 1 : 0))};
  }
  return out;
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

Status RunCase(const DemoCase& c, int32_t typesize, const std::vector<std::byte>& data) {
  codec::EncodeOptions o;
  o.typesize = typesize;
  o.codec = c.codec;
  o.clevel = c.clevel;
  o.filters[0] = c.filter;
  codec::ChunkEncoder encoder;
  codec::BlockDecoder decoder;
  std::vector<std::vector<std::byte>> chunks;
  size_t cbytes = 0;
  const auto t0 = Clock::now();
  for (size_t off = 0; off < data.size(); off += kChunkBytes) {
    const size_t n = std::min(kChunkBytes, data.size() - off);
    std::vector<std::byte> chunk(codec::ChunkEncoder::MaxEncodedSize(n));
    PATCHFEED_ASSIGN_OR_RETURN(const size_t size,
                               encoder.Encode(o, std::span(data).subspan(off, n), chunk));
    chunk.resize(size);
    cbytes += size;
    chunks.push_back(std::move(chunk));
  }
  const auto t1 = Clock::now();
  std::vector<std::byte> out(data.size());
  constexpr int kRepeats = 3;
  for (int r = 0; r < kRepeats; ++r) {
    size_t off = 0;
    for (const auto& chunk : chunks) {
      const size_t n = std::min(kChunkBytes, data.size() - off);
      PATCHFEED_RETURN_IF_ERROR(decoder.DecodeChunk(chunk, std::span(out).subspan(off, n)));
      off += n;
    }
  }
  const auto t2 = Clock::now();
  if (out != data) return InternalError(std::string(c.name) + ": decoded data differs");
  const double mb = static_cast<double>(data.size()) / 1e6;
  std::printf("  %-22s ratio %6.2fx   encode %7.0f MB/s   decode %7.0f MB/s\n", c.name,
              static_cast<double>(data.size()) / static_cast<double>(cbytes),
              mb / Seconds(t1 - t0), mb * kRepeats / Seconds(t2 - t1));
  return Status::Ok();
}

}  // namespace

Status RunDemo(const std::vector<std::string>& argv) {
  PATCHFEED_ASSIGN_OR_RETURN(const ParsedArgs args, ParseArgs(argv, {"mb"}, {}));
  PATCHFEED_ASSIGN_OR_RETURN(const long long mb, args.GetInt("mb", 16));
  if (mb < 1 || mb > 4096) return InvalidArgumentError("--mb must be in 1..4096");
  const size_t nbytes = static_cast<size_t>(mb) << 20;
  const DemoCase cases[] = {
      {"lz4 shuffle", codec::Codec::kLZ4, 5, codec::Filter::kShuffle},
      {"lz4hc-5 shuffle", codec::Codec::kLZ4HC, 5, codec::Filter::kShuffle},
      {"zstd-1 shuffle", codec::Codec::kZstd, 1, codec::Filter::kShuffle},
      {"zstd-5 bitshuffle", codec::Codec::kZstd, 5, codec::Filter::kBitShuffle},
      {"blosclz-5 shuffle", codec::Codec::kBloscLZ, 5, codec::Filter::kShuffle},
  };
  std::printf("patchfeed demo: %lld MiB per array, 1 MiB chunks, one thread, verified\n", mb);
  std::printf("float32 image (smooth field):\n");
  const auto image = MakeImage(nbytes);
  for (const auto& c : cases) PATCHFEED_RETURN_IF_ERROR(RunCase(c, 4, image));
  std::printf("uint8 labels:\n");
  const auto labels = MakeLabels(nbytes);
  for (const auto& c : cases) PATCHFEED_RETURN_IF_ERROR(RunCase(c, 1, labels));
  return Status::Ok();
}

}  // namespace patchfeed::cli
