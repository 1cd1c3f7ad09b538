//===- unary.td - Unary elementwise functions ------------------------------===//

// dst[i] = f(src[i]) for i < n, f being a micro-program of microcode.td.
// PerElement is the program's length: one vector-lane step per primitive.
class UnaryOp<string mnemonic, int opcode, MicroProgram prog, string expr,
              list<Operand> extra = []>
    : Instruction<mnemonic, opcode, "unary",
        [AddrOp<"dst", S_Dst, "result">, AddrOp<"src", S_Src0, "operand">,
         DimOp<"n", S_P0, "number of elements">, DTypeOf<FloatTypes>] # extra,
        !foldl("$dst, $src, $n", extra, syntax, o, syntax # ", $" # o.Name),
        Cost<E_Vector, 4, !size(prog.Steps)>, "Elementwise dst = " # expr # "."> {
  MicroProgram Program = prog;
  let Semantics = "dst[i] = " # expr # " for i < n, evaluated by the micro-program "
                  "'" # prog.Name # "' of docs/arith.md on binary32 lanes (bf16 and f16 "
                  "elements widened exactly, the result rounded once to dtype).";
  let Memory = [MemOperand<"dst", "w", Product<["n"], 1, "dtype">>,
                MemOperand<"src", "r", Product<["n"], 1, "dtype">>];
  let Disjoints = [Disjoint<"dst", "src", 1>];
  // The extra operand, if any, is the program's second input (in K0); a
  // program of more inputs needs a recipe of its own.
  let Recipes = [ElementwiseRecipe<prog.Name, "IB0", !if(!empty(extra), "", "K0"),
                                   [Stream<"IB0", "src", 1, 0, "dtype">,
                                    Stream<"OB0", "dst", 1, 0, "dtype">],
                                   !if(!empty(extra), "", !head(extra).Name)>];
}

def EXP     : UnaryOp<"exp", 0x40, MP_exp, "exp(x)">;
def LOG     : UnaryOp<"log", 0x41, MP_log, "log(x)">;
def RSQRT   : UnaryOp<"rsqrt", 0x42, MP_rsqrt, "1/sqrt(x)">;
def SQRT    : UnaryOp<"sqrt", 0x43, MP_sqrt, "sqrt(x)">;
def RECIP   : UnaryOp<"recip", 0x44, MP_recip, "1/x">;
// NEG also negates i32 and i64 (besides the float types), wrapping (-INT_MIN = INT_MIN, docs/types.md
// §3): 0 - x by the integer subtraction of elementwise.td.
class NegRecipe<string type>
    : VectorRecipe<[When<"dtype", DTypeValue<type>.Value>], "", "n",
                   [Stream<"IB0", "src", 1, 0, "dtype">, Stream<"OB0", "dst", 1, 0, "dtype">],
                   [Pass<["IB0"], ["OB0"],
                         !if(!or(!eq(type, "f32"), !eq(type, "bf16"), !eq(type, "f16")), [Run<"neg", "IB0", "", "OB0">],
                             IntSteps<"sub", type, "ZERO", "ZERO", "IB0", "IB1">.Steps)>]>;
defvar NegTypes = !listconcat(FloatTypes, ["i32", "i64"]);
def NEG     : UnaryOp<"neg", 0x45, MP_neg, "-x (wrapping on i32 and i64)"> {
  let Operands = [AddrOp<"dst", S_Dst, "result">, AddrOp<"src", S_Src0, "operand">,
                  DimOp<"n", S_P0, "number of elements">, DTypeOf<NegTypes>];
  let Memory = [MemOperand<"dst", "w", Product<["n"], 1, "dtype">>,
                MemOperand<"src", "r", Product<["n"], 1, "dtype">>];
  let Recipes = !foreach(type, NegTypes, NegRecipe<type>);
}
def ABS     : UnaryOp<"abs", 0x46, MP_abs, "|x|">;
def RELU    : UnaryOp<"relu", 0x47, MP_relu, "max(x, +0)">;
def SIGMOID : UnaryOp<"sigmoid", 0x48, MP_sigmoid, "1/(1+exp(-x))">;
def TANH    : UnaryOp<"tanh", 0x49, MP_tanh, "tanh(x)">;
def SILU    : UnaryOp<"silu", 0x4a, MP_silu, "x*sigmoid(x)">;
def GELU    : UnaryOp<"gelu", 0x4b, MP_gelu, "0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3)))">;
def SIN     : UnaryOp<"sin", 0x4c, MP_sin, "sin(x)">;
def COS     : UnaryOp<"cos", 0x4d, MP_cos, "cos(x)">;
def POWS    : UnaryOp<"pows", 0x4e, MP_pow, "x^p", [F32Op<"p", S_P1, "exponent">]>;
def ERF     : UnaryOp<"erf", 0x4f, MP_erf, "erf(x)">;
// The unary block 0x40-0x4f is full: the exact GELU continues after the reductions.
def GELU_ERF : UnaryOp<"gelu_erf", 0x54, MP_gelu_erf, "0.5*x*(1+erf(x/sqrt(2)))">;

// The engine's steps take two inputs: max with lo (K0), then min with hi
// (K1), the primitives of MP_clamp in its order.
class ClampRecipe
    : VectorRecipe<[], "", "n",
                   [Stream<"IB0", "src", 1, 0, "dtype">, Stream<"OB0", "dst", 1, 0, "dtype">],
                   [Pass<["IB0"], ["OB0"], [Run<"max", "IB0", "K0", "T0">,
                                            Run<"min", "T0", "K1", "OB0">]>]> {
  let Scalars = ["lo", "hi"];
}
def CLAMP : UnaryOp<"clamp", 0x36, MP_clamp, "min(max(x, lo), hi)",
                    [F32Op<"lo", S_P1, "lower bound">, F32Op<"hi", S_P2, "upper bound">]> {
  let Recipes = [ClampRecipe<>];
}
