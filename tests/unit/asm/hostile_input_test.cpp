// Inputs written to hurt the assembler: nesting that would overflow the
// stack, inputs that would exhaust memory or time, binary files, control
// characters, long lines, odd line endings. Each must end in a located
// error (or assemble), never in a crash, a hang or std::bad_alloc.
#include "npu/asm/assembler.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace {

using namespace npu;
using namespace npu::as;
using test::assembleOk;

// The only error of `r`, formatted; fails the test if there are more.
std::string onlyError(const AssembleResult &r) {
  std::string all;
  for (const Diagnostic &d : r.diagnostics)
    all += formatDiagnostic(d);
  EXPECT_EQ(r.errorCount(), 1u) << all.substr(0, 4000);
  for (const Diagnostic &d : r.diagnostics)
    if (d.severity == Diagnostic::Severity::Error)
      return formatDiagnostic(d);
  return "";
}

std::string repeat(std::string_view s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i)
    out += s;
  return out;
}

TEST(AsmHostile, DeepParenthesesAndUnaryChainsAreBounded) {
  for (const std::string &expression :
       {repeat("(", 100000) + "1" + repeat(")", 100000), repeat("-", 100000) + "1",
        repeat("~(", 50000) + "1" + repeat(")", 50000),
        repeat("f32bits(", 50000) + "1" + repeat(")", 50000)}) {
    const AssembleResult r = assembleString(".equ X, " + expression + "\n", "deep.npuasm");
    const std::string error = onlyError(r);
    EXPECT_NE(error.find("deep.npuasm:1:"), std::string::npos) << error;
    EXPECT_NE(error.find("expression nested more than 256 deep"), std::string::npos) << error;
  }
  // At the limit it still assembles.
  const bin::Object o =
      assembleOk(".data 0\n.byte " + repeat("(", 255) + "7" + repeat(")", 255) + "\n");
  EXPECT_EQ(o.data.at(0).bytes, std::vector<uint8_t>{7});
}

TEST(AsmHostile, LongForwardEquChainsResolveWithoutRecursion) {
  constexpr int kLength = 200000;
  std::string source = ".data 0\n.quad a0\n";
  for (int i = 0; i < kLength; ++i)
    source += ".equ a" + std::to_string(i) + ", (a" + std::to_string(i + 1) + ") + 1\n";
  source += ".equ a" + std::to_string(kLength) + ", 5\n";
  const bin::Object o = assembleOk(source);
  EXPECT_EQ(isa::detail::load64(o.data.at(0).bytes.data(), 0), uint64_t(kLength + 5));
  // Closing the chain into a cycle is one error, where the cycle is seen.
  source.replace(source.rfind(", 5"), 3, ", a0");
  const std::string error = onlyError(assembleString(source, "cycle.npuasm"));
  EXPECT_NE(error.find("circular definition of symbol"), std::string::npos) << error;
}

TEST(AsmHostile, ForwardReferencesShareDependencies) {
  // Every symbol needs the same later ones: each is resolved once.
  std::string source = ".data 0\n";
  for (int i = 0; i < 2000; ++i)
    source += ".quad s" + std::to_string(i) + "\n.equ s" + std::to_string(i) + ", t + u + " +
              std::to_string(i) + "\n";
  source += ".equ t, u * 2\n.equ u, 3\n";
  const bin::Object o = assembleOk(source);
  EXPECT_EQ(isa::detail::load64(o.data.at(0).bytes.data(), 8 * 1999), uint64_t(9 + 1999));
}

TEST(AsmHostile, ReptBombStopsAtTheOutputLimitBeforeAllocating) {
  Options options;
  options.maxOutputBytes = 1 << 20;
  const auto start = std::chrono::steady_clock::now();
  const std::string error =
      onlyError(assembleString(".rept 1000000000\n  nop\n.endr\n", "rept.npuasm", options));
  EXPECT_NE(error.find("rept.npuasm:2:1: error: output exceeds the limit of 1 MiB"),
            std::string::npos)
      << error;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_NE(onlyError(assembleString(".data 0\n.fill 1 << 62, 8, 0\n", "fill.npuasm", options))
                .find("fill.npuasm:2:7: error: output exceeds the limit of 1 MiB"),
            std::string::npos);
}

// Each level passes its argument on four times: the expansion text grows
// 4x per level. The size is known before the text is built, and the memory
// limit stops it there.
TEST(AsmHostile, MacroArgumentBombStopsAtTheMemoryLimit) {
  std::string source = ".macro m0 x\n.ascii \"\\x\"\n.endm\n";
  for (int level = 1; level <= 20; ++level)
    source += ".macro m" + std::to_string(level) + " x\nm" + std::to_string(level - 1) +
              " \\x\\x\\x\\x\n.endm\n";
  source += ".data 0\nm20 abcdefgh\n";
  Options options;
  options.maxMemoryBytes = 16 << 20;
  const std::string error = onlyError(assembleString(source, "bomb.npuasm", options));
  EXPECT_NE(error.find("error: assembly needs more than the memory limit of 16 MiB"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("note: in expansion of macro 'm"), std::string::npos) << error;
}

// 2^60 expansions of a tiny macro: lines, not memory, are the limit; the
// expansions that are done are freed.
TEST(AsmHostile, ExponentialMacroCallsStopAtTheLineLimit) {
  std::string source = ".macro e0\n.endm\n";
  for (int level = 1; level <= 60; ++level)
    source += ".macro e" + std::to_string(level) + "\ne" + std::to_string(level - 1) + "\ne" +
              std::to_string(level - 1) + "\n.endm\n";
  source += "e60\n";
  Options options;
  options.maxSourceLines = 2'000'000;
  options.maxMemoryBytes = 8 << 20;
  const std::string error = onlyError(assembleString(source, "exp.npuasm", options));
  EXPECT_NE(error.find("more than 2000000 source lines processed"), std::string::npos) << error;
}

TEST(AsmHostile, SourceBytesProcessedAreBounded) {
  Options options;
  options.maxSourceBytes = 1 << 20;
  const std::string error = onlyError(assembleString(
      ".rept 100000\n# " + std::string(100, 'x') + "\n.endr\n", "bytes.npuasm", options));
  EXPECT_NE(error.find("more than 1 MiB of source processed"), std::string::npos) << error;
}

TEST(AsmHostile, ForwardReferencesAndWarningsCountAgainstTheMemoryLimit) {
  Options options;
  options.maxMemoryBytes = 4 << 20;
  EXPECT_NE(onlyError(assembleString(".data 0\n.rept 10000000\n.byte later\n.endr\nlater:\n",
                                     "fwd.npuasm", options))
                .find("fwd.npuasm:3:1: error: assembly needs more than the memory limit of 4 MiB"),
            std::string::npos);
  EXPECT_NE(onlyError(assembleString(".data 0\n.rept 10000000\n.byte 1000\n.endr\n", "warn.npuasm",
                                     options))
                .find("warn.npuasm:3:1: error: assembly needs more than the memory limit"),
            std::string::npos);
}

TEST(AsmHostile, IncbinAndIncludeOfDevicesAndDirectories) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "npu_asm_hostile_incbin";
  fs::create_directories(dir / "sub");
  Options options;
  options.maxOutputBytes = 1 << 20;
  const std::string root = (dir / "main.npuasm").string();
  EXPECT_NE(onlyError(assembleString(".data 0\n.incbin \"/dev/zero\"\n", root, options))
                .find("main.npuasm:2:9: error: /dev/zero: exceeds what is left under the "
                      "assembler's output and memory limits (1 MiB); does this stream ever end?"),
            std::string::npos);
  EXPECT_NE(onlyError(assembleString(".data 0\n.incbin \"sub\"\n", root))
                .find("main.npuasm:2:9: error: '" + (dir / "sub").string() +
                      "' is a directory, not a file"),
            std::string::npos);
  EXPECT_NE(onlyError(assembleString(".include \"sub\"\n", root)).find("is a directory"),
            std::string::npos);
  {
    std::ofstream big(dir / "big.bin");
    big.seekp((2 << 20) - 1);
    big.put('x');
  }
  EXPECT_NE(onlyError(assembleString(".data 0\n.incbin \"big.bin\"\n", root, options))
                .find("big.bin: 2097152 bytes exceed what is left"),
            std::string::npos);
  // An included binary file is not read as source.
  std::ofstream(dir / "blob.inc", std::ios::binary) << std::string("nop\n\0\1\2", 7);
  EXPECT_NE(onlyError(assembleString(".include \"blob.inc\"\n", root))
                .find("is a binary file, not assembly source (it has a NUL byte)"),
            std::string::npos);
  const AssembleResult r = assembleString(".data 0\n.incbin \"big.bin\"\n", root);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.filesRead, std::vector<std::string>{(dir / "big.bin").string()});
  fs::remove_all(dir);
}

TEST(AsmHostile, LineEndingsLfCrLfAndCrAssembleIdentically) {
  const std::string lf = "start:\n  nop\n.data 0x40 # data\n  .word 1, 2\n  .ascii \"a;b\"\n"
                         ".rept 2\n  .byte 3\n.endr\n";
  std::string crlf, cr;
  for (char c : lf) {
    crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    cr += c == '\n' ? '\r' : c;
  }
  const bin::Object expected = assembleOk(lf);
  ASSERT_EQ(expected.data.at(0).bytes.size(), 13u);
  EXPECT_EQ(bin::write(assembleOk(crlf)), bin::write(expected));
  EXPECT_EQ(bin::write(assembleOk(cr)), bin::write(expected));
  // Lines are counted the same way in diagnostics.
  for (const std::string ending : {"\n", "\r\n", "\r"}) {
    const std::string error =
        onlyError(assembleString("nop" + ending + "nop" + ending + "bogus", "endings.npuasm"));
    EXPECT_EQ(error.rfind("endings.npuasm:3:1: error: unknown instruction 'bogus'\nbogus\n^\n", 0),
              0u)
        << error;
  }
}

TEST(AsmHostile, BinaryInputIsNotReadAsSource) {
  const std::string nul = onlyError(assembleString(std::string("nop\n  no\0p\n", 11), "nul.bin"));
  EXPECT_EQ(nul, "nul.bin:2:5: error: a binary file, not assembly source (it has a NUL byte)\n"
                 "  no?p\n"
                 "    ^\n");
  bin::Object object;
  object.text.resize(1);
  const std::vector<uint8_t> container = bin::write(object);
  const AssembleResult r = assembleString(
      std::string_view(reinterpret_cast<const char *>(container.data()), container.size()),
      "k.npubin");
  EXPECT_TRUE(r.inputUnreadable);
  EXPECT_EQ(onlyError(r), "k.npubin: error: an .npubin container, not assembly source "
                          "(npu-objdump disassembles it)\n");
}

TEST(AsmHostile, ControlCharactersAreLocatedAndNotEchoed) {
  EXPECT_EQ(onlyError(assembleString("  nop\x1b[2J\n", "esc.npuasm")),
            "esc.npuasm:1:6: error: control character in the source (only spaces and tabs "
            "separate tokens)\n"
            "  nop?[2J\n"
            "     ^\n");
}

TEST(AsmHostile, LongLinesShowAnExcerptAroundTheColumn) {
  const std::string line = ".data 0\n.byte " + repeat("1, ", 200000) + "bogus\n";
  const AssembleResult r = assembleString(line, "long.npuasm");
  const std::string error = onlyError(r);
  const Diagnostic &d = r.diagnostics.at(0);
  EXPECT_EQ(d.column, 6u + 600000u + 1u);
  EXPECT_LT(d.sourceLine.size(), 300u);
  EXPECT_EQ(d.sourceLine.substr(0, 3), "...");
  EXPECT_EQ(d.sourceLine.substr(d.sourceColumn - 1, 5), "bogus");
  // The caret is under the excerpt's column.
  const size_t caretLine = error.find('\n', error.find('\n') + 1) + 1;
  EXPECT_EQ(error.substr(caretLine), std::string(d.sourceColumn - 1, ' ') + "^\n");
}

TEST(AsmHostile, HugeNamesAndLiteralsAreErrors) {
  const std::string name(5000, 'l');
  EXPECT_NE(onlyError(assembleString(name + ":\n", "label.npuasm"))
                .find("label.npuasm:1:1: error: label of 5000 characters is longer than the "
                      "limit of 4096"),
            std::string::npos);
  const std::string unknown = onlyError(assembleString(name + "\n", "mnemonic.npuasm"));
  EXPECT_NE(unknown.find("unknown instruction '" + std::string(256, 'l') +
                         "...' (5000 "
                         "characters)"),
            std::string::npos)
      << unknown.substr(0, 400);
  EXPECT_LT(unknown.size(), 1000u);
  EXPECT_NE(onlyError(assembleString(".data 0\n.quad 18446744073709551616\n", "big.npuasm"))
                .find("big.npuasm:2:7: error: integer literal does not fit in 64 bits"),
            std::string::npos);
  EXPECT_NE(onlyError(assembleString(".data 0\n.float 1e99999999999999999999\n", "f.npuasm"))
                .find("f.npuasm:2:8: error: float literal out of the f32 range"),
            std::string::npos);
}

// Lookups that grow with the input are hashed or sorted, not scanned: each
// of these took minutes with a linear scan per use.
TEST(AsmHostile, ManyNamesStayFast) {
  constexpr int kCount = 30000;
  const auto start = std::chrono::steady_clock::now();
  std::string params, body, args, sets, sum, meta;
  for (int i = 0; i < kCount; ++i) {
    const std::string n = std::to_string(i);
    params += (i ? ", p" : "p") + n;
    body += "\\p" + n;
    args += i ? ", 1" : "1";
    sets += ".set s" + n + ", " + n + "\n";
    sum += " + s" + n;
    meta += ".meta k" + n + ", \"v\"\n";
  }
  assembleOk(".macro m " + params + "\n# " + body + "\n.endm\nm " + args + "\n");
  const bin::Object o = assembleOk(sets + ".data 0\n.quad later" + sum + "\nlater:\n" + meta);
  EXPECT_EQ(isa::detail::load64(o.data.at(0).bytes.data(), 0),
            uint64_t(8) + uint64_t(kCount) * (kCount - 1) / 2);
  EXPECT_EQ(o.metadata.size(), size_t(kCount));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST(AsmHostile, ReptNestingIsBounded) {
  const std::string source = repeat(".rept 1\n", 100) + "nop\n" + repeat(".endr\n", 100);
  EXPECT_NE(onlyError(assembleString(source, "nest.npuasm")).find(".rept nested more than 64 deep"),
            std::string::npos);
}

} // namespace
