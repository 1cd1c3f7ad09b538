// A second, deliberately naive implementation of docs/isa.md and
// docs/arith.md: one element at a time, every float operation through the
// integer-only golden primitives (npu/arith/softfloat.h) and micro-programs
// evaluated by the reference provider. It shares no code with the ISS's
// fast paths, so agreement between the two is evidence for both.
#include "npu/sim/reference.h"

#include "npu/arith/convert.h"
#include "npu/arith/functions.h"
#include "npu/arith/philox.h"
#include "npu/arith/softfloat.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace npu::sim::reference {

namespace {

namespace soft = arith::soft;
using arith::Program;

constexpr uint32_t kLanes = isa::hw::kVectorLanes;
constexpr uint32_t kPlusZero = 0, kMinusInfinity = 0xff800000u, kOne = 0x3f800000u;

uint32_t program(Program p, std::initializer_list<uint32_t> in) {
  return arith::evaluate(p, std::vector<uint32_t>(in), arith::Implementation::Reference);
}

class Mem {
public:
  explicit Mem(mem::PhysicalMemory &m) : m_(m) {}
  uint32_t u32(uint64_t a) {
    uint32_t v;
    m_.read(a, &v, 4);
    return v;
  }
  void u32(uint64_t a, uint32_t v) { m_.write(a, &v, 4); }
  uint8_t u8(uint64_t a) {
    uint8_t v;
    m_.read(a, &v, 1);
    return v;
  }
  void u8(uint64_t a, uint8_t v) { m_.write(a, &v, 1); }
  // A little-endian element of `size` bytes (1, 2, 4 or 8).
  uint64_t element(uint64_t a, unsigned size) {
    uint64_t v = 0;
    for (unsigned b = 0; b < size; ++b)
      v |= uint64_t(u8(a + b)) << (8 * b);
    return v;
  }
  void element(uint64_t a, unsigned size, uint64_t v) {
    for (unsigned b = 0; b < size; ++b)
      u8(a + b, static_cast<uint8_t>(v >> (8 * b)));
  }
  int64_t index(uint64_t base, uint64_t t, isa::IndexType type) {
    if (type == isa::IndexType::i64) {
      int64_t v;
      m_.read(base + 8 * t, &v, 8);
      return v;
    }
    int32_t v;
    m_.read(base + 4 * t, &v, 4);
    return v;
  }
  // Element i of an fp32 array.
  uint32_t f(uint64_t base, uint64_t i) { return u32(base + 4 * i); }
  void f(uint64_t base, uint64_t i, uint32_t v) { u32(base + 4 * i, v); }

private:
  mem::PhysicalMemory &m_;
};

uint32_t laneReduce(const std::vector<uint32_t> &x, bool max) {
  uint32_t lanes[kLanes];
  for (uint32_t &l : lanes)
    l = max ? kMinusInfinity : kPlusZero;
  for (size_t j = 0; j < x.size(); ++j)
    lanes[j % kLanes] =
        max ? soft::fmax(lanes[j % kLanes], x[j]) : soft::fadd(lanes[j % kLanes], x[j]);
  for (uint32_t width = kLanes / 2; width >= 1; width /= 2)
    for (uint32_t l = 0; l < width; ++l)
      lanes[l] = max ? soft::fmax(lanes[2 * l], lanes[2 * l + 1])
                     : soft::fadd(lanes[2 * l], lanes[2 * l + 1]);
  return lanes[0];
}

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

uint32_t fromCount(uint64_t n) {
  return bitsOf(static_cast<float>(n));
}

// The element size of a DType value: its Bytes in the .td.
unsigned typeBytes(uint64_t type) {
  for (const isa::EnumInfo *e : isa::enums())
    if (std::string_view(e->name) == "DType")
      if (const isa::EnumValueInfo *v = e->findValue(type))
        return v->bytes;
  throw std::invalid_argument("no DType value " + std::to_string(type));
}

// An array of a float type (f32, bf16, f16) at `base`: element i read as
// binary32 (widened exactly), or stored from it (rounded once, RNE), as
// the matrix engine and the vector engine's streams do (docs/types.md §2).
class FloatArray {
public:
  FloatArray(Mem &m, uint64_t base, isa::DType type)
      : m_(m), base_(base), type_(type), size_(typeBytes(static_cast<uint64_t>(type))) {}
  uint32_t get(uint64_t i) {
    const uint64_t stored = m_.element(base_ + size_ * i, size_);
    switch (type_) {
    case isa::DType::bf16: return arith::widenBf16(static_cast<uint16_t>(stored));
    case isa::DType::f16: return arith::widenF16(static_cast<uint16_t>(stored));
    default: return static_cast<uint32_t>(stored);
    }
  }
  void set(uint64_t i, uint32_t v) {
    uint64_t stored = v;
    switch (type_) {
    case isa::DType::bf16: stored = arith::narrowBf16(v); break;
    case isa::DType::f16: stored = arith::narrowF16(v); break;
    default: break;
    }
    m_.element(base_ + size_ * i, size_, stored);
  }

private:
  Mem &m_;
  uint64_t base_;
  isa::DType type_;
  unsigned size_;
};

void matmul(FloatArray c, FloatArray a, FloatArray b, uint64_t M, uint64_t K, uint64_t N,
            uint64_t lda, uint64_t ldb, uint64_t ldc, bool ta, bool tb, bool acc) {
  lda = lda ? lda : (ta ? M : K);
  ldb = ldb ? ldb : (tb ? K : N);
  ldc = ldc ? ldc : N;
  for (uint64_t i = 0; i < M; ++i)
    for (uint64_t j = 0; j < N; ++j) {
      uint32_t sum = acc ? c.get(i * ldc + j) : kPlusZero;
      for (uint64_t k = 0; k < K; ++k)
        sum = soft::ffma(a.get(ta ? k * lda + i : i * lda + k),
                         b.get(tb ? j * ldb + k : k * ldb + j), sum);
      c.set(i * ldc + j, sum);
    }
}

// The element function of each binary instruction and of each form with a
// scalar (b is the broadcast element or the scalar).
using namespace isa::inst;
uint32_t element(const Add &, uint32_t a, uint32_t b) {
  return soft::fadd(a, b);
}
uint32_t element(const Sub &, uint32_t a, uint32_t b) {
  return soft::fsub(a, b);
}
uint32_t element(const Mul &, uint32_t a, uint32_t b) {
  return soft::fmul(a, b);
}
uint32_t element(const Div &, uint32_t a, uint32_t b) {
  return program(Program::Div, {a, b});
}
uint32_t element(const Max &, uint32_t a, uint32_t b) {
  return soft::fmax(a, b);
}
uint32_t element(const Min &, uint32_t a, uint32_t b) {
  return soft::fmin(a, b);
}
uint32_t element(const Pow &, uint32_t a, uint32_t b) {
  return program(Program::Pow, {a, b});
}
uint32_t element(const Adds &, uint32_t a, uint32_t s) {
  return soft::fadd(a, s);
}
uint32_t element(const Subs &, uint32_t a, uint32_t s) {
  return soft::fsub(a, s);
}
uint32_t element(const Muls &, uint32_t a, uint32_t s) {
  return soft::fmul(a, s);
}
uint32_t element(const Divs &, uint32_t a, uint32_t s) {
  return program(Program::Div, {a, s});
}
uint32_t element(const Maxs &, uint32_t a, uint32_t s) {
  return soft::fmax(a, s);
}
uint32_t element(const Mins &, uint32_t a, uint32_t s) {
  return soft::fmin(a, s);
}
uint32_t element(const Rsubs &, uint32_t a, uint32_t s) {
  return soft::fsub(s, a);
}
uint32_t element(const Rdivs &, uint32_t a, uint32_t s) {
  return program(Program::Div, {s, a});
}

// The integer element functions (docs/types.md §3) on values widened to 64
// bits (an i32 sign-extended): the store keeps the type's low bits, so the
// sums and products wrap around modulo 2^32 or 2^64 as the type's own
// arithmetic would; min and max compare signed.
uint64_t intElement(const Add &, uint64_t a, uint64_t b) {
  return a + b;
}
uint64_t intElement(const Sub &, uint64_t a, uint64_t b) {
  return a - b;
}
uint64_t intElement(const Mul &, uint64_t a, uint64_t b) {
  return a * b;
}
uint64_t intElement(const Max &, uint64_t a, uint64_t b) {
  return int64_t(a) < int64_t(b) ? b : a;
}
uint64_t intElement(const Min &, uint64_t a, uint64_t b) {
  return int64_t(b) < int64_t(a) ? b : a;
}
uint64_t intElement(const Adds &, uint64_t a, uint64_t s) {
  return a + s;
}
uint64_t intElement(const Subs &, uint64_t a, uint64_t s) {
  return a - s;
}
uint64_t intElement(const Muls &, uint64_t a, uint64_t s) {
  return a * s;
}
uint64_t intElement(const Maxs &, uint64_t a, uint64_t s) {
  return int64_t(a) < int64_t(s) ? s : a;
}
uint64_t intElement(const Mins &, uint64_t a, uint64_t s) {
  return int64_t(s) < int64_t(a) ? s : a;
}
uint64_t intElement(const Rsubs &, uint64_t a, uint64_t s) {
  return s - a;
}

bool isInteger(isa::DType type) {
  return type == isa::DType::i32 || type == isa::DType::i64;
}

// Element i of an integer array of `type`, sign-extended to 64 bits.
uint64_t intAt(Mem &m, uint64_t base, uint64_t i, isa::DType type) {
  if (type == isa::DType::i64)
    return m.element(base + 8 * i, 8);
  return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(m.u32(base + 4 * i))));
}
void intAt(Mem &m, uint64_t base, uint64_t i, isa::DType type, uint64_t v) {
  if (type == isa::DType::i64)
    m.element(base + 8 * i, 8, v);
  else
    m.u32(base + 4 * i, static_cast<uint32_t>(v));
}

// The integer multiplier an f32 alpha stands for on integer types: truncated
// toward zero, saturating at int32's range, NaN 0 (docs/types.md §3).
uint64_t integerAlpha(float alpha) {
  int64_t v = 0;
  if (alpha != alpha)
    v = 0;
  else if (alpha >= 2147483648.0f)
    v = INT32_MAX;
  else if (alpha <= -2147483648.0f)
    v = INT32_MIN;
  else
    v = static_cast<int64_t>(alpha); // truncates toward zero
  return static_cast<uint64_t>(v);
}

// The immediate of a scalar form on an integer type: its 32 bits as an
// int32, sign-extended.
uint64_t integerScalar(float s) {
  return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(bitsOf(s))));
}

// The index of b's element for element (i, j) under bcast.
template <class Op> uint64_t broadcastIndex(const Op &op, uint64_t i, uint64_t j) {
  return op.bcast == isa::Broadcast::none  ? i * op.cols + j
         : op.bcast == isa::Broadcast::row ? j
         : op.bcast == isa::Broadcast::col ? i
                                           : 0;
}

// The instructions of the .td class BinaryOp: rows x cols with b broadcast,
// b scaled by alpha first where the instruction has an alpha.
template <class Op> void binaryOp(Mem &m, const Op &op) {
  if constexpr (requires(uint64_t x) { intElement(op, x, x); }) {
    if (isInteger(op.dtype)) {
      std::vector<uint64_t> out(op.rows * op.cols);
      for (uint64_t i = 0; i < op.rows; ++i)
        for (uint64_t j = 0; j < op.cols; ++j) {
          uint64_t b = intAt(m, op.b, broadcastIndex(op, i, j), op.dtype);
          if constexpr (requires { op.alpha; })
            b *= integerAlpha(op.alpha);
          out[i * op.cols + j] = intElement(op, intAt(m, op.a, i * op.cols + j, op.dtype), b);
        }
      for (uint64_t i = 0; i < out.size(); ++i)
        intAt(m, op.dst, i, op.dtype, out[i]);
      return;
    }
  }
  // Float types: binary32 elements (bf16, f16 widened), rounded once on store.
  FloatArray a(m, op.a, op.dtype), b(m, op.b, op.dtype), dst(m, op.dst, op.dtype);
  std::vector<uint32_t> out(op.rows * op.cols);
  for (uint64_t i = 0; i < op.rows; ++i)
    for (uint64_t j = 0; j < op.cols; ++j) {
      uint32_t y = b.get(broadcastIndex(op, i, j));
      if constexpr (requires { op.alpha; })
        if (op.alpha != 1.0f)
          y = soft::fmul(bitsOf(op.alpha), y);
      out[i * op.cols + j] = element(op, a.get(i * op.cols + j), y);
    }
  for (uint64_t i = 0; i < out.size(); ++i)
    dst.set(i, out[i]);
}

// The instructions of the .td class ScalarOp.
template <class Op> void scalarOp(Mem &m, const Op &op) {
  if constexpr (requires(uint64_t x) { intElement(op, x, x); }) {
    if (isInteger(op.dtype)) {
      for (uint64_t i = 0; i < op.n; ++i)
        intAt(m, op.dst, i, op.dtype,
              intElement(op, intAt(m, op.a, i, op.dtype), integerScalar(op.s)));
      return;
    }
  }
  FloatArray a(m, op.a, op.dtype), dst(m, op.dst, op.dtype);
  for (uint64_t i = 0; i < op.n; ++i)
    dst.set(i, element(op, a.get(i), bitsOf(op.s)));
}

// The compares (isa/compare.td). On f32 the IEEE order is worked out from
// the signs and magnitudes, not by a host float compare that a DAZ mode
// could flush: a NaN is unordered, both zeros are equal, subnormals compare
// by value.
enum class Order { Less, Equal, Greater, Unordered };
Order floatOrder(uint32_t a, uint32_t b) {
  const uint32_t ma = a & 0x7fffffffu, mb = b & 0x7fffffffu;
  if (ma > 0x7f800000u || mb > 0x7f800000u)
    return Order::Unordered;
  if (ma == 0 && mb == 0)
    return Order::Equal;
  const bool na = (a >> 31) != 0, nb = (b >> 31) != 0;
  if (na != nb)
    return na ? Order::Less : Order::Greater;
  if (ma == mb)
    return Order::Equal;
  return (ma < mb) != na ? Order::Less : Order::Greater;
}
Order intOrder(uint64_t a, uint64_t b) {
  return int64_t(a) < int64_t(b) ? Order::Less : a == b ? Order::Equal : Order::Greater;
}
// Element i of a compare operand of `type`, and the order of two of them.
// A float element widened to binary32 (bf16, f16 exactly), an integer, or
// a b8's truth value, 0 or 1 (EQ and NE compare truth values).
uint64_t compareOperand(Mem &m, uint64_t base, uint64_t i, isa::DType type) {
  if (type == isa::DType::b8)
    return m.u8(base + i) != 0;
  return isInteger(type) ? intAt(m, base, i, type) : FloatArray(m, base, type).get(i);
}
Order order(isa::DType type, uint64_t a, uint64_t b) {
  return isInteger(type) || type == isa::DType::b8 ? intOrder(a, b)
                                                   : floatOrder(uint32_t(a), uint32_t(b));
}
bool holds(const Eq &, Order o) {
  return o == Order::Equal;
}
bool holds(const Ne &, Order o) {
  return o != Order::Equal;
}
bool holds(const Lt &, Order o) {
  return o == Order::Less;
}
bool holds(const Le &, Order o) {
  return o == Order::Less || o == Order::Equal;
}
bool holds(const Gt &, Order o) {
  return o == Order::Greater;
}
bool holds(const Ge &, Order o) {
  return o == Order::Greater || o == Order::Equal;
}
bool holds(const Eqs &, Order o) {
  return holds(Eq{}, o);
}
bool holds(const Nes &, Order o) {
  return holds(Ne{}, o);
}
bool holds(const Lts &, Order o) {
  return holds(Lt{}, o);
}
bool holds(const Les &, Order o) {
  return holds(Le{}, o);
}
bool holds(const Gts &, Order o) {
  return holds(Gt{}, o);
}
bool holds(const Ges &, Order o) {
  return holds(Ge{}, o);
}

// The instructions of the .td class CompareOp: rows x cols with b
// broadcast, a b8 mask out.
template <class Op> void compareOp(Mem &m, const Op &op) {
  std::vector<uint8_t> out(op.rows * op.cols);
  for (uint64_t i = 0; i < op.rows; ++i)
    for (uint64_t j = 0; j < op.cols; ++j)
      out[i * op.cols + j] =
          holds(op, order(op.dtype, compareOperand(m, op.a, i * op.cols + j, op.dtype),
                          compareOperand(m, op.b, broadcastIndex(op, i, j), op.dtype)));
  for (uint64_t i = 0; i < out.size(); ++i)
    m.u8(op.dst + i, out[i]);
}

// The instructions of the .td class CompareScalarOp: s a binary32 on f32,
// an int32 (sign-extended) on the integer types, true where its 32 bits are
// not 0 on b8.
template <class Op> void compareScalarOp(Mem &m, const Op &op) {
  const uint64_t s = op.dtype == isa::DType::b8 ? bitsOf(op.s) != 0
                     : isInteger(op.dtype)      ? integerScalar(op.s)
                                                : bitsOf(op.s);
  std::vector<uint8_t> out(op.n);
  for (uint64_t i = 0; i < op.n; ++i)
    out[i] = holds(op, order(op.dtype, compareOperand(m, op.a, i, op.dtype), s));
  for (uint64_t i = 0; i < out.size(); ++i)
    m.u8(op.dst + i, out[i]);
}

// The micro-program an instruction's record names.
template <class Op> constexpr Program programOf() {
  constexpr std::optional<Program> p =
      arith::microcode::programForOpcode(static_cast<uint32_t>(Op::kOpcode));
  static_assert(p.has_value(), "the instruction's record names no micro-program");
  return *p;
}

// The instructions of the .td class UnaryOp: the program on each element,
// then the instruction's f32 operands.
// NEG on i32 and i64: 0 - x, wrapping.
uint64_t intElement(const Neg &, uint64_t x) {
  return 0 - x;
}

template <class Op> void unaryOp(Mem &m, const Op &op) {
  if constexpr (requires(uint64_t x) { intElement(op, x); }) {
    if (isInteger(op.dtype)) {
      for (uint64_t i = 0; i < op.n; ++i)
        intAt(m, op.dst, i, op.dtype, intElement(op, intAt(m, op.src, i, op.dtype)));
      return;
    }
  }
  constexpr Program p = programOf<Op>();
  std::vector<uint32_t> inputs{0};
  for (float s : op.f32Operands())
    inputs.push_back(bitsOf(s));
  FloatArray src(m, op.src, op.dtype), dst(m, op.dst, op.dtype);
  for (uint64_t i = 0; i < op.n; ++i) {
    inputs[0] = src.get(i);
    dst.set(i, arith::evaluate(p, inputs, arith::Implementation::Reference));
  }
}

// The instructions of the .td class PointwiseBwd: dx = program(x, dy, f32
// operands...).
template <class Op> void pointwiseBwd(Mem &m, const Op &op) {
  constexpr Program p = programOf<Op>();
  std::vector<uint32_t> inputs{0, 0};
  for (float s : op.f32Operands())
    inputs.push_back(bitsOf(s));
  FloatArray x(m, op.x, op.dtype), dy(m, op.dy, op.dtype), dx(m, op.dx, op.dtype);
  for (uint64_t i = 0; i < op.n; ++i) {
    inputs[0] = x.get(i);
    inputs[1] = dy.get(i);
    dx.set(i, arith::evaluate(p, inputs, arith::Implementation::Reference));
  }
}

// ROW_SUM, ROW_MAX, ROW_MEAN: f of each row.
template <class F>
void perRow(Mem &m, uint64_t dst, uint64_t src, uint64_t rows, uint64_t cols, F f,
            isa::DType type = isa::DType::f32) {
  FloatArray in(m, src, type), out(m, dst, type);
  for (uint64_t i = 0; i < rows; ++i) {
    std::vector<uint32_t> row(cols);
    for (uint64_t j = 0; j < cols; ++j)
      row[j] = in.get(i * cols + j);
    out.set(i, f(row));
  }
}

void softmax(Mem &m, const isa::inst::Softmax &op) {
  FloatArray src(m, op.src, op.dtype), dst(m, op.dst, op.dtype);
  for (uint64_t i = 0; i < op.rows; ++i) {
    std::vector<uint32_t> z(op.cols), e(op.cols);
    for (uint64_t j = 0; j < op.cols; ++j) {
      const bool masked =
          op.causal && static_cast<int64_t>(j) > static_cast<int64_t>(i) + op.offset;
      z[j] = masked ? kMinusInfinity : soft::fmul(src.get(i * op.cols + j), bitsOf(op.scale));
    }
    const uint32_t mx = laneReduce(z, true);
    for (uint64_t j = 0; j < op.cols; ++j) {
      z[j] = soft::fsub(z[j], mx);
      e[j] = program(Program::Exp, {z[j]});
    }
    const uint32_t s = laneReduce(e, false);
    const uint32_t inv = program(Program::Recip, {s}), logS = program(Program::Log, {s});
    for (uint64_t j = 0; j < op.cols; ++j)
      dst.set(i * op.cols + j, op.log ? soft::fsub(z[j], logS) : soft::fmul(e[j], inv));
  }
}

void rmsnorm(Mem &m, const isa::inst::Rmsnorm &op) {
  const uint32_t inv = program(Program::Recip, {fromCount(op.cols)});
  FloatArray src(m, op.src, op.dtype), dst(m, op.dst, op.dtype);
  std::vector<uint32_t> rows(op.rows * op.cols), weight(op.cols);
  for (uint64_t i = 0; i < rows.size(); ++i)
    rows[i] = src.get(i);
  for (uint64_t j = 0; op.use_weight && j < op.cols; ++j)
    weight[j] = FloatArray(m, op.weight, op.dtype).get(j);
  for (uint64_t i = 0; i < op.rows; ++i) {
    std::vector<uint32_t> sq(op.cols);
    for (uint64_t j = 0; j < op.cols; ++j)
      sq[j] = soft::fmul(rows[i * op.cols + j], rows[i * op.cols + j]);
    const uint32_t ms = soft::fmul(laneReduce(sq, false), inv);
    const uint32_t r = program(Program::Rsqrt, {soft::fadd(ms, bitsOf(op.eps))});
    for (uint64_t j = 0; j < op.cols; ++j) {
      uint32_t y = soft::fmul(rows[i * op.cols + j], r);
      if (op.use_weight)
        y = soft::fmul(y, weight[j]);
      dst.set(i * op.cols + j, y);
    }
    if (op.write_rstd)
      m.f(op.rstd, i, r);
  }
}

void layernorm(Mem &m, const isa::inst::Layernorm &op) {
  const uint32_t inv = program(Program::Recip, {fromCount(op.cols)});
  FloatArray src(m, op.src, op.dtype), dst(m, op.dst, op.dtype);
  std::vector<uint32_t> rows(op.rows * op.cols), weight(op.cols), bias(op.cols);
  for (uint64_t i = 0; i < rows.size(); ++i)
    rows[i] = src.get(i);
  for (uint64_t j = 0; op.use_weight && j < op.cols; ++j)
    weight[j] = FloatArray(m, op.weight, op.dtype).get(j);
  for (uint64_t j = 0; op.use_bias && j < op.cols; ++j)
    bias[j] = FloatArray(m, op.bias, op.dtype).get(j);
  for (uint64_t i = 0; i < op.rows; ++i) {
    const std::vector<uint32_t> x(rows.begin() + i * op.cols, rows.begin() + (i + 1) * op.cols);
    const uint32_t mean = soft::fmul(laneReduce(x, false), inv);
    std::vector<uint32_t> sq(op.cols);
    for (uint64_t j = 0; j < op.cols; ++j) {
      const uint32_t d = soft::fsub(x[j], mean);
      sq[j] = soft::fmul(d, d);
    }
    const uint32_t variance = soft::fmul(laneReduce(sq, false), inv);
    const uint32_t r = program(Program::Rsqrt, {soft::fadd(variance, bitsOf(op.eps))});
    for (uint64_t j = 0; j < op.cols; ++j) {
      uint32_t y = soft::fmul(soft::fsub(x[j], mean), r);
      if (op.use_weight)
        y = soft::fmul(y, weight[j]);
      if (op.use_bias)
        y = soft::fadd(y, bias[j]);
      dst.set(i * op.cols + j, y);
    }
    if (op.write_stats) {
      m.f(op.stats, 2 * i, mean);
      m.f(op.stats, 2 * i + 1, r);
    }
  }
}

void softmaxBwd(Mem &m, const isa::inst::SoftmaxBwd &op) {
  FloatArray ys(m, op.y, op.dtype), dys(m, op.dy, op.dtype), dx(m, op.dx, op.dtype);
  for (uint64_t i = 0; i < op.rows; ++i) {
    std::vector<uint32_t> y(op.cols), dy(op.cols), t(op.cols);
    for (uint64_t j = 0; j < op.cols; ++j) {
      y[j] = ys.get(i * op.cols + j);
      dy[j] = dys.get(i * op.cols + j);
      t[j] = soft::fmul(dy[j], y[j]);
    }
    const uint32_t s = laneReduce(op.log ? dy : t, false);
    for (uint64_t j = 0; j < op.cols; ++j)
      dx.set(i * op.cols + j, op.log
                                  ? soft::fsub(dy[j], soft::fmul(program(Program::Exp, {y[j]}), s))
                                  : soft::fmul(y[j], soft::fsub(dy[j], s)));
  }
}

void rmsnormBwd(Mem &m, const isa::inst::RmsnormBwd &op) {
  const uint32_t inv = program(Program::Recip, {fromCount(op.cols)});
  FloatArray xs(m, op.x, op.dtype), dys(m, op.dy, op.dtype), weight(m, op.weight, op.dtype),
      dxs(m, op.dx, op.dtype);
  std::vector<uint32_t> dw(op.cols, kPlusZero), dx(op.rows * op.cols);
  for (uint64_t i = 0; i < op.rows; ++i) {
    const uint32_t r = m.f(op.rstd, i);
    std::vector<uint32_t> g(op.cols), gx(op.cols);
    for (uint64_t j = 0; j < op.cols; ++j) {
      const uint32_t x = xs.get(i * op.cols + j), dy = dys.get(i * op.cols + j);
      dw[j] = soft::fadd(dw[j], soft::fmul(soft::fmul(dy, x), r));
      g[j] = op.use_weight ? soft::fmul(dy, weight.get(j)) : dy;
      gx[j] = soft::fmul(g[j], x);
    }
    const uint32_t c = soft::fmul(soft::fmul(soft::fmul(laneReduce(gx, false), inv), r), r);
    for (uint64_t j = 0; j < op.cols; ++j) {
      const uint32_t x = xs.get(i * op.cols + j);
      dx[i * op.cols + j] = soft::fmul(r, soft::fsub(g[j], soft::fmul(x, c)));
    }
  }
  for (uint64_t i = 0; i < dx.size(); ++i)
    dxs.set(i, dx[i]);
  for (uint64_t j = 0; op.write_dweight && j < op.cols; ++j)
    m.f(op.dweight, j, dw[j]);
}

void layernormBwd(Mem &m, const isa::inst::LayernormBwd &op) {
  const uint32_t inv = program(Program::Recip, {fromCount(op.cols)});
  FloatArray xs(m, op.x, op.dtype), dys(m, op.dy, op.dtype), weight(m, op.weight, op.dtype),
      dxs(m, op.dx, op.dtype);
  std::vector<uint32_t> dw(op.cols, kPlusZero), dx(op.rows * op.cols);
  for (uint64_t i = 0; i < op.rows; ++i) {
    const uint32_t mean = m.f(op.stats, 2 * i), r = m.f(op.stats, 2 * i + 1);
    std::vector<uint32_t> xhat(op.cols), g(op.cols), gxhat(op.cols);
    for (uint64_t j = 0; j < op.cols; ++j) {
      const uint32_t x = xs.get(i * op.cols + j), dy = dys.get(i * op.cols + j);
      xhat[j] = soft::fmul(soft::fsub(x, mean), r);
      dw[j] = soft::fadd(dw[j], soft::fmul(dy, xhat[j]));
      g[j] = op.use_weight ? soft::fmul(dy, weight.get(j)) : dy;
      gxhat[j] = soft::fmul(g[j], xhat[j]);
    }
    const uint32_t a = soft::fmul(laneReduce(g, false), inv);
    const uint32_t b = soft::fmul(laneReduce(gxhat, false), inv);
    for (uint64_t j = 0; j < op.cols; ++j)
      dx[i * op.cols + j] = soft::fmul(r, soft::fsub(soft::fsub(g[j], a), soft::fmul(xhat[j], b)));
  }
  for (uint64_t i = 0; i < dx.size(); ++i)
    dxs.set(i, dx[i]);
  for (uint64_t j = 0; op.write_dweight && j < op.cols; ++j)
    m.f(op.dweight, j, dw[j]);
}

void adamw(Mem &m, const isa::inst::Adamw &op) {
  uint32_t h[8];
  for (int i = 0; i < 8; ++i)
    h[i] = m.f(op.hyper, i);
  const uint32_t lr = h[0], beta1 = h[1], beta2 = h[2], eps = h[3], wd = h[4], bc1 = h[5],
                 bc2Sqrt = h[6];
  const uint32_t decay = soft::fsub(kOne, soft::fmul(lr, wd));
  const uint32_t step = program(Program::Div, {lr, bc1});
  for (uint64_t i = 0; i < op.n; ++i) {
    const uint32_t g = m.f(op.grad, i);
    uint32_t p = soft::fmul(m.f(op.param, i), decay);
    const uint32_t mo =
        soft::fadd(soft::fmul(beta1, m.f(op.exp_avg, i)), soft::fmul(soft::fsub(kOne, beta1), g));
    const uint32_t v = soft::fadd(soft::fmul(beta2, m.f(op.exp_avg_sq, i)),
                                  soft::fmul(soft::fmul(soft::fsub(kOne, beta2), g), g));
    const uint32_t denom =
        soft::fadd(program(Program::Div, {program(Program::Sqrt, {v}), bc2Sqrt}), eps);
    p = soft::fsub(p, soft::fmul(step, program(Program::Div, {mo, denom})));
    m.f(op.param, i, p);
    m.f(op.exp_avg, i, mo);
    m.f(op.exp_avg_sq, i, v);
  }
}

void run(Mem &m, const Cast &op) {
  const unsigned from = typeBytes(static_cast<uint64_t>(op.stype)),
                 to = typeBytes(static_cast<uint64_t>(op.dtype));
  // Every source element is read before any is written (dst may alias src).
  std::vector<uint64_t> in(op.n);
  for (uint64_t i = 0; i < op.n; ++i)
    in[i] = m.element(op.src + i * from, from);
  for (uint64_t i = 0; i < op.n; ++i)
    m.element(op.dst + i * to, to, castElement(op.stype, op.dtype, in[i]));
}

// RAND: each element from npu/arith/philox.h's definition of the stream
// (docs/arith.md §3.5); the uniform is exact, so host arithmetic gives it.
void run(Mem &m, const Rand &op) {
  const uint64_t seed = uint64_t{op.seed_hi} << 32 | op.seed_lo;
  for (uint64_t i = 0; i < op.n; ++i) {
    const uint32_t w = arith::philoxElement(seed, op.offset, i);
    m.u32(op.dst + i * 4,
          op.dtype == isa::DType::f32 ? std::bit_cast<uint32_t>(arith::uniformFromBits(w)) : w);
  }
}

// RANDN: Box-Muller on the pair of words 2j, 2j + 1 (j = bit 1 of i) of
// the element's block, by docs/arith.md §3.5's primitives and the lanes'
// log, sqrt, cos and sin programs.
void run(Mem &m, const Randn &op) {
  const uint64_t seed = uint64_t{op.seed_hi} << 32 | op.seed_lo;
  for (uint64_t i = 0; i < op.n; ++i) {
    const uint64_t pair = i & ~uint64_t{1};
    const uint32_t first = arith::philoxElement(seed, op.offset, pair);
    const uint32_t second = arith::philoxElement(seed, op.offset, pair + 1);
    // 1 - k 2^-24 and k binary32(2 pi 2^-24), k the top 24 bits.
    const uint32_t u1 = soft::ffma(soft::l2f(first >> 8, 0), 0xb3800000u, kOne);
    const uint32_t angle = soft::fmul(soft::l2f(second >> 8, 0), 0x34c90fdbu);
    const uint32_t r =
        program(Program::Sqrt, {soft::fmul(program(Program::Log, {u1}), 0xc0000000u)});
    const uint32_t t = program(i % 2 == 0 ? Program::Cos : Program::Sin, {angle});
    m.u32(op.dst + i * 4, soft::fmul(r, t));
  }
}

// IOTA: each element from its index alone, by its definition (docs/types.md
// §5): f32 through the golden primitives, the program inputs canonical as
// the lanes load them; integers in 64-bit arithmetic.
void run(Mem &m, const Iota &op) {
  const unsigned size = typeBytes(static_cast<uint64_t>(op.dtype));
  for (uint64_t i = 0; i < op.n; ++i) {
    uint64_t v = 0;
    if (op.dtype == isa::DType::f32) {
      const uint32_t x = soft::l2f(static_cast<uint32_t>(i), 0);
      v = soft::fadd(soft::canonical(soft::fmul(x, soft::canonical(op.step))),
                     soft::canonical(op.start));
    } else {
      const int64_t start = static_cast<int32_t>(op.start), step = static_cast<int32_t>(op.step);
      v = static_cast<uint64_t>(start) + i * static_cast<uint64_t>(step);
    }
    m.element(op.dst + i * size, size, v);
  }
}

// TRI: a kept element is its storage through lane form and back (the
// identity but for bf16/f16 NaNs, which become canonical, and b8, 0 or 1);
// a filled one is value stored from lane form.
uint64_t throughLanes(isa::DType type, uint64_t storage) {
  switch (type) {
  case isa::DType::bf16: return arith::narrowBf16(arith::widenBf16(static_cast<uint16_t>(storage)));
  case isa::DType::f16: return arith::narrowF16(arith::widenF16(static_cast<uint16_t>(storage)));
  case isa::DType::b8: return storage != 0;
  default: return storage;
  }
}

// A packet's 32-bit value (TRI's fill, SELECTS's s) stored as `type`
// stores a lane value: rounded to bf16 or f16, sign-extended to i64,
// nonzero true for b8.
uint64_t storedImmediate(isa::DType type, uint32_t value) {
  switch (type) {
  case isa::DType::i64: return static_cast<uint64_t>(int64_t{static_cast<int32_t>(value)});
  case isa::DType::bf16: return arith::narrowBf16(value);
  case isa::DType::f16: return arith::narrowF16(value);
  case isa::DType::b8: return value != 0;
  default: return value;
  }
}

void run(Mem &m, const Tri &op) {
  const unsigned size = typeBytes(static_cast<uint64_t>(op.dtype));
  const uint64_t count = uint64_t(op.rows) * op.cols;
  const uint64_t fill = storedImmediate(op.dtype, op.value);
  // Every source element is read before any is written (dst may be src).
  std::vector<uint64_t> in(count);
  for (uint64_t k = 0; k < count; ++k)
    in[k] = m.element(op.src + k * size, size);
  for (uint64_t i = 0; i < op.rows; ++i)
    for (uint64_t j = 0; j < op.cols; ++j) {
      const int64_t offset = static_cast<int64_t>(j) - static_cast<int64_t>(i);
      const bool keep = op.upper ? offset >= op.diagonal : offset <= op.diagonal;
      const uint64_t k = i * op.cols + j;
      m.element(op.dst + k * size, size, keep ? throughLanes(op.dtype, in[k]) : fill);
    }
}

// CUMSUM: each row's running sum from +0 in increasing j, by its definition
// (docs/types.md §5): integers modulo 2^width, floats by the golden fadd on
// the element as the lane holds it, each sum stored as the type stores a
// lane value.
void run(Mem &m, const Cumsum &op) {
  const unsigned size = typeBytes(static_cast<uint64_t>(op.dtype));
  const bool integer = op.dtype == isa::DType::i32 || op.dtype == isa::DType::i64;
  for (uint64_t i = 0; i < op.rows; ++i) {
    uint64_t sum = 0;
    uint32_t fsum = kPlusZero;
    for (uint64_t k = i * op.cols; k < (i + 1) * op.cols; ++k) {
      const uint64_t x = m.element(op.src + k * size, size);
      if (integer) {
        sum += x;
      } else {
        fsum = soft::fadd(fsum, static_cast<uint32_t>(castElement(op.dtype, isa::DType::f32, x)));
        sum = castElement(isa::DType::f32, op.dtype, fsum);
      }
      m.element(op.dst + k * size, size, sum);
    }
  }
}

// SELECT and SELECTS (isa/bits.td): the elements of a and b move through
// the lanes as TRI's kept ones do; s is stored like TRI's fill.
template <class Op> bool maskAt(Mem &m, const Op &op, uint64_t i, uint64_t j) {
  return m.u8(op.mask + (op.mbcast == isa::Broadcast::row ? j : i * op.cols + j)) != 0;
}
template <class Op, class Other> void selectOp(Mem &m, const Op &op, const Other &other) {
  const unsigned size = typeBytes(static_cast<uint64_t>(op.dtype));
  std::vector<uint64_t> out(uint64_t(op.rows) * op.cols);
  for (uint64_t i = 0; i < op.rows; ++i)
    for (uint64_t j = 0; j < op.cols; ++j) {
      const uint64_t k = i * op.cols + j;
      out[k] = maskAt(m, op, i, j) ? throughLanes(op.dtype, m.element(op.a + k * size, size))
                                   : other(i, j);
    }
  for (uint64_t k = 0; k < out.size(); ++k)
    m.element(op.dst + k * size, size, out[k]);
}
void run(Mem &m, const Select &op) {
  const unsigned size = typeBytes(static_cast<uint64_t>(op.dtype));
  selectOp(m, op, [&](uint64_t i, uint64_t j) {
    return throughLanes(op.dtype, m.element(op.b + broadcastIndex(op, i, j) * size, size));
  });
}
void run(Mem &m, const Selects &op) {
  const uint64_t s = storedImmediate(op.dtype, op.s);
  selectOp(m, op, [&](uint64_t, uint64_t) { return s; });
}

// The bitwise instructions (isa/bits.td) on values of `type` read by bitAt:
// an i32 sign-extended to 64 bits, a b8 as 0 or 1; the store keeps the
// type's low bits. Shifts per docs/types.md §3: an amount outside [0,
// width) gives 0 for <<, the sign fill for >>.
uint64_t bitAt(Mem &m, uint64_t base, uint64_t i, isa::DType type) {
  return type == isa::DType::b8 ? m.u8(base + i) != 0 : intAt(m, base, i, type);
}
void bitAt(Mem &m, uint64_t base, uint64_t i, isa::DType type, uint64_t v) {
  if (type == isa::DType::b8)
    m.u8(base + i, static_cast<uint8_t>(v & 1));
  else
    intAt(m, base, i, type, v);
}
bool shiftInRange(isa::DType type, uint64_t b) {
  return int64_t(b) >= 0 && int64_t(b) < (type == isa::DType::i64 ? 64 : 32);
}
uint64_t bitElement(const And &, isa::DType, uint64_t a, uint64_t b) {
  return a & b;
}
uint64_t bitElement(const Or &, isa::DType, uint64_t a, uint64_t b) {
  return a | b;
}
uint64_t bitElement(const Xor &, isa::DType, uint64_t a, uint64_t b) {
  return a ^ b;
}
uint64_t bitElement(const Shl &, isa::DType type, uint64_t a, uint64_t b) {
  return shiftInRange(type, b) ? a << b : 0;
}
// a is sign-extended to 64 bits, so shifting it by 63 gives the sign fill.
uint64_t bitElement(const Shr &, isa::DType type, uint64_t a, uint64_t b) {
  return static_cast<uint64_t>(int64_t(a) >> (shiftInRange(type, b) ? b : 63));
}
uint64_t bitElement(const Ands &, isa::DType type, uint64_t a, uint64_t s) {
  return bitElement(And{}, type, a, s);
}
uint64_t bitElement(const Ors &, isa::DType type, uint64_t a, uint64_t s) {
  return bitElement(Or{}, type, a, s);
}
uint64_t bitElement(const Xors &, isa::DType type, uint64_t a, uint64_t s) {
  return bitElement(Xor{}, type, a, s);
}
uint64_t bitElement(const Shls &, isa::DType type, uint64_t a, uint64_t s) {
  return bitElement(Shl{}, type, a, s);
}
uint64_t bitElement(const Shrs &, isa::DType type, uint64_t a, uint64_t s) {
  return bitElement(Shr{}, type, a, s);
}
uint64_t bitElement(const Rshls &, isa::DType type, uint64_t a, uint64_t s) {
  return bitElement(Shl{}, type, s, a);
}
uint64_t bitElement(const Rshrs &, isa::DType type, uint64_t a, uint64_t s) {
  return bitElement(Shr{}, type, s, a);
}

// The instructions of the .td class BitwiseOp: rows x cols with b
// broadcast.
template <class Op> void bitwiseOp(Mem &m, const Op &op) {
  std::vector<uint64_t> out(uint64_t(op.rows) * op.cols);
  for (uint64_t i = 0; i < op.rows; ++i)
    for (uint64_t j = 0; j < op.cols; ++j)
      out[i * op.cols + j] = bitElement(op, op.dtype, bitAt(m, op.a, i * op.cols + j, op.dtype),
                                        bitAt(m, op.b, broadcastIndex(op, i, j), op.dtype));
  for (uint64_t k = 0; k < out.size(); ++k)
    bitAt(m, op.dst, k, op.dtype, out[k]);
}

// BitwiseScalarOp: s an int32 (sign-extended), true where not 0 on b8.
template <class Op> void bitwiseScalarOp(Mem &m, const Op &op) {
  const uint64_t s = op.dtype == isa::DType::b8
                         ? op.s != 0
                         : static_cast<uint64_t>(int64_t{static_cast<int32_t>(op.s)});
  for (uint64_t i = 0; i < op.n; ++i)
    bitAt(m, op.dst, i, op.dtype, bitElement(op, op.dtype, bitAt(m, op.a, i, op.dtype), s));
}

// BitwiseNotOp: every bit inverted, b8's truth value negated.
template <class Op> void bitwiseNotOp(Mem &m, const Op &op) {
  for (uint64_t i = 0; i < op.n; ++i)
    bitAt(m, op.dst, i, op.dtype, ~bitAt(m, op.src, i, op.dtype));
}

void run(Mem &, const Nop &) {}
void run(Mem &, const Fence &) {}
void run(Mem &, const Halt &) {}

void run(Mem &m, const Copy &op) {
  for (uint64_t i = 0; i < op.bytes; ++i)
    m.u8(op.dst + i, m.u8(op.src + i));
}

void run(Mem &m, const Fill &op) {
  for (uint64_t i = 0; i < op.count; ++i)
    m.u32(op.dst + 4 * i, op.value);
}

void run(Mem &m, const CopyStrided &op) {
  const uint64_t es = uint64_t(1) << static_cast<unsigned>(op.esize);
  uint64_t out = op.dst;
  for (uint64_t a = 0; a < op.size0; ++a)
    for (uint64_t b = 0; b < op.size1; ++b)
      for (uint64_t c = 0; c < op.size2; ++c)
        for (uint64_t d = 0; d < op.size3; ++d) {
          const int64_t offset = int64_t(a) * op.stride0 + int64_t(b) * op.stride1 +
                                 int64_t(c) * op.stride2 + int64_t(d) * op.stride3;
          for (uint64_t byte = 0; byte < es; ++byte)
            m.u8(out++, m.u8(op.src + static_cast<uint64_t>(offset * int64_t(es)) + byte));
        }
}

void run(Mem &m, const Matmul &op) {
  matmul({m, op.c, op.otype}, {m, op.a, op.dtype}, {m, op.b, op.dtype}, op.m, op.k, op.n, op.lda,
         op.ldb, op.ldc, op.transa, op.transb, op.acc);
}

void run(Mem &m, const Bmm &op) {
  const uint64_t in = typeBytes(static_cast<uint64_t>(op.dtype)),
                 out = typeBytes(static_cast<uint64_t>(op.otype));
  for (uint64_t q = 0; q < op.batch; ++q)
    matmul({m, op.c + out * q * op.stride_c, op.otype}, {m, op.a + in * q * op.stride_a, op.dtype},
           {m, op.b + in * q * op.stride_b, op.dtype}, op.m, op.k, op.n, 0, 0, 0, op.transa,
           op.transb, op.acc);
}

#define NPU_REFERENCE_SHAPE(NAME, Type, family, shape)                                             \
  void run(Mem &m, const Type &op) {                                                               \
    shape(m, op);                                                                                  \
  }
#define NPU_BINARY_OP(NAME, Type, family) NPU_REFERENCE_SHAPE(NAME, Type, family, binaryOp)
#define NPU_SCALAR_OP(NAME, Type, family) NPU_REFERENCE_SHAPE(NAME, Type, family, scalarOp)
#define NPU_UNARY_OP(NAME, Type, family) NPU_REFERENCE_SHAPE(NAME, Type, family, unaryOp)
#define NPU_POINTWISE_BWD(NAME, Type, family) NPU_REFERENCE_SHAPE(NAME, Type, family, pointwiseBwd)
#define NPU_COMPARE_OP(NAME, Type, family) NPU_REFERENCE_SHAPE(NAME, Type, family, compareOp)
#define NPU_COMPARE_SCALAR_OP(NAME, Type, family)                                                  \
  NPU_REFERENCE_SHAPE(NAME, Type, family, compareScalarOp)
NPU_FOR_EACH_BINARY_OP(NPU_BINARY_OP)
NPU_FOR_EACH_SCALAR_OP(NPU_SCALAR_OP)
NPU_FOR_EACH_UNARY_OP(NPU_UNARY_OP)
NPU_FOR_EACH_POINTWISE_BWD(NPU_POINTWISE_BWD)
NPU_FOR_EACH_COMPARE_OP(NPU_COMPARE_OP)
NPU_FOR_EACH_COMPARE_SCALAR_OP(NPU_COMPARE_SCALAR_OP)
#define NPU_BITWISE_OP(NAME, Type, family) NPU_REFERENCE_SHAPE(NAME, Type, family, bitwiseOp)
#define NPU_BITWISE_SCALAR_OP(NAME, Type, family)                                                  \
  NPU_REFERENCE_SHAPE(NAME, Type, family, bitwiseScalarOp)
#define NPU_BITWISE_NOT_OP(NAME, Type, family) NPU_REFERENCE_SHAPE(NAME, Type, family, bitwiseNotOp)
NPU_FOR_EACH_BITWISE_OP(NPU_BITWISE_OP)
NPU_FOR_EACH_BITWISE_SCALAR_OP(NPU_BITWISE_SCALAR_OP)
NPU_FOR_EACH_BITWISE_NOT_OP(NPU_BITWISE_NOT_OP)
#undef NPU_BITWISE_OP
#undef NPU_BITWISE_SCALAR_OP
#undef NPU_BITWISE_NOT_OP
#undef NPU_BINARY_OP
#undef NPU_SCALAR_OP
#undef NPU_UNARY_OP
#undef NPU_POINTWISE_BWD
#undef NPU_COMPARE_OP
#undef NPU_COMPARE_SCALAR_OP
#undef NPU_REFERENCE_SHAPE

void run(Mem &m, const RowSum &op) {
  perRow(
      m, op.dst, op.src, op.rows, op.cols, [](const auto &row) { return laneReduce(row, false); },
      op.dtype);
}

void run(Mem &m, const RowMax &op) {
  perRow(
      m, op.dst, op.src, op.rows, op.cols, [](const auto &row) { return laneReduce(row, true); },
      op.dtype);
}

void run(Mem &m, const RowMean &op) {
  const uint32_t inv = program(Program::Recip, {fromCount(op.cols)});
  perRow(
      m, op.dst, op.src, op.rows, op.cols,
      [&](const auto &row) { return soft::fmul(laneReduce(row, false), inv); }, op.dtype);
}

// The value of a binary floating-point pattern with `e` exponent and `f`
// fraction bits, decoded with integer arithmetic into a double (normal for
// every subnormal of binary32 and narrower, so a host that flushes
// subnormal operands cannot change it).
double floatValue(uint64_t bits, unsigned e, unsigned f) {
  const uint64_t fraction = bits & ((uint64_t{1} << f) - 1);
  const uint64_t exponent = (bits >> f) & ((uint64_t{1} << e) - 1);
  const int bias = (1 << (e - 1)) - 1;
  double magnitude;
  if (exponent == (uint64_t{1} << e) - 1)
    magnitude = fraction ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  else if (exponent == 0)
    magnitude = std::ldexp(static_cast<double>(fraction), 1 - bias - static_cast<int>(f));
  else
    magnitude = std::ldexp(static_cast<double>(fraction | uint64_t{1} << f),
                           static_cast<int>(exponent) - bias - static_cast<int>(f));
  return (bits >> (e + f)) & 1 ? -magnitude : magnitude;
}

// ARGMAX, ARGMIN by their definition (docs/types.md §5), on the elements'
// values rather than the recipes' order keys: the first NaN of a row if it
// has one, else the first element no other exceeds (argmax) or undercuts
// (argmin), compared as doubles (so -0 == +0 and subnormals count).
template <class Op> void argExtreme(Mem &m, const Op &op, bool max) {
  const unsigned size = typeBytes(static_cast<uint64_t>(op.dtype));
  for (uint64_t i = 0; i < op.rows; ++i) {
    uint64_t best = 0;
    double bestValue = 0;
    for (uint64_t j = 0; j < op.cols; ++j) {
      const uint64_t x = m.element(op.src + (i * op.cols + j) * size, size);
      double value = 0;
      switch (op.dtype) {
      case isa::DType::i32: value = static_cast<int32_t>(static_cast<uint32_t>(x)); break;
      case isa::DType::bf16: value = floatValue(x, 8, 7); break;
      case isa::DType::f16: value = floatValue(x, 5, 10); break;
      default: value = floatValue(x, 8, 23); break;
      }
      if (std::isnan(value)) {
        best = j;
        break;
      }
      if (j == 0 || (max ? value > bestValue : value < bestValue)) {
        best = j;
        bestValue = value;
      }
    }
    m.element(op.dst + i * 8, 8, best);
  }
}

void run(Mem &m, const Argmax &op) {
  argExtreme(m, op, true);
}
void run(Mem &m, const Argmin &op) {
  argExtreme(m, op, false);
}

// COUNT: the bytes of each row that are not zero.
void run(Mem &m, const Count &op) {
  for (uint64_t i = 0; i < op.rows; ++i) {
    uint64_t count = 0;
    for (uint64_t j = 0; j < op.cols; ++j)
      count += m.element(op.src + i * op.cols + j, 1) != 0;
    m.element(op.dst + i * 8, 8, count);
  }
}

// ANY and ALL: whether some or every byte of each row is not zero.
void truthOfRows(Mem &m, uint64_t dst, uint64_t src, uint64_t rows, uint64_t cols, bool all) {
  for (uint64_t i = 0; i < rows; ++i) {
    bool some = false, every = true;
    for (uint64_t j = 0; j < cols; ++j) {
      const bool nonzero = m.element(src + i * cols + j, 1) != 0;
      some = some || nonzero;
      every = every && nonzero;
    }
    m.element(dst + i, 1, all ? every : some);
  }
}

void run(Mem &m, const Any &op) { truthOfRows(m, op.dst, op.src, op.rows, op.cols, false); }
void run(Mem &m, const All &op) { truthOfRows(m, op.dst, op.src, op.rows, op.cols, true); }

void run(Mem &m, const ColSum &op) {
  FloatArray src(m, op.src, op.dtype);
  for (uint64_t j = 0; j < op.cols; ++j) {
    uint32_t s = kPlusZero;
    for (uint64_t i = 0; i < op.rows; ++i)
      s = soft::fadd(s, src.get(i * op.cols + j));
    m.f(op.dst, j, s);
  }
}

void run(Mem &m, const Softmax &op) {
  softmax(m, op);
}
void run(Mem &m, const Rmsnorm &op) {
  rmsnorm(m, op);
}
void run(Mem &m, const Layernorm &op) {
  layernorm(m, op);
}
void run(Mem &m, const SoftmaxBwd &op) {
  softmaxBwd(m, op);
}
void run(Mem &m, const RmsnormBwd &op) {
  rmsnormBwd(m, op);
}
void run(Mem &m, const LayernormBwd &op) {
  layernormBwd(m, op);
}
void run(Mem &m, const Adamw &op) {
  adamw(m, op);
}

void run(Mem &m, const Embedding &op) {
  for (uint64_t t = 0; t < op.count; ++t) {
    const int64_t row = m.index(op.indices, t, op.itype);
    if (row < 0 || static_cast<uint64_t>(row) >= op.rows)
      throw std::out_of_range("embedding index");
    for (uint64_t j = 0; j < op.dim; ++j)
      m.f(op.dst, t * op.dim + j, m.f(op.table, static_cast<uint64_t>(row) * op.dim + j));
  }
}

// GATHER: element by element in output order, each index read where its
// mode puts it; a bad index throws after the elements before it are written.
void run(Mem &m, const Gather &op) {
  const unsigned size = typeBytes(static_cast<uint64_t>(op.dtype));
  const bool full = op.mode == isa::GatherMode::full;
  for (uint64_t o = 0; o < op.outer; ++o)
    for (uint64_t j = 0; j < op.count; ++j)
      for (uint64_t i = 0; i < op.inner; ++i) {
        const uint64_t out = (o * op.count + j) * op.inner + i;
        int64_t k = m.index(op.index, full ? out : j, op.itype);
        if (op.wrap && k < 0)
          k += op.n;
        if (k < 0 || static_cast<uint64_t>(k) >= op.n)
          throw std::out_of_range("gather index");
        const uint64_t in = (o * op.n + static_cast<uint64_t>(k)) * op.inner + i;
        m.element(op.dst + out * size, size, m.element(op.src + in * size, size));
      }
}

void run(Mem &m, const EmbeddingBwd &op) {
  for (uint64_t t = 0; t < op.count; ++t) {
    const int64_t row = m.index(op.indices, t, op.itype);
    if (row < 0 || static_cast<uint64_t>(row) >= op.rows)
      throw std::out_of_range("embedding index");
    if (row == op.padding_idx)
      continue;
    for (uint64_t j = 0; j < op.dim; ++j) {
      const uint64_t at = static_cast<uint64_t>(row) * op.dim + j;
      m.f(op.dtable, at, soft::fadd(m.f(op.dtable, at), m.f(op.dy, t * op.dim + j)));
    }
  }
}

} // namespace

uint64_t castElement(isa::DType from, isa::DType to, uint64_t storage) {
  // The element's value: a binary32 as the lane holds it, an integer, or a
  // truth value.
  enum class Kind { Float, Integer, Truth } kind;
  uint32_t f = 0;
  int64_t integer = 0;
  bool truth = false;
  switch (from) {
  case isa::DType::f32:
    kind = Kind::Float;
    f = soft::canonical(static_cast<uint32_t>(storage));
    break;
  case isa::DType::bf16:
    kind = Kind::Float;
    f = soft::canonical(arith::widenBf16(static_cast<uint16_t>(storage)));
    break;
  case isa::DType::f16:
    kind = Kind::Float;
    f = soft::canonical(arith::widenF16(static_cast<uint16_t>(storage)));
    break;
  case isa::DType::i32:
    kind = Kind::Integer;
    integer = static_cast<int32_t>(static_cast<uint32_t>(storage));
    break;
  case isa::DType::i64:
    kind = Kind::Integer;
    integer = static_cast<int64_t>(storage);
    break;
  case isa::DType::b8:
    kind = Kind::Truth;
    truth = static_cast<uint8_t>(storage) != 0;
    break;
  default: throw std::invalid_argument("castElement: no such source type");
  }
  // To binary32 first for a float result (an integer rounds once to
  // binary32, from all its bits; a store to bf16/f16 rounds again, as the
  // stream's store does), to an integer for an integer result.
  auto asFloat = [&]() -> uint32_t {
    switch (kind) {
    case Kind::Float: return f;
    case Kind::Integer:
      return soft::roundToFloat(integer < 0, 0,
                                integer < 0 ? 0 - static_cast<uint64_t>(integer)
                                            : static_cast<uint64_t>(integer));
    case Kind::Truth: return truth ? kOne : kPlusZero;
    }
    return 0;
  };
  // Toward zero, saturating at [lo, hi]; NaN gives 0.
  auto asInteger = [&](int64_t lo, int64_t hi) -> int64_t {
    switch (kind) {
    case Kind::Integer: return integer;
    case Kind::Truth: return truth ? 1 : 0;
    case Kind::Float: break;
    }
    if (soft::isNan(f))
      return 0;
    const bool negative = (f & 0x80000000u) != 0;
    const int exponent = static_cast<int>((f >> 23) & 0xff) - 150; // of the significand's unit
    if ((f & 0x7f800000u) == 0x7f800000u || exponent > 40)         // inf, or |f| >= 2^64
      return negative ? lo : hi;
    const uint64_t significand = (f & 0x7fffffu) | 0x800000u;
    const uint64_t magnitude = (f & 0x7f800000u) == 0 ? 0
                               : exponent >= 0        ? significand << exponent
                               : exponent > -24       ? significand >> -exponent
                                                      : 0;
    if (!negative)
      return magnitude > static_cast<uint64_t>(hi) ? hi : static_cast<int64_t>(magnitude);
    // -2^63 is representable, its magnitude is not: negate in unsigned.
    return magnitude > 0 - static_cast<uint64_t>(lo) ? lo : static_cast<int64_t>(0 - magnitude);
  };
  switch (to) {
  case isa::DType::f32: return asFloat();
  case isa::DType::bf16: return arith::narrowBf16(asFloat());
  case isa::DType::f16: return arith::narrowF16(asFloat());
  case isa::DType::i32:
    // From an integer: its low 32 bits (two's complement wraps, as PyTorch's
    // .int() of an int64 does).
    return static_cast<uint32_t>(asInteger(INT32_MIN, INT32_MAX));
  case isa::DType::i64: return static_cast<uint64_t>(asInteger(INT64_MIN, INT64_MAX));
  case isa::DType::b8:
    switch (kind) {
    case Kind::Float: return (f & 0x7fffffffu) != 0; // a NaN is true, both zeros false
    case Kind::Integer: return integer != 0;
    case Kind::Truth: return truth;
    }
    return 0;
  default: throw std::invalid_argument("castElement: no such result type");
  }
}

void execute(mem::PhysicalMemory &memory, std::span<const uint8_t, isa::kPacketBytes> packet) {
  Mem m(memory);
  isa::Instruction inst;
  std::string error;
  if (!isa::decode(packet, inst, &error))
    throw std::invalid_argument(error);
  switch (inst.opcode) {
#define NPU_REFERENCE_DISPATCH(NAME, Type, family)                                                 \
  case isa::Opcode::NAME: return run(m, isa::inst::Type::fromPacket(packet.data()));
    NPU_FOR_EACH_INSTRUCTION(NPU_REFERENCE_DISPATCH)
#undef NPU_REFERENCE_DISPATCH
  }
  throw std::logic_error("reference model: unhandled opcode");
}

} // namespace npu::sim::reference
