// The printing half of libnpu_asm: instructions, packets and whole
// containers as .npuasm text that npu-as assembles back to the same bytes.
#pragma once

#include "npu/bin/object.h"
#include "npu/isa/isa.h"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace npu::as {

// "mnemonic positional, operands[, name=value]..." with optional operands
// only when they differ from their default.
std::string formatInstruction(const isa::Instruction &inst);

// The instruction, or for a packet that does not decode a `.packet` line
// with its 16 words and a comment saying why.
std::string formatPacket(std::span<const uint8_t, isa::kPacketBytes> packet);

// An f32 bit pattern as text that parses back to the same bits: shortest
// round-trip decimal, inf/-inf, -0.0, and NaNs as f32bits(0x...).
std::string formatF32(uint32_t bits);

struct DumpOptions {
  // Print every data/check byte and the metadata as directives, so the
  // output re-assembles into an identical container; otherwise summarise
  // them in comments.
  bool fullContents = false;
  // Add each packet's index and raw words as a comment.
  bool rawWords = true;
  // Start with a comment block describing the header and the sections.
  bool header = true;
};

// The container as .npuasm source (everything informational in comments).
std::string formatObject(const bin::Object &object, const DumpOptions &options);
// The same text, handed to `emit` a line or so at a time.
void printObject(const bin::Object &object, const DumpOptions &options,
                 const std::function<void(std::string_view)> &emit);

} // namespace npu::as
