// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/box_read.h"

#include <utility>

#include "codec/box_plan.h"
#include "loader/internal/box_fetch.h"
#include "loader/internal/byte_arena.h"
#include "loader/internal/metrics_counters.h"
#include "storage/byte_source.h"
#include "storage/store.h"

namespace patchfeed::loader {

Status ReadBoxFetched(std::shared_ptr<const codec::ArrayReader> array, const codec::Box& box,
                      const codec::NdView& dst, std::span<const std::byte> pad_item,
                      codec::BoxReadScratch& scratch) {
  const codec::ArrayReader& a = *array;
  const storage::ByteSource* file = a.file();
  const storage::Store* store = a.chunk_store();
  // Only reads that go over a network are fetched ahead (there is no IoEngine here): the rest,
  // local reads above all, go straight to ReadBox, planned once.
  const bool fetched = (file != nullptr && file->reads_async()) ||
                       (file == nullptr && store != nullptr && store->remote());
  const size_t n = a.geometry().shape.size();
  if (!fetched || box.start.size() != n || box.stop.size() != n)
    return a.ReadBox(box, dst, pad_item, scratch);  // its errors name what is wrong
  codec::BoxPlan plan;
  PATCHFEED_RETURN_IF_ERROR(codec::PlanBox(a.geometry(), box, codec::BlockFilter{}, &plan),
                            a.path());
  internal_loader::ByteArena arena;
  internal_loader::MetricsCounters counters;
  internal_loader::FetchJob job;
  if (!internal_loader::MakeFetchJob(array, plan, pad_item, nullptr, arena,
                                     &counters.io_fallback_reads, &job)) {
    return a.ReadBox(box, dst, pad_item, scratch);
  }
  internal_loader::FetchJobs({&job, 1}, nullptr, arena, scratch, counters, [] { return false; });
  PATCHFEED_RETURN_IF_ERROR(job.error);
  scratch.source = job.source.get();
  scratch.store = job.store.get();
  Status st;
  for (int64_t i = 0; i < plan.num_pieces() && st.ok(); ++i)
    st = a.ReadPiece(plan, plan.piece(i), dst, pad_item, scratch);
  scratch.source = nullptr;
  scratch.store = nullptr;
  return st;
}

}  // namespace patchfeed::loader
