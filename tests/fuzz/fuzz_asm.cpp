// Fuzzes the assembler on arbitrary text. File access is off (.include and
// .incbin are errors) and the output, memory, line and byte budgets are
// small, so that an input can neither escape nor run for long. Whatever
// assembles must also serialise, and its disassembly must assemble to the
// same text section.
#include "npu/asm/assembler.h"
#include "npu/asm/disassembler.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  npu::as::Options options;
  options.allowFileAccess = false;
  options.maxOutputBytes = 1 << 20;
  options.maxMemoryBytes = 64 << 20;
  options.maxSourceLines = 20000;
  options.maxSourceBytes = 16 << 20;
  options.listing = size % 2 == 0;
  const std::string_view text(reinterpret_cast<const char *>(data), size);
  npu::as::AssembleResult result = npu::as::assembleString(text, "fuzz.npuasm", options);
  for (const npu::as::Diagnostic &d : result.diagnostics)
    (void)npu::as::formatDiagnostic(d);
  if (!result.ok())
    return 0;
  (void)npu::bin::write(result.object);
  npu::as::DumpOptions dump;
  dump.fullContents = true;
  const std::string source = npu::as::formatObject(result.object, dump);
  // A dump has a line per 16 data bytes: more lines than the original.
  options.maxSourceLines = 1 << 24;
  npu::as::AssembleResult again = npu::as::assembleString(source, "dump.npuasm", options);
  if (!again.ok() || again.object.text != result.object.text)
    std::abort();
  return 0;
}
