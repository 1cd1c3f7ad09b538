// The assembly language: expressions, symbols, directives, macros and the
// form of diagnostics.
#include "npu/asm/assembler.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace {

using namespace npu;
using namespace npu::as;
using test::assembleOk;
using test::diagnosticsOf;

uint32_t word(const bin::Packet &p, unsigned w) {
  return isa::detail::load32(p.data(), 4 * w);
}
uint64_t quad(const std::vector<uint8_t> &b, size_t at) {
  return isa::detail::load64(b.data(), unsigned(at));
}

TEST(AsmLanguage, IntegerExpressions) {
  bin::Object o = assembleOk(R"(
.equ A, 3
.data 0
  .quad 1 + 2 * 3, (1 + 2) * 3, 7 / 2, -7 / 2, -7 % 3, 1 << 40, -16 >> 2
  .quad 0xff & ~0x0f, 6 | 9, 6 ^ 3, A == 3, A != 3, A < 4 && A > 2, 0 || 0, !0
  .quad -1, 0xffffffffffffffff, 0b1010
)");
  const std::vector<uint64_t> expected = {
      7, 9, 3, uint64_t(-3), uint64_t(-1), 1ull << 40, uint64_t(-4), 0xf0, 15, 5, 1, 0,
      1, 0, 1, ~0ull,        ~0ull,        10};
  ASSERT_EQ(o.data.size(), 1u);
  ASSERT_EQ(o.data[0].bytes.size(), expected.size() * 8);
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(quad(o.data[0].bytes, 8 * i), expected[i]) << i;
}

TEST(AsmLanguage, FloatOperandsAndBits32) {
  bin::Object o = assembleOk(R"(
  add 0, 0, 0, 1, 1, alpha=1.5
  add 0, 0, 0, 1, 1, alpha=-2e-3
  add 0, 0, 0, 1, 1, alpha=3
  add 0, 0, 0, 1, 1, alpha=-inf
  add 0, 0, 0, 1, 1, alpha=nan
  add 0, 0, 0, 1, 1, alpha=f32bits(0x7f800001)
  add 0, 0, 0, 1, 1, alpha=-0.0
  add 0, 0, 0, 1, 1, alpha=0.5 * 3
  fill 0, -1, 1
  fill 0, 1.0, 1
  fill 0, 0xdeadbeef, 1
)");
  const uint32_t expected[] = {0x3fc00000, 0xbb03126f, 0x40400000, 0xff800000,
                               0x7fc00000, 0x7f800001, 0x80000000, 0x3fc00000};
  for (size_t i = 0; i < std::size(expected); ++i)
    EXPECT_EQ(word(o.text[i], 10), expected[i]) << i;
  EXPECT_EQ(word(o.text[8], 9), 0xffffffffu);
  EXPECT_EQ(word(o.text[9], 9), 0x3f800000u);
  EXPECT_EQ(word(o.text[10], 9), 0xdeadbeefu);
}

TEST(AsmLanguage, LabelsAndForwardReferences) {
  bin::Object o = assembleOk(R"(
.equ SIZE, end - start       # forward, resolved at the end
start:
  copy dst, src, SIZE
  nop
end:
.data 0x1000
src: .word SIZE, later
dst: .quad dst
.equ later, 7
)");
  ASSERT_EQ(o.text.size(), 2u);
  EXPECT_EQ(word(o.text[0], 2), 0x1008u); // dst
  EXPECT_EQ(word(o.text[0], 4), 0x1000u); // src
  EXPECT_EQ(word(o.text[0], 8), 2u);      // bytes
  EXPECT_EQ(quad(o.data[0].bytes, 0), 2u | (7ull << 32));
  EXPECT_EQ(quad(o.data[0].bytes, 8), 0x1008u);
  ASSERT_EQ(o.symbols.size(), 4u);
  EXPECT_EQ(o.symbols[0], (bin::Symbol{"start", bin::Symbol::Kind::Packet, 0}));
  EXPECT_EQ(o.symbols[1], (bin::Symbol{"end", bin::Symbol::Kind::Packet, 2}));
  EXPECT_EQ(o.symbols[2], (bin::Symbol{"src", bin::Symbol::Kind::Address, 0x1000}));
}

// `symbol + constant` naming a later symbol is resolved from the symbol and
// the constant at the end; every other shape is parsed again there. Both
// must give the value of the expression and the same diagnostics.
TEST(AsmLanguage, ForwardSymbolPlusConstant) {
  bin::Object o = assembleOk(R"(
  copy dst + 2 * 4, (src) + 1 - 1, end - start + 4
start:
  nop
end:
.data 0x1000
  .quad dst + 3 * 8, 4 + dst - 2, +dst, dst - 0x1010, -dst + 0x2000, dst * 2, (dst << 1) + 1
  .quad wide + 0x20, U + 1, V - 8
dst: .quad 0
src: .quad 0
.equ wide, 0xfffffffffffffff0
.equ U, dst + 12
.equ V, U + U
)");
  ASSERT_EQ(o.text.size(), 2u);
  EXPECT_EQ(word(o.text[0], 2), 0x1058u); // dst + 8
  EXPECT_EQ(word(o.text[0], 4), 0x1058u); // src
  EXPECT_EQ(word(o.text[0], 8), 5u);      // end - start + 4
  const std::vector<uint64_t> expected = {0x1068, 0x1052, 0x1050, 0x40,   0xfb0,
                                          0x20a0, 0x20a1, 0x10,   0x105d, 0x20b0};
  ASSERT_EQ(o.data.size(), 1u);
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(quad(o.data[0].bytes, 8 * i), expected[i]) << i;

  // A later float or undefined symbol: the expression is parsed again and
  // the error points into it.
  const std::string errors = diagnosticsOf(R"(
  copy dst + 4, fl + 1, 4
  copy nowhere + 4, dst + 4, 4
.equ fl, 2.5
.data 0x1000
dst: .word 0
)");
  EXPECT_NE(errors.find("test.npuasm:2:17: error: operand 'src' of 'copy' must be an integer, "
                        "not a float"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("test.npuasm:3:8: error: undefined symbol 'nowhere'"), std::string::npos)
      << errors;
}

TEST(AsmLanguage, SetIsCapturedAtTheUse) {
  bin::Object o = assembleOk(R"(
.set X, 1
.data 0
  .word X + later
.set X, 2
  .word X + later
.equ later, 100
)");
  EXPECT_EQ(quad(o.data[0].bytes, 0), 101u | (102ull << 32));
}

TEST(AsmLanguage, MacrosReptAndConditionals) {
  bin::Object o = assembleOk(R"(
.macro zero dst, n=4
  fill \dst, 0, \n
.endm
.macro twice what
  \what
  \what
.endm
  zero 0x100
  zero n=8, dst=0x200
  twice nop
.rept 3
  halt
.endr
.equ MODE, 2
.if MODE == 1
  fence
.elif MODE == 2
  nop
.else
  fence
.endif
.ifdef MODE
  halt
.endif
.ifndef MODE
  fence
.endif
)");
  ASSERT_EQ(o.text.size(), 9u);
  EXPECT_EQ(word(o.text[0], 2), 0x100u);
  EXPECT_EQ(word(o.text[0], 8), 4u);
  EXPECT_EQ(word(o.text[1], 2), 0x200u);
  EXPECT_EQ(word(o.text[1], 8), 8u);
  EXPECT_EQ(word(o.text[2], 0), 0u); // nop
  EXPECT_EQ(word(o.text[4], 0), 2u); // halt
  EXPECT_EQ(word(o.text[7], 0), 0u); // the .elif branch
  EXPECT_EQ(word(o.text[8], 0), 2u);
}

TEST(AsmLanguage, DataDirectives) {
  bin::Object o = assembleOk(R"(
.data 0x100
  .byte 1, -1
  .half 0x1234
  .align 8
  .fill 3, 2, 0xabcd
  .ascii "hi\n"
  .asciz "x"
.check 0x100
  .byte 1
.check 0x200, ulp=4
  .float 1.0
.meta author, "me"
)");
  ASSERT_EQ(o.data.size(), 1u);
  const std::vector<uint8_t> expected = {1,    0xff, 0x34, 0x12, 0,   0,   0,    0,   0xcd, 0xab,
                                         0xcd, 0xab, 0xcd, 0xab, 'h', 'i', '\n', 'x', 0};
  EXPECT_EQ(o.data[0].bytes, expected);
  ASSERT_EQ(o.checks.size(), 2u);
  EXPECT_EQ(o.checks[0].kind, bin::CheckRegion::Kind::Exact);
  EXPECT_EQ(o.checks[1].kind, bin::CheckRegion::Kind::F32Ulp);
  EXPECT_EQ(o.checks[1].ulpTolerance, 4u);
  ASSERT_EQ(o.metadata.size(), 1u);
  EXPECT_EQ(o.metadata[0].second, "me");
}

TEST(AsmLanguage, IncludeAndIncbin) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "npu_asm_include_test";
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "sub" / "defs.inc") << ".equ FROM_INCLUDE, 42\n";
  std::ofstream(dir / "blob.bin") << "ABC";
  std::ofstream(dir / "main.npuasm") << ".include \"defs.inc\"\n.data 0\n.word FROM_INCLUDE\n"
                                        ".incbin \"blob.bin\"\n";
  Options options;
  options.includeDirs = {(dir / "sub").string()};
  AssembleResult r = assembleFile((dir / "main.npuasm").string(), options);
  ASSERT_TRUE(r.ok()) << formatDiagnostic(r.diagnostics.at(0));
  EXPECT_EQ(r.object.data[0].bytes, (std::vector<uint8_t>{42, 0, 0, 0, 'A', 'B', 'C'}));
  options.allowFileAccess = false;
  EXPECT_FALSE(assembleFile((dir / "main.npuasm").string(), options).ok());
  fs::remove_all(dir);
}

TEST(AsmLanguage, DiagnosticFormat) {
  EXPECT_EQ(diagnosticsOf("  nop\n  copy 0, 0, 0\n"),
            "test.npuasm:2:14: error: operand 'bytes' of 'copy' must be in [1, 4294967295], got 0\n"
            "  copy 0, 0, 0\n"
            "             ^\n");
  EXPECT_EQ(diagnosticsOf(".macro m x\n  matmul \\x, 0, 0, 1, 1, 1, 0, 0, 0\n.endm\n  m 3\n"),
            "test.npuasm:2:10: error: address operand 'c' of 'matmul' must be aligned to 4 bytes, "
            "got 0x3\n"
            "  matmul 3, 0, 0, 1, 1, 1, 0, 0, 0\n"
            "         ^\n"
            "note: in expansion of macro 'm' at test.npuasm:4:3\n");
}

TEST(AsmLanguage, SeveralErrorsAndTheCap) {
  std::string source;
  for (int i = 0; i < 100; ++i)
    source += "bogus\n";
  AssembleResult r = assembleString(source, "x.npuasm");
  EXPECT_EQ(r.errorCount(), 51u); // 50 and the one that says it stops
  EXPECT_EQ(r.diagnostics.back().message, "too many errors (50), stopping");
}

TEST(AsmLanguage, WarningsAndWerror) {
  AssembleResult r = assembleString(".data 1\n.float 1.0\n", "w.npuasm");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.diagnostics[0].message, ".float data at 0x1 is not 4-byte aligned");
  Options werror;
  werror.warningsAsErrors = true;
  EXPECT_FALSE(assembleString(".data 1\n.float 1.0\n", "w.npuasm", werror).ok());
}

TEST(AsmLanguage, RunawayInputIsBounded) {
  Options small;
  small.maxOutputBytes = 1 << 16;
  small.maxSourceLines = 10000;
  EXPECT_FALSE(assembleString(".data 0\n.fill 100000000, 8, 0\n", "f", small).ok());
  EXPECT_FALSE(
      assembleString(".rept 1000000\n.rept 1000000\nnop\n.endr\n.endr\n", "r", small).ok());
  EXPECT_FALSE(assembleString(".macro m\nm\n.endm\nm\n", "m", small).ok());
}

TEST(AsmLanguage, Listing) {
  Options options;
  options.listing = true;
  AssembleResult r = assembleString("start:\n  halt\n.data 0x40\n  .word 1\n", "l", options);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r.listing.find("[       0]"), std::string::npos) << r.listing;
  EXPECT_NE(r.listing.find(" 00000002 00000000"), std::string::npos) << r.listing;
  EXPECT_NE(r.listing.find("0x0000000000000040  01000000  "), std::string::npos) << r.listing;
}

} // namespace
