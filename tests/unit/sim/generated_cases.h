// Every instruction's cases derived from its record: streams of one opcode
// from npu-randgen's constrained-random generator (verify/), whose operands
// (kinds, ranges, flags, enum values, optional defaults), buffer extents and
// legal aliasing all come from the generated ISA tables. The ISS's and the
// RTL's op tests run them for every instruction of
// NPU_FOR_EACH_INSTRUCTION, so a new record is exercised with no edit there,
// and an instruction the generator makes no completing packet of fails.
#pragma once

#include "npu/isa/isa.h"
#include "npu/verify/footprint.h"
#include "npu/verify/generator.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace npu::cases {

inline std::vector<isa::Opcode> everyOpcode() {
  std::vector<isa::Opcode> opcodes;
#define NPU_ADD_OPCODE(NAME, Type, family) opcodes.push_back(isa::inst::Type::kOpcode);
  NPU_FOR_EACH_INSTRUCTION(NPU_ADD_OPCODE)
#undef NPU_ADD_OPCODE
  return opcodes;
}

// The test's name: the mnemonic (lower case, digits and underscores).
inline std::string mnemonicOf(const ::testing::TestParamInfo<isa::Opcode> &param) {
  return isa::info(param.param).mnemonic;
}

// The options of the `index`-th stream of `opcode`: only that opcode, no
// injected faults (the fault tests cover those), a seed of its own per
// opcode and index.
inline verify::GeneratorOptions streamOptions(isa::Opcode opcode, uint32_t index, uint32_t packets,
                                              uint32_t largePercent) {
  verify::GeneratorOptions options;
  options.seed = (static_cast<uint64_t>(opcode) << 16) + index;
  options.packets = packets;
  options.opcodes = {opcode};
  options.faultPercent = 0;
  options.largePercent = largePercent;
  options.pairPercent = largePercent ? options.pairPercent : 0;
  return options;
}

// The line that regenerates a stream, for failure messages.
inline std::string reproducer(const verify::GeneratorOptions &options) {
  return "npu-randgen " + verify::optionsArguments(options);
}

inline bool isOpcode(const isa::Packet &packet, isa::Opcode opcode) {
  return isa::detail::load32(packet.data(), 0) == static_cast<uint32_t>(opcode);
}

// The byte ranges a completed packet may have written.
inline std::vector<verify::Buffer> writtenBuffers(const isa::Packet &packet) {
  std::vector<verify::Buffer> written;
  isa::Instruction inst;
  if (isa::decode(packet, inst))
    for (const verify::Buffer &b : verify::footprintOf(inst).buffers)
      if (b.writes())
        written.push_back(b);
  return written;
}

} // namespace npu::cases
