#include "npu/mem/fault.h"

#include "npu/mem/hex.h"

#include <cinttypes>
#include <cstdio>

namespace npu::mem {

namespace {

// What a fault is about, and so which fields describe() shows.
enum class Shape {
  Plain,   // the phrase alone
  Range,   // "<phrase> <access> of <length> at <address>"
  Address, // "<phrase> <address>"
  Overlap, // "overlap of <length> with <other operand> at <address>"
};

struct FaultText {
  const char *name;
  const char *phrase;
  Shape shape;
};

FaultText faultText(FaultCode code) {
  switch (code) {
  case FaultCode::None: return {"none", "no fault", Shape::Plain};
  case FaultCode::Unmapped: return {"unmapped", "unmapped", Shape::Range};
  case FaultCode::Permission: return {"permission", "forbidden", Shape::Range};
  case FaultCode::OutOfRegion: return {"out-of-region", "out-of-region", Shape::Range};
  case FaultCode::Misaligned: return {"misaligned", "misaligned address", Shape::Address};
  case FaultCode::InvalidOperand: return {"invalid-operand", "invalid operand", Shape::Plain};
  case FaultCode::UnknownOpcode: return {"unknown-opcode", "unknown opcode", Shape::Plain};
  case FaultCode::ReservedBits: return {"reserved-bits", "reserved bits set", Shape::Plain};
  case FaultCode::Overlap: return {"overlap", "overlap", Shape::Overlap};
  case FaultCode::IndexOutOfRange:
    return {"index-out-of-range", "index out of range at", Shape::Address};
  case FaultCode::Timeout: return {"timeout", "timeout", Shape::Plain};
  case FaultCode::Divergence: return {"divergence", "ISS/RTL divergence", Shape::Plain};
  }
  return {"unknown", "unknown fault", Shape::Plain};
}

// Addresses with at least eight hex digits, so that device addresses line up.
std::string addressText(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%08" PRIx64, value);
  return text;
}

} // namespace

const char *faultCodeName(FaultCode code) {
  return faultText(code).name;
}

const char *accessName(Access access) {
  switch (static_cast<uint8_t>(access)) {
  case static_cast<uint8_t>(Access::Read): return "read";
  case static_cast<uint8_t>(Access::Write): return "write";
  case static_cast<uint8_t>(Access::Read | Access::Write): return "read-modify-write";
  }
  return "unknown access";
}

std::string Fault::describe() const {
  const FaultText text = faultText(code);
  std::string result;
  if (!instruction.empty())
    result = instruction + (operand.empty() ? "" : " " + operand) + ": ";
  result += text.phrase;
  switch (text.shape) {
  case Shape::Plain: break;
  case Shape::Range:
    result += std::string(" ") + accessName(access) + " of " + fmt::byteCount(length) + " at " +
              addressText(address);
    break;
  case Shape::Address: result += " " + addressText(address); break;
  case Shape::Overlap:
    result += " of " + fmt::byteCount(length) +
              (otherOperand.empty() ? "" : " with " + otherOperand) + " at " + addressText(address);
    break;
  }
  if (!region.empty())
    result += " (" + region + ")";
  if (packetIndex >= 0)
    result += " at packet " + std::to_string(packetIndex);
  if (!detail.empty())
    result += ": " + detail;
  return result;
}

DeviceFault::DeviceFault(Fault fault)
    : std::runtime_error(fault.describe()), fault_(std::move(fault)) {}

} // namespace npu::mem
