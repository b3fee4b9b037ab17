// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_COMMON_CHECK_H_
#define PATCHFEED_COMMON_CHECK_H_

/// \file
/// PATCHFEED_DCHECK(condition): a check of the program's own logic (a bug if it fails, never
/// bad input: that is a Status). In debug builds (NDEBUG unset) a failure prints the condition,
/// file and line and aborts; in release builds the condition is not evaluated.

#include <cstdio>
#include <cstdlib>

#ifdef NDEBUG
#define PATCHFEED_DCHECK(condition) \
  do {                              \
    if (false && (condition)) {     \
    }                               \
  } while (false)
#else
#define PATCHFEED_DCHECK(condition)                                                    \
  do {                                                                                 \
    if (!(condition)) [[unlikely]] {                                                   \
      std::fprintf(stderr, "%s:%d: PATCHFEED_DCHECK(%s) failed\n", __FILE__, __LINE__, \
                   #condition);                                                        \
      std::abort();                                                                    \
    }                                                                                  \
  } while (false)
#endif

#endif  // PATCHFEED_COMMON_CHECK_H_
