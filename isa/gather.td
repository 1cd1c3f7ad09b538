//===- gather.td - Embedding gather and scatter-add -----------------------===//

defvar GatherShape = [DimOp<"count", S_P0, "number of indices">,
                      DimOp<"dim", S_P1, "embedding width in elements">,
                      DimOp<"rows", S_P2, "rows of the table (indices must be below)">,
                      EnumOp<"itype", IndexType, FlagBits<4>, "index type">, DTypeOp];

def EMBEDDING : Instruction<"embedding", 0x90, "gather",
    [AddrOp<"dst", S_Dst, "count x dim output">, AddrOp<"table", S_Src0, "rows x dim table">,
     AddrOp<"indices", S_Src1, "count indices">] # GatherShape,
    "$dst, $table, $indices, $count, $dim, $rows", Cost<E_Dma, 4, 0>, "Embedding lookup."> {
  let Semantics = "dst[t][:] = table[indices[t]][:]; an index outside [0, rows) is a fault.";
  let Memory = [MemOperand<"dst", "w", Product<["count", "dim"]>>,
                MemOperand<"table", "r", Product<["rows", "dim"]>>,
                IndexOperand<"indices", Product<["count"], 1, "itype">, "rows">];
  let Disjoints = [Disjoint<"dst", "table">, Disjoint<"dst", "indices">];
}

// Row t: dtable row indices[t] (IB0, OB0) += dy row t.
class EmbeddingBwdRecipe
    : VectorRecipe<[], "count", "dim",
                   [Stream<"IB0", "dtable", 0>, Stream<"IB1", "dy">, Stream<"OB0", "dtable", 0>],
                   [Pass<["IB0", "IB1"], ["OB0"], [Run<"add", "IB0", "IB1", "OB0">]>]> {
  let RowLoads = [IndexRowLoad<"indices", "itype", "rows", "padding_idx", ["IB0", "OB0"],
                               "dtable">];
}

def EMBEDDING_BWD : Instruction<"embedding_bwd", 0x91, "gather",
    [AddrOp<"dtable", S_Dst, "rows x dim gradient, accumulated into">,
     AddrOp<"dy", S_Src0, "count x dim output gradient">,
     AddrOp<"indices", S_Src1, "count indices">] # GatherShape #
    [OptI32Op<"padding_idx", S_P3, "index whose rows get no gradient; -1 = none", -1, -1>],
    "$dtable, $dy, $indices, $count, $dim, $rows", Cost<E_Vector, 4, 1>,
    "Embedding backward: scatter-add of gradients."> {
  let Semantics = "For t = 0 .. count-1 in increasing order, unless indices[t] == padding_idx: "
                  "dtable[indices[t]][:] += dy[t][:] (one rounding per addition).";
  let Memory = [MemOperand<"dtable", "rw", Product<["rows", "dim"]>>,
                MemOperand<"dy", "r", Product<["count", "dim"]>>,
                IndexOperand<"indices", Product<["count"], 1, "itype">, "rows">];
  let Disjoints = [Disjoint<"dtable", "dy">, Disjoint<"dtable", "indices">];
  let Recipes = [EmbeddingBwdRecipe<>];
}

def GatherMode : EnumType<"GatherMode",
    [EnumValue<"full", 0, "index is outer x count x inner, one per output element (torch.gather)">,
     EnumValue<"shared", 1, "index is count indices shared by every outer slice and inner "
                            "element (index_select)">],
    "Which index a GATHER output element takes.">;

defvar AllTypes = ["f32", "bf16", "f16", "i32", "i64", "b8"];

// The DMA engine moves each selected source run (a row of `inner` elements
// in `shared` mode, one element in `full` mode) after reading and checking
// its index, as EMBEDDING does (docs/rtl.md).
def GATHER : Instruction<"gather", 0x5b, "gather",
    [AddrOp<"dst", S_Dst, "outer x count x inner output">,
     AddrOp<"src", S_Src0, "outer x n x inner source">,
     AddrOp<"index", S_Src1, "indices: outer x count x inner (full) or count (shared)">,
     DimOp<"outer", S_P0, "slices before the gathered dimension">,
     DimOp<"n", S_P1, "length of the gathered dimension of src">,
     DimOp<"count", S_P2, "length of the gathered dimension of dst">,
     DimOp<"inner", S_P3, "elements after the gathered dimension">,
     EnumOp<"itype", IndexType, FlagBits<4>, "index type">,
     EnumOp<"mode", GatherMode, FlagBits<5>, "which index an output element takes">,
     FlagOp<"wrap", 6, "indices in [-n, n), a negative one counting from the end">,
     DTypeOf<AllTypes>],
    "$dst, $src, $index, $outer, $n, $count, $inner", Cost<E_Dma, 4, 0>,
    "Gather along a dimension (torch.gather, index_select)."> {
  let Semantics = "dst[o][j][i] = src[o][k][i] with k = index[o][j][i] (mode=full) or k = "
                  "index[j] (mode=shared); with wrap a k in [-n, 0) is k + n. A k outside "
                  "[0, n) (outside [-n, n) with wrap) is a fault naming its position in index, "
                  "after the output elements before it are written.";
  let Memory = [MemOperand<"dst", "w", Product<["outer", "count", "inner"], 1, "dtype">>,
                MemOperand<"src", "r", Product<["outer", "n", "inner"], 1, "dtype">>,
                IndexOperand<"index", ProductBy<"mode", [Product<["outer", "count", "inner"], 1, "itype">,
                                                         Product<["count"], 1, "itype">]>,
                             "n", "wrap">];
  let Disjoints = [Disjoint<"dst", "src">, Disjoint<"dst", "index">];
}
