// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any bytes as a zarr chunk or shard file must read as data or give an
// error, never crash, hang, read out of bounds or allocate by an untrusted size (ASan/UBSan).
//
// Input: byte 0 picks one of kLayouts (a zarr v2 or v3 array of shape (8, 12), one chunk or one
// shard); the rest is that chunk's (shard's) file. The fuzzer writes both into a scratch
// directory and reads three boxes through ZarrArrayReader: the whole array, one that crosses
// the border, and one inside a corner (a partial Blosc decode; one inner chunk of a shard).
// Reads must leave the destination's guard bytes untouched. Seed corpus:
// tests/fuzz/make_zarr_read_corpus.py (chunks zarr-python 3.1 writes for the same layouts).

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "codec/zarr/zarr_reader.h"

namespace {

namespace fs = std::filesystem;
using namespace patchfeed::codec;

struct Layout {
  const char* meta_name;  // ".zarray" or "zarr.json"
  const char* chunk_key;  // the one chunk's (shard's) key
  const char* meta;
};

// Kept in step with tests/fuzz/make_zarr_read_corpus.py.
constexpr Layout kLayouts[] = {
    {".zarray", "0.0",
     R"({"zarr_format": 2, "shape": [8, 12], "chunks": [8, 12], "dtype": "<u2", "order": "C",
         "fill_value": 0, "filters": null, "compressor": {"id": "blosc", "cname": "lz4",
         "clevel": 5, "shuffle": 1, "blocksize": 64}})"},
    {".zarray", "0.0",
     R"({"zarr_format": 2, "shape": [8, 12], "chunks": [8, 12], "dtype": ">i4", "order": "C",
         "fill_value": 3, "filters": null, "compressor": {"id": "zstd", "level": 1}})"},
    {".zarray", "0.0",
     R"({"zarr_format": 2, "shape": [8, 12], "chunks": [8, 12], "dtype": "<f4", "order": "C",
         "fill_value": 0.0, "filters": null, "compressor": {"id": "lz4", "acceleration": 1}})"},
    {".zarray", "0.0",
     R"({"zarr_format": 2, "shape": [8, 12], "chunks": [8, 12], "dtype": "<i2", "order": "C",
         "fill_value": 0, "filters": null, "compressor": {"id": "gzip", "level": 1}})"},
    {".zarray", "0.0",
     R"({"zarr_format": 2, "shape": [8, 12], "chunks": [8, 12], "dtype": "|u1", "order": "C",
         "fill_value": 0, "filters": null, "compressor": {"id": "zlib", "level": 1}})"},
    {"zarr.json", "c/0/0",
     R"({"zarr_format": 3, "node_type": "array", "shape": [8, 12], "data_type": "uint16",
         "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 12]}},
         "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
         "fill_value": 0, "codecs": [{"name": "sharding_indexed", "configuration": {
           "chunk_shape": [4, 6], "codecs": [{"name": "bytes", "configuration":
           {"endian": "little"}}, {"name": "blosc", "configuration": {"typesize": 2,
           "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "blocksize": 0}}],
           "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
           {"name": "crc32c"}], "index_location": "end"}}],
         "attributes": {}, "storage_transformers": []})"},
    {"zarr.json", "c/0/0",
     R"({"zarr_format": 3, "node_type": "array", "shape": [8, 12], "data_type": "int16",
         "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 12]}},
         "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
         "fill_value": 7, "codecs": [{"name": "sharding_indexed", "configuration": {
           "chunk_shape": [4, 6], "codecs": [{"name": "bytes", "configuration":
           {"endian": "big"}}, {"name": "zstd", "configuration": {"level": 0,
           "checksum": false}}], "index_codecs": [{"name": "bytes", "configuration":
           {"endian": "little"}}], "index_location": "start"}}],
         "attributes": {}, "storage_transformers": []})"},
    {"zarr.json", "c/0/0",
     R"({"zarr_format": 3, "node_type": "array", "shape": [8, 12], "data_type": "float32",
         "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 12]}},
         "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
         "fill_value": 0.0, "codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}},
         {"name": "bytes", "configuration": {"endian": "little"}},
         {"name": "gzip", "configuration": {"level": 1}}, {"name": "crc32c"}],
         "attributes": {}, "storage_transformers": []})"},
};
constexpr size_t kNumLayouts = sizeof(kLayouts) / sizeof(kLayouts[0]);

// The scratch directory of this process, one per layout, metadata written once (libFuzzer
// ends with _Exit, so `make fuzz` removes it).
std::string LayoutDir(size_t layout) {
  static const std::string root = [] {
    // Memory-backed when there is one: every input writes a file.
    std::error_code ec;
    const fs::path base =
        fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
    const fs::path p = base / ("patchfeed_zarr_fuzz_" + std::to_string(getpid()));
    fs::create_directories(p);
    return p.string();
  }();
  const std::string dir = root + "/" + std::to_string(layout);
  static bool written[kNumLayouts] = {};
  if (!written[layout]) {
    fs::create_directories(dir + "/c/0");
    std::ofstream(dir + "/" + kLayouts[layout].meta_name) << kLayouts[layout].meta;
    written[layout] = true;
  }
  return dir;
}

void ReadAndCheck(const ZarrArrayReader& array, const Box& box) {
  std::vector<int64_t> shape;
  int64_t n = array.itemsize();
  for (size_t d = 0; d < box.start.size(); ++d) {
    shape.push_back(box.stop[d] - box.start[d]);
    n *= shape.back();
  }
  constexpr size_t kGuard = 64;
  std::vector<std::byte> buf(static_cast<size_t>(n) + 2 * kGuard, std::byte{0x5A});
  const std::vector<std::byte> pad(static_cast<size_t>(array.itemsize()), std::byte{0});
  BoxReadScratch scratch;
  (void)array.ReadBox(box, NdView::Contiguous(buf.data() + kGuard, shape, array.itemsize()), pad,
                      scratch);
  for (size_t i = 0; i < kGuard; ++i) {
    if (buf[i] != std::byte{0x5A} || buf[buf.size() - 1 - i] != std::byte{0x5A})
      std::abort();  // a read wrote outside its destination
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1)
    return 0;
  const size_t layout = data[0] % kNumLayouts;
  const std::string dir = LayoutDir(layout);
  {
    std::ofstream chunk(dir + "/" + kLayouts[layout].chunk_key, std::ios::binary | std::ios::trunc);
    chunk.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  auto array = ZarrArrayReader::Open(dir, patchfeed::storage::LocalFiles());
  if (!array.ok())
    std::abort();  // the metadata is fixed and valid
  ReadAndCheck(*array, Box{{0, 0}, {8, 12}});
  ReadAndCheck(*array, Box{{-2, 5}, {3, 15}});
  ReadAndCheck(*array, Box{{5, 7}, {8, 12}});
  return 0;
}
