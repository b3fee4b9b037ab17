// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
// The public face of the tile reader: TileReader and Tile over the shared TileEngine
// (loader/internal/tile_engine.h), which does the work.

#include "loader/tiles.h"

#include <utility>

#include "loader/internal/tile_engine.h"

namespace patchfeed::loader {

using internal_loader::TileEngine;

Result<std::unique_ptr<TileReader>> TileReader::Create(TileConfig config) {
  PATCHFEED_ASSIGN_OR_RETURN(std::shared_ptr<TileEngine> engine,
                             TileEngine::Create(std::move(config)));
  return std::unique_ptr<TileReader>(new TileReader(std::move(engine)));
}

TileReader::TileReader(std::shared_ptr<TileEngine> engine) : engine_(std::move(engine)) {}

TileReader::~TileReader() { engine_->Close(); }

Result<Tile> TileReader::Next() {
  PATCHFEED_ASSIGN_OR_RETURN(std::optional<Tile> tile, engine_->NextFor(std::nullopt));
  return std::move(*tile);
}

Result<std::optional<Tile>> TileReader::NextFor(std::chrono::nanoseconds timeout) {
  return engine_->NextFor(std::chrono::steady_clock::now() + timeout);
}

void TileReader::Close() { engine_->Close(); }
const TileGrid& TileReader::grid() const { return engine_->grid(); }
int TileReader::num_threads() const { return engine_->num_threads(); }
bool TileReader::pinned() const { return engine_->pinned(); }

std::vector<ArrayView> TileReader::array_layout() const {
  std::vector<ArrayView> views = engine_->views(0);
  for (ArrayView& v : views) {
    v.data = nullptr;
  }
  return views;
}

Tile::Tile(std::shared_ptr<TileEngine> engine, int slot, int64_t index)
    : engine_(std::move(engine)), slot_(slot), index_(index) {}

Tile::Tile(Tile&& other) noexcept
    : engine_(std::move(other.engine_)),
      slot_(std::exchange(other.slot_, -1)),
      index_(other.index_) {}

Tile& Tile::operator=(Tile&& other) noexcept {
  if (this != &other) {
    Release();
    engine_ = std::move(other.engine_);
    slot_ = std::exchange(other.slot_, -1);
    index_ = other.index_;
  }
  return *this;
}

Tile::~Tile() { Release(); }

void Tile::Release() {
  if (slot_ >= 0) {
    engine_->Release(slot_);
  }
  slot_ = -1;
  engine_.reset();
}

codec::Box Tile::box() const { return slot_ >= 0 ? engine_->grid().box(index_) : codec::Box{}; }

std::span<const ArrayView> Tile::arrays() const {
  if (slot_ < 0) {
    return {};
  }
  return engine_->views(slot_);
}

const ArrayView* Tile::array(std::string_view name) const {
  for (const ArrayView& v : arrays()) {
    if (v.name == name) {
      return &v;
    }
  }
  return nullptr;
}

bool Tile::pinned() const { return slot_ >= 0 && engine_->pinned(); }

}  // namespace patchfeed::loader
