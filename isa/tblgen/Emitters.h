// Backends of npu-tblgen. Each writes one generated file from the model.
#pragma once

#include "IsaModel.h"

#include <string>

namespace llvm {
class raw_ostream;
}

namespace npu::tblgen {

void emitCppHeader(const IsaModel &model, llvm::raw_ostream &os);
void emitCppTables(const IsaModel &model, llvm::raw_ostream &os);
void emitVerilogPackage(const IsaModel &model, llvm::raw_ostream &os);
void emitIsaDoc(const IsaModel &model, llvm::raw_ostream &os);
void emitMicrocodeCpp(const IsaModel &model, llvm::raw_ostream &os);
void emitMicrocodeRom(const IsaModel &model, llvm::raw_ostream &os);
void emitRecipePackage(const IsaModel &model, llvm::raw_ostream &os);
void emitRecipeTable(const IsaModel &model, llvm::raw_ostream &os);

// SNAKE_CASE or snake_case to CamelCase: COPY_STRIDED -> CopyStrided.
std::string camelCase(const std::string &snake);
// A C++ string literal holding s.
std::string cString(const std::string &s);

// Operand `index` of `inst` as a Verilog expression on `packet`, as wide
// as its slot, and zero-extended to 32 bits (for slots of at most 32 bits).
std::string verilogSlot(const InstructionDef &inst, int index);
std::string verilogSlot32(const InstructionDef &inst, int index);

// "flags[5:4]", "param0", "param0..param1": where a slot lives in the packet.
std::string describeSlot(const IsaModel &model, const BitRange &slot);

} // namespace npu::tblgen
