// The vector-engine recipe a packet runs (npu/isa/recipes.h, generated from
// the same records as the RTL's decode): the cycle model walks it, and the
// ISS runs every variant that is defined by its recipe alone (recipe_runner.h).
// Internal to libnpu_iss.
#pragma once

#include "npu/isa/isa.h"
#include "npu/isa/recipes.h"

namespace npu::sim {

// The recipe whose conditions the packet's operands meet, or nullptr for
// an instruction the vector engine does not run.
const isa::recipe::Recipe *recipeOf(const isa::Instruction &decoded);

} // namespace npu::sim
