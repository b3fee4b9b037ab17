// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/fetched_source.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace patchfeed::loader::internal_loader {

FetchedSource::FetchedSource(std::shared_ptr<const codec::ArrayReader> array,
                             std::atomic<int64_t>* fallback_reads)
    : array_(std::move(array)), file_(*array_->file()), fallback_reads_(fallback_reads) {}

const std::byte* FetchedSource::Find(uint64_t offset, size_t length) const {
  // The ranges starting at or before `offset`, nearest first; none starting more than the
  // longest range before it can reach it.
  auto it = std::upper_bound(fetched_.begin(), fetched_.end(), offset,
                             [](uint64_t o, const Fetched& f) { return o < f.offset; });
  while (it != fetched_.begin()) {
    --it;
    if (offset - it->offset > longest_)
      break;
    if (offset + length <= it->offset + it->bytes.size())
      return it->bytes.data() + (offset - it->offset);
  }
  return nullptr;
}

Status FetchedSource::ReadAt(uint64_t offset, std::span<std::byte> out) const {
  if (discovering_ && stopped_)
    return CancelledError("not decoded during discovery");
  if (const std::byte* p = Find(offset, out.size()); p != nullptr) {
    std::memcpy(out.data(), p, out.size());
    return Status::Ok();
  }
  if (discovering_) {
    if (!stopped_)
      missing_.push_back({offset, out.size()});
    return CancelledError("not fetched yet");
  }
  fallback_reads_->fetch_add(1, std::memory_order_relaxed);
  return file_.ReadAt(offset, out);
}

void FetchedSource::WillRead(std::span<const codec::FileRange> ranges) const {
  if (!discovering_)
    return;
  for (const codec::FileRange& r : ranges) {
    if (Find(r.offset, r.length) == nullptr)
      missing_.push_back(r);
  }
  // The piece's reads are known: stop it before it decodes anything.
  stopped_ = true;
}

void FetchedSource::BeginDiscovery() {
  discovering_ = true;
  stopped_ = false;
}

std::vector<codec::FileRange> FetchedSource::TakeMissing() { return std::exchange(missing_, {}); }

std::span<std::byte> FetchedSource::AddFetch(codec::FileRange range) {
  Fetched f{range.offset, std::vector<std::byte>(range.length)};
  const std::span<std::byte> out(f.bytes);  // the heap buffer stays put when `f` moves
  auto at = std::upper_bound(fetched_.begin(), fetched_.end(), range.offset,
                             [](uint64_t o, const Fetched& x) { return o < x.offset; });
  fetched_.insert(at, std::move(f));
  fetched_bytes_ += static_cast<int64_t>(range.length);
  longest_ = std::max(longest_, range.length);
  return out;
}

}  // namespace patchfeed::loader::internal_loader
