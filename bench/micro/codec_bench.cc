// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// Chunk decode and encode throughput, one thread, patchfeed beside c-blosc2 on the same chunks.
//
// Names spell the parameters: BM_Decode/<lib>/<data>/<codec>-<clevel>/<filter>/<MB>, where
// <lib> is patchfeed or cblosc2. Both decode the chunk c-blosc2 wrote (when c-blosc2 is
// linked; else patchfeed's own), so a row pair is a like-for-like comparison. The table in
// bench/README.md is made by bench/e2e/codec_table.py from this binary's JSON output.

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <benchmark/benchmark.h>

#include "codec/blosc/block_decoder.h"
#include "codec/blosc/chunk_encoder.h"

#ifdef PATCHFEED_BENCH_WITH_CBLOSC2
#include <blosc2.h>
#endif

namespace patchfeed::codec {
namespace {

struct Config {
  const char* data;  // "float32" or "uint8"
  Codec codec;
  int clevel;
  Filter filter;
  size_t mb;
};

// Smooth float32 like a CT volume: sines plus blobs, quantised to 1/16 as scanners do.
std::vector<std::byte> SmoothFloat32(size_t nbytes) {
  std::vector<std::byte> out(nbytes);
  for (size_t i = 0; i < nbytes / 4; ++i) {
    const double x = static_cast<double>(i % 128), y = static_cast<double>((i / 128) % 128);
    const double z = static_cast<double>(i / 16384);
    double v = 300.0 * std::sin(x / 19.0) * std::cos(y / 23.0) + 2.0 * z +
               200.0 * std::exp(-((x - 64) * (x - 64) + (y - 50) * (y - 50)) / 300.0) +
               static_cast<double>((i * 2654435761u) % 7);
    const float f = static_cast<float>(std::round(v * 16.0) / 16.0);
    std::memcpy(out.data() + i * 4, &f, 4);
  }
  return out;
}

// A label map: background with nested blobs.
std::vector<std::byte> Labels(size_t nbytes) {
  std::vector<std::byte> out(nbytes);
  for (size_t i = 0; i < nbytes; ++i) {
    const long x = static_cast<long>(i % 128) - 64, y = static_cast<long>((i / 128) % 128) - 60;
    const long z = static_cast<long>((i / 16384) % 64) - 32;
    const long r2 = x * x + y * y + z * z;
    out[i] = std::byte{static_cast<uint8_t>(r2 < 300 ? 2 : (r2 < 1200 ? 1 : 0))};
  }
  return out;
}

const std::vector<std::byte>& Data(const std::string& kind, size_t nbytes) {
  static std::map<std::pair<std::string, size_t>, std::vector<std::byte>> cache;
  auto& d = cache[{kind, nbytes}];
  if (d.empty())
    d = kind == "float32" ? SmoothFloat32(nbytes) : Labels(nbytes);
  return d;
}

int32_t Typesize(const Config& c) { return std::string(c.data) == "float32" ? 4 : 1; }

#ifdef PATCHFEED_BENCH_WITH_CBLOSC2
blosc2_context* CBlosc2Cctx(const Config& c) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = static_cast<uint8_t>(c.codec);
  cp.clevel = static_cast<uint8_t>(c.clevel);
  cp.typesize = Typesize(c);
  cp.nthreads = 1;
  for (auto& f : cp.filters)
    f = 0;
  cp.filters[BLOSC2_MAX_FILTERS - 1] = static_cast<uint8_t>(c.filter);
  return blosc2_create_cctx(cp);
}

blosc2_context* CBlosc2Dctx() {
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 1;
  return blosc2_create_dctx(dp);
}
#endif

// The chunk both libraries decode: c-blosc2's when linked, else patchfeed's.
std::vector<std::byte> ReferenceChunk(const Config& c) {
  const auto& data = Data(c.data, c.mb << 20);
#ifdef PATCHFEED_BENCH_WITH_CBLOSC2
  static bool initialised = (blosc2_init(), true);
  (void)initialised;
  blosc2_context* cctx = CBlosc2Cctx(c);
  std::vector<std::byte> chunk(data.size() + BLOSC2_MAX_OVERHEAD);
  const int n = blosc2_compress_ctx(cctx, data.data(), static_cast<int32_t>(data.size()),
                                    chunk.data(), static_cast<int32_t>(chunk.size()));
  blosc2_free_ctx(cctx);
  chunk.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return chunk;
#else
  EncodeOptions o;
  o.typesize = Typesize(c);
  o.codec = c.codec;
  o.clevel = c.clevel;
  o.filters[0] = c.filter;
  return *CompressChunk(o, data);
#endif
}

void BM_DecodePatchfeed(benchmark::State& state, Config c) {
  const auto chunk = ReferenceChunk(c);
  std::vector<std::byte> out(c.mb << 20);
  BlockDecoder decoder;
  for (auto _ : state) {
    const Status st = decoder.DecodeChunk(chunk, out);
    if (!st.ok())
      state.SkipWithError(st.ToString().c_str());
    benchmark::DoNotOptimize(out.data());
  }
  if (out != Data(c.data, c.mb << 20))
    state.SkipWithError("decoded data differs");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * out.size()));
  state.counters["ratio"] = static_cast<double>(out.size()) / static_cast<double>(chunk.size());
}

void BM_EncodePatchfeed(benchmark::State& state, Config c) {
  const auto& data = Data(c.data, c.mb << 20);
  EncodeOptions o;
  o.typesize = Typesize(c);
  o.codec = c.codec;
  o.clevel = c.clevel;
  o.filters[0] = c.filter;
  ChunkEncoder encoder;
  std::vector<std::byte> chunk(ChunkEncoder::MaxEncodedSize(data.size()));
  size_t size = 0;
  for (auto _ : state) {
    size = *encoder.Encode(o, data, chunk);
    benchmark::DoNotOptimize(chunk.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * data.size()));
  state.counters["ratio"] = static_cast<double>(data.size()) / static_cast<double>(size);
}

#ifdef PATCHFEED_BENCH_WITH_CBLOSC2
void BM_DecodeCBlosc2(benchmark::State& state, Config c) {
  const auto chunk = ReferenceChunk(c);
  std::vector<std::byte> out(c.mb << 20);
  blosc2_context* dctx = CBlosc2Dctx();
  for (auto _ : state) {
    const int n = blosc2_decompress_ctx(dctx, chunk.data(), static_cast<int32_t>(chunk.size()),
                                        out.data(), static_cast<int32_t>(out.size()));
    if (n < 0)
      state.SkipWithError("c-blosc2 failed");
    benchmark::DoNotOptimize(out.data());
  }
  blosc2_free_ctx(dctx);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * out.size()));
  state.counters["ratio"] = static_cast<double>(out.size()) / static_cast<double>(chunk.size());
}

void BM_EncodeCBlosc2(benchmark::State& state, Config c) {
  const auto& data = Data(c.data, c.mb << 20);
  blosc2_context* cctx = CBlosc2Cctx(c);
  std::vector<std::byte> chunk(data.size() + BLOSC2_MAX_OVERHEAD);
  int n = 0;
  for (auto _ : state) {
    n = blosc2_compress_ctx(cctx, data.data(), static_cast<int32_t>(data.size()), chunk.data(),
                            static_cast<int32_t>(chunk.size()));
    benchmark::DoNotOptimize(chunk.data());
  }
  blosc2_free_ctx(cctx);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * data.size()));
  state.counters["ratio"] = static_cast<double>(data.size()) / static_cast<double>(n);
}
#endif

std::string ConfigName(const Config& c) {
  return std::string(c.data) + "/" + std::string(CodecName(c.codec)) + "-" +
         std::to_string(c.clevel) + "/" + FilterName(static_cast<uint8_t>(c.filter)) + "/" +
         std::to_string(c.mb) + "MB";
}

int RegisterAll() {
  const std::tuple<Codec, int> codecs[] = {{Codec::kLZ4, 5},  {Codec::kLZ4HC, 5},
                                           {Codec::kZstd, 1}, {Codec::kZstd, 5},
                                           {Codec::kZstd, 8}, {Codec::kBloscLZ, 5}};
  for (const char* data : {"float32", "uint8"}) {
    for (const auto& [codec, clevel] : codecs) {
      for (Filter filter : {Filter::kShuffle, Filter::kBitShuffle}) {
        for (size_t mb : {size_t{1}, size_t{8}}) {
          const Config c{data, codec, clevel, filter, mb};
          const std::string name = ConfigName(c);
          benchmark::RegisterBenchmark(("BM_Decode/patchfeed/" + name).c_str(), BM_DecodePatchfeed,
                                       c);
#ifdef PATCHFEED_BENCH_WITH_CBLOSC2
          benchmark::RegisterBenchmark(("BM_Decode/cblosc2/" + name).c_str(), BM_DecodeCBlosc2, c);
#endif
          benchmark::RegisterBenchmark(("BM_Encode/patchfeed/" + name).c_str(), BM_EncodePatchfeed,
                                       c);
#ifdef PATCHFEED_BENCH_WITH_CBLOSC2
          benchmark::RegisterBenchmark(("BM_Encode/cblosc2/" + name).c_str(), BM_EncodeCBlosc2, c);
#endif
        }
      }
    }
  }
  return 0;
}

const int registered = RegisterAll();

}  // namespace
}  // namespace patchfeed::codec

BENCHMARK_MAIN();
