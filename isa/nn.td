//===- nn.td - Fused neural-network operations and their backward passes --===//

defvar RowsCols = [DimOp<"rows", S_P0, "rows">, DimOp<"cols", S_P1, "columns (normalised dimension)">];

def SOFTMAX : Instruction<"softmax", 0x60, "nn",
    [AddrOp<"dst", S_Dst, "rows x cols probabilities">, AddrOp<"src", S_Src0, "rows x cols logits">]
    # RowsCols #
    [OptF32Op<"scale", S_P2, "logit multiplier", F32One>,
     OptI32Op<"offset", S_P3, "causal diagonal offset", 0>,
     FlagOp<"causal", 4, "mask columns j > i + offset">,
     FlagOp<"log", 5, "produce log-softmax">, DTypeOp],
    "$dst, $src, $rows, $cols", Cost<E_Vector, 8, 16>, "Row softmax (or log-softmax) with optional causal mask."> {
  let Semantics = "Per row i: z[j] = scale*src[i][j], or -inf where causal and j > i + offset; "
                  "m = ROW_MAX(z); e[j] = exp(z[j] - m); s = ROW_SUM(e); "
                  "dst[i][j] = e[j] * recip(s), or with log: (z[j] - m) - log(s). "
                  "A fully masked row yields NaN.";
  let Memory = [MemOperand<"dst", "w", Product<["rows", "cols"]>>,
                MemOperand<"src", "r", Product<["rows", "cols"]>>];
  let Disjoints = [Disjoint<"dst", "src", 1>];
}

def RMSNORM : Instruction<"rmsnorm", 0x61, "nn",
    [AddrOp<"dst", S_Dst, "rows x cols output">, AddrOp<"src", S_Src0, "rows x cols input">,
     AddrOp<"weight", S_Src1, "cols weights (read when use_weight)">,
     AddrOp<"rstd", S_P45, "rows reciprocal RMS values (written when write_rstd)">]
    # RowsCols #
    [F32Op<"eps", S_P2, "added to the mean square">,
     FlagOp<"use_weight", 4, "multiply by weight">,
     FlagOp<"write_rstd", 5, "store the per-row rstd for the backward pass">, DTypeOp],
    "$dst, $src, $weight, $rstd, $rows, $cols, $eps", Cost<E_Vector, 8, 6>, "Root-mean-square normalisation."> {
  let Semantics = "Per row i: ms = ROW_SUM(x*x) * (1/cols); r = rsqrt(ms + eps); "
                  "dst[i][j] = (x[j] * r) * weight[j] (weight step only with use_weight); "
                  "rstd[i] = r with write_rstd.";
  let Memory = [MemOperand<"dst", "w", Product<["rows", "cols"]>>,
                MemOperand<"src", "r", Product<["rows", "cols"]>>,
                MemOperand<"weight", "r", Product<["cols"]>, "use_weight">,
                MemOperand<"rstd", "w", Product<["rows"]>, "write_rstd">];
  let Disjoints = [Disjoint<"dst", "src", 1>, Disjoint<"dst", "weight">,
                   Disjoint<"rstd", "src">, Disjoint<"rstd", "dst">, Disjoint<"rstd", "weight">];
}

def SOFTMAX_BWD : Instruction<"softmax_bwd", 0x70, "backward",
    [AddrOp<"dx", S_Dst, "gradient of the logits">, AddrOp<"y", S_Src0, "forward output">,
     AddrOp<"dy", S_Src1, "gradient of the output">] # RowsCols #
    [FlagOp<"log", 5, "y is a log-softmax output">, DTypeOp],
    "$dx, $y, $dy, $rows, $cols", Cost<E_Vector, 8, 6>, "Backward of SOFTMAX."> {
  let Semantics = "Per row: s = ROW_SUM(dy*y); dx[j] = y[j] * (dy[j] - s). "
                  "With log: s = ROW_SUM(dy); dx[j] = dy[j] - exp(y[j]) * s.";
  let Memory = [MemOperand<"dx", "w", Product<["rows", "cols"]>>,
                MemOperand<"y", "r", Product<["rows", "cols"]>>,
                MemOperand<"dy", "r", Product<["rows", "cols"]>>];
  let Disjoints = [Disjoint<"dx", "y", 1>, Disjoint<"dx", "dy", 1>];
}

def RMSNORM_BWD : Instruction<"rmsnorm_bwd", 0x71, "backward",
    [AddrOp<"dx", S_Dst, "gradient of the input">, AddrOp<"x", S_Src0, "forward input">,
     AddrOp<"dy", S_Src1, "gradient of the output">,
     AddrOp<"weight", S_P01, "cols weights (read when use_weight)">,
     AddrOp<"rstd", S_P23, "rows rstd from the forward pass">,
     AddrOp<"dweight", S_P45, "cols weight gradient (written when write_dweight)">,
     DimOp<"rows", S_P6, "rows">, DimOp<"cols", S_P7, "columns">,
     FlagOp<"use_weight", 4, "the forward pass multiplied by weight">,
     FlagOp<"write_dweight", 5, "store the weight gradient">, DTypeOp],
    "$dx, $x, $dy, $weight, $rstd, $dweight, $rows, $cols", Cost<E_Vector, 8, 10>,
    "Backward of RMSNORM: input and weight gradients."> {
  let Semantics = "Per row with r = rstd[i], g[j] = dy[j]*weight[j] (or dy[j]): "
                  "c = ROW_SUM(g*x) * (1/cols) * r*r; dx[j] = r * (g[j] - x[j]*c). "
                  "dweight[j] = sum over rows in increasing i of dy[i][j]*x[i][j]*r_i.";
  // The RTL accumulates dweight in memory (it reads it back): "rw".
  let Memory = [MemOperand<"dx", "w", Product<["rows", "cols"]>>,
                MemOperand<"x", "r", Product<["rows", "cols"]>>,
                MemOperand<"dy", "r", Product<["rows", "cols"]>>,
                MemOperand<"weight", "r", Product<["cols"]>, "use_weight">,
                MemOperand<"rstd", "r", Product<["rows"]>>,
                MemOperand<"dweight", "rw", Product<["cols"]>, "write_dweight">];
  let Disjoints = [Disjoint<"dx", "x", 1>, Disjoint<"dx", "dy", 1>, Disjoint<"dx", "rstd">,
                   Disjoint<"dx", "weight">, Disjoint<"dweight", "x">, Disjoint<"dweight", "dy">,
                   Disjoint<"dweight", "dx">, Disjoint<"dweight", "weight">,
                   Disjoint<"dweight", "rstd">];
}

// dx = dy * f'(x) by a micro-program of microcode.td taking (x, dy).
class PointwiseBwd<string mnemonic, int opcode, MicroProgram prog, string fn>
    : Instruction<mnemonic, opcode, "backward",
        [AddrOp<"dx", S_Dst, "gradient of the input">, AddrOp<"x", S_Src0, "forward input">,
         AddrOp<"dy", S_Src1, "gradient of the output">, DimOp<"n", S_P0, "number of elements">,
         DTypeOp],
        "$dx, $x, $dy, $n", Cost<E_Vector, 4, !size(prog.Steps)>, "Backward of " # fn # "."> {
  MicroProgram Program = prog;
  let Semantics = "dx[i] = dy[i] * " # fn # "'(x[i]), evaluated by the micro-program '" #
                  prog.Name # "' of docs/arith.md.";
  let Memory = [MemOperand<"dx", "w", Product<["n"]>>, MemOperand<"x", "r", Product<["n"]>>,
                MemOperand<"dy", "r", Product<["n"]>>];
  let Disjoints = [Disjoint<"dx", "x", 1>, Disjoint<"dx", "dy", 1>];
}
def SILU_BWD : PointwiseBwd<"silu_bwd", 0x72, MP_silu_bwd, "SILU">;
def GELU_BWD : PointwiseBwd<"gelu_bwd", 0x73, MP_gelu_bwd, "GELU">;
def GELU_ERF_BWD : PointwiseBwd<"gelu_erf_bwd", 0x74, MP_gelu_erf_bwd, "GELU_ERF">;
