// libnpu_asm: the .npuasm assembler (docs/assembly.md). The instruction
// syntax comes only from the generated ISA tables; this library knows no
// opcode by name.
#pragma once

#include "npu/bin/object.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace npu::as {

struct Options {
  // Searched, in order, after the including file's directory.
  std::vector<std::string> includeDirs;
  bool warningsAsErrors = false;
  // Fuzzers and sandboxed callers turn off .include and .incbin.
  bool allowFileAccess = true;
  // Fill AssembleResult::listing.
  bool listing = false;
  // Bounds on the work one input may cause, so that `.rept`, macros,
  // `.fill` and `.incbin` cannot exhaust memory or time. Each is checked
  // before the memory is allocated (docs/assembly.md, "Limits").
  // Bytes of packets and data in the output.
  uint64_t maxOutputBytes = uint64_t(1) << 30;
  // Bytes the assembler holds: source files, the output, macro and .rept
  // bodies and expansions, symbols, forward references, the listing.
  uint64_t maxMemoryBytes = uint64_t(3) << 29;
  // Lines and bytes assembled, counting every repetition and macro
  // expansion: bounds on time.
  uint64_t maxSourceLines = 200'000'000;
  uint64_t maxSourceBytes = uint64_t(4) << 30;
  unsigned maxErrors = 50;
};

struct Diagnostic {
  enum class Severity { Error, Warning };
  Severity severity = Severity::Error;
  std::string file;
  uint32_t line = 0;   // 1-based; 0 when the diagnostic has no position
  uint32_t column = 0; // 1-based byte column
  std::string message;
  // The source line, or for a long one an excerpt around the column
  // ("..." marks what was cut); control characters are shown as '?'.
  std::string sourceLine;
  uint32_t sourceColumn = 0; // 1-based column of the caret in sourceLine
  // Context, innermost first: "in expansion of macro 'X' at f:l:c",
  // "included from f:l".
  std::vector<std::string> notes;
};

struct AssembleResult {
  bin::Object object;
  std::vector<Diagnostic> diagnostics;
  std::string listing;
  // The root file could not be read or is not assembly source (binary).
  bool inputUnreadable = false;
  // Files read through .include and .incbin, so that a tool can refuse
  // to overwrite them.
  std::vector<std::string> filesRead;
  size_t errorCount() const;
  bool ok() const { return errorCount() == 0; }
};

AssembleResult assembleFile(const std::string &path, const Options &options = {});
// `name` is the file name used in diagnostics and for resolving relative
// includes (its directory).
AssembleResult assembleString(std::string_view text, std::string_view name,
                              const Options &options = {});

// "file:line:col: error: message", the source line, a caret line under the
// column, then one "note: ..." line per context entry; ends with '\n'.
std::string formatDiagnostic(const Diagnostic &diagnostic);

} // namespace npu::as
