// Functional coverage: bins defined once, from the ISA tables and the
// footprint model, and sampled from executed packets.
//
// Per instruction (bin names start with its mnemonic):
//   executed                        it completed at least once
//   mode/<flag>=<v>,<enum>=<name>   every combination of its flags and enums
//   shape/<size operand>=<class>    1, tile-1, tile, tile+1, prime, large
//   align/<address operand>=<class> 64, operand, word, byte (as the operand's
//                                   alignment allows)
//   region/<name>                   a buffer in each data region of the map
//   edge/region-end                 a buffer ending exactly at a region's end
//   alias/<written>=<read>          an in-place form the ISA allows
//   alias/<read>=<read>             two inputs on the same memory
//   chain                           an input written by the previous packet
//   unused/<address operand>        an operand the packet ignores (gated off
//                                   by a flag) holds a non-zero address
//   value/<class>                   a special value among the f32 inputs
//   scalar/<f32 operand>=<class>    a special value as a scalar operand
//   fault/<class>                   each fault class it can raise
// and "any/fault/unknown-opcode".
#pragma once

#include "npu/isa/isa.h"
#include "npu/mem/address_map.h"
#include "npu/mem/fault.h"
#include "npu/verify/footprint.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace npu::verify {

struct Bin {
  std::string name;
  std::string group;                           // mnemonic, or "any"
  mem::FaultCode fault = mem::FaultCode::None; // for fault bins: the class
};

class CoverageModel {
public:
  static const CoverageModel &instance();
  const std::vector<Bin> &bins() const { return bins_; }
  std::optional<size_t> find(const std::string &name) const;
  // A digest of the bin names, so that merged counts refer to one model.
  uint64_t digest() const { return digest_; }

private:
  CoverageModel();
  std::vector<Bin> bins_;
  std::vector<std::pair<std::string, size_t>> index_; // sorted by name
  uint64_t digest_ = 0;
};

// What the runner knows about one executed packet.
struct PacketSample {
  std::span<const uint8_t, isa::kPacketBytes> packet;
  mem::FaultCode outcome = mem::FaultCode::None; // the fault both models raised
  // inputValueClasses() of the packet, taken before it ran.
  uint32_t inputValues = 0;
  // Byte ranges the previous packet wrote (dependent chains).
  const std::vector<std::pair<uint64_t, uint64_t>> *previousWrites = nullptr;
};

// The classes (bit 1 << ValueClass) of the f32 values a decodable packet
// reads, from memory as it is now; nothing for a packet whose checks
// against `map` fail (it reads nothing, and its extents may not even fit in
// 64 bits). Unreadable inputs count nothing.
using MemoryReader = std::function<void(uint64_t address, void *dst, uint64_t bytes)>;
uint32_t inputValueClasses(std::span<const uint8_t, isa::kPacketBytes> packet,
                           const mem::AddressMap &map,
                           const MemoryReader &read);

class Coverage {
public:
  Coverage() : hits_(CoverageModel::instance().bins().size(), 0) {}
  void sample(const PacketSample &sample);
  void hit(const std::string &name); // throws std::logic_error for a name the model lacks
  const std::vector<uint64_t> &hits() const { return hits_; }
  void merge(const Coverage &other);

private:
  std::vector<uint64_t> hits_;
};

} // namespace npu::verify
