// The lane primitive unit (rtl/fpu/npu_fp_alu.sv, Verilated) against the
// golden integer model npu::arith::soft, bit for bit: every primitive on
// the special values crossed with each other and on random operands aimed
// at cancellation, rounding ties, the tininess boundary and overflow:
// 5.9 million operand tuples, 15 million evaluations, in about 2 seconds.
#include "Vnpu_fp_alu.h"
#include "npu/arith/softfloat.h"
#include "operands.h"

#include <gtest/gtest.h>
#include <verilated.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace npu::arith {
namespace {

using test::OperandSource;
using test::specialValues;

// A primitive's opcode as the generated package defines it (MC_FADD, ...).
uint8_t primCode(const std::string &name) {
  static const std::map<std::string, uint8_t> codes = [] {
    std::ifstream in(NPU_MICROCODE_PKG);
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    std::map<std::string, uint8_t> m;
    const std::regex prim(R"(localparam logic \[MC_PRIM_BITS-1:0\] MC_(\w+) = \d+'d(\d+);)");
    for (auto it = std::sregex_iterator(s.begin(), s.end(), prim); it != std::sregex_iterator();
         ++it)
      m[(*it)[1]] = static_cast<uint8_t>(std::stoul((*it)[2]));
    return m;
  }();
  const auto it = codes.find(name);
  if (it == codes.end())
    throw std::runtime_error("MC_" + name + " not found in " NPU_MICROCODE_PKG);
  return it->second;
}

using Prim = uint8_t;
const Prim FADD = primCode("FADD"), FSUB = primCode("FSUB"), FMUL = primCode("FMUL"),
           FFMA = primCode("FFMA"), FMIN = primCode("FMIN"), FMAX = primCode("FMAX"),
           FABS = primCode("FABS"), FNEG = primCode("FNEG"), FLT = primCode("FLT"),
           FLE = primCode("FLE"), FISNAN = primCode("FISNAN"), FROUND = primCode("FROUND"),
           F2I = primCode("F2I"), I2F = primCode("I2F"), IADD = primCode("IADD"),
           ISUB = primCode("ISUB"), ISHL = primCode("ISHL"), ISHR = primCode("ISHR"),
           ISRA = primCode("ISRA"), IAND = primCode("IAND"), IOR = primCode("IOR"),
           IXOR = primCode("IXOR"), SEL = primCode("SEL"), IMUL = primCode("IMUL"),
           IMULHU = primCode("IMULHU"), IEQ = primCode("IEQ"), ILT = primCode("ILT"),
           ILTU = primCode("ILTU"), ISHLV = primCode("ISHLV"), ISHRV = primCode("ISHRV"),
           ISRAV = primCode("ISRAV"), L2F = primCode("L2F"), F2IZ = primCode("F2IZ"),
           F2LZLO = primCode("F2LZLO"), F2LZHI = primCode("F2LZHI");

std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

class FpuTest : public ::testing::Test {
protected:
  FpuTest()
      : context_(std::make_unique<VerilatedContext>()),
        alu_(std::make_unique<Vnpu_fp_alu>(context_.get())) {}

  uint32_t run(Prim prim, uint32_t a, uint32_t b = 0, uint32_t c = 0) {
    alu_->enable = 1;
    alu_->prim = prim;
    alu_->src0 = a;
    alu_->src1 = b;
    alu_->src2 = c;
    alu_->eval();
    return alu_->result;
  }

  // Checks prim on every operand tuple against the reference; reports the
  // first few mismatches.
  template <class Ref>
  void check(const char *name, Prim prim, const std::vector<std::array<uint32_t, 3>> &ops,
             Ref ref) {
    int failures = 0;
    for (const auto &[a, b, c] : ops) {
      const uint32_t want = ref(a, b, c), got = run(prim, a, b, c);
      if (got != want && ++failures <= 10)
        ADD_FAILURE() << name << "(" << hex(a) << ", " << hex(b) << ", " << hex(c) << "): soft "
                      << hex(want) << ", rtl " << hex(got);
    }
    EXPECT_EQ(failures, 0) << name << " over " << ops.size() << " operand tuples";
  }

  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Vnpu_fp_alu> alu_;
};

using Ops = std::vector<std::array<uint32_t, 3>>;

// Pairs: all specials crossed, then random pairs, alternating unrelated
// operands, operands of nearly equal exponent (cancellation) and products
// near the least normal number (tininess after rounding) and the largest.
Ops binaryOperands(uint64_t seed, size_t randomCount) {
  Ops ops;
  const std::vector<uint32_t> specials = specialValues();
  for (uint32_t a : specials)
    for (uint32_t b : specials)
      ops.push_back({a, b, 0});
  OperandSource src(seed);
  for (size_t i = 0; i < randomCount; ++i) {
    const uint32_t a = src.mixed();
    switch (i % 3) {
    case 0: ops.push_back({a, src.mixed(), 0}); break;
    case 1: ops.push_back({a, src.near(a, 2), 0}); break;
    default: {
      const uint32_t exponentSum = (i & 8) ? 126 + 127 : 254 + 127 - 128;
      const uint32_t ea = 64 + static_cast<uint32_t>(src.rng()() % 126);
      const uint32_t eb = exponentSum - ea;
      const uint32_t ma = static_cast<uint32_t>(src.rng()()) & 0x807fffffu;
      const uint32_t mb = static_cast<uint32_t>(src.rng()()) & 0x807fffffu;
      ops.push_back({ma | (ea << 23), mb | (eb << 23), 0});
    }
    }
  }
  return ops;
}

constexpr size_t kRandom = 1'000'000;

TEST_F(FpuTest, AddSubMul) {
  const Ops ops = binaryOperands(11, kRandom);
  check("fadd", FADD, ops, [](uint32_t a, uint32_t b, uint32_t) { return soft::fadd(a, b); });
  check("fsub", FSUB, ops, [](uint32_t a, uint32_t b, uint32_t) { return soft::fsub(a, b); });
  check("fmul", FMUL, ops, [](uint32_t a, uint32_t b, uint32_t) { return soft::fmul(a, b); });
}

TEST_F(FpuTest, FusedMultiplyAdd) {
  Ops ops;
  const std::vector<uint32_t> specials = specialValues();
  for (uint32_t a : specials)
    for (uint32_t b : specials)
      for (uint32_t c : {0x00000000u, 0x80000000u, 0x3f800000u, 0xbf800000u, 0x7f800000u,
                         0xff800000u, 0x7fc00000u, 0x00800000u, 0x80800000u, 0x00000001u})
        ops.push_back({a, b, c});
  OperandSource src(12);
  for (size_t i = 0; i < 3 * kRandom; ++i) {
    const uint32_t a = src.mixed(), b = src.mixed();
    switch (i % 4) {
    case 0: ops.push_back({a, b, src.mixed()}); break;
    case 1: // c close to -a*b: massive cancellation
      ops.push_back({a, b, src.near(soft::fmul(a, b) ^ 0x80000000u, 1)});
      break;
    case 2: { // c far above or below the product: the window's edges
      const uint32_t p = soft::fmul(a, b);
      ops.push_back({a, b, src.near(p, 60)});
      break;
    }
    default: ops.push_back({src.moderate(), src.moderate(), src.moderate()});
    }
  }
  // Products just below 2^-126 that round up to it (tininess after rounding).
  ops.push_back({0x20000001, 0x1fffffff, 0x00000000});
  ops.push_back({0x20000001, 0x9fffffff, 0x80000000});
  check("ffma", FFMA, ops, [](uint32_t a, uint32_t b, uint32_t c) { return soft::ffma(a, b, c); });
}

TEST_F(FpuTest, MinMaxCompares) {
  const Ops ops = binaryOperands(13, kRandom / 4);
  check("fmin", FMIN, ops, [](uint32_t a, uint32_t b, uint32_t) { return soft::fmin(a, b); });
  check("fmax", FMAX, ops, [](uint32_t a, uint32_t b, uint32_t) { return soft::fmax(a, b); });
  check("flt", FLT, ops, [](uint32_t a, uint32_t b, uint32_t) { return soft::flt(a, b); });
  check("fle", FLE, ops, [](uint32_t a, uint32_t b, uint32_t) { return soft::fle(a, b); });
}

TEST_F(FpuTest, UnaryAndConversions) {
  Ops ops;
  for (uint32_t x : specialValues())
    ops.push_back({x, 0, 0});
  OperandSource src(14);
  for (size_t i = 0; i < kRandom; ++i)
    ops.push_back({i % 2 ? src.any() : src.moderate(), 0, 0});
  // Around the rounding boundaries of fround and f2i (0.25 .. 0.5, 2^31),
  // the integral boundary 2^23 and both signs.
  for (uint32_t base : {0x3e800000u, 0x3f000000u, 0x4afff000u, 0x4effff00u})
    for (uint32_t u = base; u < base + 8192; ++u) {
      ops.push_back({u, 0, 0});
      ops.push_back({u | 0x80000000u, 0, 0});
    }
  // Every integer pattern class for i2f: small, near powers of two, extremes.
  for (uint32_t k = 0; k < 32; ++k)
    for (int d = -2; d <= 2; ++d) {
      ops.push_back({(1u << k) + static_cast<uint32_t>(d), 0, 0});
      ops.push_back({0u - (1u << k) + static_cast<uint32_t>(d), 0, 0});
    }
  const auto unary = [](uint32_t (*f)(uint32_t)) {
    return [f](uint32_t a, uint32_t, uint32_t) { return f(a); };
  };
  check("fabs", FABS, ops, unary(soft::fabs));
  check("fneg", FNEG, ops, unary(soft::fneg));
  check("fisnan", FISNAN, ops, unary(soft::fisnan));
  check("fround", FROUND, ops, unary(soft::fround));
  check("f2i", F2I, ops, unary(soft::f2i));
  check("i2f", I2F, ops, unary(soft::i2f));
}

TEST_F(FpuTest, IntegerAndSelect) {
  OperandSource src(15);
  Ops ops;
  for (size_t i = 0; i < kRandom / 4; ++i)
    ops.push_back({src.any(), src.any(), src.any()});
  check("iadd", IADD, ops, [](uint32_t a, uint32_t b, uint32_t) { return a + b; });
  check("isub", ISUB, ops, [](uint32_t a, uint32_t b, uint32_t) { return a - b; });
  check("iand", IAND, ops, [](uint32_t a, uint32_t b, uint32_t) { return a & b; });
  check("ior", IOR, ops, [](uint32_t a, uint32_t b, uint32_t) { return a | b; });
  check("ixor", IXOR, ops, [](uint32_t a, uint32_t b, uint32_t) { return a ^ b; });
  // Shift amounts are constants 0..31; masks are all-ones or all-zero.
  Ops shifts, selects;
  for (size_t i = 0; i < kRandom / 8; ++i) {
    shifts.push_back({src.any(), static_cast<uint32_t>(i % 32), 0});
    selects.push_back({(i & 1) ? ~0u : 0u, src.any(), src.any()});
  }
  check("ishl", ISHL, shifts, [](uint32_t a, uint32_t b, uint32_t) { return a << b; });
  check("ishr", ISHR, shifts, [](uint32_t a, uint32_t b, uint32_t) { return a >> b; });
  check("isra", ISRA, shifts, [](uint32_t a, uint32_t b, uint32_t) {
    return static_cast<uint32_t>(static_cast<int32_t>(a) >> b);
  });
  check("sel", SEL, selects, [](uint32_t m, uint32_t a, uint32_t b) { return (m & a) | (~m & b); });
}

// The integer primitives of docs/types.md §4: the integer edge values
// crossed with each other (shift amounts around the width among them), then
// random pairs, half with small second operands.
TEST_F(FpuTest, IntegerMultiplyCompareVariableShift) {
  Ops ops;
  const std::vector<uint32_t> edges = test::integerEdgeValues();
  for (uint32_t a : edges)
    for (uint32_t b : edges)
      ops.push_back({a, b, 0});
  OperandSource src(16);
  for (size_t i = 0; i < kRandom / 4; ++i)
    ops.push_back({src.any(), i % 2 ? src.any() : static_cast<uint32_t>(src.rng()() % 40), 0});
  const auto binary = [](uint32_t (*f)(uint32_t, uint32_t)) {
    return [f](uint32_t a, uint32_t b, uint32_t) { return f(a, b); };
  };
  check("imul", IMUL, ops, binary(soft::imul));
  check("imulhu", IMULHU, ops, binary(soft::imulhu));
  check("ieq", IEQ, ops, binary(soft::ieq));
  check("ilt", ILT, ops, binary(soft::ilt));
  check("iltu", ILTU, ops, binary(soft::iltu));
  check("ishlv", ISHLV, ops, binary(soft::ishlv));
  check("ishrv", ISHRV, ops, binary(soft::ishrv));
  check("israv", ISRAV, ops, binary(soft::israv));
}

// The conversions of cast: l2f on the rounding neighbourhoods of every
// binade and random int64 values of every size; the truncating conversions
// on the specials, the boundaries 1, 2^31 and 2^63 and random patterns.
TEST_F(FpuTest, Int64AndTruncatingConversions) {
  Ops pairs;
  for (const auto &[lo, hi] : test::int64EdgePairs())
    pairs.push_back({lo, hi, 0});
  OperandSource src(17);
  for (size_t i = 0; i < kRandom / 4; ++i) {
    const uint64_t v = src.rng()() >> (src.rng()() % 64);
    pairs.push_back({static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32), 0});
  }
  check("l2f", L2F, pairs, [](uint32_t lo, uint32_t hi, uint32_t) { return soft::l2f(lo, hi); });

  Ops ops;
  for (uint32_t x : specialValues())
    ops.push_back({x, 0, 0});
  for (uint32_t x : test::truncationPatterns())
    ops.push_back({x, 0, 0});
  for (size_t i = 0; i < kRandom / 2; ++i)
    ops.push_back({i % 2 ? src.any() : src.moderate(), 0, 0});
  const auto unary = [](uint32_t (*f)(uint32_t)) {
    return [f](uint32_t a, uint32_t, uint32_t) { return f(a); };
  };
  check("f2iz", F2IZ, ops, unary(soft::f2iz));
  check("f2lzlo", F2LZLO, ops, unary(soft::f2lzlo));
  check("f2lzhi", F2LZHI, ops, unary(soft::f2lzhi));
}

} // namespace
} // namespace npu::arith
