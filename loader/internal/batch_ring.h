// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_BATCH_RING_H_
#define PATCHFEED_LOADER_INTERNAL_BATCH_RING_H_

/// \file
/// The memory of the batch ring: K slots, each holding every output array of one batch, laid
/// out (B, C, *patch) per array, C-contiguous, each array starting on a page boundary. A slot
/// is one HostBuffer (pinned when the CUDA runtime allows), allocated and touched once when
/// the ring is made and reused for every batch after.
///
/// The ring owns memory and views only; which slot is free, being produced, ready or leased
/// is the scheduler's bookkeeping (slot_scheduler.h). Immutable after Create: thread-safe to read,
/// and a slot's bytes belong to whoever the loader says owns the slot.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "loader/batch_view.h"
#include "loader/internal/pinned_memory.h"

namespace patchfeed::loader::internal_loader {

/// Shape and type of one output array (no memory yet).
struct RingArraySpec {
  std::string name;
  std::string dtype;
  int64_t itemsize = 0;
  std::vector<int64_t> shape;  ///< (B, C, *patch)
};

class BatchRing {
 public:
  /// Bytes of one slot: every array rounded up to whole pages.
  static int64_t SlotBytes(const std::vector<RingArraySpec>& arrays);

  /// Allocates `ring_size` slots. With PinMode::kAuto a slot that cannot be pinned is plain;
  /// pinned() is true only when all are.
  static Result<BatchRing> Create(const std::vector<RingArraySpec>& arrays, int ring_size,
                                  PinMode pin);

  int ring_size() const { return static_cast<int>(slots_.size()); }
  int64_t slot_bytes() const { return slot_bytes_; }
  bool pinned() const { return pinned_; }
  /// Why the ring is not pinned ("" when it is or pinning was off).
  const std::string& unpinned_reason() const { return unpinned_reason_; }

  /// The arrays of slot `slot`, in the order given to Create.
  const std::vector<ArrayView>& views(int slot) const {
    return slots_[static_cast<size_t>(slot)].views;
  }

 private:
  struct Slot {
    HostBuffer memory;
    std::vector<ArrayView> views;
  };
  std::vector<Slot> slots_;
  int64_t slot_bytes_ = 0;
  bool pinned_ = false;
  std::string unpinned_reason_;
};

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_BATCH_RING_H_
