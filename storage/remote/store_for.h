// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_STORAGE_REMOTE_STORE_FOR_H_
#define PATCHFEED_STORAGE_REMOTE_STORE_FOR_H_

/// \file
/// StoreFor: the one place a path is told from a URL. A local path leads to LocalFiles(); an
/// s3://, gs:// or http(s):// URL to a store that serves every URL of those schemes, with one
/// CurlEngine (one thread, `options.io_depth` requests in flight) for all of its buckets and
/// hosts, each bucket's endpoint and credentials resolved once, when first used.
///
/// Everything opened through one store (a dataset's cases, their chunks) shares its engine;
/// the engine lives until the last of them is gone. With `options.cache_dir`, what the store
/// reads is also kept there (range_cache.h).

#include <memory>
#include <string>

#include "common/result.h"
#include "storage/remote/remote_options.h"
#include "storage/store.h"

namespace patchfeed::storage {

/// The store for `path`: LocalFiles() when it is not a URL (options are then unused), else a
/// remote store made with `options` and this process's environment. kInvalidArgument for a
/// URL of another scheme or options that cannot work.
Result<std::shared_ptr<const Store>> StoreFor(const std::string& path,
                                              const RemoteOptions& options = {});

}  // namespace patchfeed::storage

#endif  // PATCHFEED_STORAGE_REMOTE_STORE_FOR_H_
