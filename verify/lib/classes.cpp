#include "npu/verify/classes.h"

#include "npu/isa/isa.h"

namespace npu::verify {

bool isPrime(uint64_t n) {
  if (n < 2)
    return false;
  for (uint64_t d = 2; d * d <= n; ++d)
    if (n % d == 0)
      return false;
  return true;
}

ShapeClass shapeClass(uint64_t size) {
  static_assert(isa::hw::kMatrixTile == isa::hw::kVectorLanes,
                "shape classes assume one blocking width; give lanes their own classes");
  constexpr uint64_t tile = isa::hw::kMatrixTile;
  if (size == 1)
    return ShapeClass::One;
  if (size == tile - 1)
    return ShapeClass::TileMinus1;
  if (size == tile)
    return ShapeClass::Tile;
  if (size == tile + 1)
    return ShapeClass::TilePlus1;
  if (size >= kLargeShape)
    return ShapeClass::Large;
  if (isPrime(size))
    return ShapeClass::Prime;
  return ShapeClass::Other;
}

const char *shapeClassName(ShapeClass c) {
  switch (c) {
  case ShapeClass::One: return "1";
  case ShapeClass::TileMinus1: return "tile-1";
  case ShapeClass::Tile: return "tile";
  case ShapeClass::TilePlus1: return "tile+1";
  case ShapeClass::Prime: return "prime";
  case ShapeClass::Large: return "large";
  case ShapeClass::Other: return "other";
  }
  return "?";
}

ValueClass valueClass(uint32_t bits) {
  const bool negative = bits >> 31;
  const uint32_t exponent = (bits >> 23) & 0xff, mantissa = bits & 0x7fffff;
  if (exponent == 0xff)
    return mantissa ? ValueClass::NaN : negative ? ValueClass::NegInf : ValueClass::PosInf;
  if (exponent == 0)
    return mantissa ? ValueClass::Subnormal : negative ? ValueClass::NegZero : ValueClass::PosZero;
  // Within 2^24 of overflow or of the subnormal range: the values whose
  // products, sums and reciprocals leave the normal range.
  if (exponent >= 0xfe - 24)
    return ValueClass::Huge;
  if (exponent <= 1 + 24)
    return ValueClass::Tiny;
  return ValueClass::Normal;
}

const char *valueClassName(ValueClass c) {
  switch (c) {
  case ValueClass::PosZero: return "+0";
  case ValueClass::NegZero: return "-0";
  case ValueClass::Subnormal: return "subnormal";
  case ValueClass::PosInf: return "+inf";
  case ValueClass::NegInf: return "-inf";
  case ValueClass::NaN: return "nan";
  case ValueClass::Huge: return "huge";
  case ValueClass::Tiny: return "tiny";
  case ValueClass::Normal: return "normal";
  }
  return "?";
}

AlignClass alignClass(uint64_t address, uint32_t operandAlign) {
  if (address % 64 == 0)
    return AlignClass::Line;
  if (operandAlign > 4 && address % operandAlign == 0)
    return AlignClass::Operand;
  if (address % 4 == 0)
    return AlignClass::Word;
  return AlignClass::Byte;
}

const char *alignClassName(AlignClass c) {
  switch (c) {
  case AlignClass::Line: return "64";
  case AlignClass::Operand: return "operand";
  case AlignClass::Word: return "word";
  case AlignClass::Byte: return "byte";
  }
  return "?";
}

std::vector<mem::Region> dataRegions() {
  std::vector<mem::Region> regions;
  for (const mem::Region &r : mem::AddressMap::defaults().regions)
    if (r.engineReadable() && r.engineWritable())
      regions.push_back(r);
  return regions;
}

} // namespace npu::verify
