#include "npu/sim/iss.h"

#include "arith_util.h"
#include "context.h"
#include "host_threads.h"
#include "npu/arith/float_env.h"
#include "timing.h"

#include <stdexcept>
#include <string>

namespace npu::sim {

namespace {

// A bug of the semantics (a span outside the checked ranges, a kernel
// handed less memory than it reaches) names the packet it happened in.
template <class Op> void executeNamingThePacket(ExecContext &ctx, const Op &op) {
  try {
    execute(ctx, op);
  } catch (const std::logic_error &e) {
    throw std::logic_error("packet " + std::to_string(ctx.packetIndex()) + " (" +
                           ctx.info().mnemonic + "): " + e.what());
  }
}

} // namespace

const char *modeName(Mode mode) {
  switch (mode) {
  case Mode::Func: return "func";
  case Mode::Perf: return "perf";
  case Mode::Both: return "both";
  }
  return "?";
}

std::optional<Mode> parseMode(std::string_view name) {
  for (Mode m : {Mode::Func, Mode::Perf, Mode::Both})
    if (name == modeName(m))
      return m;
  return std::nullopt;
}

const char *stopReasonName(StopReason reason) {
  switch (reason) {
  case StopReason::Halt: return "halt";
  case StopReason::EndOfStream: return "end of stream";
  case StopReason::Fault: return "fault";
  case StopReason::PacketLimit: return "packet limit";
  }
  return "?";
}

namespace {
// What the cycle model makes of a packet that decodes.
struct Analysis {
  isa::Instruction decoded;
  Work work;
  PacketTiming timing;
};
std::optional<Analysis> analyse(std::span<const uint8_t, isa::kPacketBytes> packet,
                                const MemoryTiming &memory) {
  isa::Instruction decoded;
  if (!isa::decode(packet, decoded, nullptr, nullptr))
    return std::nullopt;
  Work work;
  switch (decoded.opcode) {
#define NPU_WORK(NAME, Type, family)                                                               \
  case isa::Opcode::NAME: work = sim::work(isa::inst::Type::fromPacket(packet.data())); break;
    NPU_FOR_EACH_INSTRUCTION(NPU_WORK)
#undef NPU_WORK
  }
  return Analysis{decoded, work, packetTiming(decoded, work, memory)};
}
} // namespace

std::optional<uint64_t> predictCycles(std::span<const uint8_t, isa::kPacketBytes> packet,
                                      const MemoryTiming &memory) {
  const std::optional<Analysis> a = analyse(packet, memory);
  if (!a)
    return std::nullopt;
  return a->timing.cycles;
}

std::optional<Roofline> roofline(std::span<const uint8_t, isa::kPacketBytes> packet,
                                 const MemoryTiming &memory) {
  const std::optional<Analysis> a = analyse(packet, memory);
  if (!a)
    return std::nullopt;
  const Work &work = a->work;
  const isa::InstrInfo &info = *isa::findOpcode(isa::detail::load32(packet.data(), 0));
  Roofline r;
  if (info.engine == isa::Engine::Matrix) {
    r.macs = satMul(satMul(satMul(work.m, work.n), work.k), work.batch);
    r.computeCycles = ceilDiv(r.macs, uint64_t(isa::hw::kMatrixTile) * isa::hw::kMatrixTile);
  } else if (info.engine != isa::Engine::Control) {
    r.elements = work.elements;
    r.computeCycles = ceilDiv(r.elements, isa::hw::kVectorLanes);
    // A micro-coded step takes a cycle per ROM word.
    if (info.engine == isa::Engine::Vector)
      r.computeCycles = vectorLaneCycles(a->decoded).value_or(r.computeCycles);
  }
  // The bytes the engine moves for this packet (the cycle model's requests).
  const Traffic &traffic = a->timing.traffic;
  const uint64_t busiest = std::max(traffic.bytesRead, traffic.bytesWritten);
  r.memoryCycles =
      ceilDiv(busiest, std::min<uint64_t>(memory.bytesPerCycle, isa::hw::kAxiDataBytes));
  return r;
}

Iss::Iss(mem::PhysicalMemory &memory, Mode mode, const MemoryTiming &timing)
    : memory_(memory), mode_(mode), timing_(std::make_unique<PacketTimingMemo>(timing)) {
  timing.validate();
  // A bad NPU_ISS_THREADS fails here rather than in the first MATMUL.
  kernels::issThreads();
}

Iss::~Iss() = default;

void Iss::resetStats() {
  stats_ = Stats{};
  prefetched_ = false;
  records_.clear();
}

bool Iss::step(std::span<const uint8_t, isa::kPacketBytes> packet, uint64_t index,
               bool nextQueued) {
  const bool prefetched = std::exchange(prefetched_, false);
  OperandRanges ranges;
  isa::Instruction decoded;
  FaultFacts facts = checkPacket(packet, memory_.map(), ranges, &decoded);
  if (facts.code != mem::FaultCode::None) {
    facts.packetIndex = static_cast<int64_t>(index);
    throw mem::DeviceFault(describeFault(facts, packet, memory_.map()));
  }
  const isa::InstrInfo &info = isa::info(decoded.opcode);
  ExecContext ctx(memory_, index, info, packet, ranges);
  const bool executes = mode_ != Mode::Perf;
  arith::FloatEnvGuard floatEnv;
  Work work;
  switch (info.opcode) {
#define NPU_DISPATCH(NAME, Type, family)                                                           \
  case isa::Opcode::NAME: {                                                                        \
    const auto op = isa::inst::Type::fromPacket(packet.data());                                    \
    work = sim::work(op);                                                                          \
    if (executes)                                                                                  \
      executeNamingThePacket(ctx, op);                                                             \
    break;                                                                                         \
  }
    NPU_FOR_EACH_INSTRUCTION(NPU_DISPATCH)
#undef NPU_DISPATCH
  }
  // A gather's rows are the data's: the cycle model times them where the
  // execution found them.
  work.runs.rows = ctx.gatheredRows();

  // Every mode counts the bytes the engine requests; func charges no cycles.
  // The RTL prefetches the next packet while the matrix or the vector
  // engine computes.
  const bool prefetching =
      nextQueued && (info.engine == isa::Engine::Matrix || info.engine == isa::Engine::Vector);
  const PacketTiming timing = timing_->timing(packet, decoded, work, {prefetched, prefetching});
  prefetched_ = timing.nextPrefetched;
  const uint64_t cycles = mode_ == Mode::Func ? 0 : timing.cycles;
  const PacketRecord record{.index = index,
                            .opcode = info.opcode,
                            .engine = info.engine,
                            .startCycle = stats_.cycles,
                            .endCycle = satAdd(stats_.cycles, cycles),
                            .bytesRead = timing.traffic.bytesRead,
                            .bytesWritten = timing.traffic.bytesWritten,
                            .bytesExact = !timing.traffic.upperBound,
                            .predicted = std::nullopt};
  account(stats_, record);
  if (recording_)
    records_.push_back(record);
  return info.opcode == isa::Opcode::HALT;
}

RunResult Iss::run(std::span<const isa::Packet> packets, uint64_t maxPackets) {
  RunResult result;
  for (uint64_t i = 0; i < packets.size(); ++i) {
    if (result.packetsExecuted == maxPackets) {
      result.reason = StopReason::PacketLimit;
      break;
    }
    try {
      const bool halted = step(packets[i], i, i + 1 < packets.size());
      result.packetsExecuted++;
      if (halted) {
        result.reason = StopReason::Halt;
        break;
      }
    } catch (const mem::DeviceFault &e) {
      result.reason = StopReason::Fault;
      result.fault = e.fault();
      break;
    }
  }
  result.cycles = stats_.cycles;
  return result;
}

} // namespace npu::sim
