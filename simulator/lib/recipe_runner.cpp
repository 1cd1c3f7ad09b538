#include "recipe_runner.h"

#include "recipe_select.h"
#include "typed_streams.h"

#include "npu/arith/functions.h"

#include <array>
#include <bit>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace npu::sim {

namespace {

namespace recipe = isa::recipe;

constexpr unsigned kInputSlots = 4, kOutputSlots = 3, kScalarRegisters = 16;

// One packet's run. The engine works a row at a time; every step the runner
// takes is elementwise, so it runs each pass over all rows x cols elements at
// once: a stream that stays on its row (perRow 0) is tiled over the rows, and
// a K register a row load fills is a column holding each row's value.
class Runner {
public:
  Runner(ExecContext &ctx, const isa::Instruction &decoded, const recipe::Recipe &r)
      : ctx_(ctx), decoded_(decoded), r_(r), rows_(r.rows < 0 ? 1 : decoded.operands[r.rows]),
        cols_(decoded.operands[r.cols]), n_(rows_ * cols_) {}

  void run() {
    refuseWhatItDoesNotTake();
    if (n_ == 0)
      return;
    loadScalars();
    for (unsigned s = 0; s < r_.numPre; ++s)
      runScalarStep(recipe::kSteps[r_.firstPre + s]);
    for (unsigned p = 0; p < r_.numPasses; ++p)
      runPass(r_.passes[p]);
  }

private:
  [[noreturn]] void refuse(const std::string &what) const {
    throw std::logic_error(std::string("recipe ") + r_.name +
                           ": the ISS's recipe runner takes no " + what);
  }

  void refuseWhatItDoesNotTake() const {
    if (r_.rowLoad == recipe::RowLoad::Index)
      refuse("index row load");
    if (r_.rowStoreWords != 0)
      refuse("row store");
    for (unsigned p = 0; p < r_.numPasses; ++p) {
      if (r_.passes[p].reduces || r_.passes[p].numAfter != 0)
        refuse("reduction or scalar steps after a pass");
      for (unsigned s = 0; s < r_.passes[p].numSteps; ++s)
        if (recipe::kSteps[r_.passes[p].firstStep + s].kind != recipe::StepKind::Run)
          refuse("step other than Run");
    }
  }

  // The packet scalars into K0, K1, ...; the pre-load; the row load, one
  // value per row of each of its registers.
  void loadScalars() {
    for (unsigned k = 0; k < std::size(r_.scalars); ++k)
      if (r_.scalars[k] >= 0)
        k_[k] = static_cast<uint32_t>(decoded_.operands[r_.scalars[k]]);
    if (r_.preLoadWords != 0) {
      const std::vector<uint32_t> words =
          scalarAccess(r_.preLoadType, r_.preLoadOperand, r_.preLoadWords, 1);
      for (unsigned w = 0; w < words.size(); ++w)
        k_[r_.preLoadFirst + w] = words[w];
    }
    if (r_.rowLoad == recipe::RowLoad::Scalar) {
      const std::vector<uint32_t> loaded =
          scalarAccess(r_.rowLoadType, r_.rowLoadOperand, r_.rowLoadWords, rows_);
      const uint64_t words = loaded.size() / rows_;
      for (unsigned w = 0; w < words; ++w) {
        std::vector<uint32_t> &column = kColumns_[r_.rowLoadDst + w];
        column.resize(n_);
        for (uint64_t i = 0; i < rows_; ++i)
          std::fill_n(column.begin() + static_cast<std::ptrdiff_t>(i * cols_), cols_,
                      loaded[i * words + w]);
      }
    }
  }

  // `count` accesses of the pre-load or the row load on `operand`, each its
  // registers' words in order: an untyped access's `words` words, a typed
  // one's element in lane form (an i64's low and high word).
  std::vector<uint32_t> scalarAccess(const recipe::AccessType &type, int8_t operand, unsigned words,
                                     uint64_t count) const {
    const uint64_t at = decoded_.operands[operand];
    if (!type.typed()) {
      const auto loaded = ctx_.read<uint32_t>(at, count * words);
      return {loaded.begin(), loaded.end()};
    }
    const auto dtype = static_cast<isa::DType>(
        type.typeOperand >= 0 ? decoded_.operands[type.typeOperand] : type.fixedType);
    LaneColumns lanes = loadLanes(ctx_, at, count, dtype);
    if (lanes.high.empty())
      return std::move(lanes.words);
    std::vector<uint32_t> pairs(2 * count);
    for (uint64_t i = 0; i < count; ++i) {
      pairs[2 * i] = lanes.words[i];
      pairs[2 * i + 1] = lanes.high[i];
    }
    return pairs;
  }

  // The element type of stream slot s: its DType operand's value in the
  // packet, or the fixed type (f32 for the untyped 32-bit streams).
  isa::DType streamType(unsigned slot) const {
    return r_.streamTypeOperand[slot] >= 0
               ? static_cast<isa::DType>(decoded_.operands[r_.streamTypeOperand[slot]])
               : static_cast<isa::DType>(r_.streamFixedType[slot]);
  }
  bool perRow(unsigned slot) const { return (r_.streamPerRow >> slot & 1) != 0; }
  uint64_t address(unsigned slot) const {
    if (r_.streamOperand[slot] < 0)
      refuse("pass naming a stream it does not declare");
    return decoded_.operands[r_.streamOperand[slot]];
  }

  // Input stream `slot` into its lane columns (an i64 stream's high words in
  // the next slot's).
  void loadInput(unsigned slot) {
    const isa::DType type = streamType(slot);
    const uint64_t at = address(slot);
    LaneColumns lanes;
    if (!perRow(slot)) {
      // One row, read once and tiled: the row broadcast.
      const LaneColumns row = loadLanes(ctx_, at, cols_, type);
      const auto tile = [&](const std::vector<uint32_t> &from, std::vector<uint32_t> &to) {
        to.resize(n_);
        for (uint64_t i = 0; i < rows_; ++i)
          std::copy(from.begin(), from.end(), to.begin() + static_cast<std::ptrdiff_t>(i * cols_));
      };
      tile(row.words, lanes.words);
      if (!row.high.empty())
        tile(row.high, lanes.high);
    } else if ((r_.zeroFirstRow >> slot & 1) != 0) {
      // An accumulator: +0 on the first row (nothing read), memory after it.
      const LaneColumns rest = loadLanes(ctx_, at + cols_ * storageBytes(type), n_ - cols_, type);
      lanes.words.assign(cols_, 0);
      lanes.words.insert(lanes.words.end(), rest.words.begin(), rest.words.end());
      if (!rest.high.empty()) {
        lanes.high.assign(cols_, 0);
        lanes.high.insert(lanes.high.end(), rest.high.begin(), rest.high.end());
      }
    } else {
      lanes = loadLanes(ctx_, at, n_, type);
    }
    columns_[recipe::kSrcIB0 + slot] = std::move(lanes.words);
    if (!lanes.high.empty())
      columns_[recipe::kSrcIB0 + slot + 1] = std::move(lanes.high);
  }

  void storeOutput(unsigned slot) {
    if (!perRow(slot))
      refuse("output stream that stays on its row");
    const isa::DType type = streamType(slot);
    const uint8_t code = recipe::kSrcIB0 + slot;
    LaneColumns lanes;
    lanes.words = take(code);
    if (type == isa::DType::i64)
      lanes.high = take(code + 1);
    storeLanes(ctx_, address(slot), type, lanes);
  }

  std::vector<uint32_t> take(uint8_t code) {
    auto it = columns_.find(code);
    if (it == columns_.end())
      throw std::logic_error(std::string("recipe ") + r_.name + ": output " + std::to_string(code) +
                             " is never written");
    std::vector<uint32_t> column = std::move(it->second);
    columns_.erase(it);
    return column;
  }

  // A step's source: a column, or a value the engine broadcasts (a
  // constant, a K register holding one value for the packet).
  arith::Operand operand(uint8_t code) {
    if (code == recipe::kSrcZero)
      return {&kZero, true};
    if (code == recipe::kSrcOne)
      return {&kOne, true};
    if (code == recipe::kSrcCols) {
      colsValue_ = static_cast<float>(cols_);
      return {&colsValue_, true};
    }
    if (code == recipe::kSrcCol || code == recipe::kSrcRow)
      return {reinterpret_cast<const float *>(indexColumn(code == recipe::kSrcRow).data()), false};
    if (code >= recipe::kSrcK0) {
      const unsigned k = code - recipe::kSrcK0;
      if (!kColumns_[k].empty())
        return {reinterpret_cast<const float *>(kColumns_[k].data()), false};
      return {reinterpret_cast<const float *>(&k_[k]), true};
    }
    const auto it = columns_.find(code);
    if (it == columns_.end())
      throw std::logic_error(std::string("recipe ") + r_.name + ": a step reads source code " +
                             std::to_string(code) + ", which nothing wrote");
    return {reinterpret_cast<const float *>(it->second.data()), false};
  }

  // The element indices COL and ROW as the engine's counters give them:
  // int32 lane values, wrapping past 2^31 (computed once per packet).
  const std::vector<uint32_t> &indexColumn(bool row) {
    std::vector<uint32_t> &column = row ? rowIndex_ : colIndex_;
    if (column.empty() && n_ != 0) {
      column.resize(n_);
      for (uint64_t e = 0; e < n_; ++e)
        column[e] = static_cast<uint32_t>(row ? e / cols_ : e % cols_);
    }
    return column;
  }

  // The inputs of `step`, checked against its program's count.
  std::span<const arith::Operand> inputs(const recipe::Step &step,
                                         std::array<arith::Operand, 2> &operands) {
    if (step.program < 0)
      refuse("Run step without a program");
    const unsigned count = arith::microcode::kPrograms[step.program].numInputs;
    operands[0] = operand(step.src0);
    if (count == 2)
      operands[1] = operand(step.src1);
    return {operands.data(), count};
  }

  // A Pre step: scalars in, a scalar register out.
  void runScalarStep(const recipe::Step &step) {
    if (step.kind != recipe::StepKind::Run || step.dst < recipe::kSrcK0)
      refuse("Pre step other than a Run into a K register");
    std::array<arith::Operand, 2> operands;
    const auto in = inputs(step, operands);
    for (const arith::Operand &o : in)
      if (!o.broadcast)
        refuse("Pre step reading a per-row value");
    float result = 0;
    arith::apply(static_cast<arith::Program>(step.program), in, &result, 1);
    k_[step.dst - recipe::kSrcK0] = std::bit_cast<uint32_t>(result);
  }

  void runPass(const recipe::Pass &pass) {
    for (unsigned s = 0; s < kInputSlots; ++s)
      if ((pass.inputs >> s & 1) != 0 && (r_.streamHigh >> s & 1) == 0)
        loadInput(s);
    for (unsigned s = 0; s < pass.numSteps; ++s) {
      const recipe::Step &step = recipe::kSteps[pass.firstStep + s];
      if (step.dst >= recipe::kSrcK0 || step.dst == recipe::kSrcZero)
        refuse("element step writing a scalar");
      std::array<arith::Operand, 2> operands;
      const auto in = inputs(step, operands);
      // The inputs are read before the destination is written: a step may
      // write the column it reads.
      std::vector<uint32_t> result(n_);
      arith::apply(static_cast<arith::Program>(step.program), in,
                   reinterpret_cast<float *>(result.data()), n_);
      columns_[step.dst] = std::move(result);
    }
    for (unsigned s = 0; s < kOutputSlots; ++s)
      if ((pass.outputs >> s & 1) != 0 && (r_.streamHigh >> (kInputSlots + s) & 1) == 0)
        storeOutput(kInputSlots + s);
  }

  static constexpr float kZero = 0.0f, kOne = 1.0f;
  ExecContext &ctx_;
  const isa::Instruction &decoded_;
  const recipe::Recipe &r_;
  const uint64_t rows_, cols_, n_;
  float colsValue_ = 0;
  // Lane columns by step source code: the streams (an i64 stream's high
  // words in the next slot's code), the temporaries.
  std::map<uint8_t, std::vector<uint32_t>> columns_;
  // K0..K15: one value for the packet, or a column when a row load fills it.
  std::array<uint32_t, kScalarRegisters> k_{};
  std::array<std::vector<uint32_t>, kScalarRegisters> kColumns_;
  std::vector<uint32_t> colIndex_, rowIndex_;
};

} // namespace

void runRecipe(ExecContext &ctx, const isa::Instruction &decoded,
               const isa::recipe::Recipe &recipe) {
  Runner(ctx, decoded, recipe).run();
}

void runRecipe(ExecContext &ctx, const isa::Instruction &decoded) {
  const isa::recipe::Recipe *r = recipeOf(decoded);
  if (r == nullptr)
    throw std::logic_error(std::string(isa::info(decoded.opcode).mnemonic) +
                           ": the record has no recipe for these operand values");
  runRecipe(ctx, decoded, *r);
}

} // namespace npu::sim
