#include "npu/rt/waveform.h"

#include "npu/isa/isa.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace npu::rt {

namespace {

// GTKWave's trace flags (its TraceEntFlagBits), written in hex after '@'.
constexpr uint64_t kHex = 1u << 1, kDecimal = 1u << 2, kBinary = 1u << 3;
constexpr uint64_t kRightJustify = 1u << 5, kBlank = 1u << 9, kAscii = 1u << 11;
constexpr uint64_t kGroupBegin = 1u << 23, kGroupEnd = 1u << 24;

uint64_t flagsOf(WaveformRadix radix) {
  switch (radix) {
  case WaveformRadix::Name:
    // No number format: GTKWave then applies the signal's FST enum table.
    return kRightJustify;
  case WaveformRadix::Ascii: return kRightJustify | kAscii;
  case WaveformRadix::Decimal: return kRightJustify | kDecimal;
  case WaveformRadix::Hex: return kRightJustify | kHex;
  case WaveformRadix::Bit: return kRightJustify | kBinary;
  }
  return kRightJustify;
}

std::string flagLine(uint64_t flags) {
  char text[24];
  std::snprintf(text, sizeof text, "@%llx\n", static_cast<unsigned long long>(flags));
  return text;
}

// The harness names the model npu_top, the scope of its ports; the design's
// top module is a scope of that name below it.
std::string top(const std::string &signal) {
  return "npu_top.npu_top." + signal;
}

// npu_cmd's dbg_mnemonic: npu_isa_pkg::MNEMONIC_BITS, 8 bits per character
// of the longest mnemonic.
std::string mnemonicSignal() {
  size_t longest = 1;
  for (const isa::InstrInfo &info : isa::instructions())
    longest = std::max(longest, std::strlen(info.mnemonic));
  return top("u_cmd.dbg_mnemonic[" + std::to_string(8 * longest - 1) + ":0]");
}

} // namespace

const std::vector<WaveformGroup> &waveformGroups() {
  using enum WaveformRadix;
  static const std::vector<WaveformGroup> groups = {
      {"Decoded",
       {{top("clk"), Bit},
        {top("u_cmd.dbg_packet_index[63:0]"), Decimal},
        {mnemonicSignal(), Ascii},
        {top("u_cmd.state[4:0]"), Name},
        {top("u_dma.state[3:0]"), Name},
        {top("u_matrix.mstate[2:0]"), Name},
        {top("u_matrix.xstate[0:0]"), Name},
        {top("u_vector.state[4:0]"), Name}}},
      {"Command processor",
       {{top("rst_n"), Bit},
        {top("dbg_active"), Bit},
        {top("ring_head[31:0]"), Decimal},
        {top("ring_tail[31:0]"), Decimal},
        {top("u_cmd.engine[2:0]"), Name},
        {top("port_owner[1:0]"), Decimal},
        {top("dma_start"), Bit},
        {top("matrix_start"), Bit},
        {top("vector_start"), Bit},
        {top("engine_done"), Bit},
        {top("engine_fault"), Bit},
        {top("pkt_done"), Bit},
        {top("pkt_fault"), Bit},
        {top("cmd_fault_code[3:0]"), Decimal},
        {top("cycles[63:0]"), Decimal}}},
      {"DMA",
       {{top("u_dma.state[3:0]"), Name},
        {top("u_dma.wstate[1:0]"), Name},
        {top("u_dma.start"), Bit},
        {top("u_dma.done"), Bit},
        {top("u_dma.fault"), Bit}}},
      {"Matrix",
       {{top("u_matrix.mstate[2:0]"), Name},
        {top("u_matrix.xstate[0:0]"), Name},
        {top("u_matrix.acc_phase[1:0]"), Name},
        {top("u_matrix.run_kind[2:0]"), Name},
        {top("u_matrix.start"), Bit},
        {top("u_matrix.done"), Bit},
        {top("u_matrix.fault"), Bit}}},
      {"Vector",
       {{top("u_vector.state[4:0]"), Name},
        {top("u_vector.compute_state[4:0]"), Name},
        {top("u_vector.start"), Bit},
        {top("u_vector.done"), Bit},
        {top("u_vector.fault"), Bit}}},
      {"Memory port",
       {{top("u_mem_port.r_state[1:0]"), Name},
        {top("u_mem_port.w_state[2:0]"), Name},
        {top("u_mem_port.req_valid"), Bit},
        {top("u_mem_port.req_ready"), Bit},
        {top("u_mem_port.req_write"), Bit},
        {top("u_mem_port.req_addr[63:0]"), Hex},
        {top("u_mem_port.idle"), Bit},
        {top("mem_done"), Bit},
        {top("mem_error"), Bit},
        {top("m_axi_arvalid"), Bit},
        {top("m_axi_arready"), Bit},
        {top("m_axi_araddr[63:0]"), Hex},
        {top("m_axi_arlen[7:0]"), Decimal},
        {top("m_axi_rvalid"), Bit},
        {top("m_axi_rready"), Bit},
        {top("m_axi_awvalid"), Bit},
        {top("m_axi_awready"), Bit},
        {top("m_axi_awaddr[63:0]"), Hex},
        {top("m_axi_awlen[7:0]"), Decimal},
        {top("m_axi_wvalid"), Bit},
        {top("m_axi_wready"), Bit},
        {top("m_axi_bvalid"), Bit},
        {top("m_axi_bready"), Bit}}},
  };
  return groups;
}

std::string gtkwaveSaveFile(const std::string &dumpFile) {
  std::string text = "[*] GTKWave save file for the NPU's RTL (npu-sim --gtkw; docs/rtl.md)\n"
                     "[dumpfile] \"" +
                     dumpFile + "\"\n[timestart] 0\n";
  for (const WaveformGroup &group : waveformGroups()) {
    text += flagLine(kGroupBegin | kBlank) + "-" + group.title + "\n";
    uint64_t flags = 0;
    for (const WaveformSignal &signal : group.signals) {
      // A flag line applies to the signals after it, until the next one.
      if (const uint64_t wanted = flagsOf(signal.radix); wanted != flags) {
        text += flagLine(wanted);
        flags = wanted;
      }
      text += signal.name + "\n";
    }
    text += flagLine(kGroupEnd | kBlank) + "-" + group.title + "\n";
  }
  return text;
}

} // namespace npu::rt
