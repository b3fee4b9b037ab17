// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "storage/io_engine.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "common/str_cat.h"

namespace patchfeed::storage {

Result<std::unique_ptr<IoEngine>> IoEngine::Create(IoBackend wanted, int depth) {
  if (depth < 1)
    return InvalidArgumentError(StrCat("io depth must be at least 1, not ", depth));
  if (wanted == IoBackend::kPreadPool)
    return CreatePreadPoolIoEngine(depth);
  Result<std::unique_ptr<IoEngine>> uring = CreateUringIoEngine(depth);
  if (uring.ok() || wanted == IoBackend::kIoUring)
    return uring;
  return CreatePreadPoolIoEngine(depth);
}

IoEngineStats IoEngine::stats() const {
  IoEngineStats s;
  s.submitted = submitted_.load(std::memory_order_relaxed);
  s.completed = completed_.load(std::memory_order_relaxed);
  s.bytes = bytes_.load(std::memory_order_relaxed);
  s.in_flight = in_flight_.load(std::memory_order_relaxed);
  s.max_in_flight = max_in_flight_.load(std::memory_order_relaxed);
  return s;
}

void IoEngine::EnterFlight() {
  const int64_t now = in_flight_.fetch_add(1, std::memory_order_relaxed) + 1;
  int64_t seen = max_in_flight_.load(std::memory_order_relaxed);
  while (now > seen &&
         !max_in_flight_.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
  }
}

void IoEngine::Complete(ReadRequest& request, Status status) {
  // Counted first: whoever the callback wakes sees `completed` include it.
  completed_.fetch_add(1, std::memory_order_relaxed);
  auto done = std::move(request.done);
  request.done = nullptr;
  if (done)
    done(std::move(status));
}

Status ShortReadError(const ReadRequest& request, uint64_t got) {
  return DataLossError(StrCat("short read: ", got, " of ", request.out.size(), " bytes at offset ",
                              request.offset, " of ", request.label));
}

Status ClosedBeforeReadError(const ReadRequest& request) {
  return CancelledError(StrCat("the I/O engine closed before reading ", request.out.size(),
                               " bytes at offset ", request.offset, " of ", request.label));
}

Status ReadErrnoError(const ReadRequest& request, uint64_t got, int err) {
  char buf[128];
  const char* text = strerror_r(err, buf, sizeof(buf));  // GNU form: returns the text
  return IoError(StrCat("read of ", request.out.size(), " bytes at offset ", request.offset, " of ",
                        request.label, " failed",
                        got > 0 ? StrCat(" after ", got, " bytes") : std::string(), ": ", text,
                        " (errno ", err, ")"));
}

}  // namespace patchfeed::storage
