// The semantics index the spans the execution context gave them through
// within(): a row past the span they asked for (a semantics bug, e.g. a
// span requested too short) throws instead of touching the memory after
// it, which the context's range checks cannot see.
#include "context.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace {

using npu::sim::within;

TEST(SemanticsSpans, WithinGivesTheRangeInsideTheSpan) {
  std::vector<float> data(12);
  const std::span<float> all(data);
  EXPECT_EQ(within(all, 4, 8).data(), data.data() + 4);
  EXPECT_EQ(within(all, 12, 0).size(), 0u);
}

TEST(SemanticsSpans, WithinRefusesARangePastTheSpan) {
  std::vector<float> data(12);
  const std::span<float> all(data);
  EXPECT_THROW(within(all, 8, 5), std::logic_error);
  EXPECT_THROW(within(all, 13, 0), std::logic_error);
  EXPECT_THROW(within(all, 4, ~uint64_t(0)), std::logic_error); // no wrap-around
}

} // namespace
