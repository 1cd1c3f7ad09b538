#include "typed_streams.h"

#include "npu/arith/convert.h"

#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace npu::sim {

namespace {

const isa::EnumInfo &dtypeInfo() {
  static const isa::EnumInfo *const info = [] {
    for (const isa::EnumInfo *e : isa::enums())
      if (std::string_view(e->name) == "DType")
        return e;
    throw std::logic_error("the ISA has no DType enumeration");
  }();
  return *info;
}

// Little-endian element i of `bytes` bytes: memcpy, since a 4-byte aligned
// stream of int64s need not be 8-byte aligned on the host.
template <class T> T element(const uint8_t *base, uint64_t i) {
  T v;
  std::memcpy(&v, base + i * sizeof(T), sizeof(T));
  return v;
}
template <class T> void setElement(uint8_t *base, uint64_t i, T v) {
  std::memcpy(base + i * sizeof(T), &v, sizeof(T));
}

} // namespace

unsigned storageBytes(isa::DType type) {
  const isa::EnumValueInfo *value = dtypeInfo().findValue(static_cast<uint32_t>(type));
  if (value == nullptr || value->bytes == 0)
    throw std::logic_error("DType value " + std::to_string(static_cast<uint32_t>(type)) +
                           " has no element size");
  return value->bytes;
}

LaneColumns loadLanes(ExecContext &ctx, uint64_t address, uint64_t n, isa::DType type) {
  const unsigned size = storageBytes(type);
  const uint8_t *in = ctx.read<uint8_t>(address, n * size).data();
  LaneColumns lanes;
  lanes.words.resize(n);
  switch (type) {
  case isa::DType::f32:
  case isa::DType::i32:
    for (uint64_t i = 0; i < n; ++i)
      lanes.words[i] = element<uint32_t>(in, i);
    break;
  case isa::DType::bf16:
    for (uint64_t i = 0; i < n; ++i)
      lanes.words[i] = arith::widenBf16(element<uint16_t>(in, i));
    break;
  case isa::DType::f16:
    for (uint64_t i = 0; i < n; ++i)
      lanes.words[i] = arith::widenF16(element<uint16_t>(in, i));
    break;
  case isa::DType::i64:
    lanes.high.resize(n);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t v = element<uint64_t>(in, i);
      lanes.words[i] = static_cast<uint32_t>(v);
      lanes.high[i] = static_cast<uint32_t>(v >> 32);
    }
    break;
  case isa::DType::b8:
    for (uint64_t i = 0; i < n; ++i)
      lanes.words[i] = arith::widenB8(in[i]);
    break;
  default: throw std::logic_error("loadLanes: no lane form for this DType value");
  }
  return lanes;
}

void storeLanes(ExecContext &ctx, uint64_t address, isa::DType type, const LaneColumns &lanes) {
  const uint64_t n = lanes.words.size();
  if (type == isa::DType::i64 ? lanes.high.size() != n : !lanes.high.empty())
    throw std::logic_error("storeLanes: the high words must accompany exactly the i64 stores");
  uint8_t *out = ctx.write<uint8_t>(address, n * storageBytes(type)).data();
  switch (type) {
  case isa::DType::f32:
  case isa::DType::i32:
    for (uint64_t i = 0; i < n; ++i)
      setElement<uint32_t>(out, i, lanes.words[i]);
    break;
  case isa::DType::bf16:
    for (uint64_t i = 0; i < n; ++i)
      setElement<uint16_t>(out, i, arith::narrowBf16(lanes.words[i]));
    break;
  case isa::DType::f16:
    for (uint64_t i = 0; i < n; ++i)
      setElement<uint16_t>(out, i, arith::narrowF16(lanes.words[i]));
    break;
  case isa::DType::i64:
    for (uint64_t i = 0; i < n; ++i)
      setElement<uint64_t>(out, i, uint64_t(lanes.high[i]) << 32 | lanes.words[i]);
    break;
  case isa::DType::b8:
    for (uint64_t i = 0; i < n; ++i)
      out[i] = arith::narrowB8(lanes.words[i]);
    break;
  default: throw std::logic_error("storeLanes: no lane form for this DType value");
  }
}

} // namespace npu::sim
