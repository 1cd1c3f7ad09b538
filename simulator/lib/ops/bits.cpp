// SELECT, SELECTS and the bitwise instructions (isa/bits.td): every variant
// runs the record's recipe (recipe_runner.h), as the RTL vector engine
// does; the instructions have no fast path of their own.
#include "../arith_util.h"
#include "../context.h"
#include "../recipe_runner.h"

namespace npu::sim {

#define NPU_BITS_MATRIX_SEMANTICS(NAME, Type, family)                                              \
  Work work(const isa::inst::Type &op) {                                                           \
    return {.elements = satMul(op.rows, op.cols)};                                                 \
  }                                                                                                \
  void execute(ExecContext &ctx, const isa::inst::Type &op) {                                      \
    runRecipe(ctx, op.toInstruction());                                                            \
  }
#define NPU_BITS_VECTOR_SEMANTICS(NAME, Type, family)                                              \
  Work work(const isa::inst::Type &op) {                                                           \
    return {.elements = op.n};                                                                     \
  }                                                                                                \
  void execute(ExecContext &ctx, const isa::inst::Type &op) {                                      \
    runRecipe(ctx, op.toInstruction());                                                            \
  }
NPU_FOR_EACH_SELECT(NPU_BITS_MATRIX_SEMANTICS)
NPU_FOR_EACH_BITWISE_OP(NPU_BITS_MATRIX_SEMANTICS)
NPU_FOR_EACH_BITWISE_SCALAR_OP(NPU_BITS_VECTOR_SEMANTICS)
NPU_FOR_EACH_BITWISE_NOT_OP(NPU_BITS_VECTOR_SEMANTICS)
#undef NPU_BITS_MATRIX_SEMANTICS
#undef NPU_BITS_VECTOR_SEMANTICS

} // namespace npu::sim
