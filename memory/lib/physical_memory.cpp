#include "npu/mem/physical_memory.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>

#include <sys/mman.h>
#include <unistd.h>

namespace npu::mem {

namespace {

uint64_t hostPageSize() {
  static const uint64_t size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return size;
}

[[noreturn]] void throwErrno(const std::string &what) {
  throw std::system_error(errno, std::generic_category(), what);
}

} // namespace

struct PhysicalMemory::Backing {
  Region region;
  uint8_t *host = nullptr; // null for Csr regions
  // Mutable: counting is not a change of the memory's state.
  mutable std::atomic<uint64_t> bytesRead{0};
  mutable std::atomic<uint64_t> bytesWritten{0};

  explicit Backing(Region r) : region(std::move(r)) {
    if (region.kind != Region::Kind::Memory)
      return;
    void *mapping = mmap(nullptr, region.size, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapping == MAP_FAILED)
      throwErrno("reserving " + std::to_string(region.size) + " bytes for region '" + region.name +
                 "'");
    host = static_cast<uint8_t *>(mapping);
    // Best effort: fails with EINVAL on kernels without THP, where there is
    // nothing to disable.
    madvise(host, region.size, MADV_NOHUGEPAGE);
  }
  ~Backing() {
    if (host)
      munmap(host, region.size);
  }
  Backing(const Backing &) = delete;
  Backing &operator=(const Backing &) = delete;

  // The fault code of an access whose address lies in this region. Cheap:
  // it is on every access's path; the message is built only on a fault.
  FaultCode classify(uint64_t address, uint64_t length, Access access) const {
    if (!host)
      return FaultCode::Permission; // the CSR window
    if ((includes(access, Access::Write) && !region.writable) ||
        (includes(access, Access::Read) && !region.readable))
      return FaultCode::Permission;
    // address is in the region, so the subtraction cannot wrap.
    if (length > region.size - (address - region.base))
      return FaultCode::OutOfRegion;
    return FaultCode::None;
  }

  // Calls visit(offset, length) for each maximal run of resident pages, in
  // order, clipped to the region.
  template <typename Visitor> void forEachResidentRun(Visitor visit) const {
    if (!host)
      return;
    const uint64_t page = hostPageSize();
    const uint64_t pages = (region.size + page - 1) / page;
    // mincore fills one byte per page; query in chunks to bound the buffer.
    constexpr uint64_t kChunkPages = uint64_t(1) << 16;
    std::vector<unsigned char> resident(std::min(pages, kChunkPages));
    uint64_t runStart = 0;
    bool inRun = false;
    for (uint64_t first = 0; first < pages; first += kChunkPages) {
      uint64_t count = std::min(kChunkPages, pages - first);
      if (mincore(host + first * page, count * page, resident.data()) != 0)
        throwErrno("mincore on region '" + region.name + "'");
      for (uint64_t i = 0; i < count; ++i) {
        bool isResident = resident[i] & 1;
        if (isResident && !inRun)
          runStart = (first + i) * page;
        else if (!isResident && inRun)
          visit(runStart, (first + i) * page - runStart);
        inRun = isResident;
      }
    }
    if (inRun)
      visit(runStart, region.size - runStart);
  }
};

PhysicalMemory::PhysicalMemory(AddressMap map) : map_(std::move(map)) {
  map_.validate();
  for (const Region &region : map_.regions)
    byBase_.push_back(std::make_unique<Backing>(region));
  std::sort(byBase_.begin(), byBase_.end(),
            [](const auto &a, const auto &b) { return a->region.base < b->region.base; });
}

PhysicalMemory::~PhysicalMemory() = default;
PhysicalMemory::PhysicalMemory(PhysicalMemory &&) noexcept = default;
PhysicalMemory &PhysicalMemory::operator=(PhysicalMemory &&) noexcept = default;

const PhysicalMemory::Backing *PhysicalMemory::backingFor(uint64_t address) const {
  auto above = std::upper_bound(
      byBase_.begin(), byBase_.end(), address,
      [](uint64_t a, const std::unique_ptr<Backing> &backing) { return a < backing->region.base; });
  if (above == byBase_.begin())
    return nullptr;
  const Backing *candidate = std::prev(above)->get();
  return candidate->region.contains(address) ? candidate : nullptr;
}

Fault PhysicalMemory::check(uint64_t address, uint64_t length, Access access) const {
  const Backing *backing = backingFor(address);
  FaultCode code = backing ? backing->classify(address, length, access) : FaultCode::Unmapped;
  if (code == FaultCode::None)
    return Fault{};
  Fault fault;
  fault.code = code;
  fault.address = address;
  fault.length = length;
  fault.access = access;
  map_.annotate(fault);
  return fault;
}

uint8_t *PhysicalMemory::hostSpan(uint64_t address, uint64_t length, Access access) {
  const Backing *backing = backingFor(address);
  if (!backing || backing->classify(address, length, access) != FaultCode::None)
    throw DeviceFault(check(address, length, access));
  if (includes(access, Access::Read))
    backing->bytesRead.fetch_add(length, std::memory_order_relaxed);
  if (includes(access, Access::Write))
    backing->bytesWritten.fetch_add(length, std::memory_order_relaxed);
  return backing->host + (address - backing->region.base);
}

void PhysicalMemory::read(uint64_t address, void *dst, uint64_t length) {
  const uint8_t *source = hostSpan(address, length, Access::Read);
  if (length != 0)
    std::memcpy(dst, source, length);
}

void PhysicalMemory::write(uint64_t address, const void *src, uint64_t length) {
  uint8_t *destination = hostSpan(address, length, Access::Write);
  if (length != 0)
    std::memcpy(destination, src, length);
}

void PhysicalMemory::fill(uint64_t address, uint8_t value, uint64_t length) {
  uint8_t *destination = hostSpan(address, length, Access::Write);
  if (length != 0)
    std::memset(destination, value, length);
}

std::vector<PhysicalMemory::RegionStats> PhysicalMemory::stats() const {
  std::vector<RegionStats> result;
  result.reserve(byBase_.size());
  for (const auto &backing : byBase_) {
    uint64_t resident = 0;
    backing->forEachResidentRun([&](uint64_t, uint64_t length) { resident += length; });
    result.push_back({.name = backing->region.name,
                      .base = backing->region.base,
                      .size = backing->region.size,
                      .bytesRead = backing->bytesRead.load(std::memory_order_relaxed),
                      .bytesWritten = backing->bytesWritten.load(std::memory_order_relaxed),
                      .residentBytes = resident});
  }
  return result;
}

void PhysicalMemory::resetCounters() {
  for (const auto &backing : byBase_) {
    backing->bytesRead.store(0, std::memory_order_relaxed);
    backing->bytesWritten.store(0, std::memory_order_relaxed);
  }
}

void PhysicalMemory::clear() {
  for (const auto &backing : byBase_) {
    // On a private anonymous mapping, MADV_DONTNEED drops the pages and the
    // next access sees fresh zero pages.
    if (backing->host && madvise(backing->host, backing->region.size, MADV_DONTNEED) != 0)
      throwErrno("clearing region '" + backing->region.name + "'");
  }
}

std::vector<std::pair<uint64_t, uint64_t>> PhysicalMemory::touchedRanges() const {
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  for (const auto &backing : byBase_) {
    uint64_t base = backing->region.base;
    backing->forEachResidentRun(
        [&](uint64_t offset, uint64_t length) { runs.emplace_back(base + offset, length); });
  }
  return runs;
}

} // namespace npu::mem
