// Comparing the memory a program left behind with the expected contents of
// its check regions (the assembler's .check sections).
#pragma once

#include "npu/bin/object.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace npu::bin {

// One element (F32Ulp) or byte (Exact) outside the region's tolerance.
struct CheckMismatch {
  uint64_t address = 0;
  uint32_t expected = 0;
  uint32_t actual = 0;
  uint64_t ulp = 0; // F32Ulp only; arith::kUnorderedUlp for a NaN against a number
};

struct CheckOutcome {
  size_t mismatches = 0;            // elements (F32Ulp) or bytes (Exact)
  uint64_t worstUlp = 0;            // F32Ulp only, over every element
  std::vector<CheckMismatch> shown; // the first kShownMismatches of them
  bool ok() const { return mismatches == 0; }
};

inline constexpr size_t kShownMismatches = 10;

// Compares `actual`, the check.expected.size() bytes read from
// check.address, with the region.
CheckOutcome compareCheck(const CheckRegion &check, std::span<const uint8_t> actual);

// "  mismatch at 0x...: expected ..., actual ..." for one shown mismatch.
std::string describeMismatch(const CheckRegion &check, const CheckMismatch &mismatch);

// "check 0x... (+N bytes, f32 ulp): ok, max U ulp" or "...: FAILED, M
// mismatching elements".
std::string describeOutcome(const CheckRegion &check, const CheckOutcome &outcome);

} // namespace npu::bin
