// Decodes arbitrary 64-byte packets: never crashes, and every accepted
// packet re-encodes to the same bytes and disassembles through the tables.
#include "npu/isa/isa.h"

#include <cstdlib>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace npu::isa;
  for (size_t at = 0; at + kPacketBytes <= size; at += kPacketBytes) {
    std::span<const uint8_t, kPacketBytes> packet(data + at, kPacketBytes);
    Instruction inst;
    std::string error;
    if (!decode(packet, inst, &error)) {
      if (error.empty())
        std::abort();
      continue;
    }
    if (!validate(inst))
      std::abort();
    uint8_t again[kPacketBytes];
    encode(inst, again);
    if (std::memcmp(again, packet.data(), kPacketBytes) != 0)
      std::abort();
  }
  return 0;
}
