// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_STORAGE_IO_BACKEND_H_
#define PATCHFEED_STORAGE_IO_BACKEND_H_

/// \file
/// How the loader keeps reads in flight in IoMode::kPread (LoaderConfig::io_backend).

namespace patchfeed::storage {

enum class IoBackend {
  kAuto,       ///< io_uring when the kernel allows it, else the pread pool
  kIoUring,    ///< io_uring or an error
  kPreadPool,  ///< blocking preads on a pool of threads
};

}  // namespace patchfeed::storage

#endif  // PATCHFEED_STORAGE_IO_BACKEND_H_
