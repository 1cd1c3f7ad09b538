// The vector engine's typed streams in the ISS (docs/types.md §2): every
// typed memory operand of a vector instruction is read into its lane form
// and written back from it here, so that an instruction's semantics are
// written once per lane form, never per storage type. The conversions are
// npu/arith/convert.h's, which the RTL's stream converters
// (rtl/npu_convert_pkg.sv) equal bit for bit. Internal to libnpu_iss.
#pragma once

#include "context.h"
#include "npu/isa/isa.h"

#include <cstdint>
#include <vector>

namespace npu::sim {

// n elements in lane form. `words`: binary32 patterns (f32 as stored,
// bf16/f16 widened exactly), int32 patterns, the low words of int64s, or
// masks (b8: all ones or zero); `high`: the high words of int64s, empty
// for every other type (the second buffer slot an i64 stream takes).
struct LaneColumns {
  std::vector<uint32_t> words;
  std::vector<uint32_t> high;
};

// The size in bytes of one element of `type`: its Bytes in the .td's DType.
unsigned storageBytes(isa::DType type);

// Reads n elements of `type` at `address` (a range the packet's operand
// checks admitted for reading) into lane form.
LaneColumns loadLanes(ExecContext &ctx, uint64_t address, uint64_t n, isa::DType type);

// Writes lanes.words.size() elements of `type` at `address` from lane form:
// bf16 and f16 rounded to nearest even (f16 with gradual underflow), masks
// as 0x00/0x01, int64s from both columns (`high` must then be as long as
// `words`: std::logic_error otherwise, a bug of the semantics).
void storeLanes(ExecContext &ctx, uint64_t address, isa::DType type, const LaneColumns &lanes);

} // namespace npu::sim
