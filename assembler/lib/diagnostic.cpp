#include "npu/asm/assembler.h"

#include <algorithm>

namespace npu::as {

size_t AssembleResult::errorCount() const {
  return static_cast<size_t>(
      std::count_if(diagnostics.begin(), diagnostics.end(),
                    [](const Diagnostic &d) { return d.severity == Diagnostic::Severity::Error; }));
}

std::string formatDiagnostic(const Diagnostic &d) {
  std::string out = d.file;
  if (d.line) {
    out += ':' + std::to_string(d.line);
    if (d.column)
      out += ':' + std::to_string(d.column);
  }
  out += d.severity == Diagnostic::Severity::Error ? ": error: " : ": warning: ";
  out += d.message;
  out += '\n';
  if (d.line && d.column) {
    out += d.sourceLine;
    out += '\n';
    // Tabs are kept so that the caret lines up under the same column.
    const size_t caret = d.sourceColumn ? d.sourceColumn : d.column;
    for (size_t i = 0; i + 1 < caret && i < d.sourceLine.size(); ++i)
      out += d.sourceLine[i] == '\t' ? '\t' : ' ';
    out += "^\n";
  }
  for (const std::string &note : d.notes)
    out += "note: " + note + '\n';
  return out;
}

} // namespace npu::as
