// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/fetched_source.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace patchfeed::loader::internal_loader {
namespace {

bool Inside(uint64_t offset, uint64_t length, uint64_t begin, uint64_t size) {
  return offset >= begin && offset - begin <= size && length <= size - (offset - begin);
}

}  // namespace

FetchedSource::FetchedSource(std::shared_ptr<const storage::ByteSource> file, ByteArena* arena,
                             std::atomic<int64_t>* fallback_reads)
    : holder_(std::move(file)), file_(*holder_), arena_(arena), fallback_reads_(fallback_reads) {}

template <typename Fn>
void FetchedSource::VisitBuffersFrom(uint64_t offset, Fn&& fn) const {
  // The buffers starting at or before `offset`, nearest first; none starting more than the
  // longest buffer before it can reach it.
  auto it = std::upper_bound(buffers_.begin(), buffers_.end(), offset,
                             [](uint64_t o, const Buffer& b) { return o < b.offset; });
  while (it != buffers_.begin()) {
    --it;
    if (offset - it->offset > longest_ || fn(*it))
      return;
  }
}

const std::byte* FetchedSource::FindInBuffers(uint64_t offset, size_t length) const {
  const std::byte* found = nullptr;
  VisitBuffersFrom(offset, [&](const Buffer& b) {
    if (Inside(offset, length, b.offset, b.bytes.size()))
      found = b.bytes.data() + (offset - b.offset);
    return found != nullptr;
  });
  return found;
}

const FetchedSource::Buffer* FetchedSource::FurthestBuffer(uint64_t offset) const {
  const Buffer* best = nullptr;
  VisitBuffersFrom(offset, [&](const Buffer& b) {
    const uint64_t end = b.offset + b.bytes.size();
    if (end > offset && (best == nullptr || end > best->offset + best->bytes.size()))
      best = &b;
    return false;
  });
  return best;
}

bool FetchedSource::Holds(const Image& image, uint64_t offset, uint64_t length) {
  for (const storage::FileRange& v : image.valid) {
    if (Inside(offset, length, v.offset, v.length))
      return true;
  }
  return false;
}

int64_t FetchedSource::ImageAt(uint64_t offset) const {
  auto it = std::upper_bound(images_.begin(), images_.end(), offset,
                             [](uint64_t o, const Image& im) { return o < im.pos; });
  if (it == images_.begin())
    return -1;
  --it;
  return offset - it->pos < it->size ? it - images_.begin() : -1;
}

const std::byte* FetchedSource::Find(uint64_t offset, size_t length) const {
  if (const std::byte* p = FindInBuffers(offset, length); p != nullptr)
    return p;
  const int64_t i = ImageAt(offset);
  if (i < 0)
    return nullptr;
  const Image& image = images_[static_cast<size_t>(i)];
  return Holds(image, offset, length) ? image.bytes + (offset - image.pos) : nullptr;
}

Status FetchedSource::ReadAt(uint64_t offset, std::span<std::byte> out) const {
  if (discovering_ && stopped_)
    return CancelledError("not decoded during discovery");
  if (const std::byte* p = Find(offset, out.size()); p != nullptr) {
    std::memcpy(out.data(), p, out.size());
    return Status::Ok();
  }
  if (discovering_) {
    missing_.push_back({offset, out.size()});
    return CancelledError("not fetched yet");
  }
  fallback_reads_->fetch_add(1, std::memory_order_relaxed);
  return file_.ReadAt(offset, out);
}

void FetchedSource::WillRead(storage::FileRange chunk,
                             std::span<const storage::FileRange> ranges) const {
  if (!discovering_)
    return;
  // The piece's reads are known: stop it before it decodes anything.
  stopped_ = true;
  if (ImageAt(chunk.offset) < 0 && Inside(chunk.offset, chunk.length, 0, size())) {
    // The chunk's image; its streams will be fetched into it.
    Image image{chunk.offset, chunk.length, arena_->Allocate(chunk.length).data(), {}};
    // Copy in what the buffers hold from the chunk's start on, without a gap (the header and
    // offsets the codec just read).
    const uint64_t end = chunk.offset + chunk.length;
    uint64_t have = chunk.offset;
    while (have < end) {
      const Buffer* from = FurthestBuffer(have);
      if (from == nullptr)
        break;
      const uint64_t upto = std::min<uint64_t>(from->offset + from->bytes.size(), end);
      std::memcpy(image.bytes + (have - chunk.offset), from->bytes.data() + (have - from->offset),
                  upto - have);
      have = upto;
    }
    if (have > chunk.offset)
      image.valid.push_back({chunk.offset, have - chunk.offset});
    auto at = std::upper_bound(images_.begin(), images_.end(), chunk.offset,
                               [](uint64_t o, const Image& im) { return o < im.pos; });
    images_.insert(at, std::move(image));
  }
  for (const storage::FileRange& r : ranges) {
    if (Find(r.offset, r.length) == nullptr)
      missing_.push_back(r);
  }
}

const std::byte* FetchedSource::ChunkImage(uint64_t pos, uint64_t length,
                                           std::span<const storage::FileRange> needed) const {
  if (discovering_)
    return nullptr;  // discovery goes through ReadAt and WillRead, which record
  const int64_t i = ImageAt(pos);
  if (i < 0)
    return nullptr;
  const Image& image = images_[static_cast<size_t>(i)];
  if (image.pos != pos || image.size != length)
    return nullptr;
  for (const storage::FileRange& r : needed) {
    if (!Holds(image, r.offset, r.length))
      return nullptr;
  }
  images_served_.fetch_add(1, std::memory_order_relaxed);
  return image.bytes;
}

void FetchedSource::BeginDiscovery() {
  discovering_ = true;
  stopped_ = false;
}

std::vector<storage::FileRange> FetchedSource::TakeMissing() { return std::exchange(missing_, {}); }

std::span<std::byte> FetchedSource::AddFetch(storage::FileRange range) {
  fetched_bytes_ += static_cast<int64_t>(range.length);
  if (const int64_t i = ImageAt(range.offset); i >= 0) {
    Image& image = images_[static_cast<size_t>(i)];
    if (Inside(range.offset, range.length, image.pos, image.size)) {
      image.valid.push_back(range);
      return {image.bytes + (range.offset - image.pos), range.length};
    }
  }
  const std::span<std::byte> bytes = arena_->Allocate(range.length).first(range.length);
  AddBuffer(range.offset, bytes);
  return bytes;
}

void FetchedSource::AddFetched(uint64_t offset, std::span<std::byte> bytes) {
  fetched_bytes_ += static_cast<int64_t>(bytes.size());
  AddBuffer(offset, bytes);
}

void FetchedSource::AddBuffer(uint64_t offset, std::span<std::byte> bytes) {
  auto at = std::upper_bound(buffers_.begin(), buffers_.end(), offset,
                             [](uint64_t o, const Buffer& x) { return o < x.offset; });
  buffers_.insert(at, Buffer{offset, bytes});
  longest_ = std::max<uint64_t>(longest_, bytes.size());
}

}  // namespace patchfeed::loader::internal_loader
