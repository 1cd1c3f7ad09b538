#include "backends.h"

#include "npu/isa/isa.h"

namespace npu::rt {

uint32_t CsrFile::read(uint32_t offset, uint64_t cycles) {
  using namespace isa::csr;
  switch (offset) {
  case ID: return 0x4e505530u;
  case VERSION: return isa::kIsaVersionMajor << 16 | isa::kIsaVersionMinor;
  case HW_CONFIG:
    return isa::hw::kMatrixTile | isa::hw::kVectorLanes << 8 | isa::hw::kAxiDataBytes << 16;
  case RING_BASE_LO: return static_cast<uint32_t>(ringBase);
  case RING_BASE_HI: return static_cast<uint32_t>(ringBase >> 32);
  case RING_ENTRIES: return ringEntries;
  case RING_TAIL: return tail;
  case RING_HEAD: return head;
  case STATUS:
    return (head != tail && !halted && !faulted ? STATUS_BUSY : 0) | (halted ? STATUS_HALTED : 0) |
           (faulted ? STATUS_FAULT : 0);
  case ERROR_CODE: return faulted ? static_cast<uint32_t>(fault.code) : 0;
  case FAULT_PACKET_LO: return faulted ? static_cast<uint32_t>(fault.packetIndex) : 0;
  case FAULT_PACKET_HI:
    return faulted ? static_cast<uint32_t>(static_cast<uint64_t>(fault.packetIndex) >> 32) : 0;
  case FAULT_ADDR_LO: return faulted ? static_cast<uint32_t>(fault.address) : 0;
  case FAULT_ADDR_HI: return faulted ? static_cast<uint32_t>(fault.address >> 32) : 0;
  case CYCLE_LO:
    cycleHighLatch = static_cast<uint32_t>(cycles >> 32);
    return static_cast<uint32_t>(cycles);
  case CYCLE_HI: return cycleHighLatch;
  case PACKETS_LO: return static_cast<uint32_t>(packets);
  case PACKETS_HI: return static_cast<uint32_t>(packets >> 32);
  default: return 0; // unassigned offsets read as zero, like the RTL
  }
}

bool CsrFile::write(uint32_t offset, uint32_t value) {
  using namespace isa::csr;
  switch (offset) {
  case RING_BASE_LO: ringBase = (ringBase & ~uint64_t(0xffffffff)) | value; break;
  case RING_BASE_HI: ringBase = (ringBase & 0xffffffff) | uint64_t(value) << 32; break;
  case RING_ENTRIES: ringEntries = value && !(value & (value - 1)) ? value : 0; break;
  case RING_TAIL: tail = value; break;
  case CONTROL:
    if (value & CONTROL_RESET) {
      CsrFile fresh;
      fresh.ringBase = ringBase;
      fresh.ringEntries = ringEntries;
      *this = fresh;
      return true;
    }
    if (value & CONTROL_RESUME)
      halted = false;
    break;
  default: break; // writes to read-only or unassigned offsets are ignored
  }
  return false;
}

void CsrFile::complete(bool wasHalt) {
  ++head;
  ++packets;
  halted = wasHalt;
}

void CsrFile::raise(const mem::Fault &f) {
  faulted = true;
  fault = f;
}

} // namespace npu::rt
