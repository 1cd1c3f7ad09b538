#include "context.h"

#include "npu/mem/hex.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace npu::sim {

void ExecContext::indexFault(int indices, uint64_t address, uint64_t width, int64_t index) const {
  const FaultFacts facts{.code = mem::FaultCode::IndexOutOfRange,
                         .packetIndex = static_cast<int64_t>(packetIndex_),
                         .operand = indices,
                         .address = address,
                         .length = width,
                         .index = index};
  throw mem::DeviceFault(describeFault(facts, packet_, memory_.map()));
}

uint8_t *ExecContext::span(uint64_t address, uint64_t count, uint64_t elementSize,
                           mem::Access access) {
  uint64_t bytes;
  const bool admitted = !__builtin_mul_overflow(count, elementSize, &bytes) &&
                        std::any_of(ranges_.begin(), ranges_.end(), [&](const OperandRange &r) {
                          return r.accessed && mem::includes(r.access, access) &&
                                 address >= r.address && address - r.address <= r.bytes &&
                                 bytes <= r.bytes - (address - r.address);
                        });
  if (!admitted)
    throw std::logic_error("the semantics reach " + std::to_string(count) + " elements of " +
                           std::to_string(elementSize) + " bytes at " + mem::fmt::hex(address) +
                           ", outside the ranges the operand checks admitted");
  return memory_.hostSpan(address, bytes, access);
}

} // namespace npu::sim
