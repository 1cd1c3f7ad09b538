// Helpers shared by the assembler tests.
#pragma once

#include "npu/asm/assembler.h"

#include <gtest/gtest.h>

#include <string>

namespace npu::as::test {

// Assembles `source` and fails the test with every diagnostic if any.
inline bin::Object assembleOk(const std::string &source, const Options &options = {}) {
  AssembleResult r = assembleString(source, "test.npuasm", options);
  std::string diagnostics;
  for (const Diagnostic &d : r.diagnostics)
    diagnostics += formatDiagnostic(d);
  EXPECT_TRUE(r.ok()) << diagnostics << "in:\n" << source.substr(0, 2000);
  return std::move(r.object);
}

// The diagnostics of assembling `source`, formatted.
inline std::string diagnosticsOf(const std::string &source, const Options &options = {}) {
  std::string out;
  for (const Diagnostic &d : assembleString(source, "test.npuasm", options).diagnostics)
    out += formatDiagnostic(d);
  return out;
}

} // namespace npu::as::test
