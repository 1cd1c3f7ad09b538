// npu-isa: prints the instruction set compiled into this toolchain, as a
// summary table, one instruction in detail, or JSON for scripts.
#include "cli.h"
#include "npu/isa/isa.h"

#include <cstdio>
#include <string>

namespace {

using namespace npu::isa;

std::string syntaxOf(const InstrInfo &ins) {
  std::string s = ins.mnemonic;
  bool first = true;
  for (const SyntaxItem &item : ins.syntaxList()) {
    if (item.operand >= 0)
      s += std::string(first ? " " : "") + ins.operands[item.operand].name;
    else
      s += item.literal == ',' ? std::string(", ") : std::string(1, item.literal);
    first = false;
  }
  for (const OperandInfo &op : ins.operandList()) {
    if (!op.optional)
      continue;
    s += std::string(first ? " " : "") + "[, " + op.name +
         (op.kind == OperandKind::Flag ? "" : "=…") + "]";
    first = false;
  }
  return s;
}

void printSummary() {
  std::printf("NPU ISA v%u.%u, hash %016llx: %u instructions\n", kIsaVersionMajor, kIsaVersionMinor,
              static_cast<unsigned long long>(kIsaHash), kNumOpcodes);
  std::printf("hardware: %ux%u matrix tile, %u vector lanes, %u-byte AXI bus, %u-packet ring\n\n",
              hw::kMatrixTile, hw::kMatrixTile, hw::kVectorLanes, hw::kAxiDataBytes,
              hw::kRingEntries);
  std::printf("%-6s %-14s %-12s %-8s %s\n", "opcode", "mnemonic", "family", "engine", "syntax");
  for (const InstrInfo &ins : instructions())
    std::printf("0x%02x   %-14s %-12s %-8s %s\n", static_cast<unsigned>(ins.opcode), ins.mnemonic,
                ins.family, engineName(ins.engine), syntaxOf(ins).c_str());
}

void printDetail(const InstrInfo &ins) {
  std::printf("%s (opcode 0x%02x, %s family, %s engine): %s\n  %s\n\n", ins.mnemonic,
              static_cast<unsigned>(ins.opcode), ins.family, engineName(ins.engine), ins.doc,
              syntaxOf(ins).c_str());
  std::printf("  %-12s %-7s %-9s %s\n", "operand", "kind", "bits", "description");
  for (const OperandInfo &op : ins.operandList()) {
    std::string bits =
        std::to_string(op.bitOffset) + "-" + std::to_string(op.bitOffset + op.bitWidth - 1);
    std::printf("  %-12s %-7s %-9s %s%s\n", op.name, kindName(op.kind), bits.c_str(), op.doc,
                op.optional ? " (optional)" : "");
  }
  std::printf("\n  cost: %u setup cycles, %u per lane-element\n", ins.setupCycles,
              ins.perElementCycles);
}

std::string jsonString(const char *s) {
  std::string out = "\"";
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\')
      out += '\\';
    out += *s;
  }
  return out + "\"";
}

void printJson() {
  std::printf("{\"version\": \"%u.%u\", \"hash\": \"%016llx\", \"instructions\": [\n",
              kIsaVersionMajor, kIsaVersionMinor, static_cast<unsigned long long>(kIsaHash));
  bool firstInstr = true;
  for (const InstrInfo &ins : instructions()) {
    std::printf(
        "%s  {\"name\": %s, \"mnemonic\": %s, \"opcode\": %u, \"family\": %s, \"engine\": \"%s\", "
        "\"operands\": [",
        firstInstr ? "" : ",\n", jsonString(ins.name).c_str(), jsonString(ins.mnemonic).c_str(),
        static_cast<unsigned>(ins.opcode), jsonString(ins.family).c_str(), engineName(ins.engine));
    firstInstr = false;
    for (uint32_t i = 0; i < ins.numOperands; ++i) {
      const OperandInfo &op = ins.operands[i];
      std::printf(
          "%s{\"name\": %s, \"kind\": \"%s\", \"offset\": %u, \"width\": %u, \"optional\": %s",
          i ? ", " : "", jsonString(op.name).c_str(), kindName(op.kind), op.bitOffset, op.bitWidth,
          op.optional ? "true" : "false");
      // An enumeration operand: the names of the values it accepts.
      if (op.kind == OperandKind::Enum) {
        std::printf(", \"values\": [");
        bool firstValue = true;
        for (uint32_t v = 0; v < op.enumInfo->numValues; ++v)
          if (const EnumValueInfo &value = op.enumInfo->values[v]; op.accepts(value.value)) {
            std::printf("%s%s", firstValue ? "" : ", ", jsonString(value.name).c_str());
            firstValue = false;
          }
        std::printf("]");
      }
      std::printf("}");
    }
    std::printf("]}");
  }
  std::printf("\n]}\n");
}

} // namespace

int main(int argc, char **argv) {
  namespace po = npu::cli::po;
  po::options_description options("Options");
  options.add_options()("instr,i", po::value<std::string>(),
                        "describe one instruction by mnemonic")(
      "json", "print the instruction set as JSON");
  po::positional_options_description positional;
  po::variables_map vm;
  const npu::cli::Tool tool{"npu-isa", "[--instr MNEMONIC | --json]",
                            "Print the NPU instruction set this toolchain was generated from."};
  if (auto exit = npu::cli::parse(tool, argc, argv, options, positional, vm))
    return *exit;
  if (vm.count("instr")) {
    const std::string &name = vm["instr"].as<std::string>();
    const InstrInfo *ins = findMnemonic(name);
    if (!ins) {
      std::fprintf(stderr, "npu-isa: error: no instruction named '%s' (try npu-isa for the list)\n",
                   name.c_str());
      return npu::cli::kExitUsage;
    }
    printDetail(*ins);
  } else if (vm.count("json")) {
    printJson();
  } else {
    printSummary();
  }
  return npu::cli::closeStdout(tool, npu::cli::kExitOk);
}
