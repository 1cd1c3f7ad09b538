// npu-as: assembles .npuasm source into an .npubin container.
#include "cli.h"
#include "npu/asm/assembler.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  namespace po = npu::cli::po;
  po::options_description options("Options");
  options.add_options()("input", po::value<std::string>()->required(), "source file (.npuasm)")(
      "output,o", po::value<std::string>(), "output container (default: input with .npubin)")(
      "include,I", po::value<std::vector<std::string>>()->composing(),
      "add a directory to the .include/.incbin search path")("listing,l", po::value<std::string>(),
                                                             "write a listing to this file")(
      "Werror", "treat warnings as errors (also spelled -Werror)");
  po::positional_options_description positional;
  positional.add("input", 1);
  po::variables_map vm;
  const npu::cli::Tool tool{"npu-as", "[options] file.npuasm [-o file.npubin]",
                            "Assemble NPU assembly into an .npubin container (docs/assembly.md).\n"
                            "Exit code 1 means the source has errors; nothing is written then."};
  // GCC spells it -Werror; Program_options wants two dashes for long names.
  std::vector<std::string> args(argv, argv + argc);
  std::vector<char *> argvFixed;
  for (std::string &arg : args) {
    if (arg == "-Werror")
      arg = "--Werror";
    argvFixed.push_back(arg.data());
  }
  if (auto exit = npu::cli::parse(tool, argc, argvFixed.data(), options, positional, vm))
    return *exit;

  const std::string input = vm["input"].as<std::string>();
  std::string output = vm.count("output") ? vm["output"].as<std::string>() : std::string();
  if (output.empty()) {
    const size_t dot = input.find_last_of('.');
    const size_t slash = input.find_last_of('/');
    output = (dot != std::string::npos && (slash == std::string::npos || dot > slash)
                  ? input.substr(0, dot)
                  : input) +
             ".npubin";
  }
  npu::as::Options asOptions;
  if (vm.count("include"))
    asOptions.includeDirs = vm["include"].as<std::vector<std::string>>();
  asOptions.warningsAsErrors = vm.count("Werror") > 0;
  asOptions.listing = vm.count("listing") > 0;

  npu::as::AssembleResult result = npu::as::assembleFile(input, asOptions);
  for (const npu::as::Diagnostic &d : result.diagnostics)
    std::fputs(npu::as::formatDiagnostic(d).c_str(), stderr);
  if (const size_t errors = result.errorCount()) {
    std::fprintf(stderr, "npu-as: %zu error%s; no output written\n", errors, errors > 1 ? "s" : "");
    // An input that cannot be opened at all is an I/O failure.
    return result.diagnostics.size() == 1 && result.diagnostics[0].line == 0
               ? npu::cli::kExitInput
               : npu::cli::kExitFailure;
  }
  try {
    if (asOptions.listing) {
      std::ofstream listing(vm["listing"].as<std::string>());
      listing << result.listing;
      if (!listing.flush())
        throw std::runtime_error(vm["listing"].as<std::string>() + ": write error");
    }
    npu::bin::writeFile(output, result.object);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "npu-as: error: %s\n", e.what());
    return npu::cli::kExitFailure;
  }
  return npu::cli::kExitOk;
}
