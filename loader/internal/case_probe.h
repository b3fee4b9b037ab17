// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_LOADER_INTERNAL_CASE_PROBE_H_
#define PATCHFEED_LOADER_INTERNAL_CASE_PROBE_H_

/// \file
/// The one place Loader::Create opens the dataset's cases: every case's arrays are opened once
/// (in parallel), checked against the patch and against the other cases, and, when the sampler
/// oversamples foreground, their foreground indexes built or loaded (in parallel). A case that
/// fails any of it (a missing or unreadable file, a truncated header, an array whose rank,
/// channels or dtype differ from the other cases', spatial shapes that differ between its
/// arrays, a label map that cannot be indexed) is a bad case. Under ErrorPolicy::kFail one
/// error lists every bad case, each with its file and reason; under kSkip they are left out
/// (LoaderParts::excluded) and the sampler draws from the others. With no good case left it
/// fails either way. Runs during Create only.

#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "common/result.h"
#include "loader/internal/loader_setup.h"
#include "loader/sampler.h"

namespace patchfeed::loader::internal_loader {

/// Probes every case of `p.config.dataset` with `arena`'s workers: fills p.probes, the dtype,
/// channels, item size and pad item of each of p.outputs (from the cases, by majority), and
/// p.excluded; prepares p.foreground's indexes. Returns the sampler's view of the cases it
/// keeps, in dataset order, each with its dataset index. kInvalidArgument when no case's
/// arrays have the patch's rank (the patch_size is wrong, not the cases) or the cases' dtypes
/// do not suit the augmentation.
Result<std::vector<CaseInfo>> ProbeCases(tbb::task_arena& arena, LoaderParts& p);

}  // namespace patchfeed::loader::internal_loader

#endif  // PATCHFEED_LOADER_INTERNAL_CASE_PROBE_H_
