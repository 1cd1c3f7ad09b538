#include "remote_protocol.h"

#include <algorithm>

namespace npu::remote {

Fault toProto(const mem::Fault &fault) {
  Fault m;
  m.set_code(static_cast<uint32_t>(fault.code));
  m.set_address(fault.address);
  m.set_length(fault.length);
  m.set_access(static_cast<uint32_t>(fault.access));
  m.set_packet_index(fault.packetIndex);
  m.set_instruction(fault.instruction);
  m.set_operand(fault.operand);
  m.set_other_operand(fault.otherOperand);
  m.set_region(fault.region);
  m.set_detail(fault.detail);
  return m;
}

mem::Fault fromProto(const Fault &m) {
  mem::Fault fault;
  fault.code = static_cast<mem::FaultCode>(m.code());
  fault.address = m.address();
  fault.length = m.length();
  fault.access = static_cast<mem::Access>(m.access());
  fault.packetIndex = m.packet_index();
  fault.instruction = m.instruction();
  fault.operand = m.operand();
  fault.otherOperand = m.other_operand();
  fault.region = m.region();
  fault.detail = m.detail();
  return fault;
}

Stats toProto(const sim::Stats &stats) {
  Stats m;
  m.set_packets(stats.packets);
  m.set_cycles(stats.cycles);
  m.set_bytes_read(stats.bytesRead);
  m.set_bytes_written(stats.bytesWritten);
  m.set_saturated(stats.saturated);
  for (const sim::Stats::Engine &engine : stats.engines) {
    m.add_engine_packets(engine.packets);
    m.add_engine_busy_cycles(engine.busyCycles);
  }
  for (const sim::Stats::Op &op : stats.ops) {
    m.add_op_packets(op.packets);
    m.add_op_cycles(op.cycles);
  }
  return m;
}

sim::Stats fromProto(const Stats &m) {
  sim::Stats stats;
  stats.packets = m.packets();
  stats.cycles = m.cycles();
  stats.bytesRead = m.bytes_read();
  stats.bytesWritten = m.bytes_written();
  stats.saturated = m.saturated();
  // A server built from another ISA revision may count other engines or
  // opcodes; the common prefix is what both mean the same by.
  for (size_t i = 0; i < std::min<size_t>(stats.engines.size(), m.engine_packets_size()); ++i)
    stats.engines[i] = {m.engine_packets(int(i)), m.engine_busy_cycles(int(i))};
  for (size_t i = 0; i < std::min<size_t>(stats.ops.size(), m.op_packets_size()); ++i)
    stats.ops[i] = {m.op_packets(int(i)), m.op_cycles(int(i))};
  return stats;
}

Records toProto(const std::vector<sim::PacketRecord> &records) {
  Records m;
  m.mutable_records()->Reserve(int(records.size()));
  for (const sim::PacketRecord &record : records) {
    PacketRecord &r = *m.add_records();
    r.set_index(record.index);
    r.set_opcode(static_cast<uint32_t>(record.opcode));
    r.set_engine(static_cast<uint32_t>(record.engine));
    r.set_start_cycle(record.startCycle);
    r.set_end_cycle(record.endCycle);
    r.set_bytes_read(record.bytesRead);
    r.set_bytes_written(record.bytesWritten);
    r.set_bytes_exact(record.bytesExact);
    if (record.predicted) {
      r.set_has_prediction(true);
      r.set_predicted_cycles(record.predicted->cycles);
      r.set_predicted_bytes_read(record.predicted->bytesRead);
      r.set_predicted_bytes_written(record.predicted->bytesWritten);
      r.set_predicted_bytes_exact(record.predicted->bytesExact);
    }
  }
  return m;
}

std::vector<sim::PacketRecord> fromProto(const Records &m) {
  std::vector<sim::PacketRecord> records;
  records.reserve(m.records_size());
  for (const PacketRecord &r : m.records()) {
    sim::PacketRecord record;
    record.index = r.index();
    record.opcode = static_cast<isa::Opcode>(r.opcode());
    record.engine = static_cast<isa::Engine>(r.engine());
    record.startCycle = r.start_cycle();
    record.endCycle = r.end_cycle();
    record.bytesRead = r.bytes_read();
    record.bytesWritten = r.bytes_written();
    record.bytesExact = r.bytes_exact();
    if (r.has_prediction())
      record.predicted =
          sim::PacketRecord::Prediction{r.predicted_cycles(), r.predicted_bytes_read(),
                                        r.predicted_bytes_written(), r.predicted_bytes_exact()};
    records.push_back(record);
  }
  return records;
}

MemoryStatsReply toProto(const std::vector<mem::PhysicalMemory::RegionStats> &regions) {
  MemoryStatsReply m;
  for (const mem::PhysicalMemory::RegionStats &region : regions) {
    RegionStats &r = *m.add_regions();
    r.set_name(region.name);
    r.set_base(region.base);
    r.set_size(region.size);
    r.set_bytes_read(region.bytesRead);
    r.set_bytes_written(region.bytesWritten);
    r.set_resident_bytes(region.residentBytes);
  }
  return m;
}

std::vector<mem::PhysicalMemory::RegionStats> fromProto(const MemoryStatsReply &m) {
  std::vector<mem::PhysicalMemory::RegionStats> regions;
  for (const RegionStats &r : m.regions())
    regions.push_back(
        {r.name(), r.base(), r.size(), r.bytes_read(), r.bytes_written(), r.resident_bytes()});
  return regions;
}

bool tokensEqual(std::string_view a, std::string_view b) {
  unsigned char difference = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i)
    difference |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return difference == 0;
}

} // namespace npu::remote
