// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#ifndef PATCHFEED_TESTS_TESTUTIL_STATUS_MATCHERS_H_
#define PATCHFEED_TESTS_TESTUTIL_STATUS_MATCHERS_H_

/// \file
/// GoogleTest helpers for Status and Result: ASSERT_OK, ASSERT_OK_AND_ASSIGN and the
/// StatusIs(code, message_matcher) matcher (after tensorstore's status_testutil.h).

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/result.h"
#include "common/status.h"

namespace patchfeed {

inline void PrintTo(const Status& s, std::ostream* os) { *os << s.ToString(); }

template <typename T>
const Status& GetStatus(const Result<T>& r) {
  return r.status();
}
inline const Status& GetStatus(const Status& s) { return s; }

MATCHER_P2(StatusIs, code, message_matcher,
           std::string("has code ") + std::string(StatusCodeName(code))) {
  const Status& s = GetStatus(arg);
  if (s.code() != code) {
    *result_listener << "status is " << s.ToString();
    return false;
  }
  return ::testing::ExplainMatchResult(message_matcher, std::string(s.message()), result_listener);
}

}  // namespace patchfeed

// The status is copied out of the (possibly temporary) result before the result dies.
#define ASSERT_OK(expr)                                               \
  do {                                                                \
    const ::patchfeed::Status pf_s_ = ::patchfeed::GetStatus((expr)); \
    ASSERT_TRUE(pf_s_.ok()) << pf_s_.ToString();                      \
  } while (false)

#define EXPECT_OK(expr)                                               \
  do {                                                                \
    const ::patchfeed::Status pf_s_ = ::patchfeed::GetStatus((expr)); \
    EXPECT_TRUE(pf_s_.ok()) << pf_s_.ToString();                      \
  } while (false)

#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  ASSERT_OK_AND_ASSIGN_IMPL_(PATCHFEED_STATUS_CONCAT_(pf_result_, __LINE__), lhs, expr)
#define ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, expr)  \
  auto tmp = (expr);                                \
  ASSERT_TRUE(tmp.ok()) << tmp.status().ToString(); \
  lhs = std::move(tmp).value()

#endif  // PATCHFEED_TESTS_TESTUTIL_STATUS_MATCHERS_H_
