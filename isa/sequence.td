//===- sequence.td - Sequences: iota ---------------------------------------===//
//
// Instructions whose elements are computed from their index (docs/types.md
// §5 "Sequences and scans"). The vector engine's step sources COL and ROW
// (isa/recipe.td) give a step the element's index as an int32 lane value;
// the programs here are single primitives on integer lane forms
// (RawInputs: an index or an int32 operand is not a binary32).
//
//===----------------------------------------------------------------------===//

let RawInputs = 1 in {
def MP_seq_mul : MicroProgram<"seq_mul", ["a", "b"], [(imul:$y $a, $b)], "y",
                              "Low 32 bits of the product a * b.">;
def MP_seq_mulhi : MicroProgram<"seq_mulhi", ["a", "b"], [(imulhu:$y $a, $b)], "y",
                                "High 32 bits of the unsigned 64-bit product a * b.">;
def MP_seq_add : MicroProgram<"seq_add", ["a", "b"], [(iadd:$y $a, $b)], "y",
                              "a + b, wrapping.">;
def MP_seq_sub : MicroProgram<"seq_sub", ["a", "b"], [(isub:$y $a, $b)], "y",
                              "a - b, wrapping.">;
def MP_seq_and : MicroProgram<"seq_and", ["a", "b"], [(iand:$y $a, $b)], "y",
                              "a & b, bitwise.">;
def MP_seq_ltu : MicroProgram<"seq_ltu", ["a", "b"], [(iltu:$m $a, $b)], "m",
                              "The mask a < b, unsigned.">;
}

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
    !eq(form, "I") : [Run<"seq_mul", "COL", "K1", "T0">, Run<"seq_add", "T0", "K0", "OB0">],
    // i64: sext(start) + i * sext(step) mod 2^64. The low word as for i32;
    // the high word: the u32 product's high word, minus i when step < 0
    // (sext(step) = step - 2^32), plus start's sign fill, plus the low
    // word's carry (the sum below start, unsigned; its mask is -1).
    !eq(form, "L") : [Run<"seq_mul", "COL", "K1", "T0">, Run<"seq_add", "T0", "K0", "OB0">,
                      Run<"seq_mulhi", "COL", "K1", "T1">, Run<"sign_fill", "K1", "", "T2">,
                      Run<"seq_and", "T2", "COL", "T2">, Run<"seq_sub", "T1", "T2", "T1">,
                      Run<"sign_fill", "K0", "", "T2">, Run<"seq_add", "T1", "T2", "T1">,
                      Run<"seq_ltu", "OB0", "K0", "T2">, Run<"seq_sub", "T1", "T2", "OB1">]);
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

