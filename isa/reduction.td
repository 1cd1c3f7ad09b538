//===- reduction.td - Reductions -------------------------------------------===//

// A row reduction writes one value per row; a column reduction one per
// column, accumulated in dst (which the RTL keeps in memory: it reads it back).
// types: the DType values of src (and of a row reduction's dst, which
// rounds once on store); a column reduction's dst is a binary32
// accumulator whatever its src (a 16-bit one would round once per row).
class ReduceOp<string mnemonic, int opcode, string what, string semantics,
               VectorRecipe recipe, bit perColumn = 0, list<string> types = ["f32"]>
    : Instruction<mnemonic, opcode, "reduction",
        [AddrOp<"dst", S_Dst, !if(perColumn, "result vector, binary32 whatever dtype",
                                           "result vector")>,
         AddrOp<"src", S_Src0, "rows x cols input">,
         DimOp<"rows", S_P0, "rows">, DimOp<"cols", S_P1, "columns">, DTypeOf<types>],
        "$dst, $src, $rows, $cols", Cost<E_Vector, 6, 1>, what> {
  let Semantics = semantics;
  let Memory = !if(perColumn,
                   [MemOperand<"dst", "rw", Product<["cols"]>>,
                    MemOperand<"src", "r", Product<["rows", "cols"], 1, "dtype">>],
                   [MemOperand<"dst", "w", Product<["rows"], 1, "dtype">>,
                    MemOperand<"src", "r", Product<["rows", "cols"], 1, "dtype">>]);
  let Disjoints = [Disjoint<"dst", "src">];
  let Recipes = [recipe];
}

// A row reduction into K2, stored as the row's result; src and dst of
// dtype: bf16 and f16 widen into the binary32 lanes and the result rounds
// once on store (the typed row store).
class RowReduceRecipe<string reduce, list<Step> pre = [], list<Step> after = []>
    : VectorRecipe<[], "rows", "cols", [Stream<"IB0", "src", 1, 0, "dtype">],
                   [Pass<["IB0"], [], [Reduce<"IB0">], reduce, "K2", after>], pre> {
  let RowStores = [RowStore<"dst", "K2", 1, "dtype">];
}

defvar LaneOrder = "Element j goes to lane j mod L, accumulated in index order; "
                   "the L lanes combine by the fixed pairwise tree of docs/arith.md";
defvar RowRounding = "; bf16 and f16 accumulate in binary32 (elements widened exactly) and "
                     "dst rounds once on store.";

def ROW_SUM : ReduceOp<"row_sum", 0x50, "Sum of each row.",
                       !strconcat("dst[i] = sum over j of src[i][j]. ", LaneOrder, RowRounding),
                       RowReduceRecipe<"sum">, 0, FloatTypes>;
def ROW_MAX : ReduceOp<"row_max", 0x51, "Maximum of each row.",
                       !strconcat("dst[i] = max over j of src[i][j] (NaN if any is NaN). ",
                                  LaneOrder, RowRounding),
                       RowReduceRecipe<"max">, 0, FloatTypes>;
def ROW_MEAN : ReduceOp<"row_mean", 0x52, "Mean of each row.",
                        !strconcat("dst[i] = ROW_SUM(i) * (1/cols), the reciprocal rounded first. ",
                                   LaneOrder, RowRounding),
                        RowReduceRecipe<"sum", [Run<"recip", "COLS", "", "K3">],
                                        [Run<"mul", "K2", "K3", "K2">]>, 0, FloatTypes>;
// dst is an accumulator in memory: dst += src row by row.
def COL_SUM : ReduceOp<"col_sum", 0x53, "Sum of each column.",
                       "dst[j] = sum over i of src[i][j], accumulated in increasing i "
                       "from +0 (each column is one lane); bf16 and f16 src widened exactly, dst "
                       "binary32.",
                       VectorRecipe<[], "rows", "cols",
                                    [Stream<"IB0", "src", 1, 0, "dtype">, Stream<"IB1", "dst", 0, 1>,
                                     Stream<"OB0", "dst", 0>],
                                    [Pass<["IB0", "IB1"], ["OB0"], [Run<"add", "IB1", "IB0", "OB0">]>]>,
                       1, FloatTypes>;

//===----------------------------------------------------------------------===//
// argmax, argmin: the first index of each row's extreme (docs/types.md §5)
//===----------------------------------------------------------------------===//

// The types argmax and argmin accept. i64 is open: its 64-bit order key
// takes three 30-bit pieces (below), one pass each, and the index a fourth
// pass, one more than a recipe has.
defvar ArgTypes = ["f32", "bf16", "f16", "i32"];

// Every element maps to a u32 order key, larger for the extreme the
// instruction looks for (argmin reverses the order). The lanes' reduction is
// fmax, exact on positive normal binary32 patterns, which order like their
// bits; so the key goes through it as two pieces, its top 2 bits and its low
// 30 bits, each offset into the normals (+0x00800000: no piece is a zero, a
// denormal, an infinity or a NaN).
let RawInputs = 1 in {
def MP_order_up : MicroProgram<"order_up", ["k"], [(ixor:$y $k, 0x80000000)], "y",
                               "The int32 k as a u32 of the same order.">;
def MP_order_down : MicroProgram<"order_down", ["k"], [(ixor:$y $k, 0x7fffffff)], "y",
                                 "The int32 k as a u32 of the reverse order.">;
def MP_key_top : MicroProgram<"key_top", ["u"], [(ishr:$y $u, 30)], "y",
                              "The top 2 bits of the u32 u.">;
def MP_key_low : MicroProgram<"key_low", ["u"], [(iand:$y $u, 0x3fffffff)], "y",
                              "The low 30 bits of the u32 u.">;
def MP_key_normal : MicroProgram<"key_normal", ["p"], [(iadd:$y $p, 0x00800000)], "y",
                                 "A piece p < 2^30 of a key as a positive normal binary32 "
                                 "pattern, ordered as p.">;
}

// The steps leaving the order key of IB0 in T0 (T1, T2 temporaries).
// Floats: the sign-magnitude pattern (s, m) as the int32 s ? -m : m (both
// zeros 0, subnormals by value: the patterns, never the lanes' flushing
// float primitives), then its u32 order, a NaN's key all ones: the maximum
// of argmax and of argmin alike (PyTorch's CPU returns the first NaN).
class ArgKeySteps<string form, string order> {
  list<Step> Steps = !if(!eq(form, "F"),
      [Run<"sign_fill", "IB0", "", "T1">, Run<"magnitude", "IB0", "", "T0">,
       Run<"ixor", "T0", "T1", "T2">, Run<"isub", "T2", "T1", "T2">,
       Run<"nan_magnitude", "T0", "", "T1">, Run<order, "T2", "", "T2">,
       Run<"bit_or", "T2", "T1", "T0">],
      [Run<order, "IB0", "", "T0">]);
}

// The key's top piece into T1, and with `matchTop` the mask "it is the
// row's top piece (K2)"; the low piece into T2.
class ArgTopSteps<bit matchTop> {
  list<Step> Steps = [Run<"key_top", "T0", "", "T1">, Run<"key_normal", "T1", "", "T1">] #
                     !if(matchTop, [Run<"ieq", "T1", "K2", "T1">], []);
}
defvar ArgLowSteps = [Run<"key_low", "T0", "", "T2">, Run<"key_normal", "T2", "", "T2">];

// Three passes per row: the largest top piece into K2; the largest low piece
// of the elements with that top piece into K3; then the first element whose
// pieces are both: a scan ORs the match into "seen" (K4) element by element,
// a second counts the elements not yet seen (K5: seen masks are -1, so
// K5 - ~seen adds one) — the index, stored as an i64 with K6 = 0.
class ArgRecipe<string type, string order>
    : VectorRecipe<[When<"dtype", DTypeValue<type>.Value>], "rows", "cols",
                   [Stream<"IB0", "src", 1, 0, "dtype">],
                   [Pass<["IB0"], [], ArgKeySteps<!if(!eq(type, "i32"), "I", "F"), order>.Steps #
                                      ArgTopSteps<0>.Steps # [Reduce<"T1">], "max", "K2">,
                    Pass<["IB0"], [], ArgKeySteps<!if(!eq(type, "i32"), "I", "F"), order>.Steps #
                                      ArgTopSteps<1>.Steps # ArgLowSteps #
                                      [Run<"iand", "T1", "T2", "T2">, Reduce<"T2">], "max", "K3">,
                    Pass<["IB0"], [], ArgKeySteps<!if(!eq(type, "i32"), "I", "F"), order>.Steps #
                                      ArgTopSteps<1>.Steps # ArgLowSteps #
                                      [Run<"ieq", "T2", "K3", "T2">, Run<"iand", "T1", "T2", "T1">,
                                       Scan<"bit_or", "K4", "T1", "T1">,
                                       Run<"mask_not", "T1", "", "T1">,
                                       Scan<"isub", "K5", "T1", "T1">]>],
                   [Run<"isub", "ZERO", "ZERO", "K6">]> {
  let RowStores = [RowStore<"dst", "K5", 2>];
}

class ArgOp<string mnemonic, int opcode, string what, string extreme, string order>
    : Instruction<mnemonic, opcode, "reduction",
        [AddrOp<"dst", S_Dst, "rows i64 indices">,
         AddrOp<"src", S_Src0, "rows x cols input of type dtype">,
         DimOp<"rows", S_P0, "rows">, DimOp<"cols", S_P1, "columns">, DTypeOf<ArgTypes>],
        "$dst, $src, $rows, $cols", Cost<E_Vector, 6, 1>, what> {
  let Semantics = "dst[i] = the smallest j with src[i][j] the " # extreme # " of row i, as an "
                  "i64. Floats by value: -0 equals +0, subnormals are not flushed, a NaN "
                  "is the extreme (the first NaN of the row, for argmin too, as PyTorch's "
                  "CPU).";
  let Memory = [MemOperand<"dst", "w", Product<["rows"], 8>>,
                MemOperand<"src", "r", Product<["rows", "cols"], 1, "dtype">>];
  let Disjoints = [Disjoint<"dst", "src">];
  let Recipes = !foreach(type, ArgTypes, ArgRecipe<type, order>);
}

def ARGMAX : ArgOp<"argmax", 0x56, "Index of each row's first maximum (torch.argmax(x, -1)).",
                   "maximum", "order_up">;
def ARGMIN : ArgOp<"argmin", 0x57, "Index of each row's first minimum (torch.argmin(x, -1)).",
                   "minimum", "order_down">;

//===----------------------------------------------------------------------===//
// count: the nonzero bytes of each b8 row (docs/types.md §5)
//===----------------------------------------------------------------------===//

// A b8 stream reads each byte as a mask (nonzero all ones, docs/types.md
// §2), so a scan subtracting it from K5 counts the nonzero bytes in element
// order, exactly (a row has fewer than 2^32 elements); the row store writes
// the count as an i64 with K6 = 0.
// The recipe of COUNT, its b8 operand `src`.
class CountRecipe<string src>
    : VectorRecipe<[], "rows", "cols", [Stream<"IB0", src, 1, 0, "b8">],
                   [Pass<["IB0"], [], [Scan<"isub", "K5", "IB0", "T0">]>],
                   [Run<"isub", "ZERO", "ZERO", "K6">]> {
  let RowStores = [RowStore<"dst", "K5", 2>];
}

def COUNT : Instruction<"count", 0x58, "reduction",
    [AddrOp<"dst", S_Dst, "rows i64 counts">, AddrOp<"src", S_Src0, "rows x cols b8 input">,
     DimOp<"rows", S_P0, "rows">, DimOp<"cols", S_P1, "columns">],
    "$dst, $src, $rows, $cols", Cost<E_Vector, 6, 1>,
    "Number of nonzero bytes of each b8 row (torch.count_nonzero(x, -1)).">  {
  let Semantics = "dst[i] = the number of j with src[i][j] != 0, as an i64 (a b8 element is "
                  "any byte; nonzero is true).";
  let Memory = [MemOperand<"dst", "w", Product<["rows"], 8>>,
                MemOperand<"src", "r", Product<["rows", "cols"], 1>>];
  let Disjoints = [Disjoint<"dst", "src">];
  let Recipes = [CountRecipe<"src">];
}

//===----------------------------------------------------------------------===//
// any, all: whether some or every byte of each b8 row is nonzero
//===----------------------------------------------------------------------===//

// One scan ORs the row's masks (ANY) or their complements (ALL: a zero
// byte seen) into K5; ALL inverts it after the pass. The b8 row store
// writes 1 for a nonzero K5, else 0.
class TruthRecipe<bit all>
    : VectorRecipe<[], "rows", "cols", [Stream<"IB0", "src", 1, 0, "b8">],
                   [Pass<["IB0"], [],
                         !if(all, [Run<"mask_not", "IB0", "", "T0">, Scan<"bit_or", "K5", "T0", "T0">],
                                  [Scan<"bit_or", "K5", "IB0", "T0">]),
                         "none", "", !if(all, [Run<"mask_not", "K5", "", "K5">], [])>]> {
  let RowStores = [RowStore<"dst", "K5", 1, "b8">];
}

class TruthOp<string mnemonic, int opcode, bit all, string what, string expr>
    : Instruction<mnemonic, opcode, "reduction",
        [AddrOp<"dst", S_Dst, "rows b8 results">, AddrOp<"src", S_Src0, "rows x cols b8 input">,
         DimOp<"rows", S_P0, "rows">, DimOp<"cols", S_P1, "columns">],
        "$dst, $src, $rows, $cols", Cost<E_Vector, 6, 1>, what> {
  let Semantics = "dst[i] = 1 if " # expr # " else 0, a b8 (a b8 element is any byte; "
                  "nonzero is true).";
  let Memory = [MemOperand<"dst", "w", Product<["rows"], 1>>,
                MemOperand<"src", "r", Product<["rows", "cols"], 1>>];
  let Disjoints = [Disjoint<"dst", "src">];
  let Recipes = [TruthRecipe<all>];
}

def ANY : TruthOp<"any", 0x59, 0, "Whether some byte of each b8 row is nonzero (torch.any(x, -1)).",
                  "some src[i][j] != 0">;
def ALL : TruthOp<"all", 0x5a, 1, "Whether every byte of each b8 row is nonzero (torch.all(x, -1)).",
                  "every src[i][j] != 0">;
