// CAST (isa/cast.td): the ISS runs the recipe the RTL vector engine runs,
// the record's variant for the packet's (stype, dtype): the source read into
// lane form by the typed streams, the pass's Run steps each applying their
// micro-program to lane columns, the destination written back from lane
// form. Nothing here names a type pair: the pairs' programs are the .td's.
#include "../context.h"
#include "../recipe_select.h"
#include "../typed_streams.h"

#include "npu/arith/functions.h"

#include <array>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace npu::sim {

namespace {

namespace recipe = isa::recipe;

// The columns of a pass over n elements, by step source code: the input
// streams' (a stream of i64 fills its slot and the next), the temporaries'
// and the output streams'.
class Columns {
public:
  explicit Columns(uint64_t n) : n_(n) {}

  std::vector<uint32_t> &column(uint8_t code) {
    std::vector<uint32_t> &c = columns_[code];
    c.resize(n_);
    return c;
  }
  bool has(uint8_t code) const { return columns_.contains(code); }

  // A step's source: a column, or a constant the engine broadcasts.
  arith::Operand operand(uint8_t code) {
    if (code == recipe::kSrcZero)
      return {&kZero, true};
    if (code == recipe::kSrcOne)
      return {&kOne, true};
    if (!has(code))
      throw std::logic_error("cast recipe: a step reads source code " + std::to_string(code) +
                             ", which nothing wrote");
    return {reinterpret_cast<const float *>(column(code).data()), false};
  }

private:
  static constexpr float kZero = 0.0f, kOne = 1.0f;
  uint64_t n_;
  std::map<uint8_t, std::vector<uint32_t>> columns_;
};

} // namespace

Work work(const isa::inst::Cast &op) {
  return {.elements = op.n};
}

void execute(ExecContext &ctx, const isa::inst::Cast &op) {
  const recipe::Recipe *r = recipeOf(op.toInstruction());
  if (r == nullptr || r->numPasses != 1)
    throw std::logic_error("cast: the record has no single-pass recipe for these types");
  const isa::DType from = op.stype, to = op.dtype;
  Columns columns(op.n);
  LaneColumns in = loadLanes(ctx, op.src, op.n, from);
  columns.column(recipe::kSrcIB0) = std::move(in.words);
  if (!in.high.empty())
    columns.column(recipe::kSrcIB0 + 1) = std::move(in.high);
  const recipe::Pass &pass = r->passes[0];
  for (unsigned s = 0; s < pass.numSteps; ++s) {
    const recipe::Step &step = recipe::kSteps[pass.firstStep + s];
    if (step.kind != recipe::StepKind::Run || step.program < 0)
      throw std::logic_error("cast: a step of its recipe is not a Run");
    const auto program = static_cast<arith::Program>(step.program);
    const unsigned inputs = arith::microcode::kPrograms[step.program].numInputs;
    std::array<arith::Operand, 2> operands = {columns.operand(step.src0)};
    if (inputs == 2)
      operands[1] = columns.operand(step.src1);
    // The inputs are read before the destination is written: a step may
    // write the column it reads.
    std::vector<uint32_t> result(op.n);
    arith::apply(program, std::span<const arith::Operand>(operands.data(), inputs),
                 reinterpret_cast<float *>(result.data()), op.n);
    columns.column(step.dst) = std::move(result);
  }
  LaneColumns out;
  out.words = std::move(columns.column(recipe::kSrcOB0));
  if (to == isa::DType::i64)
    out.high = std::move(columns.column(recipe::kSrcOB0 + 1));
  storeLanes(ctx, op.dst, to, out);
}

} // namespace npu::sim
