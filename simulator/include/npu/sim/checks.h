// The checks a device makes before a packet's engine starts, and the one
// description of a device fault.
//
// Every device (the ISS here, the RTL's command processor in hardware)
// checks a packet in one order and stops at the first failure, before any
// memory access: the decode checks; then, per memory operand of the
// instruction (isa/*.td "Memory"), its extent computed exactly and its range
// against the region table (AddressMap::checkEngineAccess); then the overlap
// rules ("Disjoints"). Only data-dependent faults (an index out of range)
// happen while the packet runs.
//
// A device that stops at a fault knows a few facts (FaultFacts: what the
// RTL's fault registers hold); describeFault turns them into the complete
// mem::Fault, so that the same fault reads the same on every backend.
#pragma once

#include "npu/isa/isa.h"
#include "npu/mem/address_map.h"
#include "npu/mem/fault.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>

namespace npu::sim {

using PacketBytes = std::span<const uint8_t, isa::kPacketBytes>;

// The bytes a memory operand covers, once its checks passed.
struct OperandRange {
  bool accessed = false; // its condition flag is set
  uint64_t address = 0;
  uint64_t bytes = 0;
  mem::Access access = mem::Access::Read;
};
using OperandRanges = std::array<OperandRange, isa::kMaxMemoryOperands>;

struct FaultFacts {
  mem::FaultCode code = mem::FaultCode::None;
  int64_t packetIndex = -1;
  int operand = -1;      // the operand at fault, an index into InstrInfo::operands
  int otherOperand = -1; // Overlap: the operand it overlaps (itself: consecutive batch elements)
  // Range faults: the range; Overlap: the overlapping bytes; Misaligned: the
  // address; an extent that does not fit in 64 bits: the operand's address;
  // a pitch below the row: length is the stored row length; index faults:
  // the index's address and width.
  uint64_t address = 0;
  uint64_t length = 0;
  mem::Access access = mem::Access::Read;
  int64_t index = 0; // IndexOutOfRange: the index read
};

// The checks of `packet` in their order. Returns the first failure's facts
// (code None when the packet may start, with every memory operand's range in
// `ranges`, indexed like InstrInfo::memory, and, if given, the decoded
// packet in *decoded). packetIndex is left at -1.
FaultFacts checkPacket(PacketBytes packet, const mem::AddressMap &map, OperandRanges &ranges,
                       isa::Instruction *decoded = nullptr);

// The bytes a memory operand of `inst` covers, whatever its address: from
// `below` bytes under the address (a view with negative strides), `bytes`
// in all. nullopt where the checks reject the extent itself (it does not
// fit in 64 bits, a pitch below its row, overlapping batch matrices).
struct OperandExtent {
  uint64_t below = 0;
  uint64_t bytes = 0;
};
std::optional<OperandExtent> operandExtent(const isa::Instruction &inst,
                                           const isa::MemOperandInfo &m);

// The complete fault: instruction and operand names, the region, the reason.
mem::Fault describeFault(const FaultFacts &facts, PacketBytes packet, const mem::AddressMap &map);

} // namespace npu::sim
