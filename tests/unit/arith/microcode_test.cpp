// The micro-programs: every implementation gives the same bits, division,
// square root and reciprocal are correctly rounded, special values follow
// docs/arith.md, and the generated ROM computes what the C++ computes.
#include "npu/arith/functions.h"
#include "npu/arith/softfloat.h"
#include "operands.h"

#include "../full_coverage.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace npu::arith {
namespace {

using microcode::kPrograms;
using test::OperandSource;
using test::specialValues;

std::string hex(uint32_t u) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", u);
  return buf;
}

const microcode::ProgramInfo &programInfo(Program p) {
  return kPrograms[static_cast<size_t>(p)];
}

std::vector<Program> allPrograms() {
  std::vector<Program> all;
  for (unsigned i = 0; i < microcode::kNumPrograms; ++i)
    all.push_back(static_cast<Program>(i));
  return all;
}

// The host implementations this CPU can run (the reference excluded).
std::vector<Implementation> hostImplementations() {
  std::vector<Implementation> impls;
  if (hostHasAvx2Fma())
    impls.insert(impls.end(), {Implementation::HostScalar, Implementation::Avx2});
  if (hostHasAvx512())
    impls.push_back(Implementation::Avx512);
  return impls;
}

// Evaluates `program` on columns of inputs with one implementation.
std::vector<uint32_t> run(Program program, const std::vector<std::vector<uint32_t>> &columns,
                          Implementation impl) {
  size_t n = columns[0].size();
  std::vector<Operand> in;
  for (const auto &c : columns)
    in.push_back({reinterpret_cast<const float *>(c.data())});
  std::vector<uint32_t> out(n);
  apply(program, in, reinterpret_cast<float *>(out.data()), n, impl);
  return out;
}

// Inputs: every combination of special values, then random ones.
std::vector<std::vector<uint32_t>> inputsFor(Program program, size_t randomCount, uint64_t seed) {
  const unsigned numInputs = programInfo(program).numInputs;
  std::vector<std::vector<uint32_t>> columns(numInputs);
  // A program of integer inputs also gets the integer edge values, among
  // them the patterns a binary32 load would canonicalise (1, -1).
  std::vector<uint32_t> specials = specialValues();
  if (programInfo(program).rawInputs)
    for (uint32_t v : test::integerEdgeValues())
      specials.push_back(v);
  size_t combinations = 1;
  for (unsigned k = 0; k < numInputs; ++k)
    combinations *= specials.size();
  for (size_t combination = 0; combination < combinations; ++combination)
    for (size_t k = 0, rest = combination; k < numInputs; ++k, rest /= specials.size())
      columns[k].push_back(specials[rest % specials.size()]);
  OperandSource src(seed);
  for (size_t i = 0; i < randomCount; ++i)
    for (auto &c : columns)
      c.push_back(i % 3 == 0 ? src.any() : src.mixed());
  // Small moderate values, where most functions do interesting things.
  std::uniform_real_distribution<float> moderate(-20.0f, 20.0f);
  for (size_t i = 0; i < randomCount; ++i)
    for (auto &c : columns)
      c.push_back(std::bit_cast<uint32_t>(moderate(src.rng())));
  return columns;
}

class MicrocodeTest : public ::testing::TestWithParam<Program> {};

TEST_P(MicrocodeTest, ImplementationsAgreeBitForBit) {
  if (!hostHasAvx2Fma())
    NPU_SKIP_OR_REQUIRE("the host implementations need AVX2 and FMA");
  const Program program = GetParam();
  auto columns = inputsFor(program, 200'000, 10 + static_cast<uint64_t>(program));
  std::vector<uint32_t> reference = run(program, columns, Implementation::Reference);
  for (Implementation impl : hostImplementations()) {
    std::vector<uint32_t> host = run(program, columns, impl);
    int failures = 0;
    for (size_t i = 0; i < reference.size(); ++i) {
      if (host[i] != reference[i] && ++failures <= 10) {
        std::string args;
        for (const auto &c : columns)
          args += (args.empty() ? "" : ", ") + hex(c[i]);
        ADD_FAILURE() << programInfo(program).name << "(" << args << "): reference "
                      << hex(reference[i]) << ", " << implementationName(impl) << " "
                      << hex(host[i]);
      }
    }
    EXPECT_EQ(failures, 0) << implementationName(impl);
  }
}

TEST_P(MicrocodeTest, EvaluateMatchesApply) {
  const Program program = GetParam();
  auto columns = inputsFor(program, 1000, 99);
  std::vector<uint32_t> reference = run(program, columns, Implementation::Reference);
  for (size_t i = 0; i < reference.size(); i += 7) {
    std::vector<uint32_t> in;
    for (const auto &c : columns)
      in.push_back(c[i]);
    ASSERT_EQ(evaluate(program, in), reference[i]) << programInfo(program).name;
    for (Implementation impl : hostImplementations())
      ASSERT_EQ(evaluate(program, in, impl), reference[i]) << implementationName(impl);
  }
}

INSTANTIATE_TEST_SUITE_P(AllPrograms, MicrocodeTest, ::testing::ValuesIn(allPrograms()),
                         [](const ::testing::TestParamInfo<Program> &p) {
                           return std::string(programInfo(p.param).name);
                         });

TEST(Microcode, ArityIsChecked) {
  uint32_t two[2] = {0, 0};
  EXPECT_THROW(evaluate(Program::Exp, two), std::invalid_argument);
  float x = 0;
  const Operand none[] = {{&x}};
  EXPECT_THROW(apply(Program::Div, none, &x, 1), std::invalid_argument);
}

TEST(Microcode, BroadcastOperandsAndTails) {
  // Every length up to three vectors of the widest, a broadcast divisor, in
  // place.
  std::vector<Implementation> impls = hostImplementations();
  impls.push_back(Implementation::Reference);
  for (Implementation impl : impls) {
    for (size_t n = 0; n <= 48; ++n) {
      std::vector<float> a(n), out(n);
      for (size_t i = 0; i < n; ++i)
        a[i] = static_cast<float>(i) + 0.5f;
      float divisor = 3.0f;
      const Operand in[] = {{a.data()}, {&divisor, true}};
      apply(Program::Div, in, out.data(), n, impl);
      for (size_t i = 0; i < n; ++i)
        EXPECT_EQ(out[i], a[i] / 3.0f) << i;
      applyUnary(Program::Neg, a.data(), a.data(), n, impl);
      for (size_t i = 0; i < n; ++i)
        EXPECT_EQ(a[i], -(static_cast<float>(i) + 0.5f));
    }
  }
}

TEST(Microcode, MisalignedTailsAgreeWithReference) {
  // Every length class of the vector loops (empty, tails, whole vectors and
  // a tail), from every word offset of a cache line's first vector, with
  // broadcast and element operands mixed.
  OperandSource src(7);
  std::vector<uint32_t> a(80), b(80);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = src.mixed();
    b[i] = src.mixed();
  }
  const auto asFloats = [](const std::vector<uint32_t> &v, size_t offset) {
    return reinterpret_cast<const float *>(v.data() + offset);
  };
  for (Implementation impl : hostImplementations())
    for (Program program : {Program::Exp, Program::Sigmoid, Program::Pow, Program::Div})
      for (size_t offset = 0; offset < 16; offset += 3)
        for (size_t n = 0; n + offset <= 64; ++n)
          for (bool broadcastB : {false, true}) {
            std::vector<Operand> in = {{asFloats(a, offset)}};
            if (programInfo(program).numInputs == 2)
              in.push_back({asFloats(b, offset), broadcastB});
            std::vector<uint32_t> want(n + 1, 0xdeadbeefu), got(n + 1, 0xdeadbeefu);
            apply(program, in, reinterpret_cast<float *>(want.data()), n,
                  Implementation::Reference);
            apply(program, in, reinterpret_cast<float *>(got.data()), n, impl);
            ASSERT_EQ(got, want) << programInfo(program).name << " on " << implementationName(impl)
                                 << ", n " << n << ", offset " << offset;
          }
}

// The binary32 result the spec gives an exact value (here: a double that is
// itself the correctly rounded double of the exact value, which suffices
// for division and square root, whose exact results are never midpoints).
uint32_t roundToSpec(double f) {
  if (std::isnan(f))
    return soft::kCanonicalNan;
  if (f == 0 || std::isinf(f))
    return std::bit_cast<uint32_t>(static_cast<float>(f));
  int e;
  double m = std::frexp(std::fabs(f), &e);
  return soft::roundToFloat(std::signbit(f), e - 53, static_cast<uint64_t>(std::ldexp(m, 53)));
}

double valueOf(uint32_t u) {
  return std::bit_cast<float>(soft::isNan(u) ? u : soft::canonical(u));
}

// All 2^24 significands of [1, 4), i.e. both exponent parities, and the
// special values: with the exponent scaling exact, this covers sqrt.
TEST(CorrectRounding, SqrtOfEverySignificand) {
  std::vector<uint32_t> x;
  for (uint32_t u = 0x3f800000; u < 0x40800000; ++u)
    x.push_back(u);
  for (uint32_t u : specialValues())
    x.push_back(u);
  for (uint32_t e = 1; e < 255; ++e)
    x.push_back((e << 23) | 0x2a5a5a);
  std::vector<uint32_t> y = run(Program::Sqrt, {x}, fastestImplementation());
  int failures = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    uint32_t want = roundToSpec(std::sqrt(valueOf(x[i])));
    if (y[i] != want && ++failures <= 10)
      ADD_FAILURE() << "sqrt(" << hex(x[i]) << ") = " << hex(y[i]) << ", want " << hex(want);
  }
  EXPECT_EQ(failures, 0);
}

// The mantissa reciprocal shared by recip and div is RN(1/m) for all 2^23
// significands m: the premise of Markstein's theorem that makes div's final
// step correctly rounded.
TEST(CorrectRounding, ReciprocalOfEverySignificand) {
  std::vector<uint32_t> x;
  for (uint32_t u = 0x3f800000; u < 0x40000000; ++u)
    x.push_back(u);
  for (uint32_t u : specialValues())
    x.push_back(u);
  for (uint32_t e = 0; e < 256; ++e)
    x.push_back((e << 23) | 0x5a5a5a);
  std::vector<uint32_t> y = run(Program::Recip, {x}, fastestImplementation());
  int failures = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    uint32_t want = roundToSpec(1.0 / valueOf(x[i]));
    if (y[i] != want && ++failures <= 10)
      ADD_FAILURE() << "recip(" << hex(x[i]) << ") = " << hex(y[i]) << ", want " << hex(want);
  }
  EXPECT_EQ(failures, 0);
}

TEST(CorrectRounding, Division) {
  std::vector<uint32_t> a, b;
  // Every dividend significand against the divisor significands where
  // Newton-Raphson is weakest (all ones, just above 1) and a few others.
  for (uint32_t divisor : {0x3fffffffu, 0x3f800001u, 0x3fb504f3u, 0x3f800000u})
    for (uint32_t u = 0x3f800000; u < 0x40000000; u += 3) {
      a.push_back(u);
      b.push_back(divisor);
    }
  // Random operands over the whole range, results near 2^-126 and 2^128.
  OperandSource src(7);
  for (int i = 0; i < 4'000'000; ++i) {
    uint32_t x = src.mixed(), y = src.mixed();
    if (i % 2) {
      uint32_t ex = 1 + static_cast<uint32_t>(src.rng()() % 254);
      uint32_t ey =
          (i % 4 == 1) ? (ex + 126 <= 254 ? ex + 126 : ex - 1) : (ex > 127 ? ex - 127 : ex);
      x = (x & 0x807fffffu) | (ex << 23);
      y = (y & 0x807fffffu) | (ey << 23);
    }
    a.push_back(x);
    b.push_back(y);
  }
  for (uint32_t x : specialValues())
    for (uint32_t y : specialValues()) {
      a.push_back(x);
      b.push_back(y);
    }
  std::vector<uint32_t> q = run(Program::Div, {a, b}, fastestImplementation());
  int failures = 0;
  for (size_t i = 0; i < q.size(); ++i) {
    uint32_t want = roundToSpec(valueOf(a[i]) / valueOf(b[i]));
    if (q[i] != want && ++failures <= 10)
      ADD_FAILURE() << "div(" << hex(a[i]) << ", " << hex(b[i]) << ") = " << hex(q[i]) << ", want "
                    << hex(want);
  }
  EXPECT_EQ(failures, 0);
}

// Exact results and special values of docs/arith.md.
TEST(Microcode, SpecialValues) {
  struct Case {
    Program program;
    std::vector<uint32_t> in;
    uint32_t want;
  };
  const uint32_t nan = soft::kCanonicalNan, inf = 0x7f800000, ninf = 0xff800000;
  const Case cases[] = {
      {Program::Exp, {0x00000000}, 0x3f800000},
      {Program::Exp, {0x80000001}, 0x3f800000},
      {Program::Exp, {ninf}, 0},
      {Program::Exp, {inf}, inf},
      {Program::Exp, {0x42b17218}, inf},
      {Program::Exp, {0xffc00001}, nan},
      {Program::Log, {0x3f800000}, 0},
      {Program::Log, {0}, ninf},
      {Program::Log, {0x80000000}, ninf},
      {Program::Log, {0x00000001}, ninf},
      {Program::Log, {0xbf800000}, nan},
      {Program::Log, {inf}, inf},
      {Program::Log, {ninf}, nan},
      {Program::Log, {0x40000000}, 0x3f317218},
      {Program::Recip, {0x80000000}, ninf},
      {Program::Recip, {ninf}, 0x80000000},
      {Program::Recip, {0x7f000000}, 0},
      {Program::Recip, {0x7e800000}, 0x00800000},
      {Program::Rsqrt, {0x80000000}, ninf},
      {Program::Rsqrt, {inf}, 0},
      {Program::Rsqrt, {0xbf800000}, nan},
      {Program::Rsqrt, {0x40800000}, 0x3f000000},
      {Program::Sqrt, {0x80000000}, 0x80000000},
      {Program::Sqrt, {inf}, inf},
      {Program::Sqrt, {0x80000001}, 0x80000000},
      {Program::Sqrt, {0xbf800000}, nan},
      {Program::Div, {0, 0}, nan},
      {Program::Div, {0x3f800000, 0x80000000}, ninf},
      {Program::Div, {inf, inf}, nan},
      {Program::Div, {0xbf800000, inf}, 0x80000000},
      {Program::Div, {0x00800000, 0x40000000}, 0},
      {Program::Div, {0x7f7fffff, 0x3f000000}, inf},
      {Program::Neg, {0x7fc00001}, nan},
      {Program::Neg, {0x00000001}, 0x80000000},
      {Program::Abs, {0xffc00000}, nan},
      {Program::Relu, {0x80000000}, 0},
      {Program::Relu, {0xffc00000}, nan},
      {Program::Sigmoid, {0}, 0x3f000000},
      {Program::Sigmoid, {inf}, 0x3f800000},
      {Program::Sigmoid, {ninf}, 0},
      {Program::Tanh, {0x80000000}, 0x80000000},
      {Program::Tanh, {ninf}, 0xbf800000},
      {Program::Silu, {ninf}, 0x80000000},
      {Program::Silu, {inf}, inf},
      {Program::Gelu, {ninf}, 0x80000000},
      {Program::Gelu, {inf}, inf},
      {Program::Gelu, {0x80000000}, 0x80000000},
      {Program::Sin, {0x80000000}, 0x80000000},
      {Program::Sin, {inf}, nan},
      {Program::Cos, {0x80000000}, 0x3f800000},
      {Program::Cos, {ninf}, nan},
      {Program::SiluBwd, {inf, 0x40000000}, 0x40000000},
      {Program::SiluBwd, {ninf, 0x3f800000}, 0x80000000},
      {Program::GeluBwd, {inf, 0x40000000}, 0x40000000},
      {Program::GeluBwd, {ninf, 0x3f800000}, 0x80000000},
      {Program::SiluBwd, {0, 0x3f800000}, 0x3f000000},
      // erf keeps the sign of zero, saturates to +-1 from 3.92 on, and
      // gelu_erf and its derivative reach their limits at +-inf and on
      // underflow (-20), as do gelu and gelu_bwd.
      {Program::Erf, {0x80000000}, 0x80000000},
      {Program::Erf, {0x00000001}, 0},
      {Program::Erf, {0x40a00000}, 0x3f800000},
      {Program::Erf, {0xc0800000}, 0xbf800000},
      {Program::Erf, {inf}, 0x3f800000},
      {Program::Erf, {ninf}, 0xbf800000},
      {Program::Erf, {0xffc00001}, nan},
      {Program::GeluErf, {0x80000000}, 0x80000000},
      {Program::GeluErf, {ninf}, 0x80000000},
      {Program::GeluErf, {0xc1a00000}, 0x80000000},
      {Program::GeluErf, {0x41a00000}, 0x41a00000},
      {Program::GeluErf, {inf}, inf},
      {Program::GeluErf, {nan}, nan},
      {Program::GeluErfBwd, {0x80000000, 0x3f800000}, 0x3f000000},
      {Program::GeluErfBwd, {inf, 0x40000000}, 0x40000000},
      {Program::GeluErfBwd, {ninf, 0x3f800000}, 0x80000000},
      {Program::GeluErfBwd, {0xc1a00000, 0x3f800000}, 0x80000000},
      {Program::GeluErfBwd, {0x41a00000, 0x40000000}, 0x40000000},
      {Program::GeluErfBwd, {nan, 0x3f800000}, nan},
      // pow: C99 F.9.4.4.
      {Program::Pow, {nan, 0x80000000}, 0x3f800000},
      {Program::Pow, {0x3f800000, nan}, 0x3f800000},
      {Program::Pow, {0xbf800000, inf}, 0x3f800000},
      {Program::Pow, {0xbf800000, nan}, nan},
      {Program::Pow, {0xc0000000, 0x3f000000}, nan},
      {Program::Pow, {0xc0000000, 0x40400000}, 0xc1000000},
      {Program::Pow, {0x80000000, 0x40400000}, 0x80000000},
      {Program::Pow, {0x80000000, 0xc0400000}, ninf},
      {Program::Pow, {0x80000000, 0x3f000000}, 0},
      {Program::Pow, {0, 0xbf000000}, inf},
      {Program::Pow, {ninf, 0xbf800000}, 0x80000000},
      {Program::Pow, {ninf, 0x3f000000}, inf},
      {Program::Pow, {ninf, 0x40000000}, inf},
      {Program::Pow, {0x3f000000, inf}, 0},
      {Program::Pow, {0x40000000, ninf}, 0},
      {Program::Pow, {0x3f000000, ninf}, inf},
      {Program::Pow, {0x40000000, 0x41200000}, 0x44800000},
      {Program::Pow, {0x40400000, 0x40000000}, 0x41100000},
      {Program::Pow, {0x41200000, 0xc0000000}, 0x3c23d70a},
      {Program::Pow, {nan, 0x3f800000}, nan},
      {Program::Pow, {0xc0000000, 0x4b800001}, 0x7f800000},
  };
  for (const Case &c : cases)
    EXPECT_EQ(evaluate(c.program, c.in), c.want)
        << programInfo(c.program).name << "(" << hex(c.in[0])
        << (c.in.size() > 1 ? ", " + hex(c.in[1]) : "") << ")";
}

// The element programs of cast (isa/cast.td): integer inputs are bits, so
// the int32 1 (a denormal pattern) and -1 (a NaN pattern) keep their
// values, on every implementation; a float input still loads canonicalised
// (a denormal is a zero: nonzero of |denormal| is false).
TEST(Microcode, CastProgramsReadIntegersAsBits) {
  struct Case {
    Program program;
    std::vector<uint32_t> in;
    uint32_t want;
  };
  const Case cases[] = {
      {Program::CopyBits, {0x00000001}, 0x00000001},
      {Program::CopyBits, {0xffffffff}, 0xffffffff},
      {Program::CopyBits, {0x7f800001}, 0x7f800001},
      {Program::I2f, {0x00000001}, 0x3f800000},
      {Program::I2f, {0xffffffff}, 0xbf800000},
      {Program::L2f, {0xffffffff, 0xffffffff}, 0xbf800000},
      {Program::L2f, {0x00000001, 0x00000001}, 0x4f800000},
      {Program::SignFill, {0x80000000}, 0xffffffff},
      {Program::SignFill, {0x7fffffff}, 0},
      {Program::Nonzero, {0x00000001}, 0xffffffff},
      {Program::Nonzero, {0}, 0},
      {Program::BitOr, {0, 0x00000001}, 0x00000001},
      {Program::MaskToF, {0xffffffff}, 0x3f800000},
      {Program::MaskToF, {0}, 0},
      {Program::MaskToI, {0xffffffff}, 1},
      {Program::F2iz, {0xbfffffff}, 0xffffffff},
      {Program::F2iz, {0x00000001}, 0},
      {Program::F2lzhi, {0xbf800000}, 0xffffffff},
      {Program::F2lzlo, {0x4f800000}, 0},
      {Program::F2lzhi, {0x4f800000}, 1},
      {Program::Abs, {0x00000001}, 0},
  };
  std::vector<Implementation> impls = hostImplementations();
  impls.push_back(Implementation::Reference);
  for (Implementation impl : impls)
    for (const Case &c : cases)
      EXPECT_EQ(evaluate(c.program, c.in, impl), c.want)
          << programInfo(c.program).name << "(" << hex(c.in[0])
          << (c.in.size() > 1 ? ", " + hex(c.in[1]) : "") << ") on " << implementationName(impl);
  EXPECT_TRUE(programInfo(Program::I2f).rawInputs);
  EXPECT_FALSE(programInfo(Program::F2iz).rawInputs);
}

} // namespace
} // namespace npu::arith
