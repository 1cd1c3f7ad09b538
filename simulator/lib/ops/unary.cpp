// EXP LOG RSQRT SQRT RECIP NEG ABS RELU SIGMOID TANH SILU GELU SIN COS POWS:
// each is its micro-program over the array.
#include "../arith_util.h"
#include "../context.h"
#include "../vector_ops.h"

namespace npu::sim {

namespace {

template <class Op> Work unaryWork(const Op &op) {
  return {.elements = op.n, .bytesRead = satMul(op.n, 4), .bytesWritten = satMul(op.n, 4)};
}

template <class Op> void unary(ExecContext &ctx, const Op &op, Program program) {
  const float *src = ctx.read<float>(op.src, op.n).data();
  float *dst = ctx.write<float>(op.dst, op.n).data();
  map(program, {each(src)}, dst, op.n);
}

} // namespace

#define NPU_UNARY(Type, ProgramName)                                                               \
  Work work(const isa::inst::Type &op) { return unaryWork(op); }                                  \
  void execute(ExecContext &ctx, const isa::inst::Type &op) { unary(ctx, op, Program::ProgramName); }

NPU_UNARY(Exp, Exp)
NPU_UNARY(Log, Log)
NPU_UNARY(Rsqrt, Rsqrt)
NPU_UNARY(Sqrt, Sqrt)
NPU_UNARY(Recip, Recip)
NPU_UNARY(Neg, Neg)
NPU_UNARY(Abs, Abs)
NPU_UNARY(Relu, Relu)
NPU_UNARY(Sigmoid, Sigmoid)
NPU_UNARY(Tanh, Tanh)
NPU_UNARY(Silu, Silu)
NPU_UNARY(Gelu, Gelu)
NPU_UNARY(Sin, Sin)
NPU_UNARY(Cos, Cos)
#undef NPU_UNARY

Work work(const isa::inst::Pows &op) { return unaryWork(op); }
void execute(ExecContext &ctx, const isa::inst::Pows &op) {
  const float *src = ctx.read<float>(op.src, op.n).data();
  float *dst = ctx.write<float>(op.dst, op.n).data();
  const float p = op.p;
  map(Program::Pow, {each(src), every(&p)}, dst, op.n);
}

} // namespace npu::sim
