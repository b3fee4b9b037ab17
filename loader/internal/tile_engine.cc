// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/tile_engine.h"

#include <algorithm>
#include <utility>

#include <oneapi/tbb/info.h>

#include "codec/dtype.h"
#include "codec/open_array.h"
#include "common/str_cat.h"

namespace patchfeed::loader::internal_loader {
namespace {

std::string CaseName(const TileConfig& c) {
  return StrCat("case '", c.dataset.case_id(c.case_index), "' (#", c.case_index, ")");
}

Status CheckOptions(const TileConfig& c) {
  if (c.case_index < 0 || c.case_index >= c.dataset.num_cases()) {
    return InvalidArgumentError(StrCat("tiles: case index ", c.case_index, " is outside the ",
                                       c.dataset.num_cases(), " cases of the dataset"));
  }
  if (c.read_ahead < 1) {
    // A loop holds the tile it works on while it asks for the next one: with no buffer
    // besides that one, the next could never be read.
    return InvalidArgumentError(StrCat("tiles: read_ahead must be >= 1, not ", c.read_ahead));
  }
  if (c.num_threads < 0 || c.min_task_bytes < 0 || c.memory_budget < 0) {
    return InvalidArgumentError(
        "tiles: num_threads, min_task_bytes and memory_budget must be >= 0");
  }
  return Status::Ok();
}

// Opens the configured arrays of the case; their spatial shapes must agree. Errors name the
// case, the array and its file.
Result<std::vector<TileSource>> OpenSources(const TileConfig& c, std::vector<int64_t>* spatial) {
  std::vector<ArrayOptions> wanted = c.arrays;
  if (wanted.empty()) {
    for (const std::string& name : c.dataset.array_names()) {
      wanted.push_back({name, std::nullopt});
    }
  }
  std::vector<TileSource> sources;
  for (const ArrayOptions& a : wanted) {
    const int index = c.dataset.array_index(a.name);
    if (index < 0) {
      return InvalidArgumentError("tiles: the dataset has no array '" + a.name + "'");
    }
    for (const auto& prev : sources) {
      if (prev.name == a.name) {
        return InvalidArgumentError("tiles: array '" + a.name + "' twice");
      }
    }
    TileSource s;
    s.name = a.name;
    s.path = c.dataset.path(c.case_index, index);
    const std::string where =
        StrCat("tiles: ", CaseName(c), ", array '", s.name, "' (", s.path, ")");
    PATCHFEED_ASSIGN_OR_RETURN(std::unique_ptr<codec::ArrayReader> reader,
                               codec::OpenArray(s.path, c.dataset.OpenOptions(c.io_mode)), where);
    const std::vector<int64_t>& shape = reader->geometry().shape;
    if (shape.size() < 2) {
      return InvalidArgumentError(StrCat(where, " has ", shape.size(),
                                         " dimensions; tiles need channels, then spatial axes"));
    }
    const std::vector<int64_t> axes(shape.begin() + 1, shape.end());
    if (sources.empty()) {
      *spatial = axes;
    } else if (axes != *spatial) {
      return InvalidArgumentError(where + ": its spatial axes differ from array '" +
                                  sources[0].name + "'");
    }
    // The Loader's default (ArrayOptions::pad_value): nnU-Net pads labels with -1.
    const double pad = a.pad_value.value_or(a.name == "seg" ? -1.0 : 0.0);
    PATCHFEED_ASSIGN_OR_RETURN(s.pad_item,
                               codec::ItemFromDouble(reader->dtype(), reader->itemsize(), pad),
                               where, ": pad value");
    s.reader = std::move(reader);
    sources.push_back(std::move(s));
  }
  return sources;
}

// The ring's arrays (C, *tile extent), checked against the budget with the workers' scratch
// before anything is allocated: the tile size comes from the caller and may be absurd.
Result<std::vector<RingArraySpec>> RingSpecs(const TileConfig& c,
                                             const std::vector<TileSource>& sources,
                                             const TileGrid& grid, int num_threads) {
  std::vector<RingArraySpec> specs;
  int64_t per_worker = 0;
  for (const TileSource& s : sources) {
    const codec::ArrayReader& r = *s.reader;
    codec::Box box{{0}, {r.geometry().shape[0]}};
    box.start.resize(1 + grid.tile_extent().size(), 0);
    box.stop.insert(box.stop.end(), grid.tile_extent().begin(), grid.tile_extent().end());
    PATCHFEED_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                               codec::BoxExtents(box, r.itemsize(), c.memory_budget),
                               "tiles: array '", s.name, "' over the memory budget");
    specs.push_back({s.name, r.dtype(), r.itemsize(), std::move(shape)});
    // As the Loader counts it: a decoded block and the decoder's two filter buffers, and
    // whole chunks when they are read with pread or decoded whole.
    const codec::ArrayFootprint f = r.Footprint();
    per_worker = std::max(
        per_worker, 3 * f.block_bytes + (c.io_mode == storage::IoMode::kPread ? f.chunk_bytes : 0) +
                        (f.whole_chunks ? f.chunk_bytes : 0));
  }
  const int64_t slot = BatchRing::SlotBytes(specs);
  const int64_t slots = c.read_ahead + 1;
  const int64_t workers = num_threads + 1;
  if (slot > c.memory_budget / slots || workers * per_worker > c.memory_budget - slots * slot) {
    return ResourceExhaustedError(StrCat("tiles: ", slots, " tile buffers of ", slot, " bytes and ",
                                         workers, " workers' scratch of ", per_worker,
                                         " bytes exceed the memory budget of ", c.memory_budget,
                                         " bytes"));
  }
  return specs;
}

}  // namespace

Result<std::shared_ptr<TileEngine>> TileEngine::Create(TileConfig config) {
  PATCHFEED_RETURN_IF_ERROR(CheckOptions(config));
  std::vector<int64_t> spatial;
  PATCHFEED_ASSIGN_OR_RETURN(std::vector<TileSource> sources, OpenSources(config, &spatial));
  PATCHFEED_ASSIGN_OR_RETURN(TileGrid grid,
                             TileGrid::Create(spatial, config.tile_size, config.overlap),
                             "tiles: ", CaseName(config));
  const int num_threads =
      config.num_threads > 0 ? config.num_threads : tbb::info::default_concurrency();
  PATCHFEED_ASSIGN_OR_RETURN(const std::vector<RingArraySpec> specs,
                             RingSpecs(config, sources, grid, num_threads));
  PATCHFEED_ASSIGN_OR_RETURN(
      BatchRing ring, BatchRing::Create(specs, config.read_ahead + 1, config.pin_memory), "tiles");
  // As LoaderEngine::Create: the workers plus one slot for an outside thread (Close's wait).
  std::unique_ptr<tbb::global_control> thread_limit;
  if (tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism) <
      static_cast<size_t>(num_threads) + 1) {
    thread_limit = std::make_unique<tbb::global_control>(
        tbb::global_control::max_allowed_parallelism, static_cast<size_t>(num_threads) + 1);
  }
  auto arena = std::make_unique<tbb::task_arena>(num_threads + 1, 1);
  arena->initialize();
  std::shared_ptr<TileEngine> engine(new TileEngine(std::move(config), std::move(sources),
                                                    std::move(grid), std::move(ring), num_threads,
                                                    std::move(arena), std::move(thread_limit)));
  engine->scheduler_.Start(engine.get());
  return engine;
}

TileEngine::TileEngine(TileConfig config, std::vector<TileSource> sources, TileGrid grid,
                       BatchRing ring, int num_threads, std::unique_ptr<tbb::task_arena> arena,
                       std::unique_ptr<tbb::global_control> thread_limit)
    : config_(std::move(config)),
      sources_(std::move(sources)),
      grid_(std::move(grid)),
      ring_(std::move(ring)),
      num_threads_(num_threads),
      thread_limit_(std::move(thread_limit)),
      arena_(std::move(arena)),
      // The consumer never reads: it only waits, so that Python can take Ctrl-C between
      // waits, while the workers read ahead.
      scheduler_(ring_.ring_size(), grid_.num_tiles(), BatchId{0, 0},
                 /*consumer_produces=*/false, &counters_) {
  for (int k = 0; k < ring_.ring_size(); ++k) {
    std::vector<ArrayView> views = ring_.views(k);
    if (grid_.slices()) {
      for (ArrayView& v : views) {
        static_cast<StridedView&>(v) = v.Squeeze(1);  // (C, 1, Y, X) -> (C, Y, X)
      }
    }
    views_.push_back(std::move(views));
    auto reads = std::make_unique<SlotReads>();
    reads->boxes.resize(sources_.size());
    reads->plans.resize(sources_.size());
    reads_.push_back(std::move(reads));
  }
}

TileEngine::~TileEngine() { Close(); }

void TileEngine::Close() {
  std::call_once(closed_, [this] {
    scheduler_.Stop();  // wakes a waiting NextFor, cancels every tile's reads
    producers_.cancel();
    { std::lock_guard consumer(consumer_mu_); }  // a NextFor on its way out
    arena_->execute([this] { producers_.wait(); });
    TsanAcquire(&producers_done_);
    arena_->terminate();
    thread_limit_.reset();
  });
}

void TileEngine::Enqueue(int slot) {
  EnqueueTask(*arena_, producers_, &producers_done_, [this, slot] {
    if (scheduler_.Claim(slot, Producer::kWorker)) {
      Produce(slot);
    }
  });
}

void TileEngine::ProduceHere(int slot) {
  arena_->execute([this, slot] { Produce(slot); });
}

void TileEngine::Produce(int slot) noexcept {
  const BatchId id = scheduler_.assigned(slot);
  // Past the last tile the scheduler goes on into a next epoch, which has nothing to read:
  // the slot is finished empty and never delivered (NextFor stops at the end).
  scheduler_.Finish(slot, id.epoch == 0 ? ReadTile(slot, id.batch) : Status::Ok());
}

Result<std::optional<Tile>> TileEngine::NextFor(
    std::optional<SlotScheduler::Clock::time_point> deadline) {
  std::lock_guard consumer(consumer_mu_);
  if (finished_ && !scheduler_.stopped()) {
    return std::optional<Tile>(Tile());
  }
  Result<std::optional<SlotScheduler::Delivery>> next = scheduler_.NextFor(deadline);
  if (!next.ok() && next.status().code() == StatusCode::kResourceExhausted) {
    return ResourceExhaustedError(
        StrCat("tiles: the consumer holds all ", ring_.ring_size(),
               " tile buffers (read_ahead + 1); free a tile's arrays before asking for the "
               "next, copy what you keep, or raise read_ahead"));
  }
  PATCHFEED_ASSIGN_OR_RETURN(std::optional<SlotScheduler::Delivery> delivery, std::move(next));
  if (!delivery) {
    return std::optional<Tile>();
  }
  if (delivery->slot < 0) {
    finished_ = true;
    return std::optional<Tile>(Tile());
  }
  return std::optional<Tile>(Tile(shared_from_this(), delivery->slot, delivery->batch.batch));
}

Status TileEngine::ReadTile(int slot, int64_t index) {
  SlotReads& r = *reads_[static_cast<size_t>(slot)];
  r.index = index;
  r.status = Status::Ok();
  r.failed.store(false, std::memory_order_relaxed);
  r.runs.clear();
  const codec::Box spatial = grid_.box(index);
  for (size_t s = 0; s < sources_.size(); ++s) {
    const codec::ArrayReader& reader = *sources_[s].reader;
    codec::Box& box = r.boxes[s];
    box.start.assign(1, 0);
    box.stop.assign(1, reader.geometry().shape[0]);
    box.start.insert(box.start.end(), spatial.start.begin(), spatial.start.end());
    box.stop.insert(box.stop.end(), spatial.stop.begin(), spatial.stop.end());
    const Status planned = codec::PlanBox(reader.geometry(), box, {}, &r.plans[s]);
    if (!planned.ok()) {
      Fail(slot, s, nullptr, planned);
      return r.status;
    }
    // Large tiles become runs of a few block rows, so that one tile is read by all workers.
    for (const PieceRun& run : GroupPieces(r.plans[s], config_.min_task_bytes)) {
      r.runs.emplace_back(s, run);
    }
  }
  tbb::task_group group;  // bound to the producer's context: Close's cancel reaches it
  if (!scheduler_.AttachReads(slot, &group)) {
    return CancelledError("tile dropped");
  }
  // Isolated: while waiting, this thread reads only this tile, never another producer.
  tbb::this_task_arena::isolate([&] {
    for (size_t k = 1; k < r.runs.size(); ++k) {
      RunTask(group, &r.done, [this, slot, k] {
        const auto& [source, run] = reads_[static_cast<size_t>(slot)]->runs[k];
        ReadRun(slot, source, run);
      });
    }
    if (!r.runs.empty()) {
      ReadRun(slot, r.runs[0].first, r.runs[0].second);
    }
    group.wait();
  });
  TsanAcquire(&r.done);
  if (!scheduler_.AttachReads(slot, nullptr)) {
    return CancelledError("tile dropped");
  }
  std::lock_guard lock(r.mu);
  return r.status;
}

void TileEngine::ReadRun(int slot, size_t source, const PieceRun& run) {
  SlotReads& r = *reads_[static_cast<size_t>(slot)];
  const TileSource& src = sources_[source];
  const codec::BoxPlan& plan = r.plans[source];
  const StridedView& dst = ring_.views(slot)[source];
  codec::BoxReadScratch& scratch = scratch_.local();
  for (int64_t i = run.begin; i < run.end; ++i) {
    if (r.failed.load(std::memory_order_relaxed) || tbb::is_current_task_group_canceling()) {
      return;
    }
    const codec::BoxPiece piece = run.Piece(plan, i);
    const Status st = src.reader->ReadPiece(plan, piece, dst, src.pad_item, scratch);
    if (!st.ok()) {
      Fail(slot, source, &piece, st);
      return;
    }
  }
}

void TileEngine::Fail(int slot, size_t source, const codec::BoxPiece* piece, const Status& status) {
  SlotReads& r = *reads_[static_cast<size_t>(slot)];
  const TileSource& src = sources_[source];
  const codec::Box& box = r.boxes[source];
  std::string context =
      StrCat(CaseName(config_), ", array '", src.name, "', file ", src.path, ", tile ", r.index,
             " of ", grid_.num_tiles(), ", box ", codec::BoxToString(box));
  if (piece != nullptr) {
    context += piece->chunk >= 0 ? StrCat(", chunk ", piece->chunk) : ", no chunk";
    context += StrCat(
        " (part ", codec::RegionToString(static_cast<int>(box.start.size()), piece->lo, piece->hi),
        ")");
  }
  std::lock_guard lock(r.mu);
  if (!r.failed.load(std::memory_order_relaxed)) {
    r.status = status.WithContext(context);
    r.failed.store(true, std::memory_order_relaxed);
  }
}

}  // namespace patchfeed::loader::internal_loader
