// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/fetched_store.h"

#include <algorithm>

namespace patchfeed::loader::internal_loader {

Result<std::shared_ptr<storage::ByteSource>> FetchedStore::Open(const std::string& path,
                                                                storage::IoMode mode) const {
  if (auto it = sources_.find(path); it != sources_.end()) {
    if (discovering_)
      it->second->BeginDiscovery();
    return std::shared_ptr<storage::ByteSource>(it->second);
  }
  if (auto it = failed_.find(path); it != failed_.end())
    return it->second;
  if (discovering_) {
    if (std::find(missing_opens_.begin(), missing_opens_.end(), path) == missing_opens_.end())
      missing_opens_.push_back(path);
    return CancelledError("not opened yet");
  }
  fallback_reads_->fetch_add(1, std::memory_order_relaxed);
  return store_.Open(path, mode);
}

void FetchedStore::EndDiscovery() {
  discovering_ = false;
  for (auto& [path, source] : sources_)
    source->EndDiscovery();
}

void FetchedStore::AddOpened(const std::string& path, Result<storage::OpenedFile> opened,
                             std::span<std::byte> head) {
  if (!opened.ok()) {
    failed_.insert_or_assign(path, opened.status());
    return;
  }
  auto source = std::make_shared<FetchedSource>(std::move(opened->file), arena_, fallback_reads_);
  if (opened->head_bytes > 0)
    source->AddFetched(0, head.first(opened->head_bytes));
  sources_.insert_or_assign(path, std::move(source));
}

}  // namespace patchfeed::loader::internal_loader
