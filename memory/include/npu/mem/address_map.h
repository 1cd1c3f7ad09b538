// The device's physical address map: named, non-overlapping regions with
// permissions. Built from the defaults, a JSON file and/or command-line
// overrides, then validated once before a PhysicalMemory is made from it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace npu::mem {

struct Fault;
enum class FaultCode : uint32_t;
enum class Access : uint8_t;

// The region the runtime places the command ring in. Packets reach it only
// through the driver: no engine may read or write it, so that a stream cannot
// rewrite packets the device has yet to fetch.
inline constexpr std::string_view kCommandRingRegion = "ring";

struct Region {
  std::string name;
  uint64_t base = 0;
  uint64_t size = 0;
  bool readable = true;
  bool writable = true;
  // Csr: the register window of the device's AXI4-Lite slave. It is part of
  // the map so that nothing else is placed there, but it has no backing
  // memory: plain memory accesses to it are Permission faults.
  enum class Kind { Memory, Csr } kind = Kind::Memory;

  // Computed as an offset so that a region ending exactly at 2^64 works.
  bool contains(uint64_t address) const { return address - base < size; }

  bool isCommandRing() const { return name == kCommandRingRegion; }
  // What a device's engines may do here: a Memory region's permissions; the
  // CSR window and the command ring belong to the command processor, and an
  // engine reaching them is a Permission fault.
  bool engineReadable() const { return readable && kind == Kind::Memory && !isCommandRing(); }
  bool engineWritable() const { return writable && kind == Kind::Memory && !isCommandRing(); }
};

// Map files are JSON objects with one key, "regions", an array of objects:
//
//   {"regions": [
//     {"name": "weights", "base": "0x0",        "size": "256M"},
//     {"name": "rom",     "base": "0x40000000", "size": 65536, "access": "r"},
//     {"name": "csr",     "base": "0x30000000", "size": "4K",  "kind": "csr"}]}
//
// "name", "base" and "size" are required; base and size are non-negative
// JSON integers or strings in the override syntax below. "access" is "rw"
// (default), "r" or "w"; "kind" is "memory" (default) or "csr". Unknown keys
// are errors, so that a misspelt key is not silently ignored.
//
// Numbers in strings and overrides: decimal or 0x-prefixed hex, '_' allowed
// between digits, optionally followed by K, M or G (binary multiples, either
// case): "0x1000_0000", "268435456", "256M".
struct AddressMap {
  std::vector<Region> regions;

  // weights 0x0000_0000 256 MiB, activations 0x1000_0000 256 MiB,
  // ring 0x2000_0000 1 MiB (the command ring), csr 0x3000_0000 4 KiB.
  static AddressMap defaults();

  // Parses and validates a map. Every error is a std::invalid_argument whose
  // message starts with sourceName and names the offending key, e.g.
  // "board.json: regions[1].size: expected a non-negative integer or a size
  // string, got true".
  static AddressMap fromJson(std::string_view text, const std::string &sourceName);
  static AddressMap fromJsonFile(const std::string &path);

  // Applies a command-line override "name=BASE:SIZE[:rw|r|w]". An existing
  // region of that name is moved/resized in place and keeps its kind, and
  // keeps its permissions unless the spec gives some; otherwise a new
  // read-write Memory region is appended. Throws std::invalid_argument for a
  // malformed spec. Does not validate: several overrides may pass through an
  // inconsistent map (e.g. while swapping two regions), so call validate()
  // after the last one (PhysicalMemory's constructor does).
  void applyOverride(std::string_view spec);

  // Throws std::invalid_argument unless: names are non-empty and unique,
  // sizes are non-zero, bases and sizes are multiples of 4 KiB, no region
  // runs past 2^64 and no two regions overlap. An empty map is valid (every
  // access to it faults).
  void validate() const;

  // The region containing address, or nullptr.
  const Region *find(uint64_t address) const;
  const Region *byName(std::string_view name) const;

  // The fault code of an engine's access to [address, address + length):
  // Unmapped (no region holds address), Permission (see
  // Region::engineReadable), OutOfRegion (the range runs past the end of
  // its region, or past 2^64) or None. Every device's region check decides
  // by this rule (the ISS's check stage here, the RTL's region table in
  // hardware).
  FaultCode checkEngineAccess(uint64_t address, uint64_t length, Access access) const;

  // "region 'weights' 0x0-0xfffffff", with ", read-only", ", write-only",
  // ", the CSR window" or ", the command ring" where that matters, or "no
  // region".
  std::string regionText(uint64_t address) const;

  // Sets fault.region to the region holding fault.address and, for an
  // OutOfRegion fault, fault.detail to how far the range runs past it: the
  // description every backend gives a bad range.
  void annotate(Fault &fault) const;
};

// Granularity of region bases and sizes.
inline constexpr uint64_t kRegionAlignment = 4096;

// Parses a number in the syntax above (also useful for other CLI flags that
// take addresses). Throws std::invalid_argument, with `what` naming the
// input in the message, for malformed text or a value that exceeds 64 bits.
uint64_t parseSize(std::string_view text, std::string_view what);

} // namespace npu::mem
