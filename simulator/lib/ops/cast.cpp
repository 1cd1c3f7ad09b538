// CAST (isa/cast.td): the ISS runs the recipe the RTL vector engine runs,
// the record's variant for the packet's (stype, dtype) (recipe_runner.h).
// Nothing here names a type pair: the pairs' programs are the .td's.
#include "../context.h"
#include "../recipe_runner.h"

namespace npu::sim {

Work work(const isa::inst::Cast &op) {
  return {.elements = op.n};
}

void execute(ExecContext &ctx, const isa::inst::Cast &op) {
  runRecipe(ctx, op.toInstruction());
}

} // namespace npu::sim
