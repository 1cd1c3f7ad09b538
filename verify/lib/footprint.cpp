#include "npu/verify/footprint.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace npu::verify {

namespace {

uint64_t mul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max() : r;
}
uint64_t add(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max() : r;
}
uint64_t floats(uint64_t count) {
  return mul(count, 4);
}

// A buffer named by the operand field itself, so that the name always
// matches the ISA's operand name.
#define NPU_BUFFER(op, field, ...)                                                                 \
  Buffer {                                                                                         \
#field, (op).field, __VA_ARGS__                                                                \
  }

void add(Footprint &f, Buffer b) {
  f.buffers.push_back(b);
}

// rows x cols elementwise-shaped operands.
uint64_t elements(uint64_t rows, uint64_t cols) {
  return mul(rows, cols);
}

struct MatrixExtents {
  uint64_t a, b, c; // bytes of one matrix each
};

MatrixExtents matrixExtents(uint64_t m, uint64_t k, uint64_t n, uint64_t lda, uint64_t ldb,
                            uint64_t ldc, bool transA, bool transB) {
  const uint64_t aRows = transA ? k : m, aCols = transA ? m : k;
  const uint64_t bRows = transB ? n : k, bCols = transB ? k : n;
  lda = lda ? lda : aCols;
  ldb = ldb ? ldb : bCols;
  ldc = ldc ? ldc : n;
  return {floats(add(mul(aRows - 1, lda), aCols)), floats(add(mul(bRows - 1, ldb), bCols)),
          floats(add(mul(m - 1, ldc), n))};
}

uint64_t broadcastElements(isa::Broadcast bcast, uint64_t rows, uint64_t cols) {
  switch (bcast) {
  case isa::Broadcast::none: return elements(rows, cols);
  case isa::Broadcast::row: return cols;
  case isa::Broadcast::col: return rows;
  case isa::Broadcast::scalar: return 1;
  }
  return 0;
}

// --- control ---------------------------------------------------------------
void describe(Footprint &, const isa::inst::Nop &) {}
void describe(Footprint &, const isa::inst::Fence &) {}
void describe(Footprint &, const isa::inst::Halt &) {}

// --- data movement ---------------------------------------------------------
void describe(Footprint &f, const isa::inst::Copy &op) {
  add(f, NPU_BUFFER(op, src, 0, op.bytes, Role::Read, Content::Bytes));
  add(f, NPU_BUFFER(op, dst, 0, op.bytes, Role::Write, Content::Bytes));
  f.work = op.bytes / 4 + 1;
}

void describe(Footprint &f, const isa::inst::Fill &op) {
  add(f, NPU_BUFFER(op, dst, 0, floats(op.count), Role::Write, Content::Bytes));
  f.work = op.count;
}

void describe(Footprint &f, const isa::inst::CopyStrided &op) {
  const uint64_t es = uint64_t(1) << static_cast<unsigned>(op.esize);
  const uint64_t sizes[4] = {op.size0, op.size1, op.size2, op.size3};
  const int64_t strides[4] = {op.stride0, op.stride1, op.stride2, op.stride3};
  __int128 low = 0, high = 0;
  uint64_t count = 1;
  for (int d = 0; d < 4; ++d) {
    count = mul(count, sizes[d]);
    const __int128 extent = static_cast<__int128>(sizes[d] - 1) * strides[d];
    (extent < 0 ? low : high) += extent;
  }
  const __int128 lowBytes = -low * es, spanBytes = (high - low + 1) * es;
  constexpr __int128 kMax = std::numeric_limits<uint64_t>::max();
  add(f, NPU_BUFFER(op, src, static_cast<uint64_t>(std::min(lowBytes, kMax)),
                    static_cast<uint64_t>(std::min(spanBytes, kMax)), Role::Read, Content::Bytes));
  add(f, NPU_BUFFER(op, dst, 0, mul(count, es), Role::Write, Content::Bytes));
  // Elements of a non-unit innermost stride move one per memory request.
  f.work = op.stride3 == 1 ? count : mul(count, 16);
}

// --- matrix ----------------------------------------------------------------
void describe(Footprint &f, const isa::inst::Matmul &op) {
  const MatrixExtents e =
      matrixExtents(op.m, op.k, op.n, op.lda, op.ldb, op.ldc, op.transa, op.transb);
  add(f, NPU_BUFFER(op, a, 0, e.a, Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, b, 0, e.b, Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, c, 0, e.c, op.acc ? Role::Update : Role::Write, Content::F32));
  f.work = mul(mul(op.m, op.n), op.k);
}

void describe(Footprint &f, const isa::inst::Bmm &op) {
  const MatrixExtents e = matrixExtents(op.m, op.k, op.n, 0, 0, 0, op.transa, op.transb);
  const auto batched = [&](uint64_t stride, uint64_t one) {
    return add(mul(mul(op.batch - 1, stride), 4), one);
  };
  add(f, NPU_BUFFER(op, a, 0, batched(op.stride_a, e.a), Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, b, 0, batched(op.stride_b, e.b), Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, c, 0, batched(op.stride_c, e.c), op.acc ? Role::Update : Role::Write,
                    Content::F32));
  f.work = mul(mul(mul(op.m, op.n), op.k), op.batch);
}

// --- elementwise -----------------------------------------------------------
template <class Op> void binary(Footprint &f, const Op &op) {
  const uint64_t n = elements(op.rows, op.cols);
  add(f, NPU_BUFFER(op, a, 0, floats(n), Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, b, 0, floats(broadcastElements(op.bcast, op.rows, op.cols)), Role::Read,
                    Content::F32));
  add(f, NPU_BUFFER(op, dst, 0, floats(n), Role::Write, Content::F32));
  f.inPlace.emplace_back("dst", "a");
  if (op.bcast == isa::Broadcast::none)
    f.inPlace.emplace_back("dst", "b");
  f.work = n;
}
void describe(Footprint &f, const isa::inst::Add &op) {
  binary(f, op);
}
void describe(Footprint &f, const isa::inst::Sub &op) {
  binary(f, op);
}
void describe(Footprint &f, const isa::inst::Mul &op) {
  binary(f, op);
}
void describe(Footprint &f, const isa::inst::Div &op) {
  binary(f, op);
}
void describe(Footprint &f, const isa::inst::Max &op) {
  binary(f, op);
}
void describe(Footprint &f, const isa::inst::Min &op) {
  binary(f, op);
}

template <class Op> void withScalar(Footprint &f, const Op &op) {
  add(f, NPU_BUFFER(op, a, 0, floats(op.n), Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, dst, 0, floats(op.n), Role::Write, Content::F32));
  f.inPlace.emplace_back("dst", "a");
  f.work = op.n;
}
void describe(Footprint &f, const isa::inst::Adds &op) {
  withScalar(f, op);
}
void describe(Footprint &f, const isa::inst::Subs &op) {
  withScalar(f, op);
}
void describe(Footprint &f, const isa::inst::Muls &op) {
  withScalar(f, op);
}
void describe(Footprint &f, const isa::inst::Divs &op) {
  withScalar(f, op);
}
void describe(Footprint &f, const isa::inst::Maxs &op) {
  withScalar(f, op);
}
void describe(Footprint &f, const isa::inst::Mins &op) {
  withScalar(f, op);
}
void describe(Footprint &f, const isa::inst::Rsubs &op) {
  withScalar(f, op);
}
void describe(Footprint &f, const isa::inst::Rdivs &op) {
  withScalar(f, op);
}

// --- unary -----------------------------------------------------------------
template <class Op> void unary(Footprint &f, const Op &op) {
  add(f, NPU_BUFFER(op, src, 0, floats(op.n), Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, dst, 0, floats(op.n), Role::Write, Content::F32));
  f.inPlace.emplace_back("dst", "src");
  f.work = op.n;
}
void describe(Footprint &f, const isa::inst::Exp &op) {
  unary(f, op);
}
void describe(Footprint &f, const isa::inst::Log &op) {
  unary(f, op);
}
void describe(Footprint &f, const isa::inst::Rsqrt &op) {
  unary(f, op);
}
void describe(Footprint &f, const isa::inst::Sqrt &op) {
  unary(f, op);
}
void describe(Footprint &f, const isa::inst::Recip &op) {
  unary(f, op);
}
void describe(Footprint &f, const isa::inst::Neg &op) {
  unary(f, op);
}
void describe(Footprint &f, const isa::inst::Abs &op) {
  unary(f, op);
}
void describe(Footprint &f, const isa::inst::Relu &op) {
  unary(f, op);
}
void describe(Footprint &f, const isa::inst::Sigmoid &op) {
  unary(f, op);
}
void describe(Footprint &f, const isa::inst::Tanh &op) {
  unary(f, op);
}
void describe(Footprint &f, const isa::inst::Silu &op) {
  unary(f, op);
}
void describe(Footprint &f, const isa::inst::Gelu &op) {
  unary(f, op);
}
void describe(Footprint &f, const isa::inst::Sin &op) {
  unary(f, op);
}
void describe(Footprint &f, const isa::inst::Cos &op) {
  unary(f, op);
}
void describe(Footprint &f, const isa::inst::Pows &op) {
  unary(f, op);
}

// --- reductions ------------------------------------------------------------
template <class Op> void reduce(Footprint &f, const Op &op, uint64_t outputs) {
  add(f, NPU_BUFFER(op, src, 0, floats(elements(op.rows, op.cols)), Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, dst, 0, floats(outputs), Role::Write, Content::F32));
  f.work = elements(op.rows, op.cols);
}
void describe(Footprint &f, const isa::inst::RowSum &op) {
  reduce(f, op, op.rows);
}
void describe(Footprint &f, const isa::inst::RowMax &op) {
  reduce(f, op, op.rows);
}
void describe(Footprint &f, const isa::inst::RowMean &op) {
  reduce(f, op, op.rows);
}
void describe(Footprint &f, const isa::inst::ColSum &op) {
  reduce(f, op, op.cols);
}

// --- fused NN and backward -------------------------------------------------
void describe(Footprint &f, const isa::inst::Softmax &op) {
  const uint64_t n = elements(op.rows, op.cols);
  add(f, NPU_BUFFER(op, src, 0, floats(n), Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, dst, 0, floats(n), Role::Write, Content::F32));
  f.inPlace.emplace_back("dst", "src");
  f.work = mul(n, 4);
}

void describe(Footprint &f, const isa::inst::Rmsnorm &op) {
  const uint64_t n = elements(op.rows, op.cols);
  add(f, NPU_BUFFER(op, src, 0, floats(n), Role::Read, Content::F32));
  if (op.use_weight)
    add(f, NPU_BUFFER(op, weight, 0, floats(op.cols), Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, dst, 0, floats(n), Role::Write, Content::F32));
  if (op.write_rstd)
    add(f, NPU_BUFFER(op, rstd, 0, floats(op.rows), Role::Write, Content::F32));
  f.inPlace.emplace_back("dst", "src");
  f.unspecifiedOverlap.emplace_back("rstd", "weight");
  f.work = mul(n, 3);
}

void describe(Footprint &f, const isa::inst::SoftmaxBwd &op) {
  const uint64_t n = elements(op.rows, op.cols);
  add(f, NPU_BUFFER(op, y, 0, floats(n), Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, dy, 0, floats(n), Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, dx, 0, floats(n), Role::Write, Content::F32));
  f.inPlace.emplace_back("dx", "y");
  f.inPlace.emplace_back("dx", "dy");
  f.work = mul(n, 3);
}

void describe(Footprint &f, const isa::inst::RmsnormBwd &op) {
  const uint64_t n = elements(op.rows, op.cols);
  add(f, NPU_BUFFER(op, x, 0, floats(n), Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, dy, 0, floats(n), Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, rstd, 0, floats(op.rows), Role::Read, Content::F32));
  if (op.use_weight)
    add(f, NPU_BUFFER(op, weight, 0, floats(op.cols), Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, dx, 0, floats(n), Role::Write, Content::F32));
  if (op.write_dweight)
    add(f, NPU_BUFFER(op, dweight, 0, floats(op.cols), Role::Write, Content::F32));
  f.inPlace.emplace_back("dx", "x");
  f.inPlace.emplace_back("dx", "dy");
  f.unspecifiedOverlap.emplace_back("dx", "weight");
  f.unspecifiedOverlap.emplace_back("dweight", "weight");
  f.unspecifiedOverlap.emplace_back("dweight", "rstd");
  f.work = mul(n, 5);
}

template <class Op> void pointwiseBackward(Footprint &f, const Op &op) {
  add(f, NPU_BUFFER(op, x, 0, floats(op.n), Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, dy, 0, floats(op.n), Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, dx, 0, floats(op.n), Role::Write, Content::F32));
  f.inPlace.emplace_back("dx", "x");
  f.inPlace.emplace_back("dx", "dy");
  f.work = mul(op.n, 4);
}
void describe(Footprint &f, const isa::inst::SiluBwd &op) {
  pointwiseBackward(f, op);
}
void describe(Footprint &f, const isa::inst::GeluBwd &op) {
  pointwiseBackward(f, op);
}

// --- optimizer -------------------------------------------------------------
void describe(Footprint &f, const isa::inst::Adamw &op) {
  add(f, NPU_BUFFER(op, grad, 0, floats(op.n), Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, hyper, 0, 32, Role::Read, Content::Hyper));
  add(f, NPU_BUFFER(op, param, 0, floats(op.n), Role::Update, Content::F32));
  add(f, NPU_BUFFER(op, exp_avg, 0, floats(op.n), Role::Update, Content::F32));
  add(f, NPU_BUFFER(op, exp_avg_sq, 0, floats(op.n), Role::Update, Content::F32));
  f.work = mul(op.n, 16);
}

// --- gather ----------------------------------------------------------------
template <class Op> Buffer indexBuffer(const Op &op) {
  const bool wide = op.itype == isa::IndexType::i64;
  return Buffer{"indices",  op.indices,
                0,          mul(op.count, wide ? 8 : 4),
                Role::Read, wide ? Content::Index64 : Content::Index32,
                op.rows};
}

void describe(Footprint &f, const isa::inst::Embedding &op) {
  add(f, indexBuffer(op));
  add(f, NPU_BUFFER(op, table, 0, floats(elements(op.rows, op.dim)), Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, dst, 0, floats(elements(op.count, op.dim)), Role::Write, Content::F32));
  f.work = elements(op.count, op.dim);
}

void describe(Footprint &f, const isa::inst::EmbeddingBwd &op) {
  add(f, indexBuffer(op));
  add(f, NPU_BUFFER(op, dy, 0, floats(elements(op.count, op.dim)), Role::Read, Content::F32));
  add(f, NPU_BUFFER(op, dtable, 0, floats(elements(op.rows, op.dim)), Role::Update, Content::F32));
  f.work = elements(op.count, op.dim);
}

#undef NPU_BUFFER

// --- relations the tables cannot state -------------------------------------
template <class Op> void legaliseTyped(Op &) {}

// A pitch of 0 means dense; any other must cover the stored row.
uint32_t coveringPitch(uint32_t pitch, uint32_t row) {
  if (pitch == 0 || pitch >= row)
    return pitch;
  return row + pitch % 4;
}

void legaliseTyped(isa::inst::Matmul &op) {
  op.lda = coveringPitch(op.lda, op.transa ? op.m : op.k);
  op.ldb = coveringPitch(op.ldb, op.transb ? op.k : op.n);
  op.ldc = coveringPitch(op.ldc, op.n);
}

void legaliseTyped(isa::inst::Bmm &op) {
  const uint64_t cElements = uint64_t(op.m) * op.n;
  if (op.batch > 1 && op.stride_c < cElements && cElements < 0xffffffffu)
    op.stride_c = static_cast<uint32_t>(cElements) + op.stride_c % 3;
}

void legaliseTyped(isa::inst::EmbeddingBwd &op) {
  if (op.padding_idx >= 0 && static_cast<uint64_t>(op.padding_idx) >= op.rows)
    op.padding_idx = static_cast<int32_t>(static_cast<uint64_t>(op.padding_idx) % op.rows);
}

// A typed view of a generic instruction (through its packet: the typed
// structs are built from packets).
template <class Typed> Typed typedOf(const isa::Instruction &inst) {
  isa::Packet packet;
  isa::encode(inst, packet);
  return Typed::fromPacket(packet.data());
}

} // namespace

const Buffer *Footprint::find(std::string_view operand) const {
  for (const Buffer &b : buffers)
    if (operand == b.operand)
      return &b;
  return nullptr;
}

bool Footprint::inPlaceAllowed(std::string_view written, std::string_view read) const {
  return std::any_of(inPlace.begin(), inPlace.end(),
                     [&](const auto &p) { return written == p.first && read == p.second; });
}

bool Footprint::overlapUnspecified(std::string_view a, std::string_view b) const {
  return std::any_of(unspecifiedOverlap.begin(), unspecifiedOverlap.end(), [&](const auto &p) {
    return (a == p.first && b == p.second) || (a == p.second && b == p.first);
  });
}

Footprint footprintOf(const isa::Instruction &inst) {
  Footprint f;
  switch (inst.opcode) {
#define NPU_FOOTPRINT(NAME, Type, family)                                                          \
  case isa::Opcode::NAME: describe(f, typedOf<isa::inst::Type>(inst)); break;
    NPU_FOR_EACH_INSTRUCTION(NPU_FOOTPRINT)
#undef NPU_FOOTPRINT
  }
  return f;
}

void legalise(isa::Instruction &inst) {
  switch (inst.opcode) {
#define NPU_LEGALISE(NAME, Type, family)                                                           \
  case isa::Opcode::NAME: {                                                                        \
    auto typed = typedOf<isa::inst::Type>(inst);                                                   \
    legaliseTyped(typed);                                                                          \
    inst = typed.toInstruction();                                                                  \
    break;                                                                                         \
  }
    NPU_FOR_EACH_INSTRUCTION(NPU_LEGALISE)
#undef NPU_LEGALISE
  }
}

const char *roleName(Role role) {
  switch (role) {
  case Role::Read: return "read";
  case Role::Write: return "write";
  case Role::Update: return "update";
  }
  return "?";
}

const char *contentName(Content content) {
  switch (content) {
  case Content::F32: return "f32";
  case Content::Bytes: return "bytes";
  case Content::Index32: return "i32 indices";
  case Content::Index64: return "i64 indices";
  case Content::Hyper: return "hyper-parameters";
  }
  return "?";
}

} // namespace npu::verify
