// npu-regress-worker: the engine under npu-regress. Generates and runs a
// range of seeds in one process (ISS and RTL in lockstep by default),
// samples coverage, minimises each divergence, and prints one JSON object
// per seed on stdout. Also lists the coverage bins and replays a stream.
#include "cli.h"
#include "npu/asm/assembler.h"
#include "npu/asm/disassembler.h"
#include "npu/bin/object.h"
#include "npu/verify/coverage.h"
#include "npu/verify/generator.h"
#include "npu/verify/minimiser.h"
#include "npu/verify/runner.h"
#include "randgen_options.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>

namespace {

using namespace npu;
namespace po = cli::po;
using nlohmann::json;

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::pair<uint64_t, uint64_t> parseSeedRange(const std::string &text) {
  const size_t colon = text.find(':');
  try {
    if (colon != std::string::npos) {
      size_t used1 = 0, used2 = 0;
      const uint64_t first = std::stoull(text.substr(0, colon), &used1, 0);
      const uint64_t end = std::stoull(text.substr(colon + 1), &used2, 0);
      if (used1 == colon && used2 == text.size() - colon - 1 && first < end)
        return {first, end};
    }
  } catch (const std::exception &) {
  }
  throw po::error("--seeds expects FIRST:END with FIRST < END (seeds FIRST .. END-1), got '" +
                  text + "'");
}

std::string minimisedSource(const verify::MinimiseResult &m, const std::string &reproducer) {
  as::DumpOptions dump;
  dump.fullContents = true;
  dump.rawWords = false;
  return "# Minimised by npu-regress from: " + reproducer + "\n# " + m.run.signature + "\n# " +
         m.run.diagnostic + "\n" + as::formatObject(m.object, dump);
}

json faultCounts(const std::vector<mem::FaultCode> &outcomes) {
  std::map<std::string, uint64_t> counts;
  for (mem::FaultCode code : outcomes)
    if (code != mem::FaultCode::None)
      counts[mem::faultCodeName(code)]++;
  return counts;
}

json runSeed(verify::GeneratorOptions options, const verify::RunOptions &run, bool minimise,
             uint32_t maxMinimiseRuns) {
  const auto start = std::chrono::steady_clock::now();
  json out;
  out["seed"] = options.seed;
  const std::string reproducer = "npu-regress " + verify::optionsArguments(options) +
                                 (run.backend != "cosim" ? " --backend " + run.backend : "");
  try {
    const verify::Stream stream = verify::generate(options);
    verify::Coverage coverage;
    const verify::RunResult result =
        verify::runStream(stream.object, run, &stream.intents, &coverage);
    out["packets"] = stream.object.text.size();
    out["executed"] = result.packetsExecuted;
    out["faults"] = faultCounts(result.outcomes);
    out["cycles"] = result.deviceCycles;
    out["unexpected"] = result.unexpected;
    std::vector<size_t> bins;
    for (size_t i = 0; i < coverage.hits().size(); ++i)
      if (coverage.hits()[i])
        bins.push_back(i);
    out["bins"] = bins;
    out["status"] = result.diverged ? "diverged" : "pass";
    if (result.diverged) {
      json d;
      d["packet"] = result.divergentPacket;
      d["signature"] = result.signature;
      // The injected fault class of the divergent packet ("" for a valid
      // packet) and how many packets faulted before it: which fault
      // behaviour, if any, the divergence is about.
      d["intent"] = result.divergentIntent == mem::FaultCode::None
                        ? ""
                        : mem::faultCodeName(result.divergentIntent);
      d["faults_before"] =
          std::count_if(result.outcomes.begin(), result.outcomes.end(),
                        [](mem::FaultCode c) { return c != mem::FaultCode::None; });
      d["diagnostic"] = result.diagnostic;
      d["reproducer"] = reproducer;
      if (minimise) {
        verify::MinimiseOptions mo;
        mo.maxRuns = maxMinimiseRuns;
        const verify::MinimiseResult m = verify::minimise(
            stream.object, result, [&](const bin::Object &o) { return verify::runStream(o, run); },
            mo);
        d["minimised"] = {{"packets", m.object.text.size()},
                          {"data_bytes", m.dataBytes()},
                          {"runs", m.runs},
                          {"npuasm", minimisedSource(m, reproducer)}};
      }
      out["divergence"] = d;
    }
  } catch (const std::exception &e) {
    out["status"] = "error";
    out["error"] = e.what();
    out["reproducer"] = reproducer;
  }
  out["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

bin::Object loadStream(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(path + ": cannot open");
  const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in),
                                   std::istreambuf_iterator<char>()};
  if (bin::hasMagic(bytes)) {
    try {
      return bin::read(bytes);
    } catch (const bin::FormatError &e) {
      throw InputError(path + ": " + e.what());
    }
  }
  as::AssembleResult result = as::assembleString(
      std::string_view(reinterpret_cast<const char *>(bytes.data()), bytes.size()), path);
  for (const as::Diagnostic &d : result.diagnostics)
    std::cerr << as::formatDiagnostic(d);
  if (!result.ok())
    throw InputError(path + ": " + std::to_string(result.errorCount()) + " assembly error(s)");
  return std::move(result.object);
}

int listBins() {
  const verify::CoverageModel &model = verify::CoverageModel::instance();
  json bins = json::array();
  for (const verify::Bin &b : model.bins())
    bins.push_back({{"name", b.name},
                    {"group", b.group},
                    {"fault", b.fault == mem::FaultCode::None ? "" : mem::faultCodeName(b.fault)}});
  std::vector<std::string> injectable;
  for (mem::FaultCode code : verify::injectableFaults())
    injectable.push_back(mem::faultCodeName(code));
  std::cout << json{{"digest", std::to_string(model.digest())},
                    {"bins", bins},
                    {"fault_classes", injectable}}
                   .dump()
            << "\n";
  return cli::kExitOk;
}

int replay(const std::string &path, const verify::RunOptions &run) {
  const bin::Object object = loadStream(path);
  const verify::RunResult result = verify::runStream(object, run);
  std::cout << path << ": " << result.packetsExecuted << " of " << object.text.size()
            << " packets on " << run.backend << ", " << faultCounts(result.outcomes).dump()
            << " faults\n";
  if (result.diverged) {
    std::cout << "divergence at packet " << result.divergentPacket << " (" << result.signature
              << ")\n  " << result.diagnostic << "\n";
    return cli::kExitFailure;
  }
  return cli::kExitOk;
}

int run(const po::variables_map &vm) {
  verify::RunOptions run;
  run.backend = vm["backend"].as<std::string>();
  // Checked first, so that --list-bins also validates the generator options.
  verify::GeneratorOptions options = cli::generatorOptionsFrom(vm);
  if (vm.count("list-bins"))
    return listBins();
  if (vm.count("replay"))
    return replay(vm["replay"].as<std::string>(), run);
  if (!vm.count("seeds"))
    throw po::error("give --seeds FIRST:END, --replay FILE or --list-bins");
  if (!vm["seed"].defaulted())
    throw po::error("the worker takes its seeds from --seeds, not --seed");
  const auto [first, end] = parseSeedRange(vm["seeds"].as<std::string>());
  const bool minimise = !vm.count("no-minimise");
  for (uint64_t seed = first; seed < end; ++seed) {
    options.seed = seed;
    std::cout << runSeed(options, run, minimise, vm["max-minimise-runs"].as<uint32_t>()).dump()
              << "\n"
              << std::flush;
  }
  return cli::kExitOk;
}

} // namespace

int main(int argc, char **argv) {
  po::options_description options("Options");
  cli::addGeneratorOptions(options);
  options.add_options()("seeds", po::value<std::string>(), "FIRST:END run seeds FIRST .. END-1")(
      "backend,b", po::value<std::string>()->default_value("cosim"),
      "cosim (the ISS against the RTL), reference (the ISS against the reference model), "
      "or a runtime backend alone: iss, rtl")("no-minimise",
                                            "report divergences without minimising them")(
      "max-minimise-runs", po::value<uint32_t>()->default_value(400),
      "candidate runs per minimisation")(
      "replay", po::value<std::string>(),
      "run this .npubin or .npuasm as the regression does and report")(
      "list-bins", "print the coverage bins as JSON");
  po::positional_options_description positional;
  po::variables_map vm;
  const cli::Tool tool{
      "npu-regress-worker", "[options] --seeds FIRST:END",
      "Run seeds of npu-randgen streams in co-simulation; one JSON line per seed."};
  if (auto exit = cli::parse(tool, argc, argv, options, positional, vm))
    return *exit;
  try {
    return run(vm);
  } catch (const po::error &e) {
    std::cerr << "npu-regress-worker: error: " << e.what() << "\n";
    return cli::kExitUsage;
  } catch (const InputError &e) {
    std::cerr << "npu-regress-worker: error: " << e.what() << "\n";
    return cli::kExitInput;
  } catch (const std::exception &e) {
    std::cerr << "npu-regress-worker: error: " << e.what() << "\n";
    return cli::kExitFailure;
  }
}
