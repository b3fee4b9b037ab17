// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_CLI_ARRAY_STATS_H_
#define PATCHFEED_CLI_ARRAY_STATS_H_

/// \file
/// `patchfeed info --stats`: the minimum, maximum and mean of an array's finite items and its
/// NaN and infinity counts, read chunk by chunk through the array's normal decode path, so at
/// most one chunk is in memory.

#include <string>

#include "codec/array_reader.h"
#include "common/result.h"

namespace patchfeed::cli {

/// The statistics as a JSON object: {"count", "min", "max", "mean", "nan", "posinf",
/// "neginf"}; min, max and mean are over the finite items (null when there are none).
/// kUnimplemented for dtypes other than bool, integers and floats of 2, 4 or 8 bytes.
Result<std::string> ArrayStatsJson(const codec::ArrayReader& array);

}  // namespace patchfeed::cli

#endif  // PATCHFEED_CLI_ARRAY_STATS_H_
