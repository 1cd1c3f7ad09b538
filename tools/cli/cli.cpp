#include "cli.h"

#include "npu/isa/isa.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace npu::cli {

std::optional<int> parse(const Tool &tool, int argc, char **argv, po::options_description &options,
                         const po::positional_options_description &positional, po::variables_map &vm) {
  options.add_options()("help,h", "print this help and exit")("version", "print the version and exit");
  try {
    po::store(po::command_line_parser(argc, argv).options(options).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << "Usage: " << tool.name << " " << tool.usage << "\n" << tool.summary << "\n\n"
                << options << "\nExit codes: 0 success, 1 failure (mismatch or device fault), "
                << "2 usage error, 3 unreadable or malformed input, 4 output not written.\n";
      return kExitOk;
    }
    if (vm.count("version")) {
      std::printf("%s %s (ISA v%u.%u, hash %016llx)\n", tool.name, NPU_VERSION,
                  isa::kIsaVersionMajor, isa::kIsaVersionMinor,
                  static_cast<unsigned long long>(isa::kIsaHash));
      return kExitOk;
    }
    po::notify(vm);
  } catch (const po::error &e) {
    std::cerr << tool.name << ": error: " << e.what() << "\nTry '" << tool.name << " --help'.\n";
    return kExitUsage;
  }
  return std::nullopt;
}

int closeStdout(const Tool &tool, int code) {
  errno = 0;
  std::cout.flush();
  bool failed = std::ferror(stdout) != 0;
  failed |= std::fflush(stdout) != 0;
  failed |= std::fclose(stdout) != 0;
  if (!failed)
    return code;
  std::fprintf(stderr, "%s: error: cannot write the standard output: %s\n", tool.name,
               errno ? std::strerror(errno) : "write error");
  return kExitOutput;
}

} // namespace npu::cli
