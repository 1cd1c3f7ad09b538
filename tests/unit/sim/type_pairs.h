// The six types of docs/types.md and their edge values, for tests that
// cover every pair of types (cast): the ISS and RTL op tests and the
// reference model's own tests iterate the same pairs over the same values.
#pragma once

#include "npu/isa/isa.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace npu::test {

inline constexpr isa::DType kAllTypes[] = {isa::DType::f32, isa::DType::bf16, isa::DType::f16,
                                           isa::DType::i32, isa::DType::i64,  isa::DType::b8};

// Whether the dtype operand of the instruction `opcode` accepts `type`.
inline bool accepts(isa::Opcode opcode, isa::DType type) {
  const isa::InstrInfo &info = isa::info(opcode);
  return info.operands[info.operandIndex("dtype")].accepts(static_cast<uint64_t>(type));
}

// Calls f(type) for every type the dtype operand of `opcode` accepts;
// returns how many.
template <class F> int forEachAcceptedType(isa::Opcode opcode, F f) {
  int types = 0;
  for (isa::DType type : kAllTypes)
    if (accepts(opcode, type)) {
      ++types;
      f(type);
    }
  return types;
}

// Calls f(from, to) for every ordered pair of types, identical ones included.
template <class F> void forEachTypePair(F f) {
  for (isa::DType from : kAllTypes)
    for (isa::DType to : kAllTypes)
      f(from, to);
}

// Elements of `type` (their storage bytes, little-endian, in the low bits)
// where a conversion changes behaviour: both zeros, subnormals, infinities,
// NaNs of either sign and payload, the binary32 ties of bf16 and f16, the
// integer ranges' ends and the values just past them, integers that
// binary32 rounds (ties included, and ties decided by a bit far below).
inline std::vector<uint64_t> edgeElements(isa::DType type) {
  switch (type) {
  case isa::DType::f32:
    return {0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x00800000, 0x3f800000, 0xbf800000,
            0x3fc00000, 0xbfc00000, 0x40200000, 0xc0200000, 0x3f7fffff, 0xbf7fffff, 0x3f808000,
            0x3f818000, 0x33000000, 0x33000001, 0x477fe000, 0x477ff000, 0x4effffff, 0x4f000000,
            0xcf000000, 0xcf000001, 0x4f800000, 0xcf800000, 0x5effffff, 0x5f000000, 0xdf000000,
            0xdf000001, 0x7f7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001};
  case isa::DType::bf16:
    return {0x0000, 0x8000, 0x0001, 0x807f, 0x0080, 0x3f80, 0xbf80, 0x3fc0, 0xc020, 0x4f00,
            0xcf00, 0xcf01, 0x5f00, 0xdf00, 0x7f7f, 0x7f80, 0xff80, 0x7fc0, 0xffc1, 0x7f81};
  case isa::DType::f16:
    return {0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x3c00, 0xbc00, 0x3e00, 0xbe00,
            0xc100, 0x3bff, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfe01, 0x7c01};
  case isa::DType::i32:
    return {0,          1,          0xffffffff, 0x7fffffff, 0x80000000, 0x80000001, 0x01000001,
            0x01000003, 0xfeffffff, 0x0000fff0, 0x7fffff80, 0x7fffffc0, 2,          0xfffffffe};
  case isa::DType::i64:
    return {0,
            1,
            ~uint64_t(0),
            0x7fffffffffffffff,
            0x8000000000000000,
            0x8000000000000001,
            0x000000007fffffff,
            0x0000000080000000,  // 2^31: just past the int32 range
            0xffffffff7fffffff,  // -2^31 - 1
            0xffffffff80000000,  // -2^31
            0x0000000100000001,  // 2^32 + 1
            0x0000000001000001,  // 2^24 + 1: a tie
            0x0000010000010001,  // 2^40 + 2^16 + 1: a tie broken by a low bit
            0x0000010000010000,  // 2^40 + 2^16: a tie, to even
            0x0020000000000001,  // 2^53 + 1
            0x7fffff8000000000,  // the largest int64 below 2^63 that binary32 holds
            0x7fffffc000000000}; // rounds up to 2^63
  case isa::DType::b8: return {0, 1, 2, 0x80, 0xff};
  }
  return {};
}

// The storage size of `type`: its Bytes in the .td's DType.
inline unsigned typeBytes(isa::DType type) {
  for (const isa::EnumInfo *e : isa::enums())
    if (std::string_view(e->name) == "DType")
      if (const isa::EnumValueInfo *v = e->findValue(static_cast<uint32_t>(type)))
        return v->bytes;
  return 0;
}

// Calls f(stype, dtype) for every pair of types the instruction's operands
// `stype` and `dtype` accept (its .td record's lists); returns the count.
template <class F> int forEachAcceptedTypePair(const isa::InstrInfo &info, F f) {
  const isa::OperandInfo &from = info.operands[info.operandIndex("stype")];
  const isa::OperandInfo &to = info.operands[info.operandIndex("dtype")];
  int pairs = 0;
  forEachTypePair([&](isa::DType s, isa::DType d) {
    if (from.accepts(static_cast<uint64_t>(s)) && to.accepts(static_cast<uint64_t>(d))) {
      ++pairs;
      f(s, d);
    }
  });
  return pairs;
}

// Elements of `type` packed little-endian into 32-bit words, the last word
// padded with `pad` bytes.
inline std::vector<uint32_t> packedWords(isa::DType type, const std::vector<uint64_t> &elements,
                                         uint8_t pad = 0) {
  const unsigned size = typeBytes(type);
  std::vector<uint8_t> bytes;
  for (uint64_t e : elements)
    for (unsigned b = 0; b < size; ++b)
      bytes.push_back(static_cast<uint8_t>(e >> (8 * b)));
  while (bytes.size() % 4)
    bytes.push_back(pad);
  std::vector<uint32_t> words(bytes.size() / 4);
  for (size_t w = 0; w < words.size(); ++w)
    for (unsigned b = 0; b < 4; ++b)
      words[w] |= uint32_t(bytes[4 * w + b]) << (8 * b);
  return words;
}

// The inputs of a cast test of a source type: its edge elements from an
// address on a beat's start, then the same repeated over more than two
// chunks of the vector engine (CH = 128 elements) from a word past a beat's
// start (`skew` bytes), so that chunks and beats start inside an i64 and
// the narrow types' last word is partial.
struct CastCase {
  std::vector<uint64_t> elements;
  unsigned skew = 0;
};
inline std::vector<CastCase> castCases(isa::DType from) {
  const std::vector<uint64_t> edges = edgeElements(from);
  CastCase spread{{}, 4};
  for (size_t i = 0; i < 301; ++i)
    spread.elements.push_back(edges[i % edges.size()]);
  return {{edges, 0}, spread};
}

// `skew` bytes of `pad`, then the elements of `type` packed by packedWords.
inline std::vector<uint32_t> skewedWords(isa::DType type, const std::vector<uint64_t> &elements,
                                         unsigned skew, uint8_t pad) {
  std::vector<uint32_t> words(skew / 4, 0x01010101u * pad);
  const std::vector<uint32_t> packed = packedWords(type, elements, pad);
  words.insert(words.end(), packed.begin(), packed.end());
  return words;
}

// The name of a type in the .td ("f32", ...).
inline std::string typeName(isa::DType type) {
  for (const isa::EnumInfo *e : isa::enums())
    if (std::string_view(e->name) == "DType")
      if (const isa::EnumValueInfo *v = e->findValue(static_cast<uint32_t>(type)))
        return v->name;
  return "?";
}

// Calls run(stype, dtype, case, inPlace) for every CAST test: each pair of
// types CAST accepts, each of castCases, out of place and, where the types
// have one size, in place. Returns the number of pairs.
template <class Run> int forEachCastTest(Run run) {
  return forEachAcceptedTypePair(isa::info(isa::Opcode::CAST), [&](isa::DType from, isa::DType to) {
    for (const CastCase &c : castCases(from))
      for (bool inPlace : {false, true})
        if (!inPlace || typeBytes(from) == typeBytes(to))
          run(from, to, c, inPlace);
  });
}

// The CAST of one test: its source words placed by place(words) (a twin's
// values(), returning their address), its destination filled with a
// pattern first (or the source, in place).
template <class Place>
isa::inst::Cast castOf(isa::DType from, isa::DType to, const CastCase &c, bool inPlace,
                       Place place) {
  isa::inst::Cast op;
  op.n = static_cast<uint32_t>(c.elements.size());
  op.stype = from;
  op.dtype = to;
  op.src = place(skewedWords(from, c.elements, c.skew, 0x5a)) + c.skew;
  op.dst =
      inPlace ? op.src
              : place(std::vector<uint32_t>((c.skew + op.n * typeBytes(to) + 3) / 4, 0xa5a5a5a5u)) +
                    c.skew;
  return op;
}

inline std::string castName(const isa::inst::Cast &op, bool inPlace) {
  return "cast " + typeName(op.stype) + " -> " + typeName(op.dtype) + " of " +
         std::to_string(op.n) + (inPlace ? " in place" : "");
}

} // namespace npu::test
