#include "context.h"

#include <algorithm>

namespace npu::sim {

void ExecContext::fault(mem::FaultCode code, uint64_t address, uint64_t length,
                        const std::string &detail) const {
  mem::Fault f;
  f.code = code;
  f.address = address;
  f.length = length;
  f.packetIndex = static_cast<int64_t>(packetIndex_);
  f.detail = std::string(info_.mnemonic) + ": " + detail;
  throw mem::DeviceFault(f);
}

uint64_t ExecContext::mul(uint64_t a, uint64_t b, const char *what) const {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    fault(mem::FaultCode::InvalidOperand, 0, 0, std::string(what) + " overflows 64 bits");
  return r;
}

uint64_t ExecContext::add(uint64_t a, uint64_t b, const char *what) const {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r))
    fault(mem::FaultCode::InvalidOperand, 0, 0, std::string(what) + " overflows 64 bits");
  return r;
}

void ExecContext::requireDisjoint(const char *nameA, uint64_t a, uint64_t bytesA, const char *nameB,
                                  uint64_t b, uint64_t bytesB, bool allowIdentical) const {
  if (allowIdentical && a == b && bytesA == bytesB)
    return;
  const bool overlap = a < b + bytesB && b < a + bytesA;
  if (overlap)
    fault(mem::FaultCode::Overlap, std::max(a, b), std::min(a + bytesA, b + bytesB) - std::max(a, b),
          std::string(nameA) + " and " + nameB + " overlap" +
              (allowIdentical ? " (only an exact in-place alias is allowed)" : ""));
}

uint8_t *ExecContext::span(uint64_t address, uint64_t count, uint64_t elementSize,
                           mem::Access access) {
  const uint64_t bytes = mul(count, elementSize, "access length");
  try {
    return memory_.hostSpan(address, bytes, access);
  } catch (const mem::DeviceFault &e) {
    mem::Fault f = e.fault();
    f.packetIndex = static_cast<int64_t>(packetIndex_);
    f.detail = std::string(info_.mnemonic) + (f.detail.empty() ? "" : ": " + f.detail);
    throw mem::DeviceFault(f);
  }
}

} // namespace npu::sim
