// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// `patchfeed demo`: the README's first command. Writes a small nnU-Net-like dataset (float32
// images and int16 segmentations as .b2nd, LZ4HC level 5 + shuffle, nnU-Net's chunk layout)
// into a temporary folder (or --dir), runs the loader over it like a training loop would, with
// a progress line, checks the first batches against single-threaded reads, and prints the
// throughput and where the time went.
//
// `patchfeed demo --codec [--mb N]`: the codec alone. Generates a smooth float32 volume and a
// uint8 label volume, encodes them as 1 MiB chunks with the codecs a training set uses, decodes
// them back, checks every byte and prints ratio and throughput.

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "codec/b2nd/nd_reader.h"
#include "codec/blosc/block_decoder.h"
#include "codec/blosc/chunk_encoder.h"
#include "codec/dtype.h"
#include "common/str_cat.h"
#include "loader/loader.h"
#include "loader/synthetic_dataset.h"

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
    v[i] =
        static_cast<float>(100.0 * std::sin(x / 17.0) * std::cos(y / 23.0) + z * 0.5 +
                           40.0 * std::exp(-((x - 128) * (x - 128) + (y - 96) * (y - 96)) / 900.0));
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
  if (out != data)
    return InternalError(std::string(c.name) + ": decoded data differs");
  const double mb = static_cast<double>(data.size()) / 1e6;
  std::printf("  %-22s ratio %6.2fx   encode %7.0f MB/s   decode %7.0f MB/s\n", c.name,
              static_cast<double>(data.size()) / static_cast<double>(cbytes), mb / Seconds(t1 - t0),
              mb * kRepeats / Seconds(t2 - t1));
  return Status::Ok();
}

Status RunCodecDemo(const ParsedArgs& args) {
  PATCHFEED_ASSIGN_OR_RETURN(const long long mb, args.GetInt("mb", 16));
  if (mb < 1 || mb > 4096)
    return InvalidArgumentError("--mb must be in 1..4096");
  const size_t nbytes = static_cast<size_t>(mb) << 20;
  const DemoCase cases[] = {
      {"lz4 shuffle", codec::Codec::kLZ4, 5, codec::Filter::kShuffle},
      {"lz4hc-5 shuffle", codec::Codec::kLZ4HC, 5, codec::Filter::kShuffle},
      {"zstd-1 shuffle", codec::Codec::kZstd, 1, codec::Filter::kShuffle},
      {"zstd-5 bitshuffle", codec::Codec::kZstd, 5, codec::Filter::kBitShuffle},
      {"blosclz-5 shuffle", codec::Codec::kBloscLZ, 5, codec::Filter::kShuffle},
  };
  std::printf("patchfeed demo --codec: %lld MiB per array, 1 MiB chunks, one thread, verified\n",
              mb);
  std::printf("float32 image (smooth field):\n");
  const auto image = MakeImage(nbytes);
  for (const auto& c : cases)
    PATCHFEED_RETURN_IF_ERROR(RunCase(c, 4, image));
  std::printf("uint8 labels:\n");
  const auto labels = MakeLabels(nbytes);
  for (const auto& c : cases)
    PATCHFEED_RETURN_IF_ERROR(RunCase(c, 1, labels));
  return Status::Ok();
}

Result<std::vector<int64_t>> ParseList(const std::string& text, size_t n) {
  std::vector<int64_t> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string part = text.substr(pos, comma - pos);
    char* end = nullptr;
    const long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || v <= 0) {
      return InvalidArgumentError("--patch expects positive integers like 64,64,64");
    }
    out.push_back(v);
    pos = comma + 1;
  }
  if (out.size() != n) {
    return InvalidArgumentError(StrCat("--patch needs ", n, " values"));
  }
  return out;
}

// The loader's batches against NdArrayReader::ReadBox of the same boxes, one thread.
Status VerifyBatch(const loader::Lease& lease, const loader::Dataset& ds,
                   const std::vector<int64_t>& patch) {
  for (const loader::ArrayView& view : lease.arrays()) {
    const int array = ds.array_index(view.name);
    PATCHFEED_ASSIGN_OR_RETURN(
        auto pad, codec::ItemFromDouble(view.dtype, view.itemsize, view.name == "seg" ? -1 : 0));
    for (size_t j = 0; j < lease.samples().size(); ++j) {
      const loader::SampleSpec& s = lease.samples()[j];
      PATCHFEED_ASSIGN_OR_RETURN(auto reader,
                                 codec::NdArrayReader::Open(ds.path(s.case_index, array)));
      codec::Box box{{0}, {view.shape[1]}};
      for (size_t d = 0; d < patch.size(); ++d) {
        box.start.push_back(s.box_start[d]);
        box.stop.push_back(s.box_start[d] + patch[d]);
      }
      PATCHFEED_ASSIGN_OR_RETURN(const auto expected, reader.ReadBox(box, pad));
      if (std::memcmp(expected.data(), view.data + static_cast<int64_t>(j) * view.byte_strides[0],
                      expected.size()) != 0) {
        return InternalError(StrCat("batch ", lease.batch_index(), ", sample ", j, ": '", view.name,
                                    "' differs from a single-threaded read"));
      }
    }
  }
  return Status::Ok();
}

Status RunLoaderDemo(const ParsedArgs& args) {
  PATCHFEED_ASSIGN_OR_RETURN(const long long cases, args.GetInt("cases", 8));
  PATCHFEED_ASSIGN_OR_RETURN(const long long steps, args.GetInt("steps", 300));
  PATCHFEED_ASSIGN_OR_RETURN(const long long threads, args.GetInt("threads", 0));
  PATCHFEED_ASSIGN_OR_RETURN(const long long batch, args.GetInt("batch", 4));
  PATCHFEED_ASSIGN_OR_RETURN(const long long io_depth, args.GetInt("io-depth", 64));
  const std::string io = args.Get("io").value_or("mmap");
  if (io != "mmap" && io != "pread") {
    return InvalidArgumentError(StrCat("--io mmap|pread, not '", io, "'"));
  }
  PATCHFEED_ASSIGN_OR_RETURN(const auto patch,
                             ParseList(args.Get("patch").value_or("64,64,64"), 3));
  if (cases < 1 || cases > 1000 || steps < 1 || threads < 0 || batch < 1) {
    return InvalidArgumentError("--cases 1..1000, --steps >= 1, --batch >= 1, --threads >= 0");
  }
  // The dataset: in --dir (kept), else a fresh temporary folder (removed at the end).
  std::string dir = args.Get("dir").value_or("");
  const bool temporary = dir.empty();
  if (temporary) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "patchfeed_demo_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      return IoError("cannot create a temporary folder");
    }
    dir = tmpl;
  }
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      if (!dir.empty()) {
        std::filesystem::remove_all(dir, ec);
      }
    }
  } cleanup{temporary && !args.has_flag("keep") ? dir : ""};

  loader::SyntheticDatasetOptions synth;
  synth.num_cases = static_cast<int>(cases);
  synth.patch_size = patch;
  synth.spatial_shape = {patch[0] * 3 / 2, patch[1] * 7 / 4, patch[2] * 3 / 2};
  std::printf("patchfeed demo: writing %lld nnU-Net-like cases to %s\n", cases, dir.c_str());
  const auto t_write = Clock::now();
  loader::LoaderConfig config;
  PATCHFEED_ASSIGN_OR_RETURN(config.dataset, loader::WriteSyntheticDataset(dir, synth));
  int64_t file_bytes = 0;
  for (const auto& c : config.dataset.cases()) {
    for (const auto& path : c.paths) {
      file_bytes += static_cast<int64_t>(std::filesystem::file_size(path));
    }
  }
  const auto image_shape = loader::SyntheticCaseShape(synth, 0);
  std::printf(
      "  image (1, %lld, %lld, %lld) float32 + seg int16 per case (sizes vary), "
      "LZ4HC-5 + shuffle: %.1f MB on disk, written in %.2f s\n",
      static_cast<long long>(image_shape[0]), static_cast<long long>(image_shape[1]),
      static_cast<long long>(image_shape[2]), static_cast<double>(file_bytes) / 1e6,
      Seconds(Clock::now() - t_write));

  config.sampler.patch_size = patch;
  config.sampler.need_to_pad.assign(3, 0);
  config.sampler.batch_size = batch;
  config.sampler.oversample_foreground = 0.33;
  config.sampler.seed = 2026;
  config.num_threads = static_cast<int>(threads);
  config.io_mode = io == "pread" ? storage::IoMode::kPread : storage::IoMode::kMmap;
  config.io_depth = static_cast<int>(io_depth);
  const auto t_create = Clock::now();
  PATCHFEED_ASSIGN_OR_RETURN(auto ld, loader::Loader::Create(config));
  int64_t slot_bytes = 0;
  for (const loader::ArrayView& v : ld->array_layout()) {
    slot_bytes += v.nbytes;
  }
  std::printf("  loader: %d threads, foreground indexes built, ready in %.2f s\n",
              ld->num_threads(), Seconds(Clock::now() - t_create));
  std::printf(
      "  ring: %d slots of %.1f MB, %s\n", config.ring_size, static_cast<double>(slot_bytes) / 1e6,
      ld->pinned() ? "pinned for CUDA" : ("plain memory (" + ld->unpinned_reason() + ")").c_str());
  if (const loader::LoaderMetrics m = ld->metrics(); !m.io_backend.empty()) {
    std::printf("  io: pread, up to %d reads in flight through %s\n", m.io_depth,
                m.io_backend.c_str());
  } else {
    std::printf("  io: %s\n", config.io_mode == storage::IoMode::kMmap
                                  ? "mmap (chunks decoded from the page cache)"
                                  : "pread, one read at a time inside the decode tasks");
  }
  std::printf(
      "  batch: image (%lld, 1, %lld, %lld, %lld) <f4, seg (%lld, 1, ...) <i2; "
      "a third of the samples centred on foreground\n",
      batch, static_cast<long long>(patch[0]), static_cast<long long>(patch[1]),
      static_cast<long long>(patch[2]), batch);

  const bool tty = isatty(STDOUT_FILENO) != 0;
  const auto t0 = Clock::now();
  int64_t foreground = 0, labels = 0;
  for (long long step = 0; step < steps; ++step) {
    PATCHFEED_ASSIGN_OR_RETURN(loader::Lease lease, ld->Next());
    if (step < 3) {
      PATCHFEED_RETURN_IF_ERROR(VerifyBatch(lease, config.dataset, patch));
    }
    const loader::ArrayView* seg = lease.array("seg");
    const auto* p = reinterpret_cast<const int16_t*>(seg->data);
    for (int64_t i = 0; i < seg->nbytes / 2; ++i) {
      foreground += p[i] > 0;
    }
    labels += seg->nbytes / 2;
    if ((tty && (step + 1) % 10 == 0) || step + 1 == steps || (step + 1) % 100 == 0) {
      const double s = Seconds(Clock::now() - t0);
      std::printf("%s  batch %lld/%lld  %7.1f samples/s  %7.0f MB/s%s", tty ? "\r" : "", step + 1,
                  steps, static_cast<double>((step + 1) * batch) / s,
                  static_cast<double>(ld->metrics().bytes_delivered) / s / 1e6, tty ? "" : "\n");
      std::fflush(stdout);
    }
  }
  const double seconds = Seconds(Clock::now() - t0);
  if (tty) {
    std::printf("\n");
  }
  const loader::LoaderMetrics m = ld->metrics();
  std::printf("  first 3 batches match single-threaded reads; foreground %.1f%% of patch voxels\n",
              100.0 * static_cast<double>(foreground) / static_cast<double>(labels));
  std::printf("done: %lld batches (%lld samples) in %.2f s = %.1f batches/s, %.0f samples/s\n",
              steps, steps * batch, seconds, static_cast<double>(steps) / seconds,
              static_cast<double>(steps * batch) / seconds);
  std::printf("  delivered %.0f MB/s, decoded %.0f MB/s, read %.0f MB/s (compressed)\n",
              static_cast<double>(m.bytes_delivered) / seconds / 1e6,
              static_cast<double>(m.bytes_decoded) / seconds / 1e6,
              static_cast<double>(m.bytes_read) / seconds / 1e6);
  std::printf(
      "  trainer waited %.2f s for batches; producers idle %.2f s on a full ring; "
      "%lld file opens\n",
      static_cast<double>(m.consumer_wait_ns) / 1e9, static_cast<double>(m.producer_wait_ns) / 1e9,
      static_cast<long long>(m.files_opened));
  if (!m.io_backend.empty()) {
    std::printf("  %s: %lld reads fetched ahead (%.1f MB), at most %lld at once\n",
                m.io_backend.c_str(), static_cast<long long>(m.io_requests),
                static_cast<double>(m.io_bytes) / 1e6, static_cast<long long>(m.io_max_in_flight));
  }
  return Status::Ok();
}

}  // namespace

Status RunDemo(const std::vector<std::string>& argv) {
  PATCHFEED_ASSIGN_OR_RETURN(
      const ParsedArgs args,
      ParseArgs(argv,
                {"mb", "dir", "cases", "steps", "threads", "batch", "patch", "io", "io-depth"},
                {"codec", "keep"}));
  if (args.has_flag("codec")) {
    return RunCodecDemo(args);
  }
  return RunLoaderDemo(args);
}

}  // namespace patchfeed::cli
