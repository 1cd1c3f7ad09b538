// Waveforms of the RTL (docs/rtl.md, "Waveforms"): an FST written through
// the runtime and read back with GTKWave's FST reader (fstapi) has the
// decoded signals (the packets' mnemonics and a packet index that counts
// them), whole enum tables and values only inside its cycle window; every
// signal the GTKWave save file names exists; VCD is converted from the
// FST; a bad path is a clear error and a device node stays a device node.
#include "npu/rt/backend.h"
#include "npu/rt/runtime.h"
#include "npu/rt/waveform.h"
#include "npu_device.h"

#include <fstapi.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace {

using namespace npu;
using ::testing::HasSubstr;

// Two FILLs (DMA), MATMUL (matrix), EXP and ADD (vector).
std::vector<isa::Packet> exampleStream(rt::Runtime &runtime) {
  constexpr uint32_t n = 8;
  const uint64_t a = runtime.malloc(n * n * 4), b = runtime.malloc(n * n * 4),
                 c = runtime.malloc(n * n * 4);
  isa::inst::Fill fillA;
  fillA.dst = a;
  fillA.count = n * n;
  fillA.value = 0x3f80'0000; // 1.0f
  isa::inst::Fill fillB = fillA;
  fillB.dst = b;
  isa::inst::Matmul mm;
  mm.c = c;
  mm.a = a;
  mm.b = b;
  mm.m = mm.n = mm.k = n;
  isa::inst::Exp exp;
  exp.dst = exp.src = c;
  exp.n = n * n;
  isa::inst::Add add;
  add.dst = add.a = c;
  add.b = a;
  add.rows = n;
  add.cols = n;
  return {isa::packetOf(fillA), isa::packetOf(fillB), isa::packetOf(mm), isa::packetOf(exp),
          isa::packetOf(add)};
}

// Runs the example stream on the rtl backend with a waveform of cycles
// [start, stop); returns the device's cycles.
uint64_t runExample(const std::string &path, rt::WaveformFormat format, uint64_t start = 0,
                    uint64_t stop = UINT64_MAX) {
  rt::RuntimeOptions o;
  o.backend = "rtl";
  o.backendOptions.waveformPath = path;
  o.backendOptions.waveformFormat = format;
  o.backendOptions.waveformStart = start;
  o.backendOptions.waveformStop = stop;
  rt::Runtime runtime(o);
  const std::vector<isa::Packet> stream = exampleStream(runtime);
  runtime.submit(stream);
  runtime.synchronize();
  return runtime.deviceCycles();
}

// GTKWave's ASCII view of a value: its bytes, most significant first,
// without the NUL padding.
std::string ascii(const std::string &bits) {
  std::string text;
  for (size_t i = bits.size() % 8; i < bits.size(); i += 8) {
    const char c = static_cast<char>(std::stoi(bits.substr(i, 8), nullptr, 2));
    if (c)
      text += c;
  }
  return text;
}

std::string mnemonicSignal() {
  for (const rt::WaveformSignal &signal : rt::waveformGroups().front().signals)
    if (signal.name.find(".dbg_mnemonic[") != std::string::npos)
      return signal.name;
  throw std::runtime_error("the save file has no mnemonic");
}

std::string binary(uint64_t value, unsigned width) {
  std::string bits(width, '0');
  for (unsigned i = 0; i < width; ++i)
    if (value >> i & 1)
      bits[width - 1 - i] = '1';
  return bits;
}

// An FST file as fstapi reads it: every variable by GTKWave's name
// (npu_top.npu_top.u_cmd.state[4:0]), the enum tables of the enumerated ones,
// and every value change.
struct FstFile {
  struct Variable {
    fstHandle handle;
    std::map<std::string, std::string> enumNames; // bits -> enumerator
  };
  std::map<std::string, Variable> variables;
  std::map<fstHandle, std::vector<std::pair<uint64_t, std::string>>> changes;
  uint64_t startTime = 0, endTime = 0;
  size_t longestEnumTable = 0;

  explicit FstFile(const std::string &path) {
    void *reader = fstReaderOpen(path.c_str());
    if (!reader)
      throw std::runtime_error("fstapi cannot read '" + path + "'");
    std::vector<std::string> scopes;
    std::map<uint64_t, std::map<std::string, std::string>> tables;
    uint64_t pendingTable = 0;
    while (const fstHier *h = fstReaderIterateHier(reader)) {
      switch (h->htyp) {
      case FST_HT_SCOPE: scopes.push_back(h->u.scope.name); break;
      case FST_HT_UPSCOPE: scopes.pop_back(); break;
      case FST_HT_ATTRBEGIN:
        if (h->u.attr.typ == FST_AT_MISC && h->u.attr.subtype == FST_MT_ENUMTABLE) {
          // A table's definition carries it as text; a reference is nameless.
          if (h->u.attr.name && *h->u.attr.name) {
            // fstapi keeps 512 characters of it (GTKWave, too): a longer
            // table is cut and unreadable.
            longestEnumTable = std::max(longestEnumTable, std::strlen(h->u.attr.name));
            fstETab *table = fstUtilityExtractEnumTableFromString(h->u.attr.name);
            if (!table)
              throw std::runtime_error(std::string("bad enum table: ") + h->u.attr.name);
            for (uint32_t i = 0; i < table->elem_count; ++i)
              tables[h->u.attr.arg][table->val_arr[i]] = table->literal_arr[i];
            fstUtilityFreeEnumTable(table);
          } else {
            pendingTable = h->u.attr.arg; // the next variable's table
          }
        }
        break;
      case FST_HT_VAR: {
        std::string name;
        for (const std::string &scope : scopes)
          name += scope + ".";
        for (char c : std::string(h->u.var.name))
          if (c != ' ')
            name += c;
        variables[name] = {h->u.var.handle, pendingTable ? tables[pendingTable]
                                                         : std::map<std::string, std::string>{}};
        pendingTable = 0;
        break;
      }
      default: break;
      }
    }
    startTime = fstReaderGetStartTime(reader);
    endTime = fstReaderGetEndTime(reader);
    fstReaderSetFacProcessMaskAll(reader);
    fstReaderIterBlocks(
        reader,
        [](void *self, uint64_t time, fstHandle handle, const unsigned char *value) {
          static_cast<FstFile *>(self)->changes[handle].emplace_back(
              time, reinterpret_cast<const char *>(value));
        },
        this, nullptr);
    fstReaderClose(reader);
  }

  const Variable &variable(const std::string &name) const {
    const auto it = variables.find(name);
    if (it == variables.end())
      throw std::runtime_error("no variable " + name);
    return it->second;
  }
  // The values a variable took, consecutive repeats merged.
  std::vector<std::string> values(const std::string &name) const {
    std::vector<std::string> seen;
    const auto it = changes.find(variable(name).handle);
    if (it != changes.end())
      for (const auto &[time, value] : it->second)
        if (seen.empty() || seen.back() != value)
          seen.push_back(value);
    return seen;
  }
};

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + name;
}

TEST(RtlWaveform, FstHasTheDecodedSignalsAndTheSaveFilesSignals) {
  const std::string path = tempPath("npu_rtl_example.fst");
  runExample(path, rt::WaveformFormat::Fst);
  const FstFile fst(path);

  for (const rt::WaveformGroup &group : rt::waveformGroups())
    for (const rt::WaveformSignal &signal : group.signals)
      EXPECT_TRUE(fst.variables.count(signal.name)) << group.title << ": " << signal.name;

  // The packets' mnemonics in stream order, as the .td spells them: the
  // register is empty (all zeros) until the power-up reset, NOP after it.
  std::vector<std::string> mnemonics;
  for (const std::string &bits : fst.values(mnemonicSignal()))
    mnemonics.push_back(ascii(bits));
  std::vector<std::string> expected = {"", isa::findOpcode(0)->mnemonic};
  for (const isa::Opcode op :
       {isa::Opcode::FILL, isa::Opcode::MATMUL, isa::Opcode::EXP, isa::Opcode::ADD})
    expected.push_back(isa::findOpcode(static_cast<uint32_t>(op))->mnemonic);
  EXPECT_EQ(mnemonics, expected);
  EXPECT_THAT(expected, ::testing::ElementsAre("", "nop", "fill", "matmul", "exp", "add"));

  // The packet index counts the five packets.
  std::vector<std::string> indices;
  for (uint64_t i = 0; i <= 5; ++i)
    indices.push_back(binary(i, 64));
  EXPECT_EQ(fst.values("npu_top.npu_top.u_cmd.dbg_packet_index[63:0]"), indices);

  // Engine states are named, and every enum table is whole.
  EXPECT_LT(fst.longestEnumTable, 512u);
  const auto &dmaStates = fst.variable("npu_top.npu_top.u_dma.state[3:0]").enumNames;
  EXPECT_THAT(dmaStates, ::testing::Contains(::testing::Pair(::testing::_, "S_IDLE")));
  const auto &cmdStates = fst.variable("npu_top.npu_top.u_cmd.state[4:0]").enumNames;
  EXPECT_THAT(cmdStates, ::testing::Contains(::testing::Pair(::testing::_, "S_EXECUTE")));
  std::remove(path.c_str());
}

// Time 2c is the low phase of cycle c, 2c + 1 its rising edge.
TEST(RtlWaveform, FstValuesChangeOnlyInsideItsWindow) {
  const std::string path = tempPath("npu_rtl_window.fst");
  ASSERT_GT(runExample(path, rt::WaveformFormat::Fst, 100, 150), 200u);
  const FstFile fst(path);
  EXPECT_EQ(fst.startTime, 200u);
  EXPECT_EQ(fst.endTime, 299u);
  size_t changes = 0;
  for (const auto &[handle, list] : fst.changes)
    for (const auto &[time, value] : list) {
      EXPECT_GE(time, 200u);
      EXPECT_LE(time, 299u);
      ++changes;
    }
  EXPECT_GT(changes, 0u);
  std::remove(path.c_str());
}

// The VCD, converted from the FST, has the same window and the decoded
// signals.
TEST(RtlWaveform, VcdCoversItsCycleWindow) {
  const std::string path = tempPath("npu_rtl_window.vcd");
  {
    mem::PhysicalMemory memory;
    rtl::DeviceOptions options;
    options.waveformPath = path;
    options.waveformStart = 100;
    options.waveformStop = 150;
    rtl::Device device(memory, options);
    isa::inst::Fill fill;
    fill.count = 1024;
    fill.dst = 0x1000'0000;
    const isa::Packet packet = isa::packetOf(fill);
    memory.write(0x2000'0000, packet.data(), packet.size());
    using namespace isa::csr;
    device.writeCsr(RING_BASE_LO, 0x2000'0000);
    device.writeCsr(RING_ENTRIES, 4);
    device.writeCsr(RING_TAIL, 1);
    device.runUntilIdle();
    ASSERT_GT(device.cycle(), 200u);
  }
  std::ifstream vcd(path);
  ASSERT_TRUE(vcd) << path;
  std::string line;
  std::set<std::string> variables;
  std::vector<uint64_t> times;
  while (std::getline(vcd, line)) {
    std::istringstream words(line);
    std::string keyword, type, width, id, name;
    if (words >> keyword >> type >> width >> id >> name && keyword == "$var")
      variables.insert(name);
    if (line.size() > 1 && line[0] == '#')
      times.push_back(std::stoull(line.substr(1)));
  }
  EXPECT_TRUE(variables.count("clk"));
  EXPECT_TRUE(variables.count("dbg_mnemonic"));
  EXPECT_TRUE(variables.count("dbg_packet_index"));
  ASSERT_FALSE(times.empty());
  EXPECT_EQ(times.front(), 200u);
  EXPECT_EQ(times.back(), 299u);
  std::remove(path.c_str());
}

TEST(RtlWaveform, UnwritablePathsAreErrorsInEitherFormat) {
  for (const rtl::WaveformFormat format : {rtl::WaveformFormat::Vcd, rtl::WaveformFormat::Fst}) {
    mem::PhysicalMemory memory;
    rtl::DeviceOptions options;
    options.waveformPath = "/nonexistent-directory/wave";
    options.waveformFormat = format;
    try {
      rtl::Device device(memory, options);
      ADD_FAILURE() << "no error";
    } catch (const std::runtime_error &e) {
      EXPECT_THAT(e.what(), HasSubstr("cannot write the waveform to "
                                      "'/nonexistent-directory/wave': No such file or directory"));
    }
  }
}

// The FST writer unlinks the path it is given: it must never see the
// user's (as root, /dev/null would become a regular file).
TEST(RtlWaveform, ADeviceNodeStaysADeviceNode) {
  for (const rt::WaveformFormat format : {rt::WaveformFormat::Vcd, rt::WaveformFormat::Fst}) {
    runExample("/dev/null", format, 0, 50);
    struct stat st;
    ASSERT_EQ(::stat("/dev/null", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
  }
}

TEST(RtlWaveform, OneWaveformVariableAtATime) {
  ::setenv("NPU_RTL_VCD", "a.vcd", 1);
  ::setenv("NPU_RTL_FST", "a.fst", 1);
  EXPECT_THROW(
      {
        try {
          rtl::DeviceOptions::fromEnvironment();
        } catch (const std::invalid_argument &e) {
          EXPECT_THAT(e.what(), HasSubstr("NPU_RTL_VCD and NPU_RTL_FST are both set"));
          throw;
        }
      },
      std::invalid_argument);
  ::unsetenv("NPU_RTL_VCD");
  const rtl::DeviceOptions fst = rtl::DeviceOptions::fromEnvironment();
  ::unsetenv("NPU_RTL_FST");
  EXPECT_EQ(fst.waveformPath, "a.fst");
  EXPECT_EQ(fst.waveformFormat, rtl::WaveformFormat::Fst);
}

TEST(RtlWaveform, SaveFileOpensTheDumpWithItsGroups) {
  const std::string text = rt::gtkwaveSaveFile("/tmp/run.fst");
  EXPECT_THAT(text, HasSubstr("[dumpfile] \"/tmp/run.fst\"\n"));
  // Groups open with @800200 and close with @1000200, each named.
  for (const rt::WaveformGroup &group : rt::waveformGroups()) {
    EXPECT_THAT(text, HasSubstr("@800200\n-" + group.title + "\n"));
    EXPECT_THAT(text, HasSubstr("@1000200\n-" + group.title + "\n"));
  }
  // The decoded signals come first; the mnemonic in ASCII, the enumerated
  // signals without a number format so that GTKWave applies their tables.
  EXPECT_EQ(text.find("\n-"), text.find("\n-Decoded\n"));
  EXPECT_THAT(text, HasSubstr("@820\n" + mnemonicSignal() + "\n"));
  EXPECT_THAT(text, HasSubstr("@20\nnpu_top.npu_top.u_cmd.state[4:0]\n"));
}

} // namespace
