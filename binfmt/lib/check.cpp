#include "npu/bin/check.h"

#include "npu/arith/ulp.h"

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace npu::bin {

namespace {

bool isF32(const CheckRegion &check) {
  return check.kind == CheckRegion::Kind::F32Ulp;
}

// What describeOutcome prints for the kind of the region.
const char *kindText(const CheckRegion &check) {
  return isF32(check) ? "f32 ulp" : "exact";
}

} // namespace

CheckOutcome compareCheck(const CheckRegion &check, std::span<const uint8_t> actual) {
  CheckOutcome outcome;
  const bool f32 = isF32(check);
  const size_t step = f32 ? 4 : 1;
  const size_t size = std::min(actual.size(), check.expected.size());
  // Equal bytes are within every tolerance (0 ulp): the usual verdict, at
  // memcmp's speed (a replayed training step checks megabytes).
  if (size == 0 || std::memcmp(check.expected.data(), actual.data(), size) == 0)
    return outcome;
  for (size_t i = 0; i + step <= size; i += step) {
    uint32_t want = 0, got = 0;
    std::memcpy(&want, check.expected.data() + i, step);
    std::memcpy(&got, actual.data() + i, step);
    const uint64_t ulp = f32 ? arith::ulpDistance(want, got) : (want == got ? 0 : 1);
    outcome.worstUlp = std::max(outcome.worstUlp, ulp);
    if (f32 ? ulp <= check.ulpTolerance : want == got)
      continue;
    if (++outcome.mismatches <= kShownMismatches)
      outcome.shown.push_back({check.address + i, want, got, ulp});
  }
  return outcome;
}

std::string describeMismatch(const CheckRegion &check, const CheckMismatch &m) {
  char text[256];
  if (isF32(check))
    std::snprintf(text, sizeof text,
                  "  mismatch at 0x%08" PRIx64 ": expected 0x%08x (%.9g), actual 0x%08x (%.9g), "
                  "%s ulp (tolerance %u)",
                  m.address, m.expected, double(std::bit_cast<float>(m.expected)), m.actual,
                  double(std::bit_cast<float>(m.actual)),
                  m.ulp == arith::kUnorderedUlp ? "inf" : std::to_string(m.ulp).c_str(),
                  check.ulpTolerance);
  else
    std::snprintf(text, sizeof text,
                  "  mismatch at 0x%08" PRIx64 ": expected 0x%02x, actual 0x%02x", m.address,
                  m.expected, m.actual);
  return text;
}

std::string describeOutcome(const CheckRegion &check, const CheckOutcome &outcome) {
  char text[256];
  if (!outcome.ok())
    std::snprintf(text, sizeof text,
                  "check 0x%08" PRIx64 " (+%zu bytes, %s): FAILED, %zu mismatching %s",
                  check.address, check.expected.size(), kindText(check), outcome.mismatches,
                  isF32(check) ? "elements" : "bytes");
  else
    std::snprintf(text, sizeof text, "check 0x%08" PRIx64 " (+%zu bytes, %s): ok%s", check.address,
                  check.expected.size(), kindText(check),
                  isF32(check) ? (", max " + std::to_string(outcome.worstUlp) + " ulp").c_str()
                               : "");
  return text;
}

} // namespace npu::bin
