#include "backends.h"

#include "npu/isa/isa.h"

namespace npu::rt {

namespace {

void setLow(uint64_t &word, uint32_t value) {
  word = (word & ~uint64_t(0xffffffff)) | value;
}
void setHigh(uint64_t &word, uint32_t value) {
  word = (word & 0xffffffff) | uint64_t(value) << 32;
}

} // namespace

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
  case FAULT_OPERAND: return faulted ? faultOperands : 0;
  case FAULT_LENGTH_LO: return faulted ? static_cast<uint32_t>(fault.length) : 0;
  case FAULT_LENGTH_HI: return faulted ? static_cast<uint32_t>(fault.length >> 32) : 0;
  case REGION_SELECT: return regionSelect;
  case REGION_BASE_LO: return static_cast<uint32_t>(selectedRegion().base);
  case REGION_BASE_HI: return static_cast<uint32_t>(selectedRegion().base >> 32);
  case REGION_SIZE_LO: return static_cast<uint32_t>(selectedRegion().size);
  case REGION_SIZE_HI: return static_cast<uint32_t>(selectedRegion().size >> 32);
  case REGION_ACCESS: return selectedRegion().access;
  default: return 0; // unassigned offsets read as zero, like the RTL
  }
}

bool CsrFile::write(uint32_t offset, uint32_t value) {
  using namespace isa::csr;
  switch (offset) {
  case RING_BASE_LO: setLow(ringBase, value); break;
  case RING_BASE_HI: setHigh(ringBase, value); break;
  case RING_ENTRIES: ringEntries = value && !(value & (value - 1)) ? value : 0; break;
  case RING_TAIL: tail = value; break;
  case REGION_SELECT: regionSelect = value % isa::hw::kRegionEntries; break;
  case REGION_BASE_LO: setLow(selectedRegion().base, value); break;
  case REGION_BASE_HI: setHigh(selectedRegion().base, value); break;
  case REGION_SIZE_LO: setLow(selectedRegion().size, value); break;
  case REGION_SIZE_HI: setHigh(selectedRegion().size, value); break;
  case REGION_ACCESS:
    selectedRegion().access = value & (REGION_ACCESS_READ | REGION_ACCESS_WRITE);
    break;
  case CONTROL:
    if (value & CONTROL_RESET) {
      CsrFile fresh;
      fresh.ringBase = ringBase;
      fresh.ringEntries = ringEntries;
      fresh.regionSelect = regionSelect;
      fresh.regions = regions;
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

void CsrFile::programRegions(const mem::AddressMap &map) {
  using namespace isa::csr;
  regions = {};
  for (size_t e = 0; e < map.regions.size() && e < regions.size(); ++e) {
    const mem::Region &r = map.regions[e];
    regions[e] = {r.base, r.size,
                  (r.engineReadable() ? REGION_ACCESS_READ : 0u) |
                      (r.engineWritable() ? REGION_ACCESS_WRITE : 0u)};
  }
}

void CsrFile::complete(bool wasHalt) {
  ++head;
  ++packets;
  halted = wasHalt;
}

void CsrFile::raise(const mem::Fault &f, std::span<const uint8_t, isa::kPacketBytes> packet) {
  faulted = true;
  fault = f;
  // The operands by their index in the faulting packet's instruction.
  const isa::InstrInfo *info = isa::findOpcode(isa::detail::load32(packet.data(), 0));
  const auto index = [&](const std::string &name) {
    const int i = info && !name.empty() ? info->operandIndex(name) : -1;
    return i < 0 ? 0xffu : static_cast<uint32_t>(i);
  };
  // The access only of the faults about a range's access.
  const bool aboutAccess = f.code == mem::FaultCode::Unmapped ||
                           f.code == mem::FaultCode::Permission ||
                           f.code == mem::FaultCode::OutOfRegion;
  faultOperands = index(f.operand) | index(f.otherOperand) << 8 |
                  (aboutAccess ? uint32_t(static_cast<uint8_t>(f.access)) << 16 : 0u);
}

} // namespace npu::rt
