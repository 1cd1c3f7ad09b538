// The value classes that the generator aims at and the coverage model
// counts: shape classes of sizes, classes of binary32 values, alignment
// classes of addresses. One definition for both, so that what the
// generator means by "tile+1" is what coverage measures.
#pragma once

#include "npu/mem/address_map.h"

#include <cstdint>
#include <vector>

namespace npu::verify {

// Sizes around the machine's tile and lane widths (isa/hardware.td), primes
// (never a multiple of any blocking factor) and large sizes.
enum class ShapeClass : uint8_t { One, TileMinus1, Tile, TilePlus1, Prime, Large, Other };
inline constexpr uint64_t kLargeShape = 256;
ShapeClass shapeClass(uint64_t size);
const char *shapeClassName(ShapeClass c);
bool isPrime(uint64_t n);

enum class ValueClass : uint8_t {
  PosZero,
  NegZero,
  Subnormal,
  PosInf,
  NegInf,
  NaN,
  Huge,
  Tiny,
  Normal
};
inline constexpr int kValueClasses = 9;
ValueClass valueClass(uint32_t bits);
const char *valueClassName(ValueClass c);

// 64-byte aligned, aligned to the operand's own requirement but not to 64
// bytes, 4-byte (word) aligned only, or byte aligned only.
enum class AlignClass : uint8_t { Line, Operand, Word, Byte };
AlignClass alignClass(uint64_t address, uint32_t operandAlign);
const char *alignClassName(AlignClass c);

// The regions of the default address map that a packet's buffers may use:
// those every engine may read and write (not the CSR window, not the
// command ring).
std::vector<mem::Region> dataRegions();

} // namespace npu::verify
