// Executes arbitrary packet streams on the ISS over a small address map:
// every input must end in a clean stop (halt, end or a device fault), never
// in a crash, a sanitizer report or a hang.
#include "npu/sim/iss.h"

#include <cstring>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace npu;
  static const mem::AddressMap map = [] {
    mem::AddressMap m;
    m.regions = {{.name = "weights", .base = 0, .size = 1 << 20},
                 {.name = "activations", .base = 0x1000'0000, .size = 1 << 20},
                 {.name = "rom", .base = 0x2000'0000, .size = 4096, .writable = false},
                 {.name = "csr", .base = 0x3000'0000, .size = 4096, .kind = mem::Region::Kind::Csr}};
    return m;
  }();
  std::vector<isa::Packet> stream(size / isa::kPacketBytes);
  for (size_t i = 0; i < stream.size(); ++i)
    std::memcpy(stream[i].data(), data + i * isa::kPacketBytes, isa::kPacketBytes);
  mem::PhysicalMemory memory(map);
  sim::Iss iss(memory, sim::Mode::Both);
  const sim::RunResult result = iss.run(stream);
  if (result.fault && result.fault->describe().empty())
    __builtin_trap();
  return 0;
}
