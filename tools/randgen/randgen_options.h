// The generator's command-line options, shared by npu-randgen and
// npu-regress-worker so that a reproducer line means the same to both.
#pragma once

#include "cli.h"
#include "npu/verify/generator.h"

namespace npu::cli {

void addGeneratorOptions(po::options_description &options);
// Throws po::error for a bad value (unknown fault class or mnemonic, a
// percentage above 100, an empty stream).
verify::GeneratorOptions generatorOptionsFrom(const po::variables_map &vm);

} // namespace npu::cli
