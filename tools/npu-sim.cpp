// npu-sim: runs a command stream (.npubin, or .npuasm assembled in memory)
// on a backend, verifies its .check regions, and reports cycles, statistics,
// timelines and memory dumps.
#include "cli.h"
#include "npu/asm/assembler.h"
#include "npu/asm/disassembler.h"
#include "npu/bin/object.h"
#include "npu/mem/address_map.h"
#include "npu/rt/runtime.h"
#include "npu/sim/profile.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>

namespace {

using namespace npu;
namespace po = cli::po;

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

uint64_t parseNumber(const std::string &text, const std::string &what) {
  try {
    size_t used = 0;
    uint64_t value = std::stoull(text, &used, 0);
    if (used == text.size())
      return value;
  } catch (const std::exception &) {
  }
  throw po::error("invalid " + what + " '" + text + "' (expected a decimal or 0x number)");
}

std::vector<uint8_t> readBinary(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(path + ": cannot open: " + std::strerror(errno));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The payload of a little-endian, C-order .npy file.
std::vector<uint8_t> npyPayload(const std::string &path, std::vector<uint8_t> bytes) {
  static const uint8_t magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (bytes.size() < 10 || !std::equal(std::begin(magic), std::end(magic), bytes.begin()))
    throw InputError(path + ": not a .npy file (bad magic)");
  const unsigned major = bytes[6];
  size_t headerLength, start;
  if (major == 1) {
    headerLength = bytes[8] | size_t(bytes[9]) << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      throw InputError(path + ": truncated .npy header");
    headerLength =
        bytes[8] | size_t(bytes[9]) << 8 | size_t(bytes[10]) << 16 | size_t(bytes[11]) << 24;
    start = 12;
  } else {
    throw InputError(path + ": unsupported .npy version " + std::to_string(major));
  }
  if (start + headerLength > bytes.size())
    throw InputError(path + ": truncated .npy header");
  const std::string header(bytes.begin() + start, bytes.begin() + start + headerLength);
  if (header.find("'fortran_order': True") != std::string::npos)
    throw InputError(path + ": Fortran-order .npy arrays are not supported; save a C-order array");
  if (header.find("'descr': '>") != std::string::npos)
    throw InputError(path + ": big-endian .npy arrays are not supported");
  bytes.erase(bytes.begin(), bytes.begin() + start + headerLength);
  return bytes;
}

void writeNpy(const std::string &path, const std::vector<uint8_t> &data, const std::string &dtype) {
  static const std::pair<const char *, const char *> descrs[] = {
      {"f32", "<f4"}, {"i32", "<i4"}, {"i64", "<i8"}, {"u8", "|u1"}};
  const char *descr = nullptr;
  size_t width = 1;
  for (auto &[name, d] : descrs) {
    if (dtype == name) {
      descr = d;
      width = static_cast<size_t>(d[2] - '0');
    }
  }
  if (!descr)
    throw po::error("unknown dump dtype '" + dtype + "' (use f32, i32, i64 or u8)");
  if (data.size() % width)
    throw po::error("dump of " + std::to_string(data.size()) + " bytes is not a whole number of " +
                    dtype + " elements");
  std::string header = "{'descr': '" + std::string(descr) +
                       "', 'fortran_order': False, 'shape': (" +
                       std::to_string(data.size() / width) + ",), }";
  while ((10 + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  const char preamble[] = {'\x93',
                           'N',
                           'U',
                           'M',
                           'P',
                           'Y',
                           1,
                           0,
                           static_cast<char>(header.size() & 0xff),
                           static_cast<char>(header.size() >> 8)};
  out.write(preamble, sizeof preamble);
  out << header;
  out.write(reinterpret_cast<const char *>(data.data()), static_cast<std::streamsize>(data.size()));
  if (!out)
    throw InputError(path + ": write error");
}

bin::Object loadProgram(const std::string &path, const std::vector<std::string> &includeDirs) {
  std::vector<uint8_t> bytes = readBinary(path);
  if (bin::hasMagic(bytes)) {
    try {
      return bin::read(bytes);
    } catch (const bin::FormatError &e) {
      throw InputError(path + ": " + e.what());
    }
  }
  as::Options options;
  options.includeDirs = includeDirs;
  as::AssembleResult result = as::assembleString(
      std::string_view(reinterpret_cast<const char *>(bytes.data()), bytes.size()), path, options);
  for (const as::Diagnostic &d : result.diagnostics)
    std::cerr << as::formatDiagnostic(d);
  if (!result.ok())
    throw InputError(path + ": " + std::to_string(result.errorCount()) + " assembly error(s)");
  return std::move(result.object);
}

// Distance in units in the last place between two binary32 values, with
// both NaN counted as equal and one NaN as infinitely far.
uint64_t ulpDistance(uint32_t a, uint32_t b) {
  const bool nanA = (a & 0x7fffffffu) > 0x7f800000u, nanB = (b & 0x7fffffffu) > 0x7f800000u;
  if (nanA || nanB)
    return nanA && nanB ? 0 : UINT64_MAX;
  const auto ordered = [](uint32_t u) {
    return u & 0x80000000u ? -int64_t(u & 0x7fffffffu) : int64_t(u);
  };
  const int64_t d = ordered(a) - ordered(b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

float asFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Compares every check region; prints each mismatch (up to a limit per
// region) and returns the number of failed regions.
size_t verifyChecks(const bin::Object &object, rt::Runtime &runtime, bool quiet) {
  size_t failed = 0;
  for (const bin::CheckRegion &check : object.checks) {
    std::vector<uint8_t> actual(check.expected.size());
    try {
      runtime.readPhysical(check.address, actual.data(), actual.size());
    } catch (const mem::DeviceFault &e) {
      throw InputError("check region at " + std::to_string(check.address) + ": " +
                       e.fault().describe());
    }
    size_t mismatches = 0;
    uint64_t worstUlp = 0;
    const bool f32 = check.kind == bin::CheckRegion::Kind::F32Ulp;
    const size_t step = f32 ? 4 : 1;
    for (size_t i = 0; i < actual.size(); i += step) {
      uint32_t want = 0, got = 0;
      std::memcpy(&want, check.expected.data() + i, step);
      std::memcpy(&got, actual.data() + i, step);
      const uint64_t ulp = f32 ? ulpDistance(want, got) : (want == got ? 0 : 1);
      worstUlp = std::max(worstUlp, ulp);
      if (f32 ? ulp <= check.ulpTolerance : want == got)
        continue;
      if (++mismatches <= 10) {
        if (f32)
          std::fprintf(stderr,
                       "  mismatch at 0x%08" PRIx64
                       ": expected 0x%08x (%.9g), actual 0x%08x (%.9g), "
                       "%s ulp (tolerance %u)\n",
                       check.address + i, want, asFloat(want), got, asFloat(got),
                       ulp == UINT64_MAX ? "inf" : std::to_string(ulp).c_str(), check.ulpTolerance);
        else
          std::fprintf(stderr, "  mismatch at 0x%08" PRIx64 ": expected 0x%02x, actual 0x%02x\n",
                       check.address + i, want, got);
      }
    }
    if (mismatches) {
      ++failed;
      std::fprintf(stderr, "check 0x%08" PRIx64 " (+%zu bytes, %s): FAILED, %zu mismatching %s\n",
                   check.address, check.expected.size(), f32 ? "f32 ulp" : "exact", mismatches,
                   f32 ? "elements" : "bytes");
    } else if (!quiet) {
      std::printf("check 0x%08" PRIx64 " (+%zu bytes, %s): ok%s\n", check.address,
                  check.expected.size(), f32 ? "f32 ulp" : "exact",
                  f32 ? (", max " + std::to_string(worstUlp) + " ulp").c_str() : "");
    }
  }
  return failed;
}

struct Dump {
  uint64_t address, length;
  std::string path, dtype;
};

Dump parseDump(const std::string &spec) {
  std::vector<std::string> parts;
  std::stringstream ss(spec);
  for (std::string part; std::getline(ss, part, ':');)
    parts.push_back(part);
  if (parts.size() < 3 || parts.size() > 4)
    throw po::error("--dump expects ADDR:LEN:FILE[:DTYPE], got '" + spec + "'");
  return {parseNumber(parts[0], "dump address"), parseNumber(parts[1], "dump length"), parts[2],
          parts.size() == 4 ? parts[3] : "f32"};
}

int run(const po::variables_map &vm) {
  const std::string input = vm["input"].as<std::string>();
  const auto includeDirs = vm["include"].as<std::vector<std::string>>();
  const auto mode = sim::parseMode(vm["mode"].as<std::string>());
  if (!mode)
    throw po::error("unknown mode '" + vm["mode"].as<std::string>() + "' (use func, perf or both)");
  std::vector<Dump> dumps;
  for (const std::string &spec : vm["dump"].as<std::vector<std::string>>())
    dumps.push_back(parseDump(spec));

  rt::RuntimeOptions options;
  options.backend = vm["backend"].as<std::string>();
  options.backendOptions.issMode = *mode;
  if (vm.count("vcd")) {
    options.backendOptions.waveformPath = vm["vcd"].as<std::string>();
    options.backendOptions.waveformStart = vm["vcd-start"].as<uint64_t>();
    options.backendOptions.waveformStop = vm["vcd-stop"].as<uint64_t>();
  }
  mem::AddressMap &map = options.backendOptions.addressMap;
  if (vm.count("memory-config"))
    map = mem::AddressMap::fromJsonFile(vm["memory-config"].as<std::string>());
  for (const std::string &spec : vm["region"].as<std::vector<std::string>>())
    map.applyOverride(spec);
  map.validate();

  bin::Object program = loadProgram(input, includeDirs);
  if (program.isaHash != isa::kIsaHash && !vm.count("ignore-isa-hash"))
    throw InputError(input + ": built for ISA hash " + std::to_string(program.isaHash) +
                     ", this toolchain has a different encoding (re-assemble it, or pass "
                     "--ignore-isa-hash)");
  const bool quiet = vm.count("quiet");

  std::unique_ptr<rt::Runtime> runtimeOwner;
  try {
    runtimeOwner = std::make_unique<rt::Runtime>(options);
  } catch (const rt::Error &e) {
    if (e.code() == rt::ErrorCode::UnknownBackend)
      throw po::error(e.what());
    throw;
  }
  rt::Runtime &runtime = *runtimeOwner;
  for (size_t i = 0; i < program.data.size(); ++i) {
    const bin::DataSegment &seg = program.data[i];
    try {
      runtime.writePhysical(seg.address, seg.bytes.data(), seg.bytes.size());
    } catch (const mem::DeviceFault &e) {
      throw InputError(input + ": data segment " + std::to_string(i) + ": " + e.fault().describe());
    }
  }
  for (const std::string &spec : vm["load"].as<std::vector<std::string>>()) {
    const size_t at = spec.rfind('@');
    if (at == std::string::npos)
      throw po::error("--load expects FILE@ADDR, got '" + spec + "'");
    const std::string path = spec.substr(0, at);
    std::vector<uint8_t> bytes = readBinary(path);
    if (path.size() > 4 && path.ends_with(".npy"))
      bytes = npyPayload(path, std::move(bytes));
    try {
      runtime.writePhysical(parseNumber(spec.substr(at + 1), "load address"), bytes.data(),
                            bytes.size());
    } catch (const mem::DeviceFault &e) {
      throw InputError("--load " + spec + ": " + e.fault().describe());
    }
  }
  runtime.resetRegionCounters();

  const bool trace = vm.count("trace");
  runtime.setRecording(trace || vm.count("trace-json"));
  std::span<const isa::Packet> text = program.text;
  if (vm.count("max-packets"))
    text = text.first(std::min<uint64_t>(text.size(), vm["max-packets"].as<uint64_t>()));
  std::optional<rt::FaultInfo> fault;
  try {
    runtime.submit(text);
    runtime.synchronize();
  } catch (const rt::Error &e) {
    if (e.code() != rt::ErrorCode::DeviceFault)
      throw;
    fault = runtime.lastFault();
  }
  const sim::Stats stats = runtime.deviceStats();
  const std::vector<sim::PacketRecord> records = runtime.takeRecords();

  if (trace)
    for (const sim::PacketRecord &r : records)
      std::printf("[%6" PRIu64 "] %-60s cycles %" PRIu64 "-%" PRIu64 " read %" PRIu64
                  " written %" PRIu64 "\n",
                  r.index, as::formatPacket(program.text[r.index]).c_str(), r.startCycle,
                  r.endCycle, r.bytesRead, r.bytesWritten);
  if (vm.count("stats-json")) {
    std::ofstream out(vm["stats-json"].as<std::string>());
    out << sim::statsJson(stats, runtime.regionStats());
  }
  if (vm.count("trace-json")) {
    std::ofstream out(vm["trace-json"].as<std::string>());
    out << sim::perfettoTraceJson(records, "NPU (" + runtime.backendName() + ")");
  }
  if (!quiet) {
    const auto halt = std::find_if(text.begin(), text.end(), [](const isa::Packet &p) {
      return isa::detail::load32(p.data(), 0) == static_cast<uint32_t>(isa::Opcode::HALT);
    });
    const char *stop = fault ? "fault"
                       : halt != text.end() && stats.packets == uint64_t(halt - text.begin()) + 1
                           ? "halt"
                       : text.size() < program.text.size() ? "packet limit"
                                                           : "end of stream";
    // --mode selects what the ISS computes; the rtl and cosim backends
    // count the RTL's clock cycles.
    const std::string backend = runtime.backendName();
    const std::string cycles =
        backend == "iss" ? std::string(sim::modeName(*mode)) + " mode" : "RTL clock cycles";
    std::printf("%s: %" PRIu64 " packets on %s, stopped at %s, %" PRIu64 " cycles (%s)\n",
                input.c_str(), stats.packets, backend.c_str(), stop, stats.cycles, cycles.c_str());
    if (stats.saturated)
      std::printf("note: a cycle or byte counter exceeded 64 bits; it stopped at 2^64-1\n");
    std::fputs(runtime.backendSummary().c_str(), stdout);
  }
  if (fault) {
    std::fprintf(stderr, "npu-sim: %s\n", fault->describe().c_str());
    return cli::kExitFailure;
  }
  for (const Dump &d : dumps) {
    std::vector<uint8_t> bytes(d.length);
    try {
      runtime.readPhysical(d.address, bytes.data(), bytes.size());
    } catch (const mem::DeviceFault &e) {
      throw InputError("--dump: " + e.fault().describe());
    }
    if (d.path.ends_with(".npy")) {
      writeNpy(d.path, bytes, d.dtype);
    } else {
      std::ofstream out(d.path, std::ios::binary);
      out.write(reinterpret_cast<const char *>(bytes.data()),
                static_cast<std::streamsize>(bytes.size()));
      if (!out)
        throw InputError(d.path + ": write error");
    }
  }
  if (*mode == sim::Mode::Perf) {
    if (!program.checks.empty() && !quiet)
      std::printf("checks: skipped in perf mode (memory is not computed)\n");
    return cli::kExitOk;
  }
  const size_t failed = verifyChecks(program, runtime, quiet);
  if (!program.checks.empty() && (!quiet || failed))
    std::printf("checks: %zu passed, %zu failed\n", program.checks.size() - failed, failed);
  return failed ? cli::kExitFailure : cli::kExitOk;
}

} // namespace

int main(int argc, char **argv) {
  po::options_description options("Options");
  options.add_options()("backend,b",
                        po::value<std::string>()->default_value("", "$NPU_BACKEND or iss"),
                        "execution backend: iss, or rtl and cosim when built with Verilator")(
      "mode,m", po::value<std::string>()->default_value("func"),
      "what the ISS computes: func (values only), perf (cycles only) or both")(
      "max-packets", po::value<uint64_t>(), "stop after this many packets")(
      "trace,t", "print every executed packet with its cycles and bytes")(
      "trace-json", po::value<std::string>(), "write a Perfetto/Chrome trace timeline")(
      "stats-json", po::value<std::string>(), "write statistics as JSON")(
      "vcd", po::value<std::string>(), "rtl, cosim: write a VCD waveform of the RTL")(
      "vcd-start", po::value<uint64_t>()->default_value(0), "first clock cycle of the waveform")(
      "vcd-stop", po::value<uint64_t>()->default_value(UINT64_MAX, "end"),
      "clock cycle at which the waveform stops")(
      "dump", po::value<std::vector<std::string>>()->default_value({}, ""),
      "ADDR:LEN:FILE[:DTYPE] write memory after the run (raw, or .npy with dtype f32|i32|i64|u8)")(
      "load", po::value<std::vector<std::string>>()->default_value({}, ""),
      "FILE@ADDR load a raw or .npy file into memory before the run")(
      "memory-config", po::value<std::string>(), "address map as JSON (replaces the defaults)")(
      "region", po::value<std::vector<std::string>>()->default_value({}, ""),
      "NAME=BASE:SIZE[:rw|r|w] add or replace an address-map region")(
      "include,I", po::value<std::vector<std::string>>()->default_value({}, ""),
      "include directory for .npuasm input")("ignore-isa-hash",
                                             "run a .npubin built for a different ISA encoding")(
      "quiet,q", "print only errors and mismatches")("input", po::value<std::string>()->required(),
                                                     "program: .npubin or .npuasm");
  po::positional_options_description positional;
  positional.add("input", 1);
  po::variables_map vm;
  const cli::Tool tool{"npu-sim", "[options] program.npubin|program.npuasm",
                       "Run an NPU command stream, verify its check regions, report cycles."};
  if (auto exit = cli::parse(tool, argc, argv, options, positional, vm))
    return *exit;
  try {
    return run(vm);
  } catch (const po::error &e) {
    std::cerr << "npu-sim: error: " << e.what() << "\n";
    return cli::kExitUsage;
  } catch (const InputError &e) {
    std::cerr << "npu-sim: error: " << e.what() << "\n";
    return cli::kExitInput;
  } catch (const std::exception &e) {
    std::cerr << "npu-sim: error: " << e.what() << "\n";
    return cli::kExitInput;
  }
}
