// npu-randgen: constrained-random NPU command streams for co-verification.
// The same options and seed always give the same stream.
#include "cli.h"
#include "npu/asm/disassembler.h"
#include "npu/bin/object.h"
#include "npu/verify/generator.h"
#include "randgen_options.h"

#include <filesystem>
#include <fstream>
#include <iostream>

namespace {

using namespace npu;
namespace po = cli::po;

struct OutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void writeText(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush())
    throw OutputError(path + ": cannot write");
}

void writeStream(const verify::Stream &stream, const std::string &binPath,
                 const std::string &asmPath) {
  if (!binPath.empty()) {
    try {
      bin::writeFile(binPath, stream.object);
    } catch (const std::exception &e) {
      throw OutputError(e.what());
    }
  }
  if (!asmPath.empty()) {
    as::DumpOptions dump;
    dump.fullContents = true;
    dump.rawWords = false;
    std::string text = as::formatObject(stream.object, dump);
    // The intent of faulting packets, as comments after the listing.
    std::string intents;
    for (size_t i = 0; i < stream.intents.size(); ++i)
      if (stream.intents[i].injected != mem::FaultCode::None)
        intents += "# packet " + std::to_string(i) + " faults (" +
                   mem::faultCodeName(stream.intents[i].injected) + "): " + stream.intents[i].note +
                   "\n";
    writeText(asmPath, text + intents);
  }
}

int run(const po::variables_map &vm) {
  verify::GeneratorOptions options = cli::generatorOptionsFrom(vm);
  const uint64_t count = vm["count"].as<uint64_t>();
  const bool toDirectory = vm.count("out-dir");
  if (count == 0)
    throw po::error("--count must be at least 1");
  if (toDirectory == (vm.count("output") > 0))
    throw po::error("give exactly one of -o FILE (one stream) and --out-dir DIR (--count streams)");
  if (!toDirectory && count != 1)
    throw po::error("--count " + std::to_string(count) + " needs --out-dir DIR");
  if (vm.count("asm") && toDirectory)
    throw po::error(
        "--asm names one file; with --out-dir every stream gets its .npuasm beside its .npubin");
  if (!toDirectory) {
    const verify::Stream stream = verify::generate(options);
    writeStream(stream, vm["output"].as<std::string>(),
                vm.count("asm") ? vm["asm"].as<std::string>() : "");
    return cli::kExitOk;
  }
  const std::string dir = vm["out-dir"].as<std::string>();
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error || !std::filesystem::is_directory(dir))
    throw OutputError(dir + ": cannot create the directory" +
                      (error ? ": " + error.message() : ""));
  const uint64_t first = options.seed;
  for (uint64_t i = 0; i < count; ++i) {
    options.seed = first + i;
    const std::string base = dir + "/seed-" + std::to_string(options.seed);
    writeStream(verify::generate(options), base + ".npubin", base + ".npuasm");
  }
  return cli::kExitOk;
}

} // namespace

int main(int argc, char **argv) {
  po::options_description options("Options");
  cli::addGeneratorOptions(options);
  options.add_options()("output,o", po::value<std::string>(), "write the stream here (.npubin)")(
      "asm", po::value<std::string>(),
      "also write it as .npuasm source (re-assembles to the same container)")(
      "count", po::value<uint64_t>()->default_value(1),
      "streams for seeds seed, seed+1, ... (with --out-dir)")(
      "out-dir", po::value<std::string>(),
      "write seed-N.npubin and seed-N.npuasm for each stream here");
  po::positional_options_description positional;
  po::variables_map vm;
  const cli::Tool tool{"npu-randgen", "[options] -o stream.npubin",
                       "Generate seeded constrained-random NPU command streams."};
  if (auto exit = cli::parse(tool, argc, argv, options, positional, vm))
    return *exit;
  try {
    return run(vm);
  } catch (const po::error &e) {
    std::cerr << "npu-randgen: error: " << e.what() << "\n";
    return cli::kExitUsage;
  } catch (const std::exception &e) {
    std::cerr << "npu-randgen: error: " << e.what() << "\n";
    return cli::kExitFailure;
  }
}
