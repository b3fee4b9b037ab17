// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// A standalone C++ training loop on patchfeed: takes batches from a Loader, runs a stand-in
// "training step" over every voxel (the mean intensity and the foreground fraction), returns
// each batch by letting its Lease go, and reports throughput and where the time went.
//
//   train_loop --dir /data/nnUNet_preprocessed/Dataset004_Hippocampus/nnUNetPlans_3d_fullres
//              --patch 40,56,40 --batch 9 --steps 250
//   train_loop --generate 8 --steps 100            # a synthetic dataset in a temp folder

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "loader/loader.h"
#include "loader/synthetic_dataset.h"

namespace {

using patchfeed::Result;
using patchfeed::Status;
namespace pl = patchfeed::loader;

struct Options {
  std::string dir;
  int generate = 0;
  int64_t steps = 50;
  int64_t batch = 2;
  std::vector<int64_t> patch = {64, 64, 64};
  int threads = 0;
  int slots = 3;
  int step_ms = 0;  // simulated accelerator time per step
  double oversample = 0.33;
};

bool ParseList(const char* s, std::vector<int64_t>* out) {
  out->clear();
  while (*s) {
    char* end = nullptr;
    out->push_back(std::strtoll(s, &end, 10));
    if (end == s || out->back() <= 0) {
      return false;
    }
    s = *end == ',' ? end + 1 : end;
    if (*end != ',' && *end != '\0') {
      return false;
    }
  }
  return !out->empty();
}

bool Parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (v == nullptr) {
      return false;
    }
    ++i;
    if (a == "--dir") {
      o->dir = v;
    } else if (a == "--generate") {
      o->generate = std::atoi(v);
    } else if (a == "--steps") {
      o->steps = std::atoll(v);
    } else if (a == "--batch") {
      o->batch = std::atoll(v);
    } else if (a == "--threads") {
      o->threads = std::atoi(v);
    } else if (a == "--slots") {
      o->slots = std::atoi(v);
    } else if (a == "--step-ms") {
      o->step_ms = std::atoi(v);
    } else if (a == "--oversample") {
      o->oversample = std::atof(v);
    } else if (a == "--patch") {
      if (!ParseList(v, &o->patch)) {
        return false;
      }
    } else {
      return false;
    }
  }
  return (o->generate > 0 || !o->dir.empty()) && o->steps > 0 && o->batch > 0;
}

// The stand-in for forward/backward: reads every voxel of the batch once.
void TrainStep(const pl::Lease& batch, double* mean, double* foreground) {
  const pl::ArrayView* image = batch.array("image");
  const pl::ArrayView* seg = batch.array("seg");
  double sum = 0;
  const auto* px = reinterpret_cast<const float*>(image->data);
  const int64_t n = image->nbytes / 4;
  for (int64_t i = 0; i < n; ++i) {
    sum += px[i];
  }
  int64_t fg = 0;
  const auto* pl_ = reinterpret_cast<const int16_t*>(seg->data);
  const int64_t m = seg->nbytes / 2;
  for (int64_t i = 0; i < m; ++i) {
    fg += pl_[i] > 0;
  }
  *mean = sum / static_cast<double>(n);
  *foreground = static_cast<double>(fg) / static_cast<double>(m);
}

Status Run(const Options& o) {
  pl::LoaderConfig config;
  std::string dir = o.dir;
  if (o.generate > 0) {
    if (dir.empty()) {
      dir = (std::filesystem::temp_directory_path() / "patchfeed_train_loop").string();
    }
    pl::SyntheticDatasetOptions synth;
    synth.num_cases = o.generate;
    synth.patch_size = o.patch;
    synth.spatial_shape.clear();
    for (const int64_t p : o.patch) {
      synth.spatial_shape.push_back(p * 3 / 2);
    }
    std::printf("writing %d synthetic cases to %s\n", o.generate, dir.c_str());
    PATCHFEED_ASSIGN_OR_RETURN(config.dataset, pl::WriteSyntheticDataset(dir, synth));
  } else {
    PATCHFEED_ASSIGN_OR_RETURN(config.dataset, pl::Dataset::FromNnUNetFolder(dir));
  }
  config.sampler.patch_size = o.patch;
  config.sampler.need_to_pad.assign(o.patch.size(), 0);
  config.sampler.batch_size = o.batch;
  config.sampler.oversample_foreground = o.oversample;
  config.sampler.seed = 42;
  config.num_threads = o.threads;
  config.ring_size = o.slots;
  PATCHFEED_ASSIGN_OR_RETURN(std::unique_ptr<pl::Loader> loader, pl::Loader::Create(config));
  std::printf("%lld cases, %d threads, ring of %d slots (%s), batch",
              static_cast<long long>(loader->num_cases()), loader->num_threads(), o.slots,
              loader->pinned() ? "pinned" : "not pinned");
  for (const pl::ArrayView& v : loader->array_layout()) {
    std::printf(" %s(", v.name.c_str());
    for (size_t d = 0; d < v.shape.size(); ++d) {
      std::printf("%s%lld", d ? "," : "", static_cast<long long>(v.shape[d]));
    }
    std::printf(")%s", v.dtype.c_str());
  }
  std::printf("\n");

  const auto t0 = std::chrono::steady_clock::now();
  double mean = 0, foreground = 0;
  for (int64_t step = 0; step < o.steps; ++step) {
    PATCHFEED_ASSIGN_OR_RETURN(pl::Lease batch, loader->Next());
    TrainStep(batch, &mean, &foreground);
    if (o.step_ms > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(o.step_ms));
    }
    if ((step + 1) % 10 == 0 || step + 1 == o.steps) {
      std::printf("step %lld/%lld: image mean %.2f, foreground %.1f%%\n",
                  static_cast<long long>(step + 1), static_cast<long long>(o.steps), mean,
                  100 * foreground);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const pl::LoaderMetrics m = loader->metrics();
  std::printf(
      "%lld batches in %.2f s: %.1f batches/s, %.1f samples/s, %.0f MB/s delivered, "
      "%.0f MB/s decoded\n"
      "waiting: trainer %.2f s for batches, producers %.2f s for free slots; files opened %lld\n",
      static_cast<long long>(o.steps), seconds, static_cast<double>(o.steps) / seconds,
      static_cast<double>(m.samples_delivered) / seconds,
      static_cast<double>(m.bytes_delivered) / seconds / 1e6,
      static_cast<double>(m.bytes_decoded) / seconds / 1e6,
      static_cast<double>(m.consumer_wait_ns) / 1e9, static_cast<double>(m.producer_wait_ns) / 1e9,
      static_cast<long long>(m.files_opened));
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!Parse(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: train_loop (--dir NNUNET_FOLDER | --generate N [--dir OUT]) [--steps S]\n"
                 "       [--batch B] [--patch Z,Y,X] [--threads T] [--slots K] [--step-ms MS]\n"
                 "       [--oversample P]\n");
    return 2;
  }
  const Status st = Run(o);
  if (!st.ok()) {
    std::fprintf(stderr, "train_loop: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
