// ADD SUB MUL DIV MAX MIN POW (with broadcast of b) and their scalar forms. The
// f32 forms have fast paths here; every other type runs the record's recipe
// (recipe_runner.h), as the RTL vector engine does.
#include "../arith_util.h"
#include "../context.h"
#include "../recipe_runner.h"
#include "../vector_ops.h"

#include <vector>

namespace npu::sim {

namespace {

uint64_t broadcastElements(isa::Broadcast bcast, uint64_t rows, uint64_t cols) {
  switch (bcast) {
  case isa::Broadcast::none: return satMul(rows, cols);
  case isa::Broadcast::row: return cols;
  case isa::Broadcast::col: return rows;
  case isa::Broadcast::scalar: return 1;
  }
  return 0;
}

template <class Op> Work binaryWork(const Op &op) { return {.elements = satMul(op.rows, op.cols)}; }

// dst = program(a, b') over rows x cols with b broadcast, where b' is b or,
// given `alpha`, alpha*b rounded first (ADD and SUB).
template <class Op>
void binary(ExecContext &ctx, const Op &op, Program program, const float *alpha = nullptr) {
  if (op.dtype != isa::DType::f32)
    return runRecipe(ctx, op.toInstruction());
  const uint64_t n = uint64_t(op.rows) * op.cols;
  const uint64_t bCount = broadcastElements(op.bcast, op.rows, op.cols);
  const float *a = ctx.read<float>(op.a, n).data();
  const float *b = ctx.read<float>(op.b, bCount).data();
  std::vector<float> scaled;
  if (alpha) {
    scaled.resize(bCount);
    map(Program::Mul, {every(alpha), each(b)}, scaled.data(), bCount);
    b = scaled.data();
  }
  float *dst = ctx.write<float>(op.dst, n).data();
  const auto run = [&](const float *aPart, arith::Operand bPart, float *dstPart, uint64_t count) {
    map(program, {each(aPart), bPart}, dstPart, count);
  };
  switch (op.bcast) {
  case isa::Broadcast::none: run(a, each(b), dst, n); break;
  case isa::Broadcast::scalar: run(a, every(b), dst, n); break;
  case isa::Broadcast::row:
    for (uint64_t i = 0; i < op.rows; ++i)
      run(a + i * op.cols, each(b), dst + i * op.cols, op.cols);
    break;
  case isa::Broadcast::col:
    for (uint64_t i = 0; i < op.rows; ++i)
      run(a + i * op.cols, every(b + i), dst + i * op.cols, op.cols);
    break;
  }
}

template <class Op> Work scalarWork(const Op &op) {
  return {.elements = op.n};
}

// dst = program(a, s), or program(s, a) for the reversed forms.
template <class Op> void withScalar(ExecContext &ctx, const Op &op, Program program, bool reversed) {
  if (op.dtype != isa::DType::f32)
    return runRecipe(ctx, op.toInstruction());
  const float *a = ctx.read<float>(op.a, op.n).data();
  float *dst = ctx.write<float>(op.dst, op.n).data();
  const float s = op.s;
  if (reversed)
    map(program, {every(&s), each(a)}, dst, op.n);
  else
    map(program, {each(a), every(&s)}, dst, op.n);
}

} // namespace

// With alpha = 1 the scaling pass is skipped: 1*b is b (after the same
// flushing and NaN canonicalisation the add applies), so the bits agree.
Work work(const isa::inst::Add &op) { return binaryWork(op); }
void execute(ExecContext &ctx, const isa::inst::Add &op) {
  binary(ctx, op, Program::Add, op.alpha == 1.0f ? nullptr : &op.alpha);
}

Work work(const isa::inst::Sub &op) { return binaryWork(op); }
void execute(ExecContext &ctx, const isa::inst::Sub &op) {
  binary(ctx, op, Program::Sub, op.alpha == 1.0f ? nullptr : &op.alpha);
}

Work work(const isa::inst::Mul &op) { return binaryWork(op); }
void execute(ExecContext &ctx, const isa::inst::Mul &op) { binary(ctx, op, Program::Mul); }

Work work(const isa::inst::Div &op) { return binaryWork(op); }
void execute(ExecContext &ctx, const isa::inst::Div &op) { binary(ctx, op, Program::Div); }

Work work(const isa::inst::Max &op) { return binaryWork(op); }
void execute(ExecContext &ctx, const isa::inst::Max &op) { binary(ctx, op, Program::Max); }

Work work(const isa::inst::Min &op) { return binaryWork(op); }
void execute(ExecContext &ctx, const isa::inst::Min &op) { binary(ctx, op, Program::Min); }

Work work(const isa::inst::Pow &op) { return binaryWork(op); }
void execute(ExecContext &ctx, const isa::inst::Pow &op) { binary(ctx, op, Program::Pow); }

Work work(const isa::inst::Adds &op) { return scalarWork(op); }
void execute(ExecContext &ctx, const isa::inst::Adds &op) { withScalar(ctx, op, Program::Add, false); }

Work work(const isa::inst::Subs &op) { return scalarWork(op); }
void execute(ExecContext &ctx, const isa::inst::Subs &op) { withScalar(ctx, op, Program::Sub, false); }

Work work(const isa::inst::Muls &op) { return scalarWork(op); }
void execute(ExecContext &ctx, const isa::inst::Muls &op) { withScalar(ctx, op, Program::Mul, false); }

Work work(const isa::inst::Divs &op) { return scalarWork(op); }
void execute(ExecContext &ctx, const isa::inst::Divs &op) { withScalar(ctx, op, Program::Div, false); }

Work work(const isa::inst::Maxs &op) { return scalarWork(op); }
void execute(ExecContext &ctx, const isa::inst::Maxs &op) { withScalar(ctx, op, Program::Max, false); }

Work work(const isa::inst::Mins &op) { return scalarWork(op); }
void execute(ExecContext &ctx, const isa::inst::Mins &op) { withScalar(ctx, op, Program::Min, false); }

Work work(const isa::inst::Rsubs &op) { return scalarWork(op); }
void execute(ExecContext &ctx, const isa::inst::Rsubs &op) { withScalar(ctx, op, Program::Sub, true); }

Work work(const isa::inst::Rdivs &op) { return scalarWork(op); }
void execute(ExecContext &ctx, const isa::inst::Rdivs &op) { withScalar(ctx, op, Program::Div, true); }

} // namespace npu::sim
