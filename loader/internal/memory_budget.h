// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_MEMORY_BUDGET_H_
#define PATCHFEED_LOADER_INTERNAL_MEMORY_BUDGET_H_

/// \file
/// The loader's one memory budget (LoaderConfig::memory_budget): the ring, every worker's
/// scratch (decoded blocks, whole chunks for pread and DELTA, augmentation staging) and the
/// state of the open files, checked before anything is allocated.

#include <vector>

#include "common/status.h"
#include "loader/internal/batch_ring.h"
#include "loader/internal/loader_setup.h"

namespace patchfeed::loader::internal_loader {

/// kResourceExhausted with every term when the ring of `specs` and the scratch of the parts'
/// workers and files exceed the budget.
Status CheckMemoryBudget(const LoaderParts& parts, const std::vector<RingArraySpec>& specs);

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_MEMORY_BUDGET_H_
