// Shared pieces of the command-line tools: option parsing with
// Boost.Program_options, --help/--version, and the documented exit codes.
#pragma once

#include <boost/program_options.hpp>

#include <optional>
#include <string>

namespace npu::cli {

// Exit codes shared by every tool (see docs/tools.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,  // the input was processed and found wrong (mismatch, fault)
  kExitUsage = 2,    // bad command line
  kExitInput = 3,    // an input file could not be read or is malformed
  kExitOutput = 4,  // an output file could not be written
};

namespace po = boost::program_options;

struct Tool {
  const char *name;
  const char *usage;   // e.g. "[options] file.npuasm"
  const char *summary; // one line
};

// Parses argv. Returns the exit code to stop with (help, version or a usage
// error, already reported), or nullopt to go on.
std::optional<int> parse(const Tool &tool, int argc, char **argv, po::options_description &options,
                         const po::positional_options_description &positional, po::variables_map &vm);

// Flushes and closes standard output. Returns `code`, or kExitOutput after
// reporting why when what was printed could not be written (a full disk,
// a closed descriptor): a tool never exits 0 having lost its output.
int closeStdout(const Tool &tool, int code);

} // namespace npu::cli
