// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_TESTS_LOADER_DISTRIBUTION_CHECKS_H_
#define PATCHFEED_TESTS_LOADER_DISTRIBUTION_CHECKS_H_

/// \file
/// Goodness-of-fit checks for the loader's random draws. Tests draw with fixed seeds, so a
/// check either always passes or always fails; the bounds (~6 sigma) only need to be loose
/// enough for a correct generator and tight enough to catch a biased one.

#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace patchfeed::loader {

/// Pearson's chi-square of `observed` counts against `probs`; expects it below dof + 6 sqrt(2
/// dof). Bins of probability 0 must be empty.
inline void ExpectChiSquareOk(const std::vector<int64_t>& observed,
                              const std::vector<double>& probs) {
  double n = 0, chi2 = 0;
  for (const int64_t o : observed) {
    n += static_cast<double>(o);
  }
  int dof = -1;
  for (size_t i = 0; i < observed.size(); ++i) {
    if (probs[i] == 0) {
      EXPECT_EQ(observed[i], 0) << "bin " << i;
      continue;
    }
    const double e = n * probs[i];
    chi2 += (static_cast<double>(observed[i]) - e) * (static_cast<double>(observed[i]) - e) / e;
    ++dof;
  }
  EXPECT_LT(chi2, dof + 6 * std::sqrt(2.0 * dof)) << "dof " << dof;
}

}  // namespace patchfeed::loader

#endif  // PATCHFEED_TESTS_LOADER_DISTRIBUTION_CHECKS_H_
