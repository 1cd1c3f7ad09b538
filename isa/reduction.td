//===- reduction.td - Reductions -------------------------------------------===//

// A row reduction writes one value per row; a column reduction one per
// column, accumulated in dst (which the RTL keeps in memory: it reads it back).
class ReduceOp<string mnemonic, int opcode, string what, string semantics,
               VectorRecipe recipe, bit perColumn = 0>
    : Instruction<mnemonic, opcode, "reduction",
        [AddrOp<"dst", S_Dst, "result vector">, AddrOp<"src", S_Src0, "rows x cols input">,
         DimOp<"rows", S_P0, "rows">, DimOp<"cols", S_P1, "columns">, DTypeOp],
        "$dst, $src, $rows, $cols", Cost<E_Vector, 6, 1>, what> {
  let Semantics = semantics;
  let Memory = [!if(perColumn, MemOperand<"dst", "rw", Product<["cols"]>>,
                               MemOperand<"dst", "w", Product<["rows"]>>),
                MemOperand<"src", "r", Product<["rows", "cols"]>>];
  let Disjoints = [Disjoint<"dst", "src">];
  let Recipes = [recipe];
}

// A row reduction into K2, stored as the row's result.
class RowReduceRecipe<string reduce, list<Step> pre = [], list<Step> after = []>
    : VectorRecipe<[], "rows", "cols", [Stream<"IB0", "src">],
                   [Pass<["IB0"], [], [Reduce<"IB0">], reduce, "K2", after>], pre> {
  let RowStores = [RowStore<"dst", "K2">];
}

defvar LaneOrder = "Element j goes to lane j mod L, accumulated in index order; "
                   "the L lanes combine by the fixed pairwise tree of docs/arith.md.";

def ROW_SUM : ReduceOp<"row_sum", 0x50, "Sum of each row.",
                       "dst[i] = sum over j of src[i][j]. " # LaneOrder, RowReduceRecipe<"sum">>;
def ROW_MAX : ReduceOp<"row_max", 0x51, "Maximum of each row.",
                       "dst[i] = max over j of src[i][j] (NaN if any is NaN). " # LaneOrder,
                       RowReduceRecipe<"max">>;
def ROW_MEAN : ReduceOp<"row_mean", 0x52, "Mean of each row.",
                        "dst[i] = ROW_SUM(i) * (1/cols), the reciprocal rounded first. " # LaneOrder,
                        RowReduceRecipe<"sum", [Run<"recip", "COLS", "", "K3">],
                                        [Run<"mul", "K2", "K3", "K2">]>>;
// dst is an accumulator in memory: dst += src row by row.
def COL_SUM : ReduceOp<"col_sum", 0x53, "Sum of each column.",
                       "dst[j] = sum over i of src[i][j], accumulated in increasing i "
                       "from +0 (each column is one lane).",
                       VectorRecipe<[], "rows", "cols",
                                    [Stream<"IB0", "src">, Stream<"IB1", "dst", 0, 1>,
                                     Stream<"OB0", "dst", 0>],
                                    [Pass<["IB0", "IB1"], ["OB0"], [Run<"add", "IB1", "IB0", "OB0">]>]>,
                       1>;
