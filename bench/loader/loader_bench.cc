// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// End-to-end probe of the Loader, driven by bench/e2e/loader_vs_blosc2.py, which compares it
// with python-blosc2. A plain main() rather than Google Benchmark: every run is one loader
// configuration whose cost (threads, CPU time, peak RSS) must be measured per process.
//
//   loader_bench --dataset DIR --workload A|B --threads N --batches K --batch-size B
//                --patch Z,Y,X                      # throughput (JSON on stdout)
//   ... --latency [--reps R]                        # one-chunk batch vs inline ReadBox
//   ... --open-cases N                              # peak RSS of a loader over N cases
//   ... --check-finite                              # LoaderConfig::check_finite on
//   ... --augment Z,Y,X                             # nnU-Net's augmentation to this patch
//                                                   # (--patch is then the crop)
//
// Workload A: DIR holds `<id>.b2nd` single-array cases (array "image"); workload B: an nnU-Net
// folder (`<id>.b2nd` + `<id>_seg.b2nd`).

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "codec/b2nd/nd_reader.h"
#include "loader/loader.h"

namespace {

using patchfeed::Result;
using patchfeed::Status;
namespace pl = patchfeed::loader;
namespace codec = patchfeed::codec;

struct Options {
  std::string dataset;
  char workload = 'B';
  int threads = 1;
  int64_t batches = 50;
  int64_t batch_size = 2;
  std::vector<int64_t> patch = {128, 128, 128};
  bool latency = false;
  int reps = 200;
  int64_t open_cases = 0;
  int ring = 0;  ///< ring slots; 0: the loader's default
  bool consumer_produces = true;
  bool check_finite = false;
  std::vector<int64_t> augment;  ///< the patch after augmentation; empty: none
};

bool ParseList(const char* s, std::vector<int64_t>* out) {
  out->clear();
  while (*s) {
    char* end = nullptr;
    out->push_back(std::strtoll(s, &end, 10));
    if (end == s || out->back() <= 0 || (*end != ',' && *end != '\0')) {
      return false;
    }
    s = *end == ',' ? end + 1 : end;
  }
  return !out->empty();
}

bool Parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--latency") {
      o->latency = true;
      continue;
    }
    if (a == "--workers-only") {  // the consumer only waits: `--threads` workers read
      o->consumer_produces = false;
      continue;
    }
    if (a == "--check-finite") {
      o->check_finite = true;
      continue;
    }
    const char* v = i + 1 < argc ? argv[++i] : nullptr;
    if (v == nullptr) {
      return false;
    }
    if (a == "--dataset") {
      o->dataset = v;
    } else if (a == "--workload") {
      o->workload = v[0];
    } else if (a == "--threads") {
      o->threads = std::atoi(v);
    } else if (a == "--batches") {
      o->batches = std::atoll(v);
    } else if (a == "--batch-size") {
      o->batch_size = std::atoll(v);
    } else if (a == "--reps") {
      o->reps = std::atoi(v);
    } else if (a == "--open-cases") {
      o->open_cases = std::atoll(v);
    } else if (a == "--ring") {
      o->ring = std::atoi(v);
    } else if (a == "--patch") {
      if (!ParseList(v, &o->patch)) {
        return false;
      }
    } else if (a == "--augment") {
      if (!ParseList(v, &o->augment)) {
        return false;
      }
    } else {
      return false;
    }
  }
  return !o->dataset.empty() && (o->workload == 'A' || o->workload == 'B') && o->threads > 0 &&
         o->batches > 0 && o->batch_size > 0 && o->ring >= 0;
}

double Seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; }

struct Usage {
  double cpu_s;
  double peak_rss_mb;  // ru_maxrss is KiB on Linux
};

Usage GetUsage() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return {Seconds(ru.ru_utime) + Seconds(ru.ru_stime), static_cast<double>(ru.ru_maxrss) / 1024};
}

Result<pl::Dataset> OpenDataset(const Options& o) {
  if (o.workload == 'B') {
    return pl::Dataset::FromNnUNetFolder(o.dataset);
  }
  return pl::Dataset::FromFolder(o.dataset, {{"image", ".b2nd"}});
}

pl::LoaderConfig MakeConfig(const Options& o, pl::Dataset dataset, int64_t batch_size) {
  pl::LoaderConfig config;
  config.dataset = std::move(dataset);
  config.sampler.patch_size = o.patch;
  // Boxes stay inside the case, like the random boxes the python-blosc2 side reads.
  config.sampler.need_to_pad.assign(o.patch.size(), 0);
  config.sampler.batch_size = batch_size;
  // Plain random boxes: foreground oversampling would add index building that blosc2 lacks.
  config.sampler.oversample_foreground = 0;
  config.foreground.mode = pl::ForegroundOptions::Mode::kOff;
  config.sampler.seed = 42;
  config.num_threads = o.threads;
  config.consumer_produces = o.consumer_produces;
  config.check_finite = o.check_finite;
  if (o.ring > 0) {
    config.ring_size = o.ring;
  }
  if (!o.augment.empty()) {
    pl::AugmentOptions a;
    a.pipeline = patchfeed::augment::NnUNetAugmentConfig::Default(o.augment);
    config.augment = a;
  }
  return config;
}

// Consumes K batches, releasing each at once: the loader's delivered bandwidth, nothing else.
Status RunThroughput(const Options& o) {
  PATCHFEED_ASSIGN_OR_RETURN(pl::Dataset ds, OpenDataset(o));
  pl::LoaderConfig config = MakeConfig(o, ds, o.batch_size);
  PATCHFEED_ASSIGN_OR_RETURN(auto loader, pl::Loader::Create(config));
  // Create starts producing at once: drain the prefilled ring first, so the timed window
  // covers steady-state production (the ring is full at both ends of it).
  for (int k = 0; k < config.ring_size; ++k) {
    PATCHFEED_ASSIGN_OR_RETURN(pl::Lease batch, loader->Next());
  }
  const pl::LoaderMetrics m0 = loader->metrics();
  const Usage u0 = GetUsage();
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t k = 0; k < o.batches; ++k) {
    PATCHFEED_ASSIGN_OR_RETURN(pl::Lease batch, loader->Next());
    batch.Release();
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const Usage u1 = GetUsage();
  pl::LoaderMetrics m = loader->metrics();
  m.samples_delivered -= m0.samples_delivered;
  m.bytes_delivered -= m0.bytes_delivered;
  m.bytes_decoded -= m0.bytes_decoded;  // whole blocks: what a decode floor is measured over
  std::printf(
      "{\"mode\": \"throughput\", \"workload\": \"%c\", \"threads\": %d, \"batches\": %lld, "
      "\"samples\": %lld, \"bytes\": %lld, \"bytes_decoded\": %lld, \"wall_s\": %.4f, "
      "\"cpu_s\": %.4f, \"mb_s\": %.2f, \"samples_s\": %.2f, \"peak_rss_mb\": %.1f, "
      "\"check_finite\": %s}\n",
      o.workload, loader->num_threads(), static_cast<long long>(o.batches),
      static_cast<long long>(m.samples_delivered), static_cast<long long>(m.bytes_delivered),
      static_cast<long long>(m.bytes_decoded), wall, u1.cpu_s - u0.cpu_s,
      static_cast<double>(m.bytes_delivered) / wall / 1e6,
      static_cast<double>(m.samples_delivered) / wall, u1.peak_rss_mb,
      o.check_finite ? "true" : "false");
  return Status::Ok();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One-sample batches whose patch is one chunk, through the loader vs ReadBox on this thread.
// A single ring slot makes Next() wait for the whole production of its batch (it starts when
// the previous lease is released), so the loader time is its per-batch latency, not read-ahead.
Status RunLatency(const Options& o) {
  PATCHFEED_ASSIGN_OR_RETURN(pl::Dataset ds, OpenDataset(o));
  pl::LoaderConfig config = MakeConfig(o, ds, 1);
  config.ring_size = 1;
  PATCHFEED_ASSIGN_OR_RETURN(auto loader, pl::Loader::Create(std::move(config)));
  std::vector<codec::NdArrayReader> readers;  // array 0 of every case, opened up front
  for (int64_t c = 0; c < ds.num_cases(); ++c) {
    PATCHFEED_ASSIGN_OR_RETURN(auto r, codec::NdArrayReader::Open(ds.path(c, 0)));
    readers.push_back(std::move(r));
  }
  codec::BoxReadScratch scratch;
  std::vector<std::byte> dst;
  std::vector<double> via_loader, inline_read;
  // The lease of batch k is held while its box is read inline (so the single slot keeps the
  // loader idle), then released; the loader time is release -> Next() returning batch k+1, a
  // full production of one batch plus the hand-off, with nothing read ahead.
  PATCHFEED_ASSIGN_OR_RETURN(pl::Lease batch, loader->Next());
  for (int rep = -5; rep < o.reps; ++rep) {  // 5 warm-up rounds touch files and scratch
    const pl::SampleSpec s = batch.samples()[0];
    // The same box, inline: channel axis whole, spatial box as the loader sampled it, but in
    // another case. The loader has just decoded this one, so its compressed bytes would be
    // cached for the inline read and not for the loader's next batch (60-70 us of ~400 here).
    const int64_t other = (s.case_index + ds.num_cases() / 2) % ds.num_cases();
    const codec::NdArrayReader& r = readers[static_cast<size_t>(other)];
    codec::Box box{{0}, {r.geometry().shape[0]}};
    for (size_t d = 0; d < o.patch.size(); ++d) {
      box.start.push_back(s.box_start[d]);
      box.stop.push_back(s.box_start[d] + o.patch[d]);
    }
    std::vector<int64_t> extents(box.start.size());
    int64_t n = r.itemsize();
    for (size_t d = 0; d < extents.size(); ++d) {
      extents[d] = box.stop[d] - box.start[d];
      n *= extents[d];
    }
    dst.resize(static_cast<size_t>(n));
    const std::vector<std::byte> pad(static_cast<size_t>(r.itemsize()));
    const auto t2 = std::chrono::steady_clock::now();
    PATCHFEED_RETURN_IF_ERROR(
        r.ReadBox(box, codec::NdView::Contiguous(dst.data(), extents, r.itemsize()), pad, scratch));
    const auto t3 = std::chrono::steady_clock::now();
    const auto t0 = std::chrono::steady_clock::now();
    batch.Release();
    PATCHFEED_ASSIGN_OR_RETURN(batch, loader->Next());
    const auto t1 = std::chrono::steady_clock::now();
    if (rep >= 0) {
      via_loader.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      inline_read.push_back(std::chrono::duration<double, std::micro>(t3 - t2).count());
    }
  }
  const double a = Median(via_loader), b = Median(inline_read);
  std::printf(
      "{\"mode\": \"latency\", \"workload\": \"%c\", \"threads\": %d, \"reps\": %d, "
      "\"loader_us\": %.1f, \"inline_us\": %.1f, \"ratio\": %.3f}\n",
      o.workload, loader->num_threads(), o.reps, a, b, a / b);
  return Status::Ok();
}

// N cases naming the dataset's few files over and over: what Create keeps per open case.
Status RunOpenCases(const Options& o) {
  PATCHFEED_ASSIGN_OR_RETURN(pl::Dataset base, OpenDataset(o));
  std::vector<pl::CaseFiles> cases;
  for (int64_t i = 0; i < o.open_cases; ++i) {
    pl::CaseFiles c = base.cases()[static_cast<size_t>(i % base.num_cases())];
    c.id = "case_" + std::to_string(i);
    cases.push_back(std::move(c));
  }
  PATCHFEED_ASSIGN_OR_RETURN(pl::Dataset ds, pl::Dataset::FromList(base.array_names(), cases));
  const double before_mb = GetUsage().peak_rss_mb;
  PATCHFEED_ASSIGN_OR_RETURN(auto loader, pl::Loader::Create(MakeConfig(o, ds, o.batch_size)));
  for (int64_t k = 0; k < o.batches; ++k) {
    PATCHFEED_ASSIGN_OR_RETURN(pl::Lease batch, loader->Next());
  }
  const pl::LoaderMetrics m = loader->metrics();
  std::printf(
      "{\"mode\": \"open_cases\", \"workload\": \"%c\", \"cases\": %lld, \"files_opened\": %lld, "
      "\"peak_rss_mb_before\": %.1f, \"peak_rss_mb\": %.1f}\n",
      o.workload, static_cast<long long>(loader->num_cases()),
      static_cast<long long>(m.files_opened), before_mb, GetUsage().peak_rss_mb);
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!Parse(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: loader_bench --dataset DIR --workload A|B [--threads N] [--batches K]\n"
                 "       [--batch-size B] [--patch Z,Y,X] [--latency [--reps R]]\n"
                 "       [--open-cases N] [--workers-only] [--check-finite] [--ring SLOTS]\n"
                 "       [--augment Z,Y,X]\n");
    return 2;
  }
  const Status st = o.latency          ? RunLatency(o)
                    : o.open_cases > 0 ? RunOpenCases(o)
                                       : RunThroughput(o);
  if (!st.ok()) {
    std::fprintf(stderr, "loader_bench: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
