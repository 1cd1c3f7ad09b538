#include "npu/mem/fault.h"

#include "hex.h"

namespace npu::mem {

namespace {

struct FaultText {
  const char *name;
  // Leads describe(); for address faults it is followed by the address.
  const char *phrase;
  bool aboutAddress;
};

FaultText faultText(FaultCode code) {
  switch (code) {
  case FaultCode::None: return {"none", "no fault", false};
  case FaultCode::Unmapped: return {"unmapped", "unmapped address", true};
  case FaultCode::Permission: return {"permission", "permission fault at address", true};
  case FaultCode::OutOfRegion: return {"out-of-region", "out-of-region access at address", true};
  case FaultCode::Misaligned: return {"misaligned", "misaligned address", true};
  case FaultCode::InvalidOperand: return {"invalid-operand", "invalid operand", false};
  case FaultCode::UnknownOpcode: return {"unknown-opcode", "unknown opcode", false};
  case FaultCode::ReservedBits: return {"reserved-bits", "non-zero reserved bits", false};
  case FaultCode::Overlap: return {"overlap", "overlapping operands at address", true};
  case FaultCode::IndexOutOfRange:
    return {"index-out-of-range", "index out of range at address", true};
  case FaultCode::Timeout: return {"timeout", "timeout", false};
  case FaultCode::Divergence: return {"divergence", "ISS/RTL divergence", false};
  }
  return {"unknown", "unknown fault", false};
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
  FaultText text = faultText(code);
  std::string result = text.phrase;
  if (text.aboutAddress) {
    result +=
        " " + fmt::hex(address) + " (" + accessName(access) + " of " + fmt::byteCount(length) + ")";
  }
  if (packetIndex >= 0)
    result += " at packet " + std::to_string(packetIndex);
  if (!detail.empty())
    result += ": " + detail;
  return result;
}

DeviceFault::DeviceFault(Fault fault)
    : std::runtime_error(fault.describe()), fault_(std::move(fault)) {}

} // namespace npu::mem
