// The device's physical memory, shared by every backend: the ISS executes
// against it directly and the RTL harness's AXI slave serves it, so "same
// stream, same memory" is literal.
//
// Backing: each Memory region is one anonymous private mapping reserved with
// MAP_NORESERVE, so the host commits a page only when it is first touched and
// a region of tens of GiB costs only what is used. Transparent huge pages are
// disabled on these mappings so that residency (and therefore dumps, trace
// capture and co-simulation state comparison) has host-page granularity
// rather than 2 MiB. Csr regions have no backing. MAP_NORESERVE needs the
// Linux default overcommit policy (vm.overcommit_memory 0 or 1); under strict
// accounting (2) every region is charged in full when it is reserved.
//
// Checking: every access is checked against the address map before any byte
// moves; a bad access throws DeviceFault (code, address, length, direction,
// detail) and never touches host memory outside a mapping. Ranges are
// computed as offsets, so address + length never overflows.
//
// Thread safety: hostSpan, check, read, write, fill, stats, touchedRanges,
// resetCounters and clear may be called concurrently from any number of
// threads; the per-region byte counters are relaxed atomics (exact totals,
// no ordering with respect to memory contents). The contents themselves are
// plain memory: concurrent accesses to overlapping bytes, or clear() while
// another thread uses a range, are data races the caller must order. Moving
// or destroying a PhysicalMemory must not overlap any other call on it.
#pragma once

#include "npu/mem/address_map.h"
#include "npu/mem/fault.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace npu::mem {

class PhysicalMemory {
public:
  // Validates the map (std::invalid_argument) and reserves every Memory
  // region (std::system_error if the host refuses the reservation).
  explicit PhysicalMemory(AddressMap map = AddressMap::defaults());
  ~PhysicalMemory();
  PhysicalMemory(PhysicalMemory &&) noexcept;
  PhysicalMemory &operator=(PhysicalMemory &&) noexcept;
  PhysicalMemory(const PhysicalMemory &) = delete;
  PhysicalMemory &operator=(const PhysicalMemory &) = delete;

  const AddressMap &map() const { return map_; }

  // Checked contiguous host view of [address, address + length) for the fast
  // paths (ISS kernels): the range must lie in one Memory region whose
  // permissions allow `access` (Read | Write for read-modify-write). The
  // bytes are counted in that region's read and/or write counters. Throws
  // DeviceFault. Length 0 is checked like any other access (mapping and
  // permissions) and counts nothing; the pointer is then not to be
  // dereferenced.
  uint8_t *hostSpan(uint64_t address, uint64_t length, Access access);

  // The fault hostSpan would raise, or a Fault with code None. Counts nothing.
  Fault check(uint64_t address, uint64_t length, Access access) const;

  // Checked, counted copies (length 0 allows null pointers).
  void read(uint64_t address, void *dst, uint64_t length);
  void write(uint64_t address, const void *src, uint64_t length);
  void fill(uint64_t address, uint8_t value, uint64_t length);

  struct RegionStats {
    std::string name;
    uint64_t base, size, bytesRead, bytesWritten, residentBytes;
  };
  // One entry per region, in address order (Csr regions report zeros).
  std::vector<RegionStats> stats() const;
  void resetCounters();

  // All memory back to zero and untouched (the pages are returned to the
  // host). Counters are kept; see resetCounters().
  void clear();

  // The resident pages as [address, length) runs in address order, for
  // dumps, trace capture and co-simulation state comparison without scanning
  // every region. Runs never span two regions, so each can be read with one
  // hostSpan. Granularity is the host page. A page that was read but never
  // written may be reported (the host maps its shared zero page there), so
  // consumers should treat runs as "possibly non-zero", not "written".
  std::vector<std::pair<uint64_t, uint64_t>> touchedRanges() const;

private:
  struct Backing;
  // The Backing whose region contains address, or nullptr.
  const Backing *backingFor(uint64_t address) const;

  AddressMap map_;
  // One per region of map_, sorted by base for O(log n) lookup.
  std::vector<std::unique_ptr<Backing>> byBase_;
};

} // namespace npu::mem
