// npu-as: assembles .npuasm source into an .npubin container.
#include "cli.h"
#include "npu/asm/assembler.h"
#include "npu/asm/grammar.h"
#include "npu/support/file_io.h"

#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  namespace po = npu::cli::po;
  po::options_description options("Options");
  options.add_options()("input", po::value<std::string>(), "source file (.npuasm)")(
      "output,o", po::value<std::string>(), "output container (default: input with .npubin)")(
      "include,I", po::value<std::vector<std::string>>()->composing(),
      "add a directory to the .include/.incbin search path")("listing,l", po::value<std::string>(),
                                                             "write a listing to this file")(
      "Werror", "treat warnings as errors (also spelled -Werror)")(
      "grammar", po::value<std::string>(),
      "print the editor grammar of the language and exit: vim (syntax file), textmate (VS Code) "
      "or pygments (lexer module); docs/assembly.md, \"Editor support\"");
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

  if (vm.count("grammar")) {
    const std::string name = vm["grammar"].as<std::string>();
    const std::optional<npu::as::GrammarFormat> format = npu::as::parseGrammarFormat(name);
    if (!format) {
      std::fprintf(stderr, "npu-as: error: unknown grammar '%s' (use vim, textmate or pygments)\n",
                   name.c_str());
      return npu::cli::kExitUsage;
    }
    if (!vm.count("output")) {
      std::cout << npu::as::editorGrammar(*format);
      return npu::cli::closeStdout(tool, npu::cli::kExitOk);
    }
    try {
      npu::io::OutputFile file(vm["output"].as<std::string>());
      file.write(npu::as::editorGrammar(*format));
      file.commit();
    } catch (const std::exception &e) {
      std::fprintf(stderr, "npu-as: error: %s\n", e.what());
      return npu::cli::kExitOutput;
    }
    return npu::cli::kExitOk;
  }
  if (!vm.count("input")) {
    std::fprintf(stderr, "npu-as: error: the option '--input' is required but missing\n");
    return npu::cli::kExitUsage;
  }
  const std::string input = vm["input"].as<std::string>();
  std::string output = vm.count("output") ? vm["output"].as<std::string>() : std::string();
  if (!vm.count("output")) {
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
    return result.inputUnreadable ? npu::cli::kExitInput : npu::cli::kExitFailure;
  }
  std::vector<npu::io::NamedPath> outputs{
      {output, vm.count("output") ? "the output (-o)" : "the output (the input with .npubin)"}};
  if (asOptions.listing)
    outputs.push_back({vm["listing"].as<std::string>(), "the listing (-l)"});
  std::vector<npu::io::NamedPath> inputs{{input, "the input"}};
  for (const std::string &path : result.filesRead)
    inputs.push_back({path, "a file the source includes"});
  try {
    npu::io::checkOutputs(outputs, inputs);
  } catch (const npu::io::FileError &e) {
    std::fprintf(stderr, "npu-as: error: %s\n", e.what());
    return npu::cli::kExitUsage;
  }
  try {
    // Both files or neither: the listing is moved into place only after
    // the container was.
    std::optional<npu::io::OutputFile> listing;
    if (asOptions.listing) {
      listing.emplace(vm["listing"].as<std::string>());
      listing->write(result.listing);
    }
    npu::bin::writeFile(output, result.object);
    if (listing)
      listing->commit();
  } catch (const std::exception &e) {
    std::fprintf(stderr, "npu-as: error: %s\n", e.what());
    return npu::cli::kExitOutput;
  }
  return npu::cli::kExitOk;
}
