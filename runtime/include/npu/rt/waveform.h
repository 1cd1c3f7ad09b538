// The GTKWave save file for a waveform of the RTL (npu-sim --gtkw): the
// decoded signals first (packet index, mnemonic, state names), then
// one group per engine. docs/rtl.md, "Waveforms".
#pragma once

#include <string>
#include <vector>

namespace npu::rt {

// How GTKWave shows a signal.
enum class WaveformRadix {
  Name,  // an enumeration's names (the FST's enum table; a number in a VCD)
  Ascii, // characters (the decoded mnemonic)
  Decimal,
  Hex,
  Bit,
};

struct WaveformSignal {
  std::string name; // as GTKWave names it: npu_top.npu_top.u_cmd.state[4:0]
  WaveformRadix radix;
};

struct WaveformGroup {
  std::string title;
  std::vector<WaveformSignal> signals;
};

// The groups the save file shows, in order.
const std::vector<WaveformGroup> &waveformGroups();

// The save file's text: opens the waveform at `dumpFile` (FST or VCD) with
// waveformGroups().
std::string gtkwaveSaveFile(const std::string &dumpFile);

} // namespace npu::rt
