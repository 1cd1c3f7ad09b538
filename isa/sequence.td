//===- sequence.td - Sequences: iota, tri -----------------------------------===//
//
// Instructions whose elements are computed from their index (docs/types.md
// §5 "Sequences and scans"). The vector engine's step sources COL and ROW
// (isa/recipe.td) give a step the element's index as an int32 lane value;
// the programs here are the single-primitive integer programs of
// elementwise.td (RawInputs: an index or an int32 operand is not a binary32).
//
//===----------------------------------------------------------------------===//

// The types iota writes (docs/types.md §5).
defvar IotaTypes = ["f32", "i32", "i64"];

// The element steps of iota for a lane form: K0 holds start, K1 step (their
// 32-bit patterns: binary32 for f32, int32 otherwise); COL is the index i.
class IotaSteps<string form> {
  list<Step> Steps = !cond(
    // f32: i to binary32 (l2f of (i, 0): the u32 i, nearest, ties to even),
    // times step, plus start: two roundings, as the lanes' fmul and fadd.
    !eq(form, "F") : [Run<"l2f", "COL", "ZERO", "T0">, Run<"mul", "T0", "K1", "T0">,
                      Run<"add", "T0", "K0", "OB0">],
    // i32: start + i * step, wrapping.
    !eq(form, "I") : [Run<"imul", "COL", "K1", "T0">, Run<"iadd", "T0", "K0", "OB0">],
    // i64: sext(start) + i * sext(step) mod 2^64. The low word as for i32;
    // the high word: the u32 product's high word, minus i when step < 0
    // (sext(step) = step - 2^32), plus start's sign fill, plus the low
    // word's carry (the sum below start, unsigned; its mask is -1).
    !eq(form, "L") : [Run<"imul", "COL", "K1", "T0">, Run<"iadd", "T0", "K0", "OB0">,
                      Run<"imulhu", "COL", "K1", "T1">, Run<"sign_fill", "K1", "", "T2">,
                      Run<"iand", "T2", "COL", "T2">, Run<"isub", "T1", "T2", "T1">,
                      Run<"sign_fill", "K0", "", "T2">, Run<"iadd", "T1", "T2", "T1">,
                      Run<"iltu", "OB0", "K0", "T2">, Run<"isub", "T1", "T2", "OB1">]);
}

class IotaRecipe<string type>
    : VectorRecipe<[When<"dtype", DTypeValue<type>.Value>], "", "n",
                   [Stream<"OB0", "dst", 1, 0, "dtype">],
                   [Pass<[], ["OB0"], IotaSteps<LaneForm<type>.Form>.Steps>]> {
  let Scalars = ["start", "step"];
}

def IOTA : Instruction<"iota", 0xa1, "sequence",
    [AddrOp<"dst", S_Dst, "result, of type dtype">, DimOp<"n", S_P0, "number of elements">,
     Operand<"start", K_Bits32, S_P1, "first value: binary32 for f32, int32 for i32 and i64">,
     Operand<"step", K_Bits32, S_P2, "increment: binary32 for f32, int32 for i32 and i64">,
     DTypeOf<IotaTypes>],
    "$dst, $n, $start, $step", Cost<E_Vector, 4, 1>,
    "dst[i] = start + i * step (torch.arange).">  {
  let Semantics = "dst[i] = start + i * step for i < n, i counted as an unsigned 32-bit "
                  "integer. i32: modulo 2^32. i64: start and step are int32 sign-extended to "
                  "64 bits, the result modulo 2^64. f32: (binary32(i) * step) + start, each "
                  "operation of the lanes rounding to nearest even with their flush to zero "
                  "(docs/arith.md §1), binary32(i) the nearest binary32 to i (exact below "
                  "2^24).";
  let Memory = [MemOperand<"dst", "w", Product<["n"], 1, "dtype">>];
  let Recipes = !foreach(type, IotaTypes, IotaRecipe<type>);
}

//===----------------------------------------------------------------------===//
// tri: tril / triu as a masked fill
//===----------------------------------------------------------------------===//

// The types tri accepts: all six (docs/types.md §5).
defvar TriTypes = ["f32", "bf16", "f16", "i32", "i64", "b8"];

// The element steps of tri: K0 holds diagonal, K1 value. rows and cols are
// below 2^31, so j - i is exact in int32 and one signed compare with the
// diagonal decides; the element is then blended bitwise with value, which
// moves the lane form's bits unchanged (no program canonicalises them).
class TriSteps<string form, bit upper> {
  list<Step> Mask = [Run<"isub", "COL", "ROW", "T0">,
                     // The mask of the filled elements: j - i > diagonal
                     // (lower), j - i < diagonal (upper).
                     !if(upper, Run<"ilt", "T0", "K0", "T1">, Run<"ilt", "K0", "T0", "T1">)];
  // dst = (src & ~mask) | (fill & mask), src & ~mask as src ^ (src & mask).
  list<Step> Low = [Run<"iand", "IB0", "T1", "T2">, Run<"ixor", "IB0", "T2", "T2">,
                    Run<"iand", "K1", "T1", "T3">, Run<"bit_or", "T2", "T3", "OB0">];
  // An i64's high words: value sign-extended.
  list<Step> High = [Run<"iand", "IB1", "T1", "T2">, Run<"ixor", "IB1", "T2", "T2">,
                     Run<"sign_fill", "K1", "", "T3">, Run<"iand", "T3", "T1", "T3">,
                     Run<"bit_or", "T2", "T3", "OB1">];
  list<Step> Steps = !listconcat(Mask, Low, !if(!eq(form, "L"), High, []));
}

class TriRecipe<string type, bit upper>
    : VectorRecipe<[When<"dtype", DTypeValue<type>.Value>, When<"upper", upper>], "rows", "cols",
                   [Stream<"IB0", "src", 1, 0, "dtype">, Stream<"OB0", "dst", 1, 0, "dtype">],
                   [Pass<["IB0"], ["OB0"], TriSteps<LaneForm<type>.Form, upper>.Steps>]> {
  let Scalars = ["diagonal", "value"];
}

def TRI : Instruction<"tri", 0xa2, "sequence",
    [AddrOp<"dst", S_Dst, "result: rows x cols of type dtype">,
     AddrOp<"src", S_Src0, "operand: rows x cols of type dtype">,
     U32Op<"rows", S_P0, "number of rows (below 2^31)", 1, 0x7fffffff>,
     U32Op<"cols", S_P1, "number of columns (below 2^31)", 1, 0x7fffffff>,
     I32Op<"diagonal", S_P2, "the last kept diagonal (lower) or the first (upper): 0 the main "
                             "diagonal, > 0 above it">,
     Operand<"value", K_Bits32, S_P3, "the fill: binary32 for f32, bf16 and f16 (rounded on "
                                      "store), int32 for i32 and i64 (sign-extended), nonzero "
                                      "true for b8">,
     FlagOp<"upper", 4, "keep the upper triangle (triu) instead of the lower (tril)">,
     DTypeOf<TriTypes>],
    "$dst, $src, $rows, $cols, $diagonal, $value", Cost<E_Vector, 4, 1>,
    "tril / triu of a rows x cols matrix, the other elements set to value.">  {
  let Semantics = "dst[i][j] = src[i][j] where j - i <= diagonal (lower; upper: j - i >= "
                  "diagonal), else value, for i < rows, j < cols. The kept elements move as the "
                  "lanes hold them: their bits for f32, i32 and i64, 0 or 1 for b8, and bf16 and "
                  "f16 widened and narrowed again (exact but for a NaN, which becomes the "
                  "type's canonical NaN, docs/types.md §2). value is stored as the type stores a "
                  "lane value: rounded to bf16 or f16, sign-extended to i64, nonzero true for b8. "
                  "dst may be src.";
  let Memory = [MemOperand<"dst", "w", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"src", "r", Product<["rows", "cols"], 1, "dtype">>];
  let Disjoints = [Disjoint<"dst", "src", 1>];
  let Recipes = !foldl([]<VectorRecipe>, TriTypes, recipes, type,
      !listconcat(recipes, [TriRecipe<type, 0>, TriRecipe<type, 1>]));
}

//===----------------------------------------------------------------------===//
// cumsum: a row scan in element order
//===----------------------------------------------------------------------===//

// The types cumsum accepts (docs/types.md §5).
defvar CumsumTypes = ["f32", "bf16", "f16", "i32", "i64"];

// The element steps of cumsum for a lane form: the running sum in K2 (K3 an
// i64's high word), +0 at each row's start. Floats: one binary32 addition
// per element, as the lanes' fadd rounds and flushes. i64: the low words
// scan on their own; the high word adds the element's high word and the
// low word's carry out (the low sum below the element's low word, unsigned:
// a mask of -1, subtracted), so that each scan is one primitive.
class CumsumSteps<string form> {
  list<Step> Steps = !cond(
    !eq(form, "F") : [Scan<"add", "K2", "IB0", "OB0">],
    !eq(form, "I") : [Scan<"iadd", "K2", "IB0", "OB0">],
    !eq(form, "L") : [Scan<"iadd", "K2", "IB0", "OB0">, Run<"iltu", "OB0", "IB0", "T0">,
                      Run<"isub", "IB1", "T0", "T0">, Scan<"iadd", "K3", "T0", "OB1">]);
}

class CumsumRecipe<string type>
    : VectorRecipe<[When<"dtype", DTypeValue<type>.Value>], "rows", "cols",
                   [Stream<"IB0", "src", 1, 0, "dtype">, Stream<"OB0", "dst", 1, 0, "dtype">],
                   [Pass<["IB0"], ["OB0"], CumsumSteps<LaneForm<type>.Form>.Steps>]>;

def CUMSUM : Instruction<"cumsum", 0x55, "sequence",
    [AddrOp<"dst", S_Dst, "result: rows x cols of type dtype">,
     AddrOp<"src", S_Src0, "operand: rows x cols of type dtype">,
     DimOp<"rows", S_P0, "rows">, DimOp<"cols", S_P1, "columns">, DTypeOf<CumsumTypes>],
    "$dst, $src, $rows, $cols", Cost<E_Vector, 4, 1>,
    "Running sum of each row (torch.cumsum(x, -1)).">  {
  let Semantics = "dst[i][j] = src[i][0] + ... + src[i][j], added in increasing j from +0. "
                  "i32, i64: modulo 2^32, 2^64. f32, bf16, f16: s = fadd(s, x) per element, "
                  "binary32 with the lanes' rounding to nearest even and flush to zero "
                  "(docs/arith.md §1: a denormal input or sum is a zero), the 16-bit types "
                  "widened exactly and each sum rounded once to the type on store. "
                  "dst may be src.";
  let Memory = [MemOperand<"dst", "w", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"src", "r", Product<["rows", "cols"], 1, "dtype">>];
  let Disjoints = [Disjoint<"dst", "src", 1>];
  let Recipes = !foreach(type, CumsumTypes, CumsumRecipe<type>);
}
