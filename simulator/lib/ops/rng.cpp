// RAND and RANDN (isa/rng.td): the ISS runs the recipes the RTL vector
// engine runs (recipe_runner.h), each lane's Philox4x32-10 block from its
// element index in the record's steps (and RANDN's Box-Muller by the same
// log, sqrt, cos and sin programs), so the two compute the bits with the
// same programs; the reference model computes them from npu/arith/philox.h
// and the ISS tests compare it with this.
#include "../context.h"
#include "../recipe_runner.h"

namespace npu::sim {

Work work(const isa::inst::Rand &op) {
  return {.elements = op.n};
}

void execute(ExecContext &ctx, const isa::inst::Rand &op) {
  runRecipe(ctx, op.toInstruction());
}

Work work(const isa::inst::Randn &op) {
  return {.elements = op.n};
}

void execute(ExecContext &ctx, const isa::inst::Randn &op) {
  runRecipe(ctx, op.toInstruction());
}

} // namespace npu::sim
