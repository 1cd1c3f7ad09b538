//===- unary.td - Unary elementwise functions ------------------------------===//

// dst[i] = f(src[i]) for i < n. PerElement is the micro-program length in
// vector-lane steps (docs/arith.md gives each function's algorithm).
class UnaryOp<string mnemonic, int opcode, int steps, string expr, list<Operand> extra = []>
    : Instruction<mnemonic, opcode, "unary",
        [AddrOp<"dst", S_Dst, "result">, AddrOp<"src", S_Src0, "operand">,
         DimOp<"n", S_P0, "number of elements">, DTypeOp] # extra,
        "$dst, $src, $n" # !if(!empty(extra), "", ", $" # !head(extra).Name),
        Cost<E_Vector, 4, steps>, "Elementwise dst = " # expr # "."> {
  let Semantics = "dst[i] = " # expr # " for i < n, evaluated by the micro-program "
                  "of the same name in docs/arith.md.";
}

def EXP     : UnaryOp<"exp", 0x40, 12, "exp(x)">;
def LOG     : UnaryOp<"log", 0x41, 14, "log(x)">;
def RSQRT   : UnaryOp<"rsqrt", 0x42, 10, "1/sqrt(x)">;
def SQRT    : UnaryOp<"sqrt", 0x43, 12, "sqrt(x)">;
def RECIP   : UnaryOp<"recip", 0x44, 8, "1/x">;
def NEG     : UnaryOp<"neg", 0x45, 1, "-x">;
def ABS     : UnaryOp<"abs", 0x46, 1, "|x|">;
def RELU    : UnaryOp<"relu", 0x47, 1, "max(x, +0)">;
def SIGMOID : UnaryOp<"sigmoid", 0x48, 22, "1/(1+exp(-x))">;
def TANH    : UnaryOp<"tanh", 0x49, 24, "tanh(x)">;
def SILU    : UnaryOp<"silu", 0x4a, 23, "x*sigmoid(x)">;
def GELU    : UnaryOp<"gelu", 0x4b, 30, "0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3)))">;
def SIN     : UnaryOp<"sin", 0x4c, 20, "sin(x)">;
def COS     : UnaryOp<"cos", 0x4d, 20, "cos(x)">;
def POWS    : UnaryOp<"pows", 0x4e, 30, "x^p", [F32Op<"p", S_P1, "exponent">]>;
