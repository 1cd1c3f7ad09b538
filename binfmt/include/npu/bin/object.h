// libnpu_bin: the .npubin container (docs/binary-format.md). One reader and
// one writer, used by every tool and by the runtime's trace capture.
#pragma once

#include "npu/isa/isa.h"

#include <array>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace npu::bin {

using Packet = isa::Packet;

// Bytes to place at a physical address before the stream runs.
struct DataSegment {
  uint64_t address = 0;
  std::vector<uint8_t> bytes;
  friend bool operator==(const DataSegment &, const DataSegment &) = default;
};

// Expected memory contents after the stream ran. Exact regions compare
// bytes; F32Ulp regions compare little-endian binary32 values and accept a
// distance of at most ulpTolerance units in the last place (NaN matches NaN).
struct CheckRegion {
  enum class Kind : uint32_t { Exact = 0, F32Ulp = 1 };
  uint64_t address = 0;
  Kind kind = Kind::Exact;
  uint32_t ulpTolerance = 0;
  std::vector<uint8_t> expected;
  friend bool operator==(const CheckRegion &, const CheckRegion &) = default;
};

struct Symbol {
  enum class Kind : uint32_t { Packet = 0, Address = 1 };
  std::string name;
  Kind kind = Kind::Packet;
  uint64_t value = 0; // packet index or physical address
  friend bool operator==(const Symbol &, const Symbol &) = default;
};

struct Object {
  std::vector<Packet> text;
  std::vector<DataSegment> data;
  std::vector<CheckRegion> checks;
  std::vector<Symbol> symbols;
  // Free-form key/value metadata: producer, source file, ...
  std::vector<std::pair<std::string, std::string>> metadata;
  // ISA the text was produced for; the writer fills in the current one.
  uint32_t isaVersionMajor = isa::kIsaVersionMajor;
  uint32_t isaVersionMinor = isa::kIsaVersionMinor;
  uint64_t isaHash = isa::kIsaHash;
  friend bool operator==(const Object &, const Object &) = default;
};

// A malformed container: what is wrong and at which byte offset. what() is
// "[path: ]offset N: message".
class FormatError : public std::runtime_error {
public:
  FormatError(uint64_t offset, const std::string &message, const std::string &path = "");
  uint64_t offset() const { return offset_; }
  const std::string &message() const { return message_; }

private:
  uint64_t offset_;
  std::string message_;
};

// Serialises an object. Throws FormatError (offset 0) for an object that
// cannot be represented, e.g. overlapping data segments.
std::vector<uint8_t> write(const Object &object);

// Parses and validates a container; every inconsistency is a FormatError.
// Text packets are not decoded here (see isa::decode): a container may
// carry packets for the device to reject.
Object read(std::span<const uint8_t> bytes);

// Longest symbol name a container may hold.
inline constexpr size_t kMaxSymbolNameBytes = 4096;
// Largest container readFile reads (a stream such as /dev/zero is not read
// past it).
inline constexpr uint64_t kMaxFileBytes = uint64_t(4) << 30;

// File helpers; I/O failures throw std::runtime_error naming the path.
// writeFile replaces an existing file only when the whole container was
// written; a failed write leaves it untouched (io::OutputFile).
Object readFile(const std::string &path);
void writeFile(const std::string &path, const Object &object);

// True if the bytes start with the .npubin magic.
bool hasMagic(std::span<const uint8_t> bytes);

} // namespace npu::bin
