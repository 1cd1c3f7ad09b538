// Device faults: the one error vocabulary every backend (memory model, ISS,
// RTL harness, runtime) reports bad accesses and bad packets in, so that a
// co-simulation can compare the fault the ISS raised with the one the RTL
// latched.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace npu::mem {

enum class FaultCode : uint32_t {
  None = 0,
  Unmapped,        // the address is in no region of the address map
  Permission,      // the region forbids this access (read-only, write-only, CSR window)
  OutOfRegion,     // the range starts in a region but runs past its end
  Misaligned,      // an operand address violates the op's alignment rule
  InvalidOperand,  // an operand value is out of its legal range (shape, mode, ...)
  UnknownOpcode,   // the packet's opcode names no instruction
  ReservedBits,    // a reserved packet field is non-zero
  Overlap,         // operand ranges overlap where the op forbids it
  IndexOutOfRange, // a data-dependent index (e.g. EMBEDDING) is out of range
  Timeout,         // the device made no progress within the allowed time
  Divergence,      // co-simulation: the ISS and the RTL disagree on a packet's effect
};

// Stable lower-case identifier ("unmapped", "out-of-region", ...) for logs,
// stats JSON and error strings; "unknown" for a value outside the enum.
const char *faultCodeName(FaultCode code);

// Direction of an access. Read | Write describes a read-modify-write (e.g. a
// MATMUL that accumulates into C) and is checked against both permissions.
enum class Access : uint8_t { Read = 1, Write = 2 };

constexpr Access operator|(Access a, Access b) {
  return static_cast<Access>(static_cast<uint8_t>(a) | static_cast<uint8_t>(b));
}
// True when `set` includes every direction in `direction`.
constexpr bool includes(Access set, Access direction) {
  return (static_cast<uint8_t>(set) & static_cast<uint8_t>(direction)) ==
         static_cast<uint8_t>(direction);
}

// "read", "write" or "read-modify-write".
const char *accessName(Access access);

// A fault as one line for humans. Every backend fills the same fields for
// the same fault (the ISS where it raises it, the RTL's backend from the
// device's fault registers), so that equal faults read identically.
struct Fault {
  FaultCode code = FaultCode::None;
  // The range at fault (Unmapped, Permission, OutOfRegion, Overlap: the
  // overlapping bytes), the misaligned address, or the index's address and
  // width; for a matrix pitch below its row, the stored row length.
  uint64_t address = 0;
  uint64_t length = 0;
  Access access = Access::Read;
  int64_t packetIndex = -1; // -1: not attributed to a packet (yet)
  // The faulting packet's instruction as its upper-case mnemonic ("" when
  // the opcode names none), the operand at fault ("" for faults of the whole
  // packet) and, for Overlap, the operand it overlaps.
  std::string instruction;
  std::string operand;
  std::string otherOperand;
  // The region holding `address` as AddressMap::regionText describes it, for
  // faults about memory; "" otherwise.
  std::string region;
  // Why, where the fields above do not say it.
  std::string detail;

  // One line, e.g.
  // "SILU dst: out-of-region write of 4096 bytes at 0x0ffff000 (region
  // 'weights' 0x0-0xfffffff) at packet 3: runs 4096 bytes past its end".
  // The instruction part is left out when instruction is empty, the packet
  // part when packetIndex is -1.
  std::string describe() const;
};

// The exception form of a Fault; what() is fault().describe().
class DeviceFault : public std::runtime_error {
public:
  explicit DeviceFault(Fault fault);
  const Fault &fault() const { return fault_; }

private:
  Fault fault_;
};

} // namespace npu::mem
