// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "loader/internal/batch_ring.h"

#include <utility>

namespace patchfeed::loader::internal_loader {
namespace {

int64_t ArrayBytes(const RingArraySpec& a) {
  int64_t n = a.itemsize;
  for (const int64_t s : a.shape) {
    n *= s;
  }
  return n;
}

}  // namespace

int64_t BatchRing::SlotBytes(const std::vector<RingArraySpec>& arrays) {
  int64_t total = 0;
  for (const auto& a : arrays) {
    total += static_cast<int64_t>(RoundUpToPage(static_cast<size_t>(ArrayBytes(a))));
  }
  return total;
}

Result<BatchRing> BatchRing::Create(const std::vector<RingArraySpec>& arrays, int ring_size,
                                    PinMode pin) {
  if (ring_size < 1) {
    return InvalidArgumentError("the batch ring needs at least one slot");
  }
  BatchRing ring;
  ring.slot_bytes_ = SlotBytes(arrays);
  ring.pinned_ = pin != PinMode::kOff;
  for (int k = 0; k < ring_size; ++k) {
    Slot slot;
    PATCHFEED_ASSIGN_OR_RETURN(slot.memory,
                               HostBuffer::Allocate(static_cast<size_t>(ring.slot_bytes_), pin));
    if (!slot.memory.pinned()) {
      ring.pinned_ = false;
      if (ring.unpinned_reason_.empty()) {
        ring.unpinned_reason_ = slot.memory.unpinned_reason();
      }
    }
    int64_t offset = 0;
    for (const auto& a : arrays) {
      ArrayView v;
      static_cast<StridedView&>(v) =
          StridedView::Contiguous(slot.memory.data() + offset, a.shape, a.itemsize);
      v.name = a.name;
      v.dtype = a.dtype;
      v.itemsize = a.itemsize;
      v.nbytes = ArrayBytes(a);
      offset += static_cast<int64_t>(RoundUpToPage(static_cast<size_t>(v.nbytes)));
      slot.views.push_back(std::move(v));
    }
    ring.slots_.push_back(std::move(slot));
  }
  return ring;
}

}  // namespace patchfeed::loader::internal_loader
