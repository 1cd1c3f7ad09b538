#include "recipe_runner.h"

#include "recipe_select.h"
#include "typed_streams.h"

#include "npu/arith/functions.h"
#include "vector_ops.h"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace npu::sim {

namespace {

namespace recipe = isa::recipe;

constexpr unsigned kInputSlots = 4, kOutputSlots = 3, kScalarRegisters = 16;

// One packet's run. The engine works a row at a time; the runner runs each
// pass over a segment of rows x cols elements at once: every row when no
// stream carries a value from one row to the next, else one row at a time
// (an accumulator kept in memory reads what the row before wrote). A stream
// that stays on its row (perRow 0) is tiled over the segment's rows; a K
// register a row load, a reduction or a scalar step after a pass fills
// holds one value per row, tiled into a column when an element step reads
// it.
class Runner {
public:
  Runner(ExecContext &ctx, const isa::Instruction &decoded, const recipe::Recipe &r)
      : ctx_(ctx), decoded_(decoded), r_(r), rows_(r.rows < 0 ? 1 : decoded.operands[r.rows]),
        cols_(decoded.operands[r.cols]) {}

  void run() {
    refuseWhatItDoesNotTake();
    if (rows_ * cols_ == 0)
      return;
    loadScalars();
    for (unsigned s = 0; s < r_.numPre; ++s)
      runScalarStep(recipe::kSteps[r_.firstPre + s], false);
    unsigned read = 0;
    for (unsigned p = 0; p < r_.numPasses; ++p)
      read |= r_.passes[p].inputs;
    const bool accumulates = (r_.zeroFirstRow & ~r_.streamPerRow & read) != 0;
    const uint64_t segment = accumulates ? 1 : rows_;
    for (uint64_t row = 0; row < rows_; row += segment) {
      row0_ = row;
      segRows_ = std::min(segment, rows_ - row);
      n_ = segRows_ * cols_;
      columns_.clear();
      colIndex_.clear();
      rowIndex_.clear();
      for (unsigned k = 0; k < kScalarRegisters; ++k)
        setRows(k, {});
      loadRows();
      for (unsigned p = 0; p < r_.numPasses; ++p)
        runPass(r_.passes[p]);
      storeRows();
    }
  }

private:
  [[noreturn]] void refuse(const std::string &what) const {
    throw std::logic_error(std::string("recipe ") + r_.name +
                           ": the ISS's recipe runner takes no " + what);
  }

  void refuseWhatItDoesNotTake() const {
    if (r_.rowLoad == recipe::RowLoad::Index)
      refuse("index row load");
    for (unsigned p = 0; p < r_.numPasses; ++p)
      for (unsigned s = 0; s < r_.passes[p].numSteps; ++s)
        if (recipe::kSteps[r_.passes[p].firstStep + s].kind == recipe::StepKind::Scan)
          refuse("Scan step");
  }

  // The packet scalars into K0, K1, ...; the pre-load.
  void loadScalars() {
    for (unsigned k = 0; k < std::size(r_.scalars); ++k)
      if (r_.scalars[k] >= 0)
        k_[k] = static_cast<uint32_t>(decoded_.operands[r_.scalars[k]]);
    if (r_.preLoadWords != 0) {
      const std::vector<uint32_t> words =
          scalarAccess(r_.preLoadType, r_.preLoadOperand, r_.preLoadWords, 0, 1);
      for (unsigned w = 0; w < words.size(); ++w)
        k_[r_.preLoadFirst + w] = words[w];
    }
  }

  // The element type of a typed pre-load, row load or row store.
  isa::DType accessType(const recipe::AccessType &type) const {
    return static_cast<isa::DType>(type.typeOperand >= 0 ? decoded_.operands[type.typeOperand]
                                                         : type.fixedType);
  }

  // The bytes one row's access moves: a typed access's element, an
  // untyped one's `words` words.
  uint64_t accessBytes(const recipe::AccessType &type, unsigned words) const {
    return type.typed() ? storageBytes(accessType(type)) : 4 * uint64_t(words);
  }

  // Rows [first, first + count) of the pre-load or the row load on
  // `operand`, each its registers' words in order: an untyped access's
  // `words` words, a typed one's element in lane form (an i64's low and
  // high word).
  std::vector<uint32_t> scalarAccess(const recipe::AccessType &type, int8_t operand, unsigned words,
                                     uint64_t first, uint64_t count) const {
    const uint64_t at = decoded_.operands[operand] + first * accessBytes(type, words);
    if (!type.typed()) {
      const auto loaded = ctx_.read<uint32_t>(at, count * words);
      return {loaded.begin(), loaded.end()};
    }
    LaneColumns lanes = loadLanes(ctx_, at, count, accessType(type));
    if (lanes.high.empty())
      return std::move(lanes.words);
    std::vector<uint32_t> pairs(2 * count);
    for (uint64_t i = 0; i < count; ++i) {
      pairs[2 * i] = lanes.words[i];
      pairs[2 * i + 1] = lanes.high[i];
    }
    return pairs;
  }

  // The segment's row load: one value per row into each of its registers.
  void loadRows() {
    if (r_.rowLoad != recipe::RowLoad::Scalar)
      return;
    const std::vector<uint32_t> loaded =
        scalarAccess(r_.rowLoadType, r_.rowLoadOperand, r_.rowLoadWords, row0_, segRows_);
    const uint64_t words = loaded.size() / segRows_;
    for (unsigned w = 0; w < words; ++w) {
      std::vector<uint32_t> values(segRows_);
      for (uint64_t i = 0; i < segRows_; ++i)
        values[i] = loaded[i * words + w];
      setRows(r_.rowLoadDst + w, std::move(values));
    }
  }

  // The segment's row store: each row's registers K<src>... as whole
  // words, or a typed store's element narrowed from them (an i64 from two).
  void storeRows() {
    const unsigned words = r_.rowStoreWords;
    if (words == 0)
      return;
    const auto value = [&](unsigned k, uint64_t i) {
      return kRows_[k].empty() ? k_[k] : kRows_[k][i];
    };
    const uint64_t at = decoded_.operands[r_.rowStoreOperand] +
                        row0_ * accessBytes(r_.rowStoreType, words);
    if (r_.rowStoreType.typed()) {
      const isa::DType type = accessType(r_.rowStoreType);
      LaneColumns lanes;
      lanes.words.resize(segRows_);
      if (type == isa::DType::i64)
        lanes.high.resize(segRows_);
      for (uint64_t i = 0; i < segRows_; ++i) {
        lanes.words[i] = value(r_.rowStoreSrc, i);
        if (type == isa::DType::i64)
          lanes.high[i] = value(r_.rowStoreSrc + 1, i);
      }
      storeLanes(ctx_, at, type, lanes);
      return;
    }
    auto out = ctx_.write<uint32_t>(at, segRows_ * words);
    for (unsigned w = 0; w < words; ++w)
      for (uint64_t i = 0; i < segRows_; ++i)
        out[i * words + w] = value(r_.rowStoreSrc + w, i);
  }

  // K register k's per-row values (empty: the packet value k_[k]).
  void setRows(unsigned k, std::vector<uint32_t> values) {
    kRows_[k] = std::move(values);
    kTiles_[k].clear();
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
    const uint64_t bytes = storageBytes(type);
    LaneColumns lanes;
    if (!perRow(slot)) {
      // One row, read once and tiled: the row broadcast; an accumulator
      // (one row at a time) reads +0 on the first row, memory after it.
      LaneColumns row;
      if ((r_.zeroFirstRow >> slot & 1) != 0 && row0_ == 0) {
        row.words.assign(cols_, 0);
        if (type == isa::DType::i64)
          row.high.assign(cols_, 0);
      } else {
        row = loadLanes(ctx_, address(slot), cols_, type);
      }
      const auto tile = [&](const std::vector<uint32_t> &from, std::vector<uint32_t> &to) {
        to.resize(n_);
        for (uint64_t i = 0; i < segRows_; ++i)
          std::copy(from.begin(), from.end(), to.begin() + static_cast<std::ptrdiff_t>(i * cols_));
      };
      tile(row.words, lanes.words);
      if (!row.high.empty())
        tile(row.high, lanes.high);
    } else if ((r_.zeroFirstRow >> slot & 1) != 0 && row0_ == 0) {
      // An accumulator: +0 on the first row (nothing read), memory after it.
      const uint64_t at = address(slot) + cols_ * bytes;
      const LaneColumns rest = loadLanes(ctx_, at, n_ - cols_, type);
      lanes.words.assign(cols_, 0);
      lanes.words.insert(lanes.words.end(), rest.words.begin(), rest.words.end());
      if (!rest.high.empty()) {
        lanes.high.assign(cols_, 0);
        lanes.high.insert(lanes.high.end(), rest.high.begin(), rest.high.end());
      }
    } else {
      lanes = loadLanes(ctx_, address(slot) + row0_ * cols_ * bytes, n_, type);
    }
    columns_[recipe::kSrcIB0 + slot] = std::move(lanes.words);
    if (!lanes.high.empty())
      columns_[recipe::kSrcIB0 + slot + 1] = std::move(lanes.high);
  }

  // Output stream `slot` from its lane columns: the segment's rows, or the
  // one row an output that stays on its row (an accumulator's) rewrites on
  // every row, which the runner then runs one row at a time.
  void storeOutput(unsigned slot) {
    if (!perRow(slot) && segRows_ != 1)
      refuse("output stream that stays on its row but for an accumulator's");
    const isa::DType type = streamType(slot);
    const uint8_t code = recipe::kSrcIB0 + slot;
    LaneColumns lanes;
    lanes.words = take(code);
    if (type == isa::DType::i64)
      lanes.high = take(code + 1);
    const uint64_t row = perRow(slot) ? row0_ : 0;
    storeLanes(ctx_, address(slot) + row * cols_ * storageBytes(type), type, lanes);
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
      if (kRows_[k].empty())
        return {reinterpret_cast<const float *>(&k_[k]), true};
      if (kTiles_[k].empty()) {
        kTiles_[k].resize(n_);
        for (uint64_t i = 0; i < segRows_; ++i)
          std::fill_n(kTiles_[k].begin() + static_cast<std::ptrdiff_t>(i * cols_), cols_,
                      kRows_[k][i]);
      }
      return {reinterpret_cast<const float *>(kTiles_[k].data()), false};
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
        column[e] = static_cast<uint32_t>(row ? row0_ + e / cols_ : e % cols_);
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

  // A scalar step (Pre, or After a pass): scalars in, a scalar register
  // out; after a pass, once per row of the segment where an input holds a
  // value per row.
  void runScalarStep(const recipe::Step &step, bool perRowAllowed) {
    if (step.kind != recipe::StepKind::Run || step.dst < recipe::kSrcK0)
      refuse("scalar step other than a Run into a K register");
    if (step.program < 0)
      refuse("Run step without a program");
    const unsigned count = arith::microcode::kPrograms[step.program].numInputs;
    std::array<arith::Operand, 2> operands;
    std::vector<uint32_t> rowIndex;
    bool perRowInput = false;
    for (unsigned i = 0; i < count; ++i) {
      const uint8_t code = i == 0 ? step.src0 : step.src1;
      if (code == recipe::kSrcRow) {
        rowIndex.resize(segRows_);
        for (uint64_t r = 0; r < segRows_; ++r)
          rowIndex[r] = static_cast<uint32_t>(row0_ + r);
        operands[i] = {reinterpret_cast<const float *>(rowIndex.data()), false};
      } else if (code >= recipe::kSrcK0 && !kRows_[code - recipe::kSrcK0].empty()) {
        operands[i] = {reinterpret_cast<const float *>(kRows_[code - recipe::kSrcK0].data()),
                       false};
      } else if (code >= recipe::kSrcK0 || code == recipe::kSrcZero || code == recipe::kSrcOne ||
                 code == recipe::kSrcCols) {
        operands[i] = operand(code);
      } else {
        refuse("scalar step reading an element value");
      }
      perRowInput = perRowInput || !operands[i].broadcast;
    }
    if (perRowInput && !perRowAllowed)
      refuse("Pre step reading a per-row value");
    const unsigned k = step.dst - recipe::kSrcK0;
    std::vector<uint32_t> result(perRowInput ? segRows_ : 1);
    arith::apply(static_cast<arith::Program>(step.program), {operands.data(), count},
                 reinterpret_cast<float *>(result.data()), result.size());
    if (perRowInput) {
      setRows(k, std::move(result));
    } else {
      k_[k] = result[0];
      setRows(k, {});
    }
  }

  // Mask: -inf in the columns beyond each row's causal limit row + offset,
  // src0 elsewhere.
  std::vector<uint32_t> mask(const recipe::Step &step) {
    if (r_.maskOffset < 0)
      refuse("Mask step without a mask offset");
    const arith::Operand in = operand(step.src0);
    const int64_t offset = static_cast<int32_t>(decoded_.operands[r_.maskOffset]);
    const uint32_t minusInfinity = std::bit_cast<uint32_t>(-std::numeric_limits<float>::infinity());
    std::vector<uint32_t> result(n_);
    for (uint64_t e = 0; e < n_; ++e) {
      const int64_t last = static_cast<int64_t>(row0_ + e / cols_) + offset;
      const uint32_t value = std::bit_cast<uint32_t>(in.data[in.broadcast ? 0 : e]);
      result[e] = static_cast<int64_t>(e % cols_) > last ? minusInfinity : value;
    }
    return result;
  }

  // Reduce: each row's sum or maximum of src0 in the lanes' order
  // (vector_ops.h) into the pass's K register.
  void reduce(const recipe::Pass &pass, const recipe::Step &step) {
    if (!pass.reduces)
      refuse("Reduce step in a pass that does not reduce");
    const arith::Operand in = operand(step.src0);
    if (in.broadcast)
      refuse("reduction of a scalar");
    std::vector<uint32_t> values(segRows_);
    for (uint64_t i = 0; i < segRows_; ++i) {
      const float *row = in.data + i * cols_;
      values[i] =
          std::bit_cast<uint32_t>(pass.reduceMax ? laneMax(row, cols_) : laneSum(row, cols_));
    }
    setRows(pass.reduceDst, std::move(values));
  }

  void runPass(const recipe::Pass &pass) {
    for (unsigned s = 0; s < kInputSlots; ++s)
      if ((pass.inputs >> s & 1) != 0 && (r_.streamHigh >> s & 1) == 0)
        loadInput(s);
    for (unsigned s = 0; s < pass.numSteps; ++s) {
      const recipe::Step &step = recipe::kSteps[pass.firstStep + s];
      if (step.kind == recipe::StepKind::Reduce) {
        reduce(pass, step);
        continue;
      }
      if (step.dst >= recipe::kSrcK0 || step.dst == recipe::kSrcZero)
        refuse("element step writing a scalar");
      if (step.kind == recipe::StepKind::Mask) {
        columns_[step.dst] = mask(step);
        continue;
      }
      std::array<arith::Operand, 2> operands;
      const auto in = inputs(step, operands);
      // The inputs are read before the destination is written: a step may
      // write the column it reads.
      std::vector<uint32_t> result(n_);
      applyOnThreads(static_cast<arith::Program>(step.program), in,
                     reinterpret_cast<float *>(result.data()), n_);
      columns_[step.dst] = std::move(result);
    }
    for (unsigned s = 0; s < kOutputSlots; ++s)
      if ((pass.outputs >> s & 1) != 0 && (r_.streamHigh >> (kInputSlots + s) & 1) == 0)
        storeOutput(kInputSlots + s);
    for (unsigned s = 0; s < pass.numAfter; ++s)
      runScalarStep(recipe::kSteps[pass.firstAfter + s], true);
  }

  static constexpr float kZero = 0.0f, kOne = 1.0f;
  ExecContext &ctx_;
  const isa::Instruction &decoded_;
  const recipe::Recipe &r_;
  const uint64_t rows_, cols_;
  // The segment: its first row, its rows, its elements.
  uint64_t row0_ = 0, segRows_ = 0, n_ = 0;
  float colsValue_ = 0;
  // Lane columns by step source code: the streams (an i64 stream's high
  // words in the next slot's code), the temporaries.
  std::map<uint8_t, std::vector<uint32_t>> columns_;
  // K0..K15: one value for the packet, or one per row of the segment
  // (kRows_, tiled over the row's columns in kTiles_ when an element step
  // reads it).
  std::array<uint32_t, kScalarRegisters> k_{};
  std::array<std::vector<uint32_t>, kScalarRegisters> kRows_, kTiles_;
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
