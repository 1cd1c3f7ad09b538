// The generated micro-code ROM (rtl/npu_microcode_pkg.sv) computes what the
// generated C++ computes: this test reads the package's ROM, constant pool
// and program table back, runs every program on a model of the vector
// lane's sequencer (the reference primitives on a register file), and
// compares with microcode::run<ReferenceProvider>. It checks the encoding,
// the register allocation and the program table together.
#include "npu/arith/functions.h"
#include "npu/arith/provider.h"
#include "npu/arith/softfloat.h"
#include "operands.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace npu::arith {
namespace {

struct Rom {
  std::map<std::string, uint64_t> params;   // MC_* localparams
  std::map<uint64_t, std::string> primName; // opcode -> "fadd", ...
  std::vector<uint64_t> words;
  std::vector<uint32_t> constants;
  struct ProgramEntry {
    uint64_t start = 0, length = 0, inputs = 0, result = 0;
  };
  std::map<std::string, ProgramEntry> programs; // by upper-case name
};

Rom readRom(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  Rom rom;
  std::smatch m;
  const std::regex param(R"(localparam int unsigned (MC_\w+) = (\d+);)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), param); it != std::sregex_iterator();
       ++it)
    rom.params[(*it)[1]] = std::stoull((*it)[2]);
  const std::regex prim(R"(localparam logic \[MC_PRIM_BITS-1:0\] MC_(\w+) = \d+'d(\d+);)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), prim); it != std::sregex_iterator();
       ++it) {
    std::string name = (*it)[1];
    for (char &c : name)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    rom.primName[std::stoull((*it)[2])] = name;
  }
  const std::regex word(R"(\d+'d(\d+): mc_rom = \d+'h([0-9a-f]+);)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), word); it != std::sregex_iterator();
       ++it) {
    size_t address = std::stoull((*it)[1]);
    if (rom.words.size() <= address)
      rom.words.resize(address + 1);
    rom.words[address] = std::stoull((*it)[2], nullptr, 16);
  }
  const std::regex constant(R"(\d+'d(\d+): mc_const = 32'h([0-9a-f]+);)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), constant); it != std::sregex_iterator();
       ++it) {
    size_t index = std::stoull((*it)[1]);
    if (rom.constants.size() <= index)
      rom.constants.resize(index + 1);
    rom.constants[index] = static_cast<uint32_t>(std::stoull((*it)[2], nullptr, 16));
  }
  const std::regex entry(R"(MC_PROG_(\w+): mc_prog_(start|length|inputs|result) = \d+'d(\d+);)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), entry); it != std::sregex_iterator();
       ++it) {
    Rom::ProgramEntry &e = rom.programs[(*it)[1]];
    uint64_t v = std::stoull((*it)[3]);
    std::string field = (*it)[2];
    (field == "start"    ? e.start
     : field == "length" ? e.length
     : field == "inputs" ? e.inputs
                         : e.result) = v;
  }
  return rom;
}

using Prim = std::function<uint32_t(uint32_t, uint32_t, uint32_t)>;

const std::map<std::string, Prim> &primitives() {
  using R = ReferenceProvider;
  static const std::map<std::string, Prim> table = {
      {"fadd", [](uint32_t a, uint32_t b, uint32_t) { return R::fadd(a, b); }},
      {"fsub", [](uint32_t a, uint32_t b, uint32_t) { return R::fsub(a, b); }},
      {"fmul", [](uint32_t a, uint32_t b, uint32_t) { return R::fmul(a, b); }},
      {"ffma", [](uint32_t a, uint32_t b, uint32_t c) { return R::ffma(a, b, c); }},
      {"fmin", [](uint32_t a, uint32_t b, uint32_t) { return R::fmin(a, b); }},
      {"fmax", [](uint32_t a, uint32_t b, uint32_t) { return R::fmax(a, b); }},
      {"fabs", [](uint32_t a, uint32_t, uint32_t) { return R::fabs(a); }},
      {"fneg", [](uint32_t a, uint32_t, uint32_t) { return R::fneg(a); }},
      {"flt", [](uint32_t a, uint32_t b, uint32_t) { return R::flt(a, b); }},
      {"fle", [](uint32_t a, uint32_t b, uint32_t) { return R::fle(a, b); }},
      {"fisnan", [](uint32_t a, uint32_t, uint32_t) { return R::fisnan(a); }},
      {"fround", [](uint32_t a, uint32_t, uint32_t) { return R::fround(a); }},
      {"f2i", [](uint32_t a, uint32_t, uint32_t) { return R::f2i(a); }},
      {"i2f", [](uint32_t a, uint32_t, uint32_t) { return R::i2f(a); }},
      {"iadd", [](uint32_t a, uint32_t b, uint32_t) { return R::iadd(a, b); }},
      {"isub", [](uint32_t a, uint32_t b, uint32_t) { return R::isub(a, b); }},
      {"ishl", [](uint32_t a, uint32_t b, uint32_t) { return R::ishl(a, static_cast<int>(b)); }},
      {"ishr", [](uint32_t a, uint32_t b, uint32_t) { return R::ishr(a, static_cast<int>(b)); }},
      {"isra", [](uint32_t a, uint32_t b, uint32_t) { return R::isra(a, static_cast<int>(b)); }},
      {"iand", [](uint32_t a, uint32_t b, uint32_t) { return R::iand(a, b); }},
      {"ior", [](uint32_t a, uint32_t b, uint32_t) { return R::ior(a, b); }},
      {"ixor", [](uint32_t a, uint32_t b, uint32_t) { return R::ixor(a, b); }},
      {"sel", [](uint32_t m, uint32_t a, uint32_t b) { return R::sel(m, a, b); }},
  };
  return table;
}

// The lane's sequencer: inputs are canonicalised when loaded, then the
// program's words run in ROM order on the register file.
uint32_t runRom(const Rom &rom, const Rom::ProgramEntry &prog,
                const std::vector<uint32_t> &inputs) {
  const uint64_t srcBits = rom.params.at("MC_SRC_BITS");
  const uint64_t regBits = rom.params.at("MC_REG_BITS");
  const uint64_t constBits = rom.params.at("MC_CONST_BITS");
  const uint64_t indexBits = srcBits - 1;
  std::vector<uint32_t> reg(uint64_t(1) << regBits, 0xdeadbeef);
  for (size_t i = 0; i < inputs.size(); ++i)
    reg[i] = soft::canonical(inputs[i]);
  for (uint64_t pc = prog.start; pc < prog.start + prog.length; ++pc) {
    const uint64_t w = rom.words.at(pc);
    const uint64_t op =
        (w >> rom.params.at("MC_PRIM_LSB")) & ((1u << rom.params.at("MC_PRIM_BITS")) - 1);
    const uint64_t dst = (w >> rom.params.at("MC_DST_LSB")) & ((uint64_t(1) << regBits) - 1);
    uint32_t v[3];
    const uint64_t lsb[3] = {rom.params.at("MC_SRC0_LSB"), rom.params.at("MC_SRC1_LSB"),
                             rom.params.at("MC_SRC2_LSB")};
    for (int k = 0; k < 3; ++k) {
      uint64_t src = (w >> lsb[k]) & ((uint64_t(1) << srcBits) - 1);
      uint64_t index = src & ((uint64_t(1) << indexBits) - 1);
      v[k] = (src >> indexBits) ? rom.constants.at(index & ((uint64_t(1) << constBits) - 1))
                                : reg.at(index);
    }
    reg[dst] = primitives().at(rom.primName.at(op))(v[0], v[1], v[2]);
  }
  return reg[prog.result];
}

TEST(MicrocodeRom, ComputesWhatTheCppComputes) {
  const Rom rom = readRom(NPU_MICROCODE_PKG);
  ASSERT_EQ(rom.programs.size(), microcode::kNumPrograms);
  ASSERT_EQ(rom.params.at("MC_NUM_PROGRAMS"), microcode::kNumPrograms);
  ASSERT_EQ(rom.words.size(), rom.params.at("MC_ROM_DEPTH"));
  test::OperandSource src(5);
  const std::vector<uint32_t> specials = test::specialValues();
  for (unsigned p = 0; p < microcode::kNumPrograms; ++p) {
    const microcode::ProgramInfo &info = microcode::kPrograms[p];
    std::string upper = info.name;
    for (char &c : upper)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const Rom::ProgramEntry &entry = rom.programs.at(upper);
    EXPECT_EQ(entry.length, info.numSteps) << info.name;
    EXPECT_EQ(entry.inputs, info.numInputs) << info.name;
    int failures = 0;
    for (int i = 0; i < 20000; ++i) {
      std::vector<uint32_t> in;
      for (unsigned k = 0; k < info.numInputs; ++k)
        in.push_back(i < 400 ? specials[(i * (k + 7)) % specials.size()] : src.mixed());
      uint32_t want = microcode::run<ReferenceProvider>(static_cast<Program>(p), in.data());
      uint32_t got = runRom(rom, entry, in);
      if (got != want && ++failures <= 5)
        ADD_FAILURE() << info.name << " input " << std::hex << in[0] << ": ROM " << got << ", C++ "
                      << want;
    }
    EXPECT_EQ(failures, 0) << info.name;
  }
}

} // namespace
} // namespace npu::arith
