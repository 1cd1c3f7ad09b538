#include "npu/sim/profile.h"

#include "arith_util.h"
#include "npu/sim/iss.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace npu::sim {

namespace {
const char *engineNameAt(size_t i) { return isa::engineName(static_cast<isa::Engine>(i)); }
} // namespace

void account(Stats &stats, const PacketRecord &record) {
  const auto add = [&stats](uint64_t &counter, uint64_t amount) {
    counter = satAdd(counter, amount);
    stats.saturated |= counter == UINT64_MAX;
  };
  const uint64_t cycles = record.endCycle - record.startCycle;
  add(stats.packets, 1);
  stats.cycles = std::max(stats.cycles, record.endCycle);
  stats.saturated |= stats.cycles == UINT64_MAX;
  add(stats.bytesRead, record.bytesRead);
  add(stats.bytesWritten, record.bytesWritten);
  Stats::Engine &engine = stats.engines[static_cast<size_t>(record.engine)];
  add(engine.packets, 1);
  add(engine.busyCycles, cycles);
  Stats::Op &op = stats.ops[static_cast<size_t>(&isa::info(record.opcode) - isa::instructions().data())];
  add(op.packets, 1);
  add(op.cycles, cycles);
}

std::string statsJson(const Stats &stats, std::span<const mem::PhysicalMemory::RegionStats> regions,
                      std::span<const PacketRecord> records, std::span<const isa::Packet> packets,
                      const MemoryTiming &memory) {
  nlohmann::ordered_json j;
  j["packets"] = stats.packets;
  j["cycles"] = stats.cycles;
  j["bytes_read"] = stats.bytesRead;
  j["bytes_written"] = stats.bytesWritten;
  j["saturated"] = stats.saturated;
  for (size_t e = 0; e < kNumEngines; ++e) {
    const Stats::Engine &engine = stats.engines[e];
    j["engines"][engineNameAt(e)] = {
        {"packets", engine.packets},
        {"busy_cycles", engine.busyCycles},
        {"utilization", stats.cycles ? double(engine.busyCycles) / double(stats.cycles) : 0.0}};
  }
  j["ops"] = nlohmann::ordered_json::object();
  const auto instructions = isa::instructions();
  for (size_t i = 0; i < instructions.size(); ++i)
    if (stats.ops[i].packets)
      j["ops"][instructions[i].mnemonic] = {{"packets", stats.ops[i].packets},
                                            {"cycles", stats.ops[i].cycles},
                                            {"family", instructions[i].family}};
  // Per packet, and the matrix engine's achieved rate over its packets.
  uint64_t matrixMacs = 0, matrixCycles = 0;
  j["packet_records"] = nlohmann::ordered_json::array();
  for (const PacketRecord &r : records) {
    nlohmann::ordered_json p;
    const uint64_t cycles = r.endCycle - r.startCycle;
    p["index"] = r.index;
    p["op"] = isa::info(r.opcode).mnemonic;
    p["engine"] = isa::engineName(r.engine);
    p["start"] = r.startCycle;
    p["cycles"] = cycles;
    if (r.predicted) {
      p["predicted_cycles"] = r.predicted->cycles;
      p["predicted_bytes_read"] = r.predicted->bytesRead;
      p["predicted_bytes_written"] = r.predicted->bytesWritten;
      p["predicted_bytes_exact"] = r.predicted->bytesExact;
    }
    p["bytes_read"] = r.bytesRead;
    p["bytes_written"] = r.bytesWritten;
    if (r.index < packets.size())
      if (const std::optional<Roofline> bound = roofline(packets[r.index], memory)) {
        p["macs"] = bound->macs;
        p["elements"] = bound->elements;
        p["roofline"] = {{"compute_cycles", bound->computeCycles},
                         {"memory_cycles", bound->memoryCycles},
                         {"bound", bound->limiter()},
                         {"percent_of_bound",
                          cycles ? 100.0 * double(bound->cycles()) / double(cycles) : 0.0}};
        if (r.engine == isa::Engine::Matrix) {
          matrixMacs = satAdd(matrixMacs, bound->macs);
          matrixCycles = satAdd(matrixCycles, cycles);
        }
      }
    j["packet_records"].push_back(std::move(p));
  }
  if (!records.empty())
    j["matrix_macs_per_cycle"] = matrixCycles ? double(matrixMacs) / double(matrixCycles) : 0.0;
  for (const mem::PhysicalMemory::RegionStats &region : regions)
    j["memory"].push_back({{"region", region.name},
                           {"bytes_read", region.bytesRead},
                           {"bytes_written", region.bytesWritten},
                           {"resident_bytes", region.residentBytes}});
  return j.dump(2) + "\n";
}

std::string perfettoTraceJson(std::span<const PacketRecord> records, const std::string &process) {
  nlohmann::json events = nlohmann::json::array();
  for (size_t e = 0; e < kNumEngines; ++e)
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 1},
                      {"tid", e},
                      {"args", {{"name", std::string(engineNameAt(e)) + " engine"}}}});
  events.push_back(
      {{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", process}}}});
  for (const PacketRecord &r : records) {
    const isa::InstrInfo &info = isa::info(r.opcode);
    nlohmann::json args = {{"packet", r.index},
                           {"cycles", r.endCycle - r.startCycle},
                           {"bytes_read", r.bytesRead},
                           {"bytes_written", r.bytesWritten}};
    if (r.predicted)
      args["predicted_cycles"] = r.predicted->cycles;
    // Trace-event timestamps are microseconds: one cycle shows as 1 ns.
    events.push_back({{"name", info.mnemonic},
                      {"cat", info.family},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", static_cast<size_t>(r.engine)},
                      {"ts", double(r.startCycle) / 1000.0},
                      {"dur", double(r.endCycle - r.startCycle) / 1000.0},
                      {"args", std::move(args)}});
  }
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ns"}}.dump() + "\n";
}

} // namespace npu::sim
