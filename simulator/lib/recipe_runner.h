// The ISS runs a packet by the record's vector-engine recipe (isa/recipe.td,
// npu/isa/recipes.h): the typed streams read into lane form, the packet
// scalars, pre-load and row loads into K registers, each pass's Run and
// Mask steps applying to lane columns, its reduction (in the lanes' order)
// and the scalar steps after it into per-row K registers, the output
// streams written back from lane form, the row store. Every non-f32
// variant of an instruction runs here, so the ISS and the RTL vector engine
// compute it with the same programs by construction; the f32 variants keep
// their fast paths. Internal to libnpu_iss.
#pragma once

#include "context.h"
#include "npu/isa/isa.h"
#include "npu/isa/recipes.h"

namespace npu::sim {

// Runs `recipe` (the variant recipeOf(decoded) selects) on the packet
// `decoded`, whose memory operands the checks admitted. A recipe of a kind
// the runner does not take (index row loads, Scan steps) is
// std::logic_error: a bug of the instruction that sent it here, not a fault
// of the packet.
void runRecipe(ExecContext &ctx, const isa::Instruction &decoded,
               const isa::recipe::Recipe &recipe);

// The same for the variant recipeOf(decoded) selects; std::logic_error when
// the record has none (the instruction's accepted values are checked first).
void runRecipe(ExecContext &ctx, const isa::Instruction &decoded);

} // namespace npu::sim
