// Every instruction of the .td class UnaryOp: dst[i] = program(src[i], f32
// operands...), the program being the one its record names. The f32 form
// has a fast path here; bf16 and f16 run the record's recipe on the typed
// streams (recipe_runner.h), as the RTL vector engine does.
#include "../arith_util.h"
#include "../context.h"
#include "../recipe_runner.h"
#include "../vector_ops.h"

#include <array>

namespace npu::sim {

namespace {

template <class Op> Work unaryWork(const Op &op) {
  return {.elements = op.n};
}

template <class Op> void unary(ExecContext &ctx, const Op &op) {
  // Other types (bf16, f16; NEG's i32 and i64) run the record's recipe, as
  // the RTL.
  if (op.dtype != isa::DType::f32)
    return runRecipe(ctx, op.toInstruction());
  constexpr Program program = programOf<Op>();
  const auto scalars = op.f32Operands();
  constexpr size_t numInputs = 1 + std::tuple_size_v<decltype(scalars)>;
  static_assert(arith::microcode::kPrograms[static_cast<size_t>(program)].numInputs == numInputs,
                "a unary program takes the element, then the instruction's f32 operands");
  const float *src = ctx.read<float>(op.src, op.n).data();
  float *dst = ctx.write<float>(op.dst, op.n).data();
  std::array<arith::Operand, numInputs> inputs;
  inputs[0] = each(src);
  for (size_t i = 0; i < scalars.size(); ++i)
    inputs[1 + i] = every(&scalars[i]);
  applyOnThreads(program, inputs, dst, op.n);
}

} // namespace

#define NPU_UNARY(NAME, Type, family)                                                              \
  Work work(const isa::inst::Type &op) {                                                           \
    return unaryWork(op);                                                                          \
  }                                                                                                \
  void execute(ExecContext &ctx, const isa::inst::Type &op) {                                      \
    unary(ctx, op);                                                                                \
  }
NPU_FOR_EACH_UNARY_OP(NPU_UNARY)
#undef NPU_UNARY

} // namespace npu::sim
