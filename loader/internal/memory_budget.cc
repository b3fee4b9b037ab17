// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/memory_budget.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "common/str_cat.h"

namespace patchfeed::loader::internal_loader {
namespace {

std::string Mib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

}  // namespace

Status CheckMemoryBudget(const LoaderParts& p, const std::vector<RingArraySpec>& specs) {
  const LoaderConfig& c = p.config;
  int64_t block = 0, chunk = 0, open_state = 0;
  bool whole = false;
  for (const ArrayProbe& probe : p.probes) {
    block = std::max(block, probe.block_bytes);
    chunk = std::max(chunk, probe.chunk_bytes);
    open_state = std::max(open_state, probe.open_state_bytes);
    whole |= probe.whole_chunks;
  }
  // Per worker: a decoded block, the decoder's two filter buffers, and whole chunks when they
  // are read with pread or decoded whole for DELTA.
  int64_t per_worker =
      3 * block + (c.io_mode == storage::IoMode::kPread ? chunk : 0) + (whole ? chunk : 0);
  if (c.augment) {
    // The crop window an augmented sample reads (at most the whole crop), every array.
    int64_t crop = 1;
    for (const int64_t q : c.sampler.patch_size) {
      crop *= q;
    }
    for (const OutputArray& out : p.outputs) {
      per_worker += crop * out.channels * out.itemsize;
    }
    if (p.previous_seg >= 0) {
      per_worker += crop * static_cast<int64_t>(sizeof(int16_t));  // its int16 staging channel
    }
  }
  const int64_t workers = p.num_threads + 1;
  const int64_t files = std::min<int64_t>(
      c.max_open_files, c.dataset.num_cases() * static_cast<int64_t>(p.outputs.size()));
  const int64_t ring = c.ring_size * BatchRing::SlotBytes(specs);
  const int64_t total = ring + workers * per_worker + files * open_state;
  if (total > c.memory_budget) {
    return ResourceExhaustedError(
        StrCat("loader: this configuration needs ", Mib(total), " (ring_size ", c.ring_size,
               " x a batch of ", Mib(BatchRing::SlotBytes(specs)), " + scratch for ", workers,
               " threads x ", Mib(per_worker), " + ", files, " open files x ", open_state,
               " bytes), more than memory_budget, ", Mib(c.memory_budget), " (", c.memory_budget,
               " bytes); lower batch_size, patch_size or ring_size, or raise memory_budget"));
  }
  return Status::Ok();
}

}  // namespace patchfeed::loader::internal_loader
