// npu-tblgen: reads isa/*.td and writes one generated artefact per action.
#include "Emitters.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TableGen/Main.h"
#include "llvm/TableGen/Record.h"

namespace {

enum class Action {
  CppHeader,
  CppTables,
  VerilogPackage,
  IsaDoc,
  MicrocodeCpp,
  MicrocodeRom,
  RecipePackage,
  RecipeTable,
  DumpJson,
  CheckOnly
};

llvm::cl::opt<Action> action(
    llvm::cl::desc("Output to generate:"),
    llvm::cl::values(
        clEnumValN(Action::CppHeader, "gen-cpp-header",
                   "C++ header: opcodes, enums, typed operands"),
        clEnumValN(Action::CppTables, "gen-cpp-tables",
                   "C++ tables for the codec, assembler and printer"),
        clEnumValN(Action::VerilogPackage, "gen-verilog-pkg",
                   "SystemVerilog package for the RTL decoder"),
        clEnumValN(Action::IsaDoc, "gen-isa-doc", "Markdown ISA reference (docs/isa.md)"),
        clEnumValN(Action::MicrocodeCpp, "gen-microcode-cpp",
                   "C++ header: one function template per micro-program"),
        clEnumValN(Action::MicrocodeRom, "gen-microcode-rom",
                   "SystemVerilog package with the vector engine's micro-code ROM"),
        clEnumValN(Action::RecipePackage, "gen-recipe-pkg",
                   "SystemVerilog package with the vector engine's decode and recipe ROM"),
        clEnumValN(Action::RecipeTable, "gen-recipe-table",
                   "C++ header with the vector engine's recipes (the ISS's cycle model)"),
        clEnumValN(Action::DumpJson, "dump-json", "All records as JSON (for tests and tooling)"),
        clEnumValN(Action::CheckOnly, "check", "Validate the ISA and write nothing")),
    llvm::cl::init(Action::CheckOnly));

bool generate(llvm::raw_ostream &os, llvm::RecordKeeper &records) {
  if (action == Action::DumpJson) {
    llvm::EmitJSON(records, os);
    return false;
  }
  npu::tblgen::IsaModel model;
  if (!npu::tblgen::loadIsa(records, model))
    return true;
  switch (action) {
  case Action::CppHeader: npu::tblgen::emitCppHeader(model, os); break;
  case Action::CppTables: npu::tblgen::emitCppTables(model, os); break;
  case Action::VerilogPackage: npu::tblgen::emitVerilogPackage(model, os); break;
  case Action::IsaDoc: npu::tblgen::emitIsaDoc(model, os); break;
  case Action::MicrocodeCpp: npu::tblgen::emitMicrocodeCpp(model, os); break;
  case Action::MicrocodeRom: npu::tblgen::emitMicrocodeRom(model, os); break;
  case Action::RecipePackage: npu::tblgen::emitRecipePackage(model, os); break;
  case Action::RecipeTable: npu::tblgen::emitRecipeTable(model, os); break;
  case Action::DumpJson:
  case Action::CheckOnly: break;
  }
  return false;
}

} // namespace

int main(int argc, char **argv) {
  llvm::cl::ParseCommandLineOptions(argc, argv, "NPU ISA generator\n");
  return llvm::TableGenMain(argv[0], &generate);
}
