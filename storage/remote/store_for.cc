// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "storage/remote/store_for.h"

#include "common/str_cat.h"
#include "storage/remote/range_cache.h"
#include "storage/remote/remote_store.h"
#include "storage/remote/url.h"

namespace patchfeed::storage {

Result<std::shared_ptr<const Store>> StoreFor(const std::string& path,
                                              const RemoteOptions& options) {
  if (!IsRemoteUrl(path)) {
    // "ftp://x" read as a local path would be a puzzling "no such file".
    const size_t scheme = path.find("://");
    if (scheme != std::string::npos && scheme > 0 && path.find('/') == scheme + 1) {
      return InvalidArgumentError(StrCat(path,
                                         ": patchfeed reads s3://, gs://, http:// and "
                                         "https:// URLs, and local paths"));
    }
    return LocalFiles();
  }
  PATCHFEED_ASSIGN_OR_RETURN(std::shared_ptr<RemoteStore> store,
                             RemoteStore::Create(options, ProcessEnvironment()));
  if (options.cache_dir.empty())
    return std::shared_ptr<const Store>(std::move(store));
  RangeCacheOptions cache;
  cache.folder = options.cache_dir;
  cache.max_bytes = options.cache_max_bytes;
  return CachedStore(std::move(store), cache);
}

}  // namespace patchfeed::storage
