//===- recipe.td - Recipes of the vector engine ---------------------------===//
//
// How the RTL vector engine (rtl/npu_vector.sv) runs an instruction: every
// instruction of E_Vector lists its recipes in Recipes, one per variant of
// its flag and operand values. npu-tblgen validates them and generates the
// engine's decode table and recipe ROM (npu_recipe_pkg, --gen-recipe-pkg);
// docs/rtl.md describes the engine that runs them.
//
// A recipe works on `rows` rows of `cols` elements. Once per packet it runs
// a scalar pre-load and the Pre steps; per row a scalar row load, one to
// three passes over the row and a scalar row store. A pass reads its input
// streams chunk by chunk, runs its steps on every element, writes its output
// streams, optionally reduces one value per element into a scalar register,
// then runs its After steps on scalars.
//
// Names a recipe uses:
//   streams      IB0..IB3 (inputs), OB0..OB2 (outputs; a step may read an
//                output it wrote before in the same pass)
//   temporaries  T0..T3 (per element)
//   scalars      K0..K15 (per packet); ZERO (+0), ONE (1.0), COLS (cols as
//                binary32)
//   indices      COL, ROW: the element's column (0..cols-1) and row
//                (0..rows-1) as int32 lane values (a count past 2^31 wraps
//                to a negative pattern: programs read them as u32), what
//                IOTA and TRI compute from; scalar steps have ROW only
//   programs     the Name of a MicroProgram (microcode.td)
//   operands     the instruction's operand names
//===----------------------------------------------------------------------===//

// A variant condition: the operand's value equals `value` (or, with
// equal = 0, differs from it). Operands are flags, enumerations or f32/u32
// scalars; the variants of an instruction cover every value exactly once.
class When<string operand, int value, bit equal = 1> {
  string Operand = operand;
  int Value = value;
  bit Equal = equal;
}

// Stream `slot` starts at the address operand `operand`; with perRow it
// advances by one row (cols elements) per row, else it stays. zeroFirstRow:
// an accumulator kept in memory; the stream reads +0 on the first row.
//
// Type: what its elements are (docs/types.md §2). "" : 32-bit words, moved
// as they are (the f32 instructions); a DType value name ("i64", "b8"): that
// type; an enum operand of DType (usually "dtype"): the type that operand
// names in the packet. A typed stream converts between the type's storage
// and its lane form as it reads or writes. A stream that can be i64 under
// the recipe's conditions also uses the next slot (IB<k+1>, OB<k+1>) for the
// high words of its elements: the recipe must leave that slot undeclared,
// and a pass that names the stream uses both.
class Stream<string slot, string operand, bit perRow = 1, bit zeroFirstRow = 0,
             string type = ""> {
  string Slot = slot;
  string Operand = operand;
  bit PerRow = perRow;
  bit ZeroFirstRow = zeroFirstRow;
  string Type = type;
}

// The pre-load, the scalar row load and the row store move 32-bit words,
// or with a Type (as a Stream's: a DType value name or an enum operand of
// DType) one element of that type per access: 1, 2, 4 or 8 bytes at the
// operand plus the row times its size, widened into its K register by the
// streams' conversion (docs/types.md §2) as it loads and narrowed from it as
// it stores (RNE for bf16/f16, b8 as 0x00/0x01). A typed access that can be
// i64 under the recipe's conditions uses the next K register for the high
// word too. A typed access has Words = 1.

// Once per packet: `words` words at the address operand into K<first>...
class PreLoad<string operand, int words, string first, string type = ""> {
  string Operand = operand;
  int Words = words;
  string First = first;
  string Type = type;
}

// Per row: the row's `words` words of the address operand (`words` words
// per row) into the scalar registers K<dst>...
class RowLoad<string operand, string dst, int words = 1, string type = ""> {
  string Kind = "scalar";
  string Operand = operand;
  string Dst = dst;
  int Words = words;
  string Type = type;
  // Index loads only.
  string IndexType = "";
  string Bound = "";
  string Skip = "";
  list<string> Rebase = [];
  string Base = "";
}

// Per row: the index of the row, an integer of the enumeration `indexType`
// (0: i32, 1: i64) at the address operand, checked against [0, bound) (an
// index fault otherwise). A row whose index equals `skip` (when >= 0) does
// nothing; otherwise the streams `rebase` start at row `index` of the
// address operand `base`.
class IndexRowLoad<string operand, string indexType, string bound, string skip,
                   list<string> rebase, string base> : RowLoad<operand, ""> {
  let Kind = "index";
  let IndexType = indexType;
  let Bound = bound;
  let Skip = skip;
  let Rebase = rebase;
  let Base = base;
}

// Per row, after the passes: the scalar registers K<src>... to the row's
// `words` words of the address operand (`words` words per row).
class RowStore<string operand, string src, int words = 1, string type = ""> {
  string Operand = operand;
  string Src = src;
  int Words = words;
  string Type = type;
}

// A step. Run: dst = program(src0, src1) (src1 "" for a one-input program);
// Mask: dst = -inf for a column beyond the causal limit, else src0; Reduce:
// the pass's accumulator combines src0; Scan (below): a running value.
class Step<string kind, string program, string src0, string src1, string dst> {
  string Kind = kind;
  string Program = program;
  string Src0 = src0;
  string Src1 = src1;
  string Dst = dst;
}
class Run<string program, string src0, string src1, string dst>
    : Step<"run", program, src0, src1, dst>;
class Mask<string src, string dst> : Step<"mask", "", src, "", dst>;
class Reduce<string src> : Step<"reduce", "", src, "", "">;
// Scan: a running value through the row in element order. Lane by lane (one
// lane a cycle, L cycles a group), dst = program(carry, src) and the K
// register `carry` takes dst; carry reads +0 at the row's first element.
// program is one primitive of two inputs (a chain of L lanes through one
// unit a cycle each keeps the order and the lanes' datapath; docs/rtl.md).
class Scan<string program, string carry, string src, string dst>
    : Step<"scan", program, carry, src, dst>;

// A pass: the streams it reads and writes, its element steps, its reduction
// ("none", "sum", "max") into the scalar register `dst`, and the scalar
// steps after it.
class Pass<list<string> inputs, list<string> outputs, list<Step> steps,
           string reduce = "none", string dst = "", list<Step> after = []> {
  list<string> Inputs = inputs;
  list<string> Outputs = outputs;
  list<Step> Steps = steps;
  string Reduce = reduce;
  string Dst = dst;
  list<Step> After = after;
}

// One variant of an instruction's recipe. Rows and Cols name dimension
// operands (Rows "" for a single row); Scalars the f32, i32 or bits32 operands
// loaded into K0, K1, ... at the start (at most three: no load may target
// them); MaskOffset the operand adding to the row index for the causal
// limit of Mask steps.
class VectorRecipe<list<When> when, string rows, string cols, list<Stream> streams,
                   list<Pass> passes, list<Step> pre = []> {
  list<When> When = when;
  string Rows = rows;
  string Cols = cols;
  list<string> Scalars = [];
  string MaskOffset = "";
  list<Stream> Streams = streams;
  list<PreLoad> PreLoads = [];
  list<RowLoad> RowLoads = [];
  list<RowStore> RowStores = [];
  list<Step> Pre = pre;
  list<Pass> Passes = passes;
}

// n elements through one program: dst[i] = program(src[i], second), the
// second input a second stream (IB1) or the scalar K0 (the operand k0).
class ElementwiseRecipe<string program, string src0, string src1, list<Stream> streams,
                        string k0 = "", list<When> when = []>
    : VectorRecipe<when, "", "n", streams,
                   [Pass<!if(!eq(src1, "IB1"), ["IB0", "IB1"], ["IB0"]), ["OB0"],
                         [Run<program, src0, src1, "OB0">]>]> {
  let Scalars = !if(!empty(k0), [], [k0]);
}
