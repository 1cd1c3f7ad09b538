// npu-objdump: shows an .npubin container as .npuasm source that npu-as
// assembles back into the same text section (with --source: the same file).
#include "cli.h"
#include "npu/asm/disassembler.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

int main(int argc, char **argv) {
  namespace po = npu::cli::po;
  po::options_description options("Options");
  options.add_options()("input", po::value<std::string>()->required(), "container (.npubin)")(
      "source,d", "print the data, check regions and metadata in full, as directives, and "
                  "no raw words: the output re-assembles into an identical container")(
      "raw", "add each packet's index and raw words as a comment (default unless --source)")(
      "no-raw", "leave out the raw words")("no-header", "leave out the summary comment block");
  po::positional_options_description positional;
  positional.add("input", 1);
  po::variables_map vm;
  const npu::cli::Tool tool{
      "npu-objdump", "[options] file.npubin",
      "Disassemble an .npubin container into .npuasm source (docs/tools.md).\n"
      "Exit code 3 means the container is unreadable or malformed."};
  if (auto exit = npu::cli::parse(tool, argc, argv, options, positional, vm))
    return *exit;
  if (vm.count("raw") && vm.count("no-raw")) {
    std::fprintf(stderr, "npu-objdump: error: --raw and --no-raw exclude each other\n");
    return npu::cli::kExitUsage;
  }
  npu::as::DumpOptions dump;
  dump.fullContents = vm.count("source") > 0;
  dump.rawWords = vm.count("raw") || (!dump.fullContents && !vm.count("no-raw"));
  dump.header = !vm.count("no-header");
  npu::bin::Object object;
  try {
    object = npu::bin::readFile(vm["input"].as<std::string>());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "npu-objdump: error: %s\n", e.what());
    return npu::cli::kExitInput;
  }
  try {
    npu::as::printObject(object, dump, [](std::string_view text) {
      if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size())
        throw std::runtime_error(std::string("cannot write the standard output: ") +
                                 std::strerror(errno));
    });
  } catch (const std::exception &e) {
    std::fprintf(stderr, "npu-objdump: error: %s\n", e.what());
    return npu::cli::kExitOutput;
  }
  return npu::cli::closeStdout(tool, npu::cli::kExitOk);
}
