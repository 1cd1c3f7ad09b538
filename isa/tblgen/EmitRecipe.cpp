// The vector engine's decode table and recipe ROM (npu_recipe_pkg), from
// the instructions' Recipes (isa/recipe.td): rtl/npu_vector.sv runs
// whatever recipe recipe_select picks and names no instruction itself.
#include "Emitters.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <string>

namespace npu::tblgen {

namespace {

std::string slot(const InstructionDef &inst, int index) {
  return verilogSlot(inst, index);
}
// Operand `index` zero-extended to 32 bits, or `none` without one.
std::string slot32(const InstructionDef &inst, int index, const char *none) {
  return index < 0 ? none : verilogSlot32(inst, index);
}

// Inside the package's functions its own names are qualified (Yosys 0.23
// does not resolve a package's enumerators there otherwise), and the other
// packages' constants are literals with their names in comments (Yosys 0.23
// reads no package's names inside another package).
const std::string kPkg = "npu_recipe_pkg::";

unsigned programBits(const IsaModel &model) {
  return std::max(1u, llvm::Log2_64_Ceil(model.programs.size()));
}

std::string bits(unsigned width, uint64_t value) {
  return std::to_string(width) + "'d" + std::to_string(value);
}

std::string sourceEnum(unsigned code) {
  return "SRC_" + recipeSourceName(code);
}

std::string stepWord(const IsaModel &model, const RecipeStep &step) {
  const char *kinds[] = {"STEP_END", "STEP_RUN", "STEP_MASK", "STEP_REDUCE", "STEP_SCAN"};
  const unsigned width = programBits(model);
  const std::string prog = step.program < 0 ? bits(width, 0)
                                            : bits(width, step.program) + " /* " +
                                                  model.programs[step.program].name + " */";
  return "{" + kPkg + kinds[static_cast<int>(step.kind)] + ", " + prog + ", " + kPkg +
         sourceEnum(step.src0) + ", " + kPkg + sourceEnum(step.src1) + ", " + kPkg +
         sourceEnum(step.dst) + "}";
}

std::string condition(const InstructionDef &inst, const RecipeDef &recipe) {
  std::string out;
  for (const RecipeCondition &c : recipe.when) {
    const unsigned width = inst.operands[c.operand].slot.width;
    out += (out.empty() ? "" : " && ") + slot(inst, c.operand) + (c.equal ? " == " : " != ") +
           (width == 1 ? "1'b" + std::to_string(c.value) : bits(width, c.value));
  }
  return out;
}

void emitSelect(const IsaModel &model, llvm::raw_ostream &os) {
  os << "  // The recipe of a packet: its opcode, then its variant's condition;\n"
        "  // R_ILLEGAL for an instruction the engine does not run.\n"
        "  /* verilator lint_off UNUSEDSIGNAL */ // only the opcode and condition bits\n"
        "  function automatic recipe_e recipe_select(input logic ["
     << kPacketBits - 1
     << ":0] packet);\n"
        "    recipe_select = npu_recipe_pkg::R_ILLEGAL;\n"
        "    unique case (packet[31:0])\n";
  for (const InstructionDef &inst : model.instructions) {
    if (inst.recipes.empty())
      continue;
    os << "      32'h" << llvm::utohexstr(inst.opcode) << " /* " << inst.defName << " */:";
    if (inst.recipes.size() == 1 && inst.recipes[0].when.empty()) {
      os << " recipe_select = " << kPkg << inst.recipes[0].name << ";\n";
      continue;
    }
    os << "\n";
    for (size_t r = 0; r < inst.recipes.size(); ++r)
      os << "        " << (r ? "else if (" : "if (") << condition(inst, inst.recipes[r])
         << ") recipe_select = " << kPkg << inst.recipes[r].name << ";\n";
  }
  os << "      default: recipe_select = npu_recipe_pkg::R_ILLEGAL;\n    endcase\n  endfunction\n"
        "  /* verilator lint_on UNUSEDSIGNAL */\n\n";
}

// The fields of recipe_setup's result, LSB first: name, width, comment.
struct SetupField {
  const char *name;
  unsigned width;
  const char *doc;
};
constexpr SetupField kSetupFields[] = {
    {"ROWS", 32, "rows"},
    {"COLS", 32, "elements per row"},
    {"SCALARS", 32 * kRecipePacketScalars, "into K0, K1, ... at the start"},
    {"MASK_OFFSET", 32, "the causal limit of a row: row + MASK_OFFSET"},
    {"STREAM_BASE", 7 * 64, "IB0..IB3, OB0..OB2 on row 0, 64 bits each"},
    {"STREAM_PER_ROW", 7, "the stream advances by one row per row"},
    {"ZERO_FIRST_ROW", 7, "the stream reads +0 on row 0"},
    {"STREAM_TYPE", 7 * 4,
     "per stream: [2:0] its DType, [3] the high words of the i64 stream before it"},
    {"PRE_LOAD", 1, "load PRE_LOAD_WORDS words into K<PRE_LOAD_FIRST>.. once"},
    {"PRE_LOAD_ADDR", 64, ""},
    {"PRE_LOAD_WORDS", 4, ""},
    {"PRE_LOAD_FIRST", 4, ""},
    {"PRE_LOAD_TYPE", 4, "[3] one element of the DType [2:0] (else words)"},
    {"ROW_LOAD", 2, "row_load_e"},
    {"ROW_LOAD_ADDR", 64, "of row 0's word or index"},
    {"ROW_LOAD_DST", 4, "first scalar register of a scalar row load"},
    {"ROW_LOAD_WORDS", 2, "words per row of a scalar row load"},
    {"ROW_LOAD_TYPE", 4, "[3] one element of the DType [2:0] per row (else words)"},
    {"INDEX_WIDE", 1, "i64 indices"},
    {"INDEX_BOUND", 32, "indices lie in [0, INDEX_BOUND)"},
    {"INDEX_SKIP", 32, "the row of this index does nothing; negative: none"},
    {"INDEX_OPERAND", 8, "the operand an index fault names"},
    {"REBASE", 7, "streams starting at the index's row of INDEX_BASE"},
    {"INDEX_BASE", 64, ""},
    {"ROW_STORE", 1, "store K<ROW_STORE_SRC>.. to row `row` of ROW_STORE_ADDR"},
    {"ROW_STORE_ADDR", 64, ""},
    {"ROW_STORE_SRC", 4, ""},
    {"ROW_STORE_WORDS", 2, "registers K<ROW_STORE_SRC>.. stored per row"},
    {"ROW_STORE_TYPE", 4, "[3] one element of the DType [2:0] per row (else words)"},
};

void emitSetup(const IsaModel &model, llvm::raw_ostream &os) {
  os << "  // recipe_setup's result: the packet's shape, streams and scalar work\n"
        "  // under a recipe, field <F> at SU_<F>_LSB.\n";
  unsigned lsb = 0;
  for (const SetupField &f : kSetupFields) {
    os << "  localparam int unsigned SU_" << f.name << "_LSB = " << lsb << ";";
    if (*f.doc)
      os << "  // " << f.doc;
    os << "\n";
    lsb += f.width;
  }
  os << "  localparam int unsigned SU_BITS = " << lsb << ";\n";
  os << "  localparam int unsigned SU_SCALARS_COUNT = " << kRecipePacketScalars
     << ";  // 32-bit fields of SU_SCALARS\n\n";
  os << "  /* verilator lint_off UNUSEDSIGNAL */ // only the operand bits\n"
        "  function automatic logic [SU_BITS-1:0] recipe_setup(\n"
        "      input recipe_e r, input logic ["
     << kPacketBits - 1
     << ":0] packet);\n"
        "    recipe_setup = '0;\n"
        "    recipe_setup[npu_recipe_pkg::SU_INDEX_SKIP_LSB +: 32] = '1;\n"
        "    unique case (r)\n";
  for (const InstructionDef &inst : model.instructions)
    for (const RecipeDef &recipe : inst.recipes) {
      const auto addr = [&](int operand) { return slot(inst, operand); };
      // An element type's 3 bits: its operand's value, or the fixed type.
      const auto type = [&](const ElementType &element) {
        return element.typeOperand >= 0 ? "3'(" + slot(inst, element.typeOperand) + ")"
                                        : bits(3, element.engineType());
      };
      os << "      " << kPkg << recipe.name << ": begin\n";
      const auto set = [&](const std::string &field, const std::string &value,
                           const std::string &offset = "", unsigned width = 0) {
        os << "        recipe_setup[" << kPkg << "SU_" << field << "_LSB" << offset;
        if (width != 1) {
          unsigned w = width;
          if (!w)
            for (const SetupField &f : kSetupFields)
              if (field == f.name)
                w = f.width;
          os << " +: " << w;
        }
        os << "] = " << value << ";\n";
      };
      set("ROWS", slot32(inst, recipe.rows, "32'd1"));
      set("COLS", slot32(inst, recipe.cols, "32'd1"));
      for (size_t k = 0; k < recipe.scalars.size(); ++k)
        set("SCALARS", slot32(inst, recipe.scalars[k], ""), " + " + std::to_string(32 * k), 32);
      if (recipe.maskOffset >= 0)
        set("MASK_OFFSET", slot32(inst, recipe.maskOffset, ""));
      for (const RecipeStream &st : recipe.streams) {
        const std::string k = std::to_string(st.slot);
        set("STREAM_BASE", addr(st.operand), " + " + std::to_string(64 * st.slot), 64);
        if (st.perRow)
          set("STREAM_PER_ROW", "1'b1", " + " + k, 1);
        if (st.zeroFirstRow)
          set("ZERO_FIRST_ROW", "1'b1", " + " + k, 1);
        if (st.typeOperand >= 0 || st.engineType() != 0 || st.high)
          set("STREAM_TYPE", "{" + std::string(st.high ? "1'b1" : "1'b0") + ", " + type(st) + "}",
              " + " + std::to_string(4 * st.slot), 4);
      }
      const auto setAccessType = [&](const std::string &field, const ElementType &element) {
        if (element.typed())
          set(field, "{1'b1, " + type(element) + "}");
      };
      if (recipe.preLoad >= 0) {
        set("PRE_LOAD", "1'b1", "", 1);
        set("PRE_LOAD_ADDR", addr(recipe.preLoad));
        set("PRE_LOAD_WORDS", bits(4, recipe.preLoadWords));
        set("PRE_LOAD_FIRST", bits(4, recipe.preLoadFirst));
        setAccessType("PRE_LOAD_TYPE", recipe.preLoadType);
      }
      if (recipe.rowLoad != RowLoadKind::None) {
        set("ROW_LOAD",
            kPkg + (recipe.rowLoad == RowLoadKind::Index ? "ROW_LOAD_INDEX" : "ROW_LOAD_SCALAR"));
        set("ROW_LOAD_ADDR", addr(recipe.rowLoadOperand));
        set("ROW_LOAD_DST", bits(4, recipe.rowLoadDst));
        set("ROW_LOAD_WORDS", bits(2, recipe.rowLoadWords));
        setAccessType("ROW_LOAD_TYPE", recipe.rowLoadType);
      }
      if (recipe.rowLoad == RowLoadKind::Index) {
        set("INDEX_WIDE", slot(inst, recipe.indexType) + " != '0", "", 1);
        set("INDEX_BOUND", slot32(inst, recipe.indexBound, ""));
        if (recipe.indexSkip >= 0)
          set("INDEX_SKIP", slot32(inst, recipe.indexSkip, ""));
        set("INDEX_OPERAND", "8'd" + std::to_string(recipe.rowLoadOperand));
        std::string mask;
        for (int k = 6; k >= 0; --k)
          mask += recipe.rebase & (1u << k) ? '1' : '0';
        set("REBASE", "7'b" + mask);
        set("INDEX_BASE", addr(recipe.indexBase));
      }
      if (recipe.rowStore >= 0) {
        set("ROW_STORE", "1'b1", "", 1);
        set("ROW_STORE_ADDR", addr(recipe.rowStore));
        set("ROW_STORE_SRC", bits(4, recipe.rowStoreSrc));
        set("ROW_STORE_WORDS", bits(2, recipe.rowStoreWords));
        setAccessType("ROW_STORE_TYPE", recipe.rowStoreType);
      }
      os << "      end\n";
    }
  os << "      default: ;\n    endcase\n  endfunction\n  /* verilator lint_on UNUSEDSIGNAL */\n\n";
}

void emitRom(const IsaModel &model, llvm::raw_ostream &os) {
  os << "  // Step idx of a section of recipe r: {kind, prog, src0, src1, dst};\n"
        "  // STEP_END after the last.\n"
        "  localparam int unsigned STEP_BITS = "
     << 3 + programBits(model) + 3 * 5
     << ";\n"
        "  localparam int unsigned STEP_IDX_BITS = "
     << kRecipeStepIndexBits
     << ";\n"
        "  function automatic logic [STEP_BITS-1:0] recipe_step(input recipe_e r,\n"
        "                                                        input logic [2:0] section,\n"
        "                                                        input logic [STEP_IDX_BITS-1:0] "
        "idx);\n"
        "    recipe_step = '0;\n"
        "    unique case (r)\n";
  for (const InstructionDef &inst : model.instructions)
    for (const RecipeDef &recipe : inst.recipes) {
      os << "      " << kPkg << recipe.name << ":\n        case ({section, idx})\n";
      const auto steps = [&](const char *section, const std::vector<RecipeStep> &list) {
        for (size_t i = 0; i < list.size(); ++i)
          os << "          {" << kPkg << section << ", " << kRecipeStepIndexBits << "'d" << i
             << "}: recipe_step = " << stepWord(model, list[i]) << ";\n";
      };
      steps("SEC_PRE", recipe.pre);
      for (size_t p = 0; p < recipe.passes.size(); ++p) {
        steps(("SEC_PASS" + std::to_string(p)).c_str(), recipe.passes[p].steps);
        steps(("SEC_AFTER" + std::to_string(p)).c_str(), recipe.passes[p].after);
      }
      os << "          default: ;\n        endcase\n";
    }
  os << "      default: ;\n    endcase\n  endfunction\n\n";

  os << "  // Pass p of recipe r: {valid (0 after the last), inputs IB3..IB0,\n"
        "  // outputs OB2..OB0, reduce_e, scalar register of the reduction}.\n"
        "  localparam int unsigned PASS_BITS = 1 + 4 + 3 + 2 + 4;\n"
        "  function automatic logic [PASS_BITS-1:0] recipe_pass(input recipe_e r, input logic "
        "[1:0] p);\n"
        "    recipe_pass = '0;\n"
        "    unique case (r)\n";
  const char *reduces[] = {"RED_NONE", "RED_SUM", "RED_MAX"};
  for (const InstructionDef &inst : model.instructions)
    for (const RecipeDef &recipe : inst.recipes) {
      os << "      " << kPkg << recipe.name << ":\n        case (p)\n";
      for (size_t p = 0; p < recipe.passes.size(); ++p) {
        const RecipePass &pass = recipe.passes[p];
        os << "          2'd" << p << ": recipe_pass = {1'b1, " << bits(4, pass.inputs) << ", "
           << bits(3, pass.outputs) << ", " << kPkg << reduces[static_cast<int>(pass.reduce)]
           << ", " << bits(4, pass.reduceDst) << "};\n";
      }
      os << "          default: ;\n        endcase\n";
    }
  os << "      default: ;\n    endcase\n  endfunction\n\n";
}

} // namespace

void emitRecipePackage(const IsaModel &model, llvm::raw_ostream &os) {
  os << "// Generated by npu-tblgen from isa/*.td (the Recipes of isa/recipe.td). Do not edit.\n"
        "// The vector engine's decode table and recipe ROM (rtl/npu_vector.sv).\n"
        "/* verilator lint_off UNUSEDPARAM */\n"
        "package npu_recipe_pkg;\n\n";
  os << "  // Value sources and destinations of a step.\n  typedef enum logic [4:0] {\n";
  std::string sep = "";
  for (unsigned code = 0; code < 32; ++code)
    if (!recipeSourceName(code).empty()) {
      os << sep << "    " << sourceEnum(code) << " = 5'd" << code;
      sep = ",\n";
    }
  os << "\n  } src_e;\n\n";
  os << "  typedef enum logic [2:0] {\n"
        "    STEP_END,     // the section's steps are over\n"
        "    STEP_RUN,     // dst = prog(src0, src1)\n"
        "    STEP_MASK,    // dst = column beyond the causal limit ? -inf : src0\n"
        "    STEP_REDUCE,  // accumulator = fadd/fmax(accumulator, src0)\n"
        "    STEP_SCAN     // lane by lane: dst = prog(src0, src1), then src0 (a K) = dst\n"
        "  } step_kind_e;\n\n"
        "  typedef enum logic [1:0] {RED_NONE, RED_SUM, RED_MAX} reduce_e;\n\n"
        "  typedef enum logic [1:0] {ROW_LOAD_NONE, ROW_LOAD_SCALAR, ROW_LOAD_INDEX} "
        "row_load_e;\n\n"
        "  // Sections of a recipe: scalar steps once per packet, the element steps\n"
        "  // of passes 0..2, and the scalar steps after each pass.\n"
        "  typedef enum logic [2:0] {\n"
        "    SEC_PRE, SEC_PASS0, SEC_PASS1, SEC_PASS2, SEC_AFTER0, SEC_AFTER1, SEC_AFTER2\n"
        "  } section_e;\n\n";
  size_t count = 1;
  for (const InstructionDef &inst : model.instructions)
    count += inst.recipes.size();
  const unsigned width = llvm::Log2_64_Ceil(count);
  os << "  // One recipe per (instruction, variant).\n  typedef enum logic [" << width - 1
     << ":0] {\n    R_ILLEGAL = " << width << "'d0";
  for (const InstructionDef &inst : model.instructions)
    for (const RecipeDef &recipe : inst.recipes) {
      std::string when;
      for (const RecipeCondition &c : recipe.when)
        when += (when.empty() ? "" : ", ") + inst.operands[c.operand].name +
                (c.equal ? " == " : " != ") + "0x" + llvm::utohexstr(c.value, true);
      os << ",\n    " << recipe.name;
      if (!when.empty())
        os << " /* " << when << " */";
    }
  os << "\n  } recipe_e;\n\n";
  emitSelect(model, os);
  emitSetup(model, os);
  emitRom(model, os);
  os << "endpackage\n/* verilator lint_on UNUSEDPARAM */\n";
}

// The same recipes for the ISS's cycle model (simulator/lib/timing.cpp): the
// shape of the work the engine does per packet, row, pass and group, so that
// the model walks what the RTL walks.
void emitRecipeTable(const IsaModel &model, llvm::raw_ostream &os) {
  os << "// Generated by npu-tblgen from isa/*.td (the Recipes of isa/recipe.td). Do not edit.\n"
        "// The vector engine's recipes as data, for the ISS's cycle model and for the\n"
        "// instructions the ISS runs by their recipe (simulator/lib/recipe_runner.h).\n"
        "#pragma once\n\n#include <cstdint>\n\nnamespace npu::isa::recipe {\n\n"
        "enum class StepKind : uint8_t { Run, Mask, Reduce, Scan };\n"
        "enum class RowLoad : uint8_t { None, Scalar, Index };\n\n"
        "// A step; a Run takes one cycle per ROM word of its program, a Scan one\n"
        "// per lane. A Run's or Scan's program is a npu::arith::microcode::Program\n"
        "// (-1 for other kinds); its sources and destination are codes of the\n"
        "// engine (kSrc*).\n"
        "struct Step {\n  StepKind kind;\n  uint8_t words;\n  int8_t program;\n"
        "  uint8_t src0, src1, dst;\n};\n\n"
        "// Step source and destination codes (npu_recipe_pkg's SRC_*): IB0..IB3,\n"
        "// OB0..OB2, +0, T0..T3, 1.0, cols as binary32, the element's column and row\n"
        "// index (int32), K0..K15.\n";
  os << "inline constexpr uint8_t kSrcIB0 = " << SrcIB0 << ", kSrcOB0 = " << SrcOB0
     << ", kSrcZero = " << SrcZero << ", kSrcT0 = " << SrcT0 << ", kSrcOne = " << SrcOne
     << ", kSrcCols = " << SrcCols << ", kSrcCol = " << SrcCol << ", kSrcRow = " << SrcRow
     << ", kSrcK0 = " << SrcK0 << ";\n\n";
  os << "// A pass: its input and output stream masks (IB0..IB3, OB0..OB2), whether it\n"
        "// reduces (a maximum with reduceMax, else a sum) and into which K register,\n"
        "// and its element steps and the scalar steps after it (ranges of kSteps).\n"
        "struct Pass {\n  uint8_t inputs, outputs;\n  bool reduces, reduceMax;\n"
        "  uint8_t reduceDst;\n"
        "  uint16_t firstStep, numSteps, firstAfter, numAfter;\n};\n\n"
        "// The recipe runs when operand `operand` == value (or != value).\n"
        "struct Condition {\n  uint8_t operand;\n  bool equal;\n  uint64_t value;\n};\n\n"
        "// A scalar access's element type: the DType value of operand typeOperand,\n"
        "// or fixedType when that is -1; both -1: untyped 32-bit words.\n"
        "struct AccessType {\n  int8_t typeOperand, fixedType;\n"
        "  bool typed() const { return typeOperand >= 0 || fixedType >= 0; }\n};\n\n"
        "struct Recipe {\n  uint32_t opcode;\n  const char *name;\n"
        "  uint16_t firstCondition, numConditions; // kConditions\n"
        "  int8_t rows, cols;       // dimension operands; rows -1: one row\n"
        "  uint8_t zeroFirstRow;    // input streams read as +0 on row 0 (mask of IB0..IB3)\n"
        "  int8_t streamOperand[7]; // address operand of IB0..IB3, OB0..OB2 (-1: unused)\n"
        "  uint8_t streamPerRow;    // streams advancing one row per row (mask)\n"
        "  // The element type of each stream: the DType value of operand\n"
        "  // streamTypeOperand[s], or streamFixedType[s] when that is -1; streamHigh:\n"
        "  // the slots holding the high words of the i64 stream in the slot before.\n"
        "  int8_t streamTypeOperand[7];\n  uint8_t streamFixedType[7];\n  uint8_t streamHigh;\n"
        "  uint8_t preLoadWords;    // once per packet; 0: none\n"
        "  uint16_t firstPre, numPre;\n"
        "  RowLoad rowLoad;\n  uint8_t rowLoadWords; // Scalar\n"
        "  int8_t indexType;        // Index: the operand of the index type (0: i32, 1: i64)\n"
        "  int8_t indexSkip;        // Index: the operand whose value (>= 0) skips a row, or -1\n"
        "  uint8_t rowStoreWords;   // 0: none\n"
        "  // The address operands of the pre-load, the row load (row i's at i times\n"
        "  // its words, or its index's size) and the row store (-1: none).\n"
        "  int8_t preLoadOperand, rowLoadOperand, rowStoreOperand;\n"
        "  // Index: the streams (mask) that start at the index's row of operand\n"
        "  // indexBase on each row.\n"
        "  uint8_t rebase;\n  int8_t indexBase;\n"
        "  // The operands loaded into K0, K1, ... at the start (-1: none), the\n"
        "  // first register of the pre-load and of the scalar row load.\n"
        "  int8_t scalars["
     << kRecipePacketScalars
     << "];\n  uint8_t preLoadFirst, rowLoadDst;\n"
        "  uint8_t numPasses;\n  Pass passes[3];\n"
        "  // The element type of the pre-load, the row load and the row store:\n"
        "  // typed ones move one element a row (an i64 in two registers), untyped\n"
        "  // ones their words.\n"
        "  AccessType preLoadType, rowLoadType, rowStoreType;\n"
        "  // The operand adding to the row index for Mask steps' causal limit (-1:\n"
        "  // none); the first K register of the row store.\n"
        "  int8_t maskOffset;\n  uint8_t rowStoreSrc;\n};\n\n";
  std::vector<std::string> steps;
  const auto addSteps = [&](const std::vector<RecipeStep> &list) {
    const size_t first = steps.size();
    for (const RecipeStep &s : list) {
      const char *kinds[] = {"", "StepKind::Run", "StepKind::Mask", "StepKind::Reduce",
                             "StepKind::Scan"};
      const size_t words = s.program < 0 ? 1 : model.programs[s.program].steps.size();
      steps.push_back(std::string("{") + kinds[static_cast<int>(s.kind)] + ", " +
                      std::to_string(words) + ", " + std::to_string(s.program) + ", " +
                      std::to_string(s.src0) + ", " + std::to_string(s.src1) + ", " +
                      std::to_string(s.dst) + "}");
    }
    return std::to_string(first) + ", " + std::to_string(list.size());
  };
  std::vector<std::string> conditions, recipes;
  for (const InstructionDef &inst : model.instructions)
    for (const RecipeDef &r : inst.recipes) {
      const size_t firstCondition = conditions.size();
      for (const RecipeCondition &c : r.when)
        conditions.push_back("{" + std::to_string(c.operand) + ", " + (c.equal ? "true" : "false") +
                             ", 0x" + llvm::utohexstr(c.value) + "}");
      unsigned zeroFirstRow = 0, perRow = 0, high = 0;
      int streamOperand[7] = {-1, -1, -1, -1, -1, -1, -1};
      int typeOperand[7] = {-1, -1, -1, -1, -1, -1, -1};
      int64_t fixedType[7] = {};
      for (const RecipeStream &s : r.streams) {
        zeroFirstRow |= unsigned(s.zeroFirstRow) << s.slot;
        perRow |= unsigned(s.perRow) << s.slot;
        high |= unsigned(s.high) << s.slot;
        streamOperand[s.slot] = s.operand;
        typeOperand[s.slot] = s.typeOperand;
        fixedType[s.slot] = s.engineType();
      }
      const auto list = [](const auto &values) {
        std::string out = "{";
        for (auto value : values)
          out += std::to_string(value) + ", ";
        return out + "}";
      };
      const std::string streams = list(streamOperand) + ", " + std::to_string(perRow) + ", " +
                                  list(typeOperand) + ", " + list(fixedType) + ", " +
                                  std::to_string(high);
      const char *rowLoads[] = {"RowLoad::None", "RowLoad::Scalar", "RowLoad::Index"};
      std::string scalars = "{";
      for (unsigned k = 0; k < kRecipePacketScalars; ++k)
        scalars += (k < r.scalars.size() ? std::to_string(r.scalars[k]) : "-1") + ", ";
      scalars += "}";
      std::string text =
          "    {0x" + llvm::utohexstr(inst.opcode) + ", \"" + r.name + "\", " +
          std::to_string(firstCondition) + ", " + std::to_string(r.when.size()) + ", " +
          std::to_string(r.rows) + ", " + std::to_string(r.cols) + ", " +
          std::to_string(zeroFirstRow) + ", " + streams + ", " +
          std::to_string(r.preLoad < 0 ? 0 : r.preLoadWords) + ", " + addSteps(r.pre) + ", " +
          rowLoads[static_cast<int>(r.rowLoad)] + ", " + std::to_string(r.rowLoadWords) + ", " +
          std::to_string(r.indexType) + ", " + std::to_string(r.indexSkip) + ", " +
          std::to_string(r.rowStore < 0 ? 0 : r.rowStoreWords) + ", " + std::to_string(r.preLoad) +
          ", " + std::to_string(r.rowLoadOperand) + ", " + std::to_string(r.rowStore) + ", " +
          std::to_string(r.rebase) + ", " + std::to_string(r.indexBase) + ", " + scalars + ", " +
          std::to_string(r.preLoadFirst) + ", " + std::to_string(r.rowLoadDst) + ", " +
          std::to_string(r.passes.size()) + ", {";
      for (const RecipePass &p : r.passes) {
        const std::string elementSteps = addSteps(p.steps);
        text += "{" + std::to_string(p.inputs) + ", " + std::to_string(p.outputs) + ", " +
                (p.reduce == ReduceKind::None ? "false" : "true") + ", " +
                (p.reduce == ReduceKind::Max ? "true" : "false") + ", " +
                std::to_string(p.reduce == ReduceKind::None ? 0 : p.reduceDst) + ", " +
                elementSteps + ", " + addSteps(p.after) + "}, ";
      }
      const auto accessType = [](const ElementType &element) {
        return "{" + std::to_string(element.typeOperand) + ", " +
               std::to_string(element.fixedType) + "}";
      };
      text += "}, " + accessType(r.preLoadType) + ", " + accessType(r.rowLoadType) + ", " +
              accessType(r.rowStoreType) + ", " + std::to_string(r.maskOffset) + ", " +
              std::to_string(r.rowStore < 0 ? 0 : r.rowStoreSrc) + "}";
      recipes.push_back(std::move(text));
    }
  const auto table = [&](const char *type, const char *name, const std::vector<std::string> &rows) {
    os << "inline constexpr " << type << " " << name << "[] = {\n";
    for (const std::string &row : rows)
      os << (row.starts_with("    ") ? "" : "    ") << row << ",\n";
    if (rows.empty())
      os << "    {},\n";
    os << "};\n\n";
  };
  table("Step", "kSteps", steps);
  table("Condition", "kConditions", conditions);
  table("Recipe", "kRecipes", recipes);
  os << "} // namespace npu::isa::recipe\n";
}

} // namespace npu::tblgen
