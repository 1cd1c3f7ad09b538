//===- cast.td - Type conversion ------------------------------------------===//
//
// The element programs of `cast` (docs/types.md §3, §5): the vector
// engine's streams convert storage to lane form and back (types.md §2), so
// a conversion is written once per pair of lane forms (F binary32, I int32,
// L an int64 register pair, M a mask), each output word one program of one
// primitive. Programs reading I, L or M have RawInputs: their inputs are
// integer patterns, which canonicalising would corrupt (1 is a denormal
// pattern, -1 a NaN one).
//
//===----------------------------------------------------------------------===//

// The bits as they are: I -> I, L -> L (each word), L -> I (the low word),
// I -> L (the low word), M -> M.
let RawInputs = 1 in
def MP_copy_bits : MicroProgram<"copy_bits", ["x"], [(ior:$y $x, 0)], "y",
                                "The integer pattern x, unchanged.">;

// F -> I, F -> L: truncation toward zero, saturating, NaN gives 0.
def MP_f2iz : MicroProgram<"f2iz", ["x"], [(f2iz:$y $x)], "y",
                           "int32 of x truncated toward zero, saturating; NaN gives 0.">;
def MP_f2lzlo : MicroProgram<"f2lzlo", ["x"], [(f2lzlo:$y $x)], "y",
                             "Low word of x truncated toward zero as an int64, saturating; NaN "
                             "gives 0.">;
def MP_f2lzhi : MicroProgram<"f2lzhi", ["x"], [(f2lzhi:$y $x)], "y",
                             "High word of x truncated toward zero as an int64, saturating; NaN "
                             "gives 0.">;

let RawInputs = 1 in {
// I -> F, L -> F: round to nearest even, L from all 64 bits at once.
def MP_i2f : MicroProgram<"i2f", ["x"], [(i2f:$y $x)], "y",
                          "binary32 nearest the int32 x, ties to even.">;
def MP_l2f : MicroProgram<"l2f", ["lo", "hi"], [(l2f:$y $lo, $hi)], "y",
                          "binary32 nearest the int64 (hi:lo), ties to even.">;
// I -> L: the high word is the sign fill of the low one.
def MP_sign_fill : MicroProgram<"sign_fill", ["x"], [(isra:$y $x, 31)], "y",
                                "The high word of the int32 x widened to int64.">;
// -> M: nonzero is true. F goes through |x| (a canonical binary32: +0 for
// both zeros, the canonical NaN for every NaN, which is true), L through
// the OR of its words.
def MP_nonzero : MicroProgram<"nonzero", ["x"], [(iltu:$m 0, $x)], "m",
                              "The mask x != 0.">;
def MP_bit_or : MicroProgram<"bit_or", ["a", "b"], [(ior:$y $a, $b)], "y", "a | b, bitwise.">;
// M -> F, I, L: 1.0 and 1 for true, 0 for false.
def MP_mask_to_f : MicroProgram<"mask_to_f", ["m"], [(iand:$y $m, 0x3f800000)], "y",
                                "1.0 where the mask m is true, else +0.">;
def MP_mask_to_i : MicroProgram<"mask_to_i", ["m"], [(iand:$y $m, 1)], "y",
                                "1 where the mask m is true, else 0.">;
}

//===----------------------------------------------------------------------===//
// The instruction
//===----------------------------------------------------------------------===//

// One recipe per pair of (source, destination) types: one pass whose steps
// run the pair's programs on the source stream (IB0, in lane form; an i64
// source's high words in IB1) into the destination stream (OB0; an i64
// destination's high words in OB1). The ISS runs the same recipe (the
// semantics walk the record's steps), so both machines compute a pair with
// the same programs by construction (simulator/lib/recipe_runner.h).
class CastRecipe<int stype, int dtype, list<Step> steps>
    : VectorRecipe<[When<"stype", stype>, When<"dtype", dtype>], "", "n",
                   [Stream<"IB0", "src", 1, 0, "stype">, Stream<"OB0", "dst", 1, 0, "dtype">],
                   [Pass<["IB0"], ["OB0"], steps>]>;

// The lane form of a type (docs/types.md §2): F binary32, I int32, L an
// int64 register pair, M a mask.
class LaneForm<string type> {
  string Form = !cond(!eq(type, "f32") : "F", !eq(type, "bf16") : "F", !eq(type, "f16") : "F",
                      !eq(type, "i32") : "I", !eq(type, "i64") : "L", !eq(type, "b8") : "M");
}

// The steps converting lane form `from` to lane form `to`: every pair of
// types with the same lane forms shares them (the streams do the rest).
class CastSteps<string from, string to> {
  list<Step> Steps = !cond(
    // F -> F: max(x, x) is x as the lanes hold it (canonical); a narrower
    // destination rounds on store.
    !eq(from # to, "FF") : [Run<"max", "IB0", "IB0", "OB0">],
    !eq(from # to, "FI") : [Run<"f2iz", "IB0", "", "OB0">],
    !eq(from # to, "FL") : [Run<"f2lzlo", "IB0", "", "OB0">, Run<"f2lzhi", "IB0", "", "OB1">],
    // |x| is canonical: both zeros +0 (false), every NaN the canonical one (true).
    !eq(from # to, "FM") : [Run<"abs", "IB0", "", "T0">, Run<"nonzero", "T0", "", "OB0">],
    !eq(from # to, "IF") : [Run<"i2f", "IB0", "", "OB0">],
    !eq(from # to, "II") : [Run<"copy_bits", "IB0", "", "OB0">],
    !eq(from # to, "IL") : [Run<"copy_bits", "IB0", "", "OB0">, Run<"sign_fill", "IB0", "", "OB1">],
    !eq(from # to, "IM") : [Run<"nonzero", "IB0", "", "OB0">],
    !eq(from # to, "LF") : [Run<"l2f", "IB0", "IB1", "OB0">],
    // The low word: two's complement wraps, as PyTorch's .int() of an int64.
    !eq(from # to, "LI") : [Run<"copy_bits", "IB0", "", "OB0">],
    !eq(from # to, "LL") : [Run<"copy_bits", "IB0", "", "OB0">, Run<"copy_bits", "IB1", "", "OB1">],
    !eq(from # to, "LM") : [Run<"bit_or", "IB0", "IB1", "T0">, Run<"nonzero", "T0", "", "OB0">],
    !eq(from # to, "MF") : [Run<"mask_to_f", "IB0", "", "OB0">],
    !eq(from # to, "MI") : [Run<"mask_to_i", "IB0", "", "OB0">],
    !eq(from # to, "ML") : [Run<"mask_to_i", "IB0", "", "OB0">, Run<"copy_bits", "ZERO", "", "OB1">],
    !eq(from # to, "MM") : [Run<"copy_bits", "IB0", "", "OB0">]);
}

// The types cast accepts: all six (docs/types.md §5).
defvar CastTypes = ["f32", "bf16", "f16", "i32", "i64", "b8"];

// The type of the source (flags bits 4-7), of the same enumeration as dtype.
class STypeOf<list<string> accepts>
    : EnumOp<"stype", DType, FlagBits<4, 4>, "source element type"> {
  let Accepts = accepts;
}

def CAST : Instruction<"cast", 0xa0, "convert",
    [AddrOp<"dst", S_Dst, "result, of type dtype">, AddrOp<"src", S_Src0, "operand, of type stype">,
     DimOp<"n", S_P0, "number of elements">, DTypeOf<CastTypes>,
     STypeOf<CastTypes>],
    "$dst, $src, $n", Cost<E_Vector, 4, 1>,
    "Convert n elements from type stype to type dtype."> {
  let Semantics = "dst[i] = src[i] converted from stype to dtype for i < n (docs/types.md §3): "
                  "float to integer truncates toward zero, saturating at the integer type's "
                  "range, NaN gives 0; integer to float rounds to nearest even; a float is read "
                  "as the lanes read it (denormals are zeros, every NaN the canonical NaN).";
  let Memory = [MemOperand<"dst", "w", Product<["n"], 1, "dtype">>,
                MemOperand<"src", "r", Product<["n"], 1, "stype">>];
  let Disjoints = [Disjoint<"dst", "src", 1>];
  let Recipes = !foldl([]<VectorRecipe>, CastTypes, recipes, from,
      !listconcat(recipes, !foreach(to, CastTypes,
          CastRecipe<DTypeValue<from>.Value, DTypeValue<to>.Value,
                     CastSteps<LaneForm<from>.Form, LaneForm<to>.Form>.Steps>)));
}
