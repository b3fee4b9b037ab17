// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_AUGMENT_SCALAR_RANGE_H_
#define PATCHFEED_AUGMENT_SCALAR_RANGE_H_

/// \file
/// ScalarRange: the parameter ranges of every transform, shared by spatial/ and intensity/.

namespace patchfeed::augment {

/// A closed range `[lo, hi]` for uniform draws, as batchgeneratorsv2's `sample_scalar((lo,
/// hi))`; `lo == hi` means the constant lo, and no draw is consumed.
struct ScalarRange {
  double lo = 0;
  double hi = 0;
};

}  // namespace patchfeed::augment

#endif  // PATCHFEED_AUGMENT_SCALAR_RANGE_H_
