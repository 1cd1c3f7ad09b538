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
#include <algorithm>
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
    bool rawInputs = false;
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
  const std::regex raw(R"(MC_PROG_(\w+): mc_prog_raw_inputs = 1'b([01]);)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), raw); it != std::sregex_iterator(); ++it)
    rom.programs[(*it)[1]].rawInputs = (*it)[2] == "1";
  return rom;
}

using Prim = uint32_t (*)(uint32_t, uint32_t, uint32_t);

Prim primitive(const std::string &name) {
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
      {"imul", [](uint32_t a, uint32_t b, uint32_t) { return R::imul(a, b); }},
      {"imulhu", [](uint32_t a, uint32_t b, uint32_t) { return R::imulhu(a, b); }},
      {"ieq", [](uint32_t a, uint32_t b, uint32_t) { return R::ieq(a, b); }},
      {"ilt", [](uint32_t a, uint32_t b, uint32_t) { return R::ilt(a, b); }},
      {"iltu", [](uint32_t a, uint32_t b, uint32_t) { return R::iltu(a, b); }},
      {"ishlv", [](uint32_t a, uint32_t b, uint32_t) { return R::ishlv(a, b); }},
      {"ishrv", [](uint32_t a, uint32_t b, uint32_t) { return R::ishrv(a, b); }},
      {"israv", [](uint32_t a, uint32_t b, uint32_t) { return R::israv(a, b); }},
      {"l2f", [](uint32_t lo, uint32_t hi, uint32_t) { return R::l2f(lo, hi); }},
      {"f2iz", [](uint32_t a, uint32_t, uint32_t) { return R::f2iz(a); }},
      {"f2lzlo", [](uint32_t a, uint32_t, uint32_t) { return R::f2lzlo(a); }},
      {"f2lzhi", [](uint32_t a, uint32_t, uint32_t) { return R::f2lzhi(a); }},
  };
  return table.at(name);
}

// One ROM word, decoded with the field positions the package declares.
struct Step {
  Prim prim;
  unsigned dst;
  bool isConstant[3];
  unsigned index[3];
};

// The lane's sequencer for one program: inputs are canonicalised when
// loaded (unless the program's are raw integers), then the words run in ROM
// order on the register file.
class Sequencer {
public:
  Sequencer(const Rom &rom, const Rom::ProgramEntry &prog)
      : constants_(rom.constants), registers_(size_t(1) << rom.params.at("MC_REG_BITS")),
        result_(prog.result), raw_(prog.rawInputs) {
    const uint64_t srcBits = rom.params.at("MC_SRC_BITS");
    const uint64_t regMask = registers_.size() - 1;
    const uint64_t indexMask = (uint64_t(1) << (srcBits - 1)) - 1;
    const uint64_t lsb[3] = {rom.params.at("MC_SRC0_LSB"), rom.params.at("MC_SRC1_LSB"),
                             rom.params.at("MC_SRC2_LSB")};
    for (uint64_t pc = prog.start; pc < prog.start + prog.length; ++pc) {
      const uint64_t w = rom.words.at(pc);
      Step step;
      uint64_t op = (w >> rom.params.at("MC_PRIM_LSB")) & ((1u << rom.params.at("MC_PRIM_BITS")) - 1);
      step.prim = primitive(rom.primName.at(op));
      step.dst = static_cast<unsigned>((w >> rom.params.at("MC_DST_LSB")) & regMask);
      for (int k = 0; k < 3; ++k) {
        uint64_t src = (w >> lsb[k]) & ((uint64_t(1) << srcBits) - 1);
        step.isConstant[k] = (src >> (srcBits - 1)) != 0;
        step.index[k] = static_cast<unsigned>(src & indexMask);
        if (step.isConstant[k] ? step.index[k] >= constants_.size() : step.index[k] > regMask)
          throw std::runtime_error("ROM word " + std::to_string(pc) + " has a bad source");
      }
      steps_.push_back(step);
    }
  }

  uint32_t run(const std::vector<uint32_t> &inputs) {
    std::fill(registers_.begin(), registers_.end(), 0xdeadbeefu);
    for (size_t i = 0; i < inputs.size(); ++i)
      registers_[i] = raw_ ? inputs[i] : soft::canonical(inputs[i]);
    for (const Step &s : steps_) {
      uint32_t v[3];
      for (int k = 0; k < 3; ++k)
        v[k] = s.isConstant[k] ? constants_[s.index[k]] : registers_[s.index[k]];
      registers_[s.dst] = s.prim(v[0], v[1], v[2]);
    }
    return registers_[result_];
  }

private:
  const std::vector<uint32_t> &constants_;
  std::vector<uint32_t> registers_;
  uint64_t result_;
  bool raw_;
  std::vector<Step> steps_;
};

const Rom &theRom() {
  static const Rom rom = readRom(NPU_MICROCODE_PKG);
  return rom;
}

TEST(MicrocodeRom, MatchesTheGeneratedCpp) {
  const Rom &rom = theRom();
  EXPECT_EQ(rom.programs.size(), microcode::kNumPrograms);
  EXPECT_EQ(rom.params.at("MC_NUM_PROGRAMS"), microcode::kNumPrograms);
  EXPECT_EQ(rom.words.size(), rom.params.at("MC_ROM_DEPTH"));
  EXPECT_EQ(rom.constants.size(), rom.params.at("MC_CONST_DEPTH"));
}

class MicrocodeRomProgram : public ::testing::TestWithParam<unsigned> {};

TEST_P(MicrocodeRomProgram, ComputesWhatTheCppComputes) {
  const microcode::ProgramInfo &info = microcode::kPrograms[GetParam()];
  std::string upper = info.name;
  for (char &c : upper)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const Rom::ProgramEntry &entry = theRom().programs.at(upper);
  ASSERT_EQ(entry.length, info.numSteps);
  ASSERT_EQ(entry.inputs, info.numInputs);
  ASSERT_EQ(entry.rawInputs, info.rawInputs);
  Sequencer lane(theRom(), entry);
  // Every combination of special values (with the integer edge values for
  // a program of integer inputs), then random operands.
  std::vector<std::vector<uint32_t>> inputs{{}};
  std::vector<uint32_t> specials = test::specialValues();
  if (info.rawInputs)
    for (uint32_t v : test::integerEdgeValues())
      specials.push_back(v);
  for (unsigned k = 0; k < info.numInputs; ++k) {
    std::vector<std::vector<uint32_t>> longer;
    for (const std::vector<uint32_t> &prefix : inputs)
      for (uint32_t s : specials) {
        longer.push_back(prefix);
        longer.back().push_back(s);
      }
    inputs = std::move(longer);
  }
  test::OperandSource src(5 + GetParam());
  for (int i = 0; i < 5000; ++i) {
    inputs.emplace_back();
    for (unsigned k = 0; k < info.numInputs; ++k)
      inputs.back().push_back(src.mixed());
  }
  int failures = 0;
  for (const std::vector<uint32_t> &in : inputs) {
    uint32_t want = microcode::run<ReferenceProvider>(static_cast<Program>(GetParam()), in.data());
    uint32_t got = lane.run(in);
    if (got != want && ++failures <= 5)
      ADD_FAILURE() << info.name << " input " << std::hex << in[0] << ": ROM " << got << ", C++ "
                    << want;
  }
  EXPECT_EQ(failures, 0) << info.name;
}

INSTANTIATE_TEST_SUITE_P(AllPrograms, MicrocodeRomProgram,
                         ::testing::Range(0u, microcode::kNumPrograms),
                         [](const ::testing::TestParamInfo<unsigned> &p) {
                           return std::string(microcode::kPrograms[p.param].name);
                         });

} // namespace
} // namespace npu::arith
