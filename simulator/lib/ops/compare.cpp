// EQ NE LT LE GT GE and their scalar forms (isa/compare.td): every variant
// runs the record's recipe (recipe_runner.h), as the RTL vector engine
// does; the instructions have no fast path of their own.
#include "../arith_util.h"
#include "../context.h"
#include "../recipe_runner.h"

namespace npu::sim {

#define NPU_COMPARE_SEMANTICS(NAME, Type, family)                                                  \
  Work work(const isa::inst::Type &op) {                                                           \
    return {.elements = satMul(op.rows, op.cols)};                                                 \
  }                                                                                                \
  void execute(ExecContext &ctx, const isa::inst::Type &op) {                                      \
    runRecipe(ctx, op.toInstruction());                                                            \
  }
#define NPU_COMPARE_SCALAR_SEMANTICS(NAME, Type, family)                                           \
  Work work(const isa::inst::Type &op) {                                                           \
    return {.elements = op.n};                                                                     \
  }                                                                                                \
  void execute(ExecContext &ctx, const isa::inst::Type &op) {                                      \
    runRecipe(ctx, op.toInstruction());                                                            \
  }
NPU_FOR_EACH_COMPARE_OP(NPU_COMPARE_SEMANTICS)
NPU_FOR_EACH_COMPARE_SCALAR_OP(NPU_COMPARE_SCALAR_SEMANTICS)
#undef NPU_COMPARE_SEMANTICS
#undef NPU_COMPARE_SCALAR_SEMANTICS

} // namespace npu::sim
