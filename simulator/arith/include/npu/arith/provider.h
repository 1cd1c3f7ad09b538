// Primitive providers: the lane operations a generated micro-program
// (npu/arith/microcode.h) is instantiated with. A provider is a type with a
// register type V and one static function per primitive of isa/base.td; the
// generated function `template <class P> typename P::V exp(typename P::V)`
// calls P::fadd, P::constant, ... in the order of the .td steps.
//
// Besides the primitives, a provider has canonicalNan and flushDenormal. The
// host providers run the float primitives on the host FPU under
// FloatEnvGuard, which matches docs/arith.md except that NaN results keep
// host payloads and that fabs/fneg/sel pass denormal inputs through as bits.
// The generator inserts these two calls wherever such a difference could
// become visible (before an integer primitive reads a float result, and on
// the program's result); for the reference provider they are the identity on
// every value a spec-conforming machine can hold.
#pragma once

#include "npu/arith/softfloat.h"

#include <concepts>
#include <cstdint>

namespace npu::arith {

template <class P>
concept PrimitiveProvider = requires(typename P::V a, uint32_t bits, int count) {
  { P::constant(bits) } -> std::same_as<typename P::V>;
  { P::fadd(a, a) } -> std::same_as<typename P::V>;
  { P::fsub(a, a) } -> std::same_as<typename P::V>;
  { P::fmul(a, a) } -> std::same_as<typename P::V>;
  { P::ffma(a, a, a) } -> std::same_as<typename P::V>;
  { P::fmin(a, a) } -> std::same_as<typename P::V>;
  { P::fmax(a, a) } -> std::same_as<typename P::V>;
  { P::fabs(a) } -> std::same_as<typename P::V>;
  { P::fneg(a) } -> std::same_as<typename P::V>;
  { P::flt(a, a) } -> std::same_as<typename P::V>;
  { P::fle(a, a) } -> std::same_as<typename P::V>;
  { P::fisnan(a) } -> std::same_as<typename P::V>;
  { P::fround(a) } -> std::same_as<typename P::V>;
  { P::f2i(a) } -> std::same_as<typename P::V>;
  { P::i2f(a) } -> std::same_as<typename P::V>;
  { P::iadd(a, a) } -> std::same_as<typename P::V>;
  { P::isub(a, a) } -> std::same_as<typename P::V>;
  { P::ishl(a, count) } -> std::same_as<typename P::V>;
  { P::ishr(a, count) } -> std::same_as<typename P::V>;
  { P::isra(a, count) } -> std::same_as<typename P::V>;
  { P::iand(a, a) } -> std::same_as<typename P::V>;
  { P::ior(a, a) } -> std::same_as<typename P::V>;
  { P::ixor(a, a) } -> std::same_as<typename P::V>;
  { P::sel(a, a, a) } -> std::same_as<typename P::V>;
  { P::imul(a, a) } -> std::same_as<typename P::V>;
  { P::imulhu(a, a) } -> std::same_as<typename P::V>;
  { P::ieq(a, a) } -> std::same_as<typename P::V>;
  { P::ilt(a, a) } -> std::same_as<typename P::V>;
  { P::iltu(a, a) } -> std::same_as<typename P::V>;
  { P::ishlv(a, a) } -> std::same_as<typename P::V>;
  { P::ishrv(a, a) } -> std::same_as<typename P::V>;
  { P::israv(a, a) } -> std::same_as<typename P::V>;
  { P::l2f(a, a) } -> std::same_as<typename P::V>;
  { P::f2iz(a) } -> std::same_as<typename P::V>;
  { P::f2lzlo(a) } -> std::same_as<typename P::V>;
  { P::f2lzhi(a) } -> std::same_as<typename P::V>;
  { P::canonicalNan(a) } -> std::same_as<typename P::V>;
  { P::flushDenormal(a) } -> std::same_as<typename P::V>;
};

// The golden model: one lane, every primitive from npu/arith/softfloat.h.
struct ReferenceProvider {
  using V = uint32_t;
  static V constant(uint32_t bits) { return bits; }
  static V fadd(V a, V b) { return soft::fadd(a, b); }
  static V fsub(V a, V b) { return soft::fsub(a, b); }
  static V fmul(V a, V b) { return soft::fmul(a, b); }
  static V ffma(V a, V b, V c) { return soft::ffma(a, b, c); }
  static V fmin(V a, V b) { return soft::fmin(a, b); }
  static V fmax(V a, V b) { return soft::fmax(a, b); }
  static V fabs(V a) { return soft::fabs(a); }
  static V fneg(V a) { return soft::fneg(a); }
  static V flt(V a, V b) { return soft::flt(a, b); }
  static V fle(V a, V b) { return soft::fle(a, b); }
  static V fisnan(V a) { return soft::fisnan(a); }
  static V fround(V a) { return soft::fround(a); }
  static V f2i(V a) { return soft::f2i(a); }
  static V i2f(V a) { return soft::i2f(a); }
  static V iadd(V a, V b) { return a + b; }
  static V isub(V a, V b) { return a - b; }
  static V ishl(V a, int count) { return a << count; }
  static V ishr(V a, int count) { return a >> count; }
  static V isra(V a, int count) { return static_cast<V>(static_cast<int32_t>(a) >> count); }
  static V iand(V a, V b) { return a & b; }
  static V ior(V a, V b) { return a | b; }
  static V ixor(V a, V b) { return a ^ b; }
  static V sel(V m, V a, V b) { return (m & a) | (~m & b); }
  static V imul(V a, V b) { return soft::imul(a, b); }
  static V imulhu(V a, V b) { return soft::imulhu(a, b); }
  static V ieq(V a, V b) { return soft::ieq(a, b); }
  static V ilt(V a, V b) { return soft::ilt(a, b); }
  static V iltu(V a, V b) { return soft::iltu(a, b); }
  static V ishlv(V a, V b) { return soft::ishlv(a, b); }
  static V ishrv(V a, V b) { return soft::ishrv(a, b); }
  static V israv(V a, V b) { return soft::israv(a, b); }
  static V l2f(V lo, V hi) { return soft::l2f(lo, hi); }
  static V f2iz(V a) { return soft::f2iz(a); }
  static V f2lzlo(V a) { return soft::f2lzlo(a); }
  static V f2lzhi(V a) { return soft::f2lzhi(a); }
  static V canonicalNan(V a) { return soft::isNan(a) ? soft::kCanonicalNan : a; }
  static V flushDenormal(V a) { return soft::isZeroOrDenormal(a) ? (a & soft::kSignBit) : a; }
};

static_assert(PrimitiveProvider<ReferenceProvider>);

} // namespace npu::arith
