// npu-sim: runs a command stream (.npubin, or .npuasm assembled in memory)
// on a backend, verifies its .check regions, and reports cycles, statistics,
// timelines and memory dumps.
#include "cli.h"
#include "npu/asm/assembler.h"
#include "npu/asm/disassembler.h"
#include "npu/bin/check.h"
#include "npu/bin/object.h"
#include "npu/mem/address_map.h"
#include "npu/mem/hex.h"
#include "npu/rt/runtime.h"
#include "npu/rt/waveform.h"
#include "npu/sim/iss.h"
#include "npu/sim/profile.h"
#include "npu/support/file_io.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

namespace {

using namespace npu;
namespace po = cli::po;
using mem::fmt::hex;

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An output file that could not be written (exit code 4).
struct OutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Decimal or 0x hex, '_' between digits, an optional K/M/G suffix; no sign,
// so "-1" is an error rather than 2^64 - 1.
uint64_t parseNumber(const std::string &text, const std::string &what) {
  try {
    return mem::parseSize(text, what);
  } catch (const std::invalid_argument &e) {
    throw po::error(e.what());
  }
}

std::optional<uint64_t> numberOption(const po::variables_map &vm, const char *name) {
  if (!vm.count(name))
    return std::nullopt;
  return parseNumber(vm[name].as<std::string>(), std::string("--") + name);
}

// Bytes of memory that are mapped from `address` on, through adjacent
// memory regions (0 if `address` is not in one).
uint64_t mappedBytesFrom(const mem::AddressMap &map, uint64_t address) {
  uint64_t total = 0;
  for (uint64_t at = address;;) {
    const mem::Region *region = map.find(at);
    if (!region || region->kind != mem::Region::Kind::Memory)
      return total;
    const uint64_t left = region->size - (at - region->base);
    if (left > UINT64_MAX - total)
      return UINT64_MAX;
    total += left;
    if (left > UINT64_MAX - at || at + left == 0)
      return total; // the region ends at 2^64
    at += left;
  }
}

// What a --load FILE@ADDR may hold: the memory mapped from ADDR on.
struct LoadTarget {
  uint64_t address, capacity;
};

LoadTarget loadTarget(const mem::AddressMap &map, const std::string &spec, uint64_t address) {
  const uint64_t capacity = mappedBytesFrom(map, address);
  if (capacity == 0)
    throw InputError("--load " + spec + ": " + hex(address) + " is not in a memory region");
  return {address, capacity};
}

// The element size of a supported .npy dtype ('<f4', '|u1', ...): little
// endian or byte-order free numbers (bool, int, uint, float, complex).
size_t npyItemSize(const std::string &path, const std::string &descr) {
  const bool byteOrderOk = !descr.empty() && (descr[0] == '<' || descr[0] == '|');
  size_t size = 0;
  const char *digits = descr.size() > 2 ? descr.c_str() + 2 : "";
  const auto [end, ec] = std::from_chars(digits, descr.c_str() + descr.size(), size);
  const bool numeric = descr.size() > 2 && std::strchr("biufc", descr[1]) != nullptr;
  if (descr.size() > 1 && descr[0] == '>')
    throw InputError(path + ": big-endian .npy arrays are not supported");
  if (!byteOrderOk || !numeric || ec != std::errc() || end != descr.c_str() + descr.size() ||
      size == 0)
    throw InputError(path + ": unsupported .npy dtype '" + descr +
                     "' (numbers only: bool, int, uint, float, complex; not objects, strings or "
                     "records)");
  return size;
}

// The value text of `'key': value` in a .npy header dictionary.
std::string npyField(const std::string &path, const std::string &header, const std::string &key) {
  const size_t at = header.find("'" + key + "':");
  if (at == std::string::npos)
    throw InputError(path + ": malformed .npy header: no '" + key + "'");
  size_t begin = at + key.size() + 3;
  while (begin < header.size() && header[begin] == ' ')
    ++begin;
  size_t end = begin;
  if (begin < header.size() && (header[begin] == '\'' || header[begin] == '(')) {
    end = header.find(header[begin] == '(' ? ')' : '\'', begin + 1);
    if (end == std::string::npos)
      throw InputError(path + ": malformed .npy header: unterminated '" + key + "'");
    return header.substr(begin + 1, end - begin - 1);
  }
  while (end < header.size() && header[end] != ',' && header[end] != '}')
    ++end;
  return header.substr(begin, end - begin);
}

// The payload of a little-endian, C-order .npy file, checked against the
// header: its dtype must be numeric and its size must be the shape's.
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
  if (headerLength > bytes.size() - start)
    throw InputError(path + ": truncated .npy header");
  const std::string header(bytes.begin() + start, bytes.begin() + start + headerLength);
  if (npyField(path, header, "fortran_order") != "False")
    throw InputError(path + ": Fortran-order .npy arrays are not supported; save a C-order array");
  uint64_t elements = 1;
  std::stringstream shape(npyField(path, header, "shape"));
  for (std::string dim; std::getline(shape, dim, ',');) {
    dim.erase(0, dim.find_first_not_of(' '));
    dim.erase(dim.find_last_not_of(' ') + 1);
    if (dim.empty())
      continue; // the trailing comma of "(4,)"
    uint64_t n = 0;
    const auto [end, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), n);
    if (ec != std::errc() || end != dim.data() + dim.size())
      throw InputError(path + ": malformed .npy shape (" + npyField(path, header, "shape") + ")");
    if (n && elements > UINT64_MAX / n)
      throw InputError(path + ": .npy shape (" + npyField(path, header, "shape") +
                       ") has more elements than fit in 64 bits");
    elements *= n;
  }
  const size_t itemSize = npyItemSize(path, npyField(path, header, "descr"));
  const uint64_t payload = bytes.size() - start - headerLength;
  if (elements > UINT64_MAX / itemSize || elements * itemSize != payload)
    throw InputError(path + ": the header's shape (" + npyField(path, header, "shape") +
                     ") and dtype need " +
                     (elements > UINT64_MAX / itemSize ? std::string("more than 2^64")
                                                       : std::to_string(elements * itemSize)) +
                     " bytes of data, the file has " + std::to_string(payload) +
                     (payload < elements * itemSize ? " (truncated)" : " (trailing bytes)"));
  bytes.erase(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(start + headerLength));
  return bytes;
}

struct Dump {
  uint64_t address, length;
  std::string path;
  std::optional<std::string> dtype; // .npy only
};

// The .npy descr and element size of a --dump dtype.
std::pair<const char *, size_t> dumpDescr(const std::string &dtype) {
  static const std::pair<const char *, const char *> descrs[] = {
      {"f32", "<f4"}, {"i32", "<i4"}, {"i64", "<i8"}, {"u8", "|u1"}};
  for (auto &[name, descr] : descrs)
    if (dtype == name)
      return {descr, static_cast<size_t>(descr[2] - '0')};
  throw po::error("unknown dump dtype '" + dtype + "' (use f32, i32, i64 or u8)");
}

Dump parseDump(const std::string &spec) {
  std::vector<std::string> parts;
  std::stringstream ss(spec);
  for (std::string part; std::getline(ss, part, ':');)
    parts.push_back(part);
  if (parts.size() < 3 || parts.size() > 4)
    throw po::error("--dump expects ADDR:LEN:FILE[:DTYPE], got '" + spec + "'");
  Dump dump{parseNumber(parts[0], "--dump " + spec + ": address"),
            parseNumber(parts[1], "--dump " + spec + ": length"), parts[2], std::nullopt};
  const bool npy = dump.path.ends_with(".npy");
  if (parts.size() == 4 && !npy)
    throw po::error("--dump " + spec + ": a DTYPE applies to .npy files only (" + dump.path +
                    " is written raw)");
  if (npy) {
    dump.dtype = parts.size() == 4 ? parts[3] : "f32";
    const size_t width = dumpDescr(*dump.dtype).second;
    if (dump.length % width)
      throw po::error("--dump " + spec + ": " + std::to_string(dump.length) +
                      " bytes are not a whole number of " + *dump.dtype + " elements");
  }
  return dump;
}

// Streams device memory into the file in pieces, so that a large dump
// needs no buffer of its size.
void writeDump(rt::Runtime &runtime, const Dump &d) {
  io::OutputFile out(d.path);
  if (d.dtype) {
    const auto [descr, width] = dumpDescr(*d.dtype);
    std::string header = "{'descr': '" + std::string(descr) +
                         "', 'fortran_order': False, 'shape': (" +
                         std::to_string(d.length / width) + ",), }";
    while ((10 + header.size() + 1) % 64)
      header += ' ';
    header += '\n';
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
    out.write(header);
  }
  std::vector<uint8_t> piece(std::min<uint64_t>(d.length, uint64_t(1) << 20));
  for (uint64_t done = 0; done < d.length;) {
    const uint64_t n = std::min<uint64_t>(piece.size(), d.length - done);
    try {
      runtime.readPhysical(d.address + done, piece.data(), n);
    } catch (const mem::DeviceFault &e) {
      throw InputError("--dump: " + e.fault().describe());
    }
    out.write(piece.data(), n);
    done += n;
  }
  out.commit();
}

// Is the input a container? By content: the magic, or bytes that text
// never has (a container whose magic was damaged is still reported as one,
// "bad magic"); and a .npubin name must hold a container.
bool isContainer(const std::string &path, const std::vector<uint8_t> &bytes) {
  return bin::hasMagic(bytes) || path.ends_with(".npubin") ||
         std::find(bytes.begin(), bytes.end(), 0) != bytes.end();
}

bin::Object loadProgram(const std::string &path, const std::vector<std::string> &includeDirs,
                        std::vector<std::string> &filesRead) {
  std::vector<uint8_t> bytes;
  try {
    bytes = io::readFile(path, bin::kMaxFileBytes, "the size limit of a program");
  } catch (const io::FileError &e) {
    throw InputError(e.what());
  }
  if (isContainer(path, bytes)) {
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
  filesRead = std::move(result.filesRead);
  return std::move(result.object);
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
    const bin::CheckOutcome outcome = bin::compareCheck(check, actual);
    for (const bin::CheckMismatch &m : outcome.shown)
      std::fprintf(stderr, "%s\n", bin::describeMismatch(check, m).c_str());
    if (!outcome.ok()) {
      ++failed;
      std::fprintf(stderr, "%s\n", bin::describeOutcome(check, outcome).c_str());
    } else if (!quiet) {
      std::printf("%s\n", bin::describeOutcome(check, outcome).c_str());
    }
  }
  return failed;
}

// Watches SIGINT and SIGTERM while npu-sim runs, and shows progress on a
// terminal. The signals are blocked in every thread (the runtime's worker
// inherits the mask) and read by a watcher thread from a signalfd, so a
// signal never interrupts a thread in the middle of anything. Before the
// run it ends the process at once; during the run it asks the main thread
// to stop at the next group of packets, and if that group is still running
// a second later (a packet that takes long), it reports the packets in
// flight and ends the process; a second signal always ends it at once.
class RunMonitor {
public:
  RunMonitor() {
    sigemptyset(&signals_);
    for (int sig : {SIGINT, SIGTERM}) {
      struct sigaction old;
      // A signal the parent chose to ignore (nohup, a background job)
      // stays ignored.
      if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler != SIG_IGN)
        sigaddset(&signals_, sig);
    }
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
    signalFd_ = signalfd(-1, &signals_, SFD_CLOEXEC);
    quitFd_ = eventfd(0, EFD_CLOEXEC);
    if (signalFd_ < 0 || quitFd_ < 0)
      throw std::runtime_error(std::string("cannot watch for signals: ") + std::strerror(errno));
    watcher_ = std::thread([this] { watch(); });
  }
  ~RunMonitor() {
    const uint64_t one = 1;
    if (::write(quitFd_, &one, sizeof one) == sizeof one)
      watcher_.join();
    else
      watcher_.detach(); // cannot happen for an eventfd; never block the exit on it
    ::close(signalFd_);
    ::close(quitFd_);
  }
  RunMonitor(const RunMonitor &) = delete;
  RunMonitor &operator=(const RunMonitor &) = delete;

  // The run of `text` starts.
  void start(std::span<const isa::Packet> text) {
    text_ = text;
    phase_ = Phase::Running;
  }
  // The packets [first, first + count) run now; `cyclesBefore` is the
  // predicted cycles of the packets before them.
  void running(uint64_t first, uint64_t count, uint64_t cyclesBefore) {
    chunkFirst_ = first;
    chunkCount_ = count;
    cyclesDone_ = cyclesBefore;
  }
  // The run is over: signals now wait for the outputs to be written.
  void finished() {
    phase_ = Phase::Finishing;
    clearProgress();
  }
  // The signal that asked the run to stop, or 0.
  int stopSignal() const { return signal_; }

private:
  enum class Phase { Setup, Running, Finishing };

  void watch() {
    const auto start = std::chrono::steady_clock::now();
    auto lastProgress = start;
    const bool terminal = isatty(STDERR_FILENO);
    std::optional<std::chrono::steady_clock::time_point> askedAt;
    for (;;) {
      pollfd fds[2] = {{signalFd_, POLLIN, 0}, {quitFd_, POLLIN, 0}};
      if (poll(fds, 2, 200) < 0 && errno != EINTR)
        return;
      if (fds[1].revents)
        return;
      int sig = 0;
      signalfd_siginfo info;
      if (fds[0].revents && ::read(signalFd_, &info, sizeof info) == sizeof info)
        sig = int(info.ssi_signo);
      const auto now = std::chrono::steady_clock::now();
      if (sig > 0) {
        if (signal_ || phase_ == Phase::Setup)
          exitNow(sig, "");
        signal_ = sig;
        askedAt = now;
      }
      if (askedAt && phase_ == Phase::Running && now - *askedAt > std::chrono::seconds(1)) {
        const uint64_t first = chunkFirst_, count = chunkCount_;
        exitNow(signal_,
                "during packet" + std::string(count > 1 ? "s " : " ") + std::to_string(first) +
                    (count > 1 ? "-" + std::to_string(first + count - 1) : "") + " of " +
                    std::to_string(text_.size()) + " (" + as::formatPacket(text_[first]) + ")");
      }
      if (terminal && phase_ == Phase::Running && now - start > std::chrono::seconds(2) &&
          now - lastProgress >= std::chrono::seconds(1)) {
        lastProgress = now;
        std::fprintf(stderr,
                     "\rnpu-sim: packet %" PRIu64 " of %zu, %" PRIu64
                     " cycles predicted so far\x1b[K",
                     uint64_t(chunkFirst_), text_.size(), uint64_t(cyclesDone_));
        progressShown_ = true;
      }
    }
  }
  void clearProgress() {
    if (progressShown_.exchange(false))
      std::fputs("\r\x1b[K", stderr);
  }
  [[noreturn]] void exitNow(int sig, const std::string &where) {
    clearProgress();
    std::fflush(stdout);
    std::fprintf(stderr, "npu-sim: interrupted by %s%s%s; no output files written\n",
                 sig == SIGINT ? "SIGINT" : "SIGTERM", where.empty() ? "" : " ", where.c_str());
    std::_Exit(128 + sig);
  }

  sigset_t signals_;
  int signalFd_ = -1, quitFd_ = -1;
  std::thread watcher_;
  std::atomic<bool> progressShown_ = false;
  std::atomic<int> signal_ = 0;
  std::atomic<Phase> phase_ = Phase::Setup;
  std::span<const isa::Packet> text_; // set before phase_ becomes Running
  std::atomic<uint64_t> chunkFirst_ = 0, chunkCount_ = 0, cyclesDone_ = 0;
};

// Packets go to the runtime in groups, so that the run can stop between
// them (an interrupt, the cycle budget): up to a ring's worth, and a
// packet predicted to take long goes alone.
constexpr uint64_t kGroupPackets = 256;
constexpr uint64_t kLongPacketCycles = uint64_t(1) << 20;

enum class Stop { EndOfStream, Halt, PacketLimit, Fault, CycleBudget, Interrupt };

const char *stopName(Stop stop, int sig) {
  switch (stop) {
  case Stop::EndOfStream: return "end of stream";
  case Stop::Halt: return "halt";
  case Stop::PacketLimit: return "packet limit";
  case Stop::Fault: return "fault";
  case Stop::CycleBudget: return "cycle budget";
  case Stop::Interrupt: return sig == SIGINT ? "SIGINT" : "SIGTERM";
  }
  return "?";
}

std::string sizeText(uint64_t bytes) {
  for (const auto &[shift, unit] : {std::pair{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}})
    if (bytes >= (uint64_t(1) << shift) && bytes % (uint64_t(1) << shift) == 0)
      return std::to_string(bytes >> shift) + " " + unit;
  return std::to_string(bytes) + " B";
}

const char *accessText(bool readable, bool writable) {
  return readable ? (writable ? "rw" : "r") : (writable ? "w" : "none");
}

// --print-memory-map: the map in effect as a Markdown table. The memory-map
// tables of docs/simulator.md and docs/assembly.md are this output for the
// defaults (scripts/update-memory-map-doc writes them, a test compares).
void printMemoryMap(const mem::AddressMap &map) {
  std::vector<mem::Region> regions = map.regions;
  std::sort(regions.begin(), regions.end(),
            [](const mem::Region &a, const mem::Region &b) { return a.base < b.base; });
  std::cout << "| region | base | end (exclusive) | size | permissions | engines | kind |\n"
               "|---|---|---|---|---|---|---|\n";
  for (const mem::Region &r : regions) {
    // A validated region ends at 2^64 at most: the sum wraps to 0 there.
    const uint64_t end = r.base + r.size;
    std::cout << "| `" << r.name << "` | `" << hex(r.base, 9) << "` | `"
              << (end == 0 ? std::string("2^64") : hex(end, 9)) << "` | " << sizeText(r.size)
              << " | " << accessText(r.readable, r.writable) << " | "
              << accessText(r.engineReadable(), r.engineWritable()) << " | "
              << (r.kind == mem::Region::Kind::Csr ? "CSR window (no memory)"
                  : r.isCommandRing()              ? "command ring"
                                                   : "memory")
              << " |\n";
  }
}

int run(const po::variables_map &vm, RunMonitor &monitor) {
  const auto includeDirs = vm["include"].as<std::vector<std::string>>();
  const auto mode = sim::parseMode(vm["mode"].as<std::string>());
  if (!mode)
    throw po::error("unknown mode '" + vm["mode"].as<std::string>() + "' (use func, perf or both)");
  std::vector<Dump> dumps;
  for (const std::string &spec : vm["dump"].as<std::vector<std::string>>())
    dumps.push_back(parseDump(spec));
  const std::optional<uint64_t> maxPackets = numberOption(vm, "max-packets");
  const std::optional<uint64_t> maxCycles = numberOption(vm, "max-cycles");
  const std::optional<uint64_t> vcdStart = numberOption(vm, "vcd-start");
  const std::optional<uint64_t> vcdStop = numberOption(vm, "vcd-stop");

  rt::RuntimeOptions options;
  options.backend = vm["backend"].as<std::string>();
  options.backendOptions.issMode = *mode;
  if (vm.count("vcd") && vm.count("fst"))
    throw po::error("--vcd and --fst: one waveform per run");
  if (vm.count("gtkw") && !vm.count("vcd") && !vm.count("fst"))
    throw po::error("--gtkw needs --fst or --vcd (the waveform the save file opens)");
  for (const char *option : {"vcd", "fst"})
    if (vm.count(option)) {
      options.backendOptions.waveformPath = vm[option].as<std::string>();
      options.backendOptions.waveformFormat =
          option == std::string("fst") ? rt::WaveformFormat::Fst : rt::WaveformFormat::Vcd;
      options.backendOptions.waveformStart = vcdStart.value_or(0);
      options.backendOptions.waveformStop = vcdStop.value_or(UINT64_MAX);
    }
  // The memory's timing: the environment's (NPU_RTL_*), then the flags.
  sim::MemoryTiming memory;
  try {
    memory = sim::MemoryTiming::fromEnvironment();
    if (const auto latency = numberOption(vm, "mem-latency"))
      memory.latency = static_cast<unsigned>(std::min<uint64_t>(*latency, UINT32_MAX));
    if (const auto width = numberOption(vm, "mem-width"))
      memory.bytesPerCycle = static_cast<unsigned>(std::min<uint64_t>(*width, UINT32_MAX));
    if (const auto stall = numberOption(vm, "mem-stall-percent"))
      memory.stallPercent = static_cast<unsigned>(std::min<uint64_t>(*stall, UINT32_MAX));
    memory.validate();
  } catch (const std::invalid_argument &e) {
    throw po::error(e.what());
  }
  options.backendOptions.memoryTiming = memory;
  mem::AddressMap &map = options.backendOptions.addressMap;
  if (vm.count("memory-config"))
    map = mem::AddressMap::fromJsonFile(vm["memory-config"].as<std::string>());
  for (const std::string &spec : vm["region"].as<std::vector<std::string>>())
    map.applyOverride(spec);
  map.validate();
  if (vm.count("print-memory-map")) {
    printMemoryMap(map);
    return 0;
  }
  if (!vm.count("input"))
    throw po::error("the option '--input' is required but missing");
  const std::string input = vm["input"].as<std::string>();

  // Ranges are checked against the map before anything runs, so that a
  // typo does not cost a long run (and no buffer of an absurd size is
  // made).
  for (const Dump &d : dumps)
    if (d.length > mappedBytesFrom(map, d.address))
      throw InputError("--dump " + hex(d.address) + ":" + std::to_string(d.length) +
                       ": not all of [" + hex(d.address) + ", +" + std::to_string(d.length) +
                       ") is mapped memory (see --memory-config / --region)");
  struct Load {
    std::string spec, path;
    LoadTarget target;
  };
  std::vector<Load> loads;
  for (const std::string &spec : vm["load"].as<std::vector<std::string>>()) {
    const size_t at = spec.rfind('@');
    if (at == std::string::npos || at == 0)
      throw po::error("--load expects FILE@ADDR, got '" + spec + "'");
    const uint64_t address = parseNumber(spec.substr(at + 1), "--load " + spec + ": address");
    loads.push_back({spec, spec.substr(0, at), loadTarget(map, spec, address)});
  }

  std::vector<std::string> filesRead;
  bin::Object program = loadProgram(input, includeDirs, filesRead);
  if (program.isaHash != isa::kIsaHash && !vm.count("ignore-isa-hash"))
    throw InputError(input + ": built for ISA hash " + std::to_string(program.isaHash) +
                     ", this toolchain has a different encoding (re-assemble it, or pass "
                     "--ignore-isa-hash)");
  const bool quiet = vm.count("quiet");

  // No output may overwrite an input or another output.
  std::vector<io::NamedPath> inputs{{input, "the program"}}, outputs;
  for (const std::string &path : filesRead)
    inputs.push_back({path, "a file the program includes"});
  for (const Load &l : loads)
    inputs.push_back({l.path, "a --load file"});
  if (vm.count("memory-config"))
    inputs.push_back({vm["memory-config"].as<std::string>(), "the --memory-config file"});
  for (const Dump &d : dumps)
    outputs.push_back({d.path, "a --dump file"});
  for (const char *option : {"stats-json", "trace-json", "vcd", "fst", "gtkw"})
    if (vm.count(option))
      outputs.push_back({vm[option].as<std::string>(), "the --" + std::string(option) + " file"});
  try {
    io::checkOutputs(outputs, inputs);
  } catch (const io::FileError &e) {
    throw po::error(e.what());
  }

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
  for (const Load &l : loads) {
    const bool npy = l.path.size() > 4 && l.path.ends_with(".npy");
    // Nothing past what the memory from ADDR holds is read (a .npy file
    // adds its header, at most 64 KiB in format 1), so /dev/zero is refused.
    std::vector<uint8_t> bytes;
    try {
      bytes = io::readFile(
          l.path, npy ? std::min(l.target.capacity, UINT64_MAX - 65546) + 65546 : l.target.capacity,
          "the memory mapped from " + hex(l.target.address));
    } catch (const io::FileError &e) {
      throw InputError(std::string("--load: ") + e.what());
    }
    if (npy)
      bytes = npyPayload(l.path, std::move(bytes));
    if (bytes.size() > l.target.capacity)
      throw InputError("--load " + l.spec + ": " + std::to_string(bytes.size()) +
                       " bytes of data exceed the memory mapped from " + hex(l.target.address) +
                       " (" + std::to_string(l.target.capacity) + " bytes)");
    try {
      runtime.writePhysical(l.target.address, bytes.data(), bytes.size());
    } catch (const mem::DeviceFault &e) {
      throw InputError("--load " + l.spec + ": " + e.fault().describe());
    }
  }
  runtime.resetRegionCounters();
  if (vm.count("gtkw")) {
    const std::string &waveform = options.backendOptions.waveformPath;
    io::writeFile(vm["gtkw"].as<std::string>(),
                  rt::gtkwaveSaveFile(std::filesystem::absolute(waveform).string()));
  }

  const bool trace = vm.count("trace");
  runtime.setRecording(trace || vm.count("trace-json") || vm.count("stats-json"));
  // A HALT ends the stream: nothing after it is submitted.
  std::span<const isa::Packet> text = program.text;
  const auto halt = std::find_if(text.begin(), text.end(), [](const isa::Packet &p) {
    return isa::detail::load32(p.data(), 0) == static_cast<uint32_t>(isa::Opcode::HALT);
  });
  Stop stop = Stop::EndOfStream;
  if (halt != text.end()) {
    text = text.first(size_t(halt - text.begin()) + 1);
    stop = Stop::Halt;
  }
  if (maxPackets && *maxPackets < text.size()) {
    text = text.first(*maxPackets);
    stop = Stop::PacketLimit;
  }

  std::optional<rt::FaultInfo> fault;
  monitor.start(text);
  uint64_t predicted = 0;                                  // cycles of the packets submitted so far
  std::optional<std::pair<uint64_t, uint64_t>> overBudget; // packet, its cycles
  for (uint64_t next = 0; next < text.size() && !fault && !overBudget;) {
    if (monitor.stopSignal()) {
      stop = Stop::Interrupt;
      break;
    }
    uint64_t end = next, groupCycles = 0;
    while (end < text.size() && end - next < kGroupPackets) {
      const uint64_t cycles = sim::predictCycles(text[end], memory).value_or(0);
      if (maxCycles && cycles > *maxCycles - std::min(*maxCycles, predicted + groupCycles)) {
        overBudget.emplace(end, cycles);
        break;
      }
      if (end > next && (cycles >= kLongPacketCycles || groupCycles >= kLongPacketCycles))
        break;
      groupCycles += cycles;
      ++end;
    }
    if (end == next)
      break;
    monitor.running(next, end - next, predicted);
    try {
      runtime.submit(text.subspan(next, end - next));
      runtime.synchronize();
    } catch (const rt::Error &e) {
      if (e.code() != rt::ErrorCode::DeviceFault)
        throw;
      fault = runtime.lastFault();
    }
    predicted += groupCycles;
    next = end;
  }
  monitor.finished();
  if (fault)
    stop = Stop::Fault;
  else if (overBudget)
    stop = Stop::CycleBudget;
  const sim::Stats stats = runtime.deviceStats();
  const std::vector<sim::PacketRecord> records = runtime.takeRecords();

  if (trace)
    for (const sim::PacketRecord &r : records)
      std::printf("[%6" PRIu64 "] %-60s cycles %" PRIu64 "-%" PRIu64 " read %" PRIu64
                  " written %" PRIu64 "\n",
                  r.index, as::formatPacket(program.text[r.index]).c_str(), r.startCycle,
                  r.endCycle, r.bytesRead, r.bytesWritten);
  try {
    if (vm.count("stats-json"))
      io::writeFile(vm["stats-json"].as<std::string>(),
                    sim::statsJson(stats, runtime.regionStats(), records, program.text, memory));
    if (vm.count("trace-json"))
      io::writeFile(vm["trace-json"].as<std::string>(),
                    sim::perfettoTraceJson(records, "NPU (" + runtime.backendName() + ")"));
  } catch (const io::FileError &e) {
    throw OutputError(e.what());
  }
  if (!quiet) {
    // --mode selects what the ISS computes (also behind a remote one, named
    // "remote HOST:PORT (iss)"); the rtl and cosim backends count the RTL's
    // clock cycles.
    const std::string backend = runtime.backendName();
    const std::string cycles = backend == "iss" || backend.ends_with("(iss)")
                                   ? std::string(sim::modeName(*mode)) + " mode"
                                   : "RTL clock cycles";
    std::printf("%s: %" PRIu64 " packets on %s, stopped at %s, %" PRIu64 " cycles (%s)\n",
                input.c_str(), stats.packets, backend.c_str(), stopName(stop, monitor.stopSignal()),
                stats.cycles, cycles.c_str());
    if (stats.saturated)
      std::printf("note: a cycle or byte counter exceeded 64 bits; it stopped at 2^64-1\n");
    std::fputs(runtime.backendSummary().c_str(), stdout);
  }
  if (fault) {
    std::fprintf(stderr, "npu-sim: %s\n", fault->describe().c_str());
    return cli::kExitFailure;
  }
  if (overBudget) {
    const auto [index, cycles] = *overBudget;
    std::fprintf(stderr,
                 "npu-sim: error: packet %" PRIu64 " (%s) would take %" PRIu64
                 " cycles, beyond the --max-cycles budget of %" PRIu64 " (%" PRIu64
                 " used by the packets before it); it was not started\n",
                 index, as::formatPacket(text[index]).c_str(), cycles, *maxCycles, predicted);
    return cli::kExitFailure;
  }
  if (stop == Stop::Interrupt) {
    std::fprintf(stderr,
                 "npu-sim: interrupted by %s after %" PRIu64 " of %zu packets; no dumps written, "
                 "checks not run\n",
                 stopName(stop, monitor.stopSignal()), stats.packets, text.size());
    return 128 + monitor.stopSignal();
  }
  try {
    for (const Dump &d : dumps)
      writeDump(runtime, d);
  } catch (const io::FileError &e) {
    throw OutputError(e.what());
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
      "max-packets", po::value<std::string>(), "stop after this many packets")(
      "max-cycles", po::value<std::string>(),
      "do not start a packet that would take the run past this many cycles of the ISS's "
      "cycle model (known before the packet runs); exit code 1 if one is refused")(
      "trace,t", "print every executed packet with its cycles and bytes")(
      "trace-json", po::value<std::string>(), "write a Perfetto/Chrome trace timeline")(
      "stats-json", po::value<std::string>(),
      "write statistics as JSON: per engine, per op class and per packet (cycles, bytes, MACs, "
      "roofline bound; on cosim also the ISS's predicted cycles)")(
      "mem-latency", po::value<std::string>(),
      "memory latency in cycles, for the RTL and the ISS's cycle model (default "
      "$NPU_RTL_LATENCY or isa/hardware.td's)")(
      "mem-width", po::value<std::string>(),
      "memory data width in bytes per cycle, a power of two up to the AXI width (default "
      "$NPU_RTL_MEM_WIDTH or the AXI width)")(
      "mem-stall-percent", po::value<std::string>(),
      "percentage of memory wait-state cycles (default $NPU_RTL_STALL_PERCENT or 0)")(
      "vcd", po::value<std::string>(), "rtl, cosim: write a VCD waveform of the RTL")(
      "fst", po::value<std::string>(),
      "rtl, cosim: write an FST waveform of the RTL (with opcode and state names)")(
      "gtkw", po::value<std::string>(),
      "write a GTKWave save file that opens the --fst or --vcd waveform with the decoded and "
      "per-engine signals")("vcd-start", po::value<std::string>(),
                            "first clock cycle of the --vcd or --fst waveform (default 0)")(
      "vcd-stop", po::value<std::string>(),
      "clock cycle at which the waveform stops (default: end)")(
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
      "quiet,q", "print only errors and mismatches")(
      "print-memory-map",
      "print the address map (the defaults, or --memory-config's, with --region's changes) as a "
      "Markdown table and exit")("input", po::value<std::string>(), "program: .npubin or .npuasm");
  po::positional_options_description positional;
  positional.add("input", 1);
  po::variables_map vm;
  const cli::Tool tool{"npu-sim", "[options] program.npubin|program.npuasm",
                       "Run an NPU command stream, verify its check regions, report cycles.\n"
                       "SIGINT/SIGTERM stop the run between packets (exit code 128 + signal)."};
  if (auto exit = cli::parse(tool, argc, argv, options, positional, vm))
    return *exit;
  int code;
  {
    RunMonitor monitor;
    try {
      code = run(vm, monitor);
    } catch (const po::error &e) {
      std::cerr << "npu-sim: error: " << e.what() << "\n";
      code = cli::kExitUsage;
    } catch (const OutputError &e) {
      std::cerr << "npu-sim: error: " << e.what() << "\n";
      code = cli::kExitOutput;
    } catch (const std::exception &e) {
      std::cerr << "npu-sim: error: " << e.what() << "\n";
      code = cli::kExitInput;
    }
  }
  return cli::closeStdout(tool, code);
}
