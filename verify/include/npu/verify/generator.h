// npu-randgen's engine: seeded, reproducible constrained-random command
// streams. Operands are drawn from the ISA tables (kinds, ranges, enum
// values, flags, alignment, optional defaults, reserved bits); buffer sizes
// and legal aliasing come from the footprint model (footprint.h). The same
// options and seed give the same .npubin, byte for byte.
#pragma once

#include "npu/bin/object.h"
#include "npu/isa/isa.h"
#include "npu/mem/fault.h"

#include <cstdint>
#include <string>
#include <vector>

namespace npu::verify {

struct GeneratorOptions {
  uint64_t seed = 0;
  uint32_t packets = 40; // stream length, a final HALT included
  // Chance, per packet, that it is made to fault with one of faultClasses.
  uint32_t faultPercent = 0;
  std::vector<mem::FaultCode> faultClasses; // empty: every class of injectableFaults()
  // Chance, per packet, of a large shape (kLargeBudget instead of kSmallBudget).
  uint32_t largePercent = 3;
  // Chance that a large packet has a second large size, just past a
  // blocking edge (kBlockingBudget): rare, as such packets are expensive.
  uint32_t pairPercent = 2;
  // Chance that an input is the output of an earlier packet (a dependent
  // chain), and that an output coincides with an input where the ISA allows
  // it or two inputs coincide.
  uint32_t chainPercent = 40;
  uint32_t aliasPercent = 20;
  // Share of special values (±0, subnormals, ±inf, NaN, huge, tiny) in the
  // generated f32 data and scalar operands.
  uint32_t specialPercent = 15;
  // Restrict the instruction mix (empty: every instruction).
  std::vector<isa::Opcode> opcodes;
};

// Per packet: what the generator meant it to do.
struct PacketIntent {
  uint32_t opcodeWord = 0;
  mem::FaultCode injected = mem::FaultCode::None;
  std::string note; // how the fault was injected, for reports
};

struct Stream {
  bin::Object object; // data segments and text; metadata records the options
  std::vector<PacketIntent> intents;
};

Stream generate(const GeneratorOptions &options);

// The npu-randgen arguments that regenerate the same stream
// ("--seed 7 --packets 40 ..."), for reproducer lines and metadata.
std::string optionsArguments(const GeneratorOptions &options);

// The fault classes the generator knows how to provoke.
std::vector<mem::FaultCode> injectableFaults();
// "unmapped" etc. (mem::faultCodeName) back to the code; throws
// std::invalid_argument naming the valid names.
mem::FaultCode parseFaultClass(const std::string &name);

// Byte and work limits of one packet's footprint.
struct Budget {
  uint64_t bytes; // sum of the buffer extents
  uint64_t work;  // Footprint::work
};
inline constexpr Budget kSmallBudget{96 << 10, 5 << 8};
inline constexpr Budget kLargeBudget{4 << 20, 40 << 10};
// A large packet with a second large size (1 x 256 x 2100 MATMUL, a full
// GEMM depth panel beside more than 2048 columns, costs 221 K cycles).
inline constexpr Budget kBlockingBudget{4 << 20, 320 << 10};

// Halves the rank-th largest size-like operand (a u32 or i32 operand that is
// not a flag, enum or address; rank modulo their number, 0 the largest;
// the operands whose bits are set in `keepMask` left alone) and
// re-legalises; false when nothing is left to shrink. Fits a packet to its
// budget.
bool shrinkOperand(isa::Instruction &inst, size_t rank = 0, uint64_t keepMask = 0);

} // namespace npu::verify
