// Tests that cannot run on this host (no AVX2/FMA for the fast paths) skip
// themselves; a run that must not lose coverage silently (scripts/test sets
// NPU_REQUIRE_FULL_COVERAGE=1, so CI does) turns that skip into a failure.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

namespace npu::test {

inline bool fullCoverageRequired() {
  const char *value = std::getenv("NPU_REQUIRE_FULL_COVERAGE");
  return value && *value && std::string_view(value) != "0";
}

} // namespace npu::test

// Skips the current test with `reason`, or fails it under
// NPU_REQUIRE_FULL_COVERAGE. Returns from the calling function like GTEST_SKIP.
#define NPU_SKIP_OR_REQUIRE(reason)                                                                \
  do {                                                                                             \
    if (::npu::test::fullCoverageRequired())                                                       \
      FAIL() << (reason) << " (NPU_REQUIRE_FULL_COVERAGE is set: this run may not skip it)";       \
    else                                                                                           \
      GTEST_SKIP() << (reason);                                                                    \
  } while (0)
