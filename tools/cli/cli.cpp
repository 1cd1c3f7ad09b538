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
  std::cout.flush();
  // A write that failed while the tool printed (its output larger than
  // stdio's buffer) left its reason in errno; stdio dropped that buffer, so
  // the flush below may find nothing left to fail on.
  const bool failedEarlier = std::ferror(stdout) != 0;
  const int earlierReason = errno;
  errno = 0;
  bool failed = failedEarlier;
  failed |= std::fflush(stdout) != 0;
  failed |= std::fclose(stdout) != 0;
  if (!failed)
    return code;
  const int reason = errno ? errno : (failedEarlier ? earlierReason : 0);
  std::fprintf(stderr, "%s: error: cannot write the standard output: %s\n", tool.name,
               reason ? std::strerror(reason) : "write error");
  return kExitOutput;
}

} // namespace npu::cli
