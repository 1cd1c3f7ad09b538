//===- nn.td - Fused neural-network operations and their backward passes --===//

defvar RowsCols = [DimOp<"rows", S_P0, "rows">, DimOp<"cols", S_P1, "columns (normalised dimension)">];

// The row instructions accept bf16 and f16 element streams by their f32
// recipes (docs/types.md §2): the streams widen exactly and round once on
// store; the per-row statistics a row store writes or a row load reads
// (whole words) stay binary32.
defvar RowHalfFloats = "On bf16 and f16 the elements are widened exactly to binary32, every "
                       "intermediate stays binary32 and each result is rounded once on store.";

class SoftmaxScaled<bit causal> {
  list<Step> Steps = [Run<"mul", "IB0", "K0", "T0">] # !if(causal, [Mask<"T0", "T0">], []);
}
// Every pass recomputes z = scale * x (masked): pass 0 m = max z (K1);
// pass 1 s = sum exp(z - m) (K2), then K3 = 1/s or log(s); pass 2
// exp(z - m) * K3, or (z - m) - K3.
class SoftmaxRecipe<bit causal, bit log>
    : VectorRecipe<[When<"causal", causal>, When<"log", log>], "rows", "cols",
                   [Stream<"IB0", "src", 1, 0, "dtype">, Stream<"OB0", "dst", 1, 0, "dtype">],
                   [Pass<["IB0"], [], SoftmaxScaled<causal>.Steps # [Reduce<"T0">], "max", "K1">,
                    Pass<["IB0"], [], SoftmaxScaled<causal>.Steps #
                                      [Run<"sub", "T0", "K1", "T0">, Run<"exp", "T0", "", "T1">,
                                       Reduce<"T1">], "sum", "K2",
                         [Run<!if(log, "log", "recip"), "K2", "", "K3">]>,
                    Pass<["IB0"], ["OB0"], SoftmaxScaled<causal>.Steps #
                                           [Run<"sub", "T0", "K1", "T0">] #
                                           !if(log, [Run<"sub", "T0", "K3", "OB0">],
                                                    [Run<"exp", "T0", "", "T1">,
                                                     Run<"mul", "T1", "K3", "OB0">])>]> {
  let Scalars = ["scale"];
  let MaskOffset = "offset";
}

def SOFTMAX : Instruction<"softmax", 0x60, "nn",
    [AddrOp<"dst", S_Dst, "rows x cols probabilities">, AddrOp<"src", S_Src0, "rows x cols logits">]
    # RowsCols #
    [OptF32Op<"scale", S_P2, "logit multiplier", F32One>,
     OptI32Op<"offset", S_P3, "causal diagonal offset", 0>,
     FlagOp<"causal", 4, "mask columns j > i + offset">,
     FlagOp<"log", 5, "produce log-softmax">, DTypeOf<FloatTypes>],
    "$dst, $src, $rows, $cols", Cost<E_Vector, 8, 16>, "Row softmax (or log-softmax) with optional causal mask."> {
  let Semantics = !strconcat("Per row i: z[j] = scale*src[i][j], or -inf where causal and j > i + offset; "
                  "m = ROW_MAX(z); e[j] = exp(z[j] - m); s = ROW_SUM(e); "
                  "dst[i][j] = e[j] * recip(s), or with log: (z[j] - m) - log(s). "
                  "A fully masked row yields NaN. ", RowHalfFloats);
  let Memory = [MemOperand<"dst", "w", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"src", "r", Product<["rows", "cols"], 1, "dtype">>];
  let Disjoints = [Disjoint<"dst", "src", 1>];
  let Recipes = [SoftmaxRecipe<0, 0>, SoftmaxRecipe<0, 1>, SoftmaxRecipe<1, 0>,
                 SoftmaxRecipe<1, 1>];
}

// K3 = 1/cols; pass 0: K1 = sum x*x, K2 = rsqrt(K1 * K3 + eps); pass 1:
// (x * K2) * weight.
class RmsnormRecipe<bit useWeight, bit writeRstd>
    : VectorRecipe<[When<"use_weight", useWeight>, When<"write_rstd", writeRstd>], "rows", "cols",
                   [Stream<"IB0", "src", 1, 0, "dtype">, Stream<"IB1", "weight", 0, 0, "dtype">,
                    Stream<"OB0", "dst", 1, 0, "dtype">],
                   [Pass<["IB0"], [], [Run<"mul", "IB0", "IB0", "T0">, Reduce<"T0">], "sum", "K1",
                         [Run<"mul", "K1", "K3", "K1">, Run<"add", "K1", "K0", "K1">,
                          Run<"rsqrt", "K1", "", "K2">]>,
                    Pass<!if(useWeight, ["IB0", "IB1"], ["IB0"]), ["OB0"],
                         !if(useWeight, [Run<"mul", "IB0", "K2", "T0">,
                                         Run<"mul", "T0", "IB1", "OB0">],
                                        [Run<"mul", "IB0", "K2", "OB0">])>],
                   [Run<"recip", "COLS", "", "K3">]> {
  let Scalars = ["eps"];
  let RowStores = !if(writeRstd, [RowStore<"rstd", "K2">], []);
}

def RMSNORM : Instruction<"rmsnorm", 0x61, "nn",
    [AddrOp<"dst", S_Dst, "rows x cols output">, AddrOp<"src", S_Src0, "rows x cols input">,
     AddrOp<"weight", S_Src1, "cols weights (read when use_weight)">,
     AddrOp<"rstd", S_P45, "rows reciprocal RMS values, binary32 whatever dtype (written when write_rstd)">]
    # RowsCols #
    [F32Op<"eps", S_P2, "added to the mean square">,
     FlagOp<"use_weight", 4, "multiply by weight">,
     FlagOp<"write_rstd", 5, "store the per-row rstd for the backward pass">, DTypeOf<FloatTypes>],
    "$dst, $src, $weight, $rstd, $rows, $cols, $eps", Cost<E_Vector, 8, 6>, "Root-mean-square normalisation."> {
  let Semantics = !strconcat("Per row i: ms = ROW_SUM(x*x) * (1/cols); r = rsqrt(ms + eps); "
                  "dst[i][j] = (x[j] * r) * weight[j] (weight step only with use_weight); "
                  "rstd[i] = r with write_rstd (binary32). ", RowHalfFloats);
  let Memory = [MemOperand<"dst", "w", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"src", "r", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"weight", "r", Product<["cols"], 1, "dtype">, "use_weight">,
                MemOperand<"rstd", "w", Product<["rows"]>, "write_rstd">];
  let Disjoints = [Disjoint<"dst", "src", 1>, Disjoint<"dst", "weight">,
                   Disjoint<"rstd", "src">, Disjoint<"rstd", "dst">, Disjoint<"rstd", "weight">];
  let Recipes = [RmsnormRecipe<0, 0>, RmsnormRecipe<0, 1>, RmsnormRecipe<1, 0>,
                 RmsnormRecipe<1, 1>];
}

// K3 = 1/cols; pass 0: K1 = mean = sum x * K3; pass 1: K2 = sum (x - K1)^2,
// then rstd = rsqrt(K2 * K3 + eps); pass 2: ((x - K1) * K2) * weight + bias.
class LayernormRecipe<bit useWeight, bit useBias, bit writeStats>
    : VectorRecipe<[When<"use_weight", useWeight>, When<"use_bias", useBias>,
                    When<"write_stats", writeStats>], "rows", "cols",
                   [Stream<"IB0", "src", 1, 0, "dtype">, Stream<"IB1", "weight", 0, 0, "dtype">,
                    Stream<"IB2", "bias", 0, 0, "dtype">, Stream<"OB0", "dst", 1, 0, "dtype">],
                   [Pass<["IB0"], [], [Reduce<"IB0">], "sum", "K1", [Run<"mul", "K1", "K3", "K1">]>,
                    Pass<["IB0"], [], [Run<"sub", "IB0", "K1", "T0">, Run<"mul", "T0", "T0", "T1">,
                                       Reduce<"T1">], "sum", "K2",
                         [Run<"mul", "K2", "K3", "K2">, Run<"add", "K2", "K0", "K2">,
                          Run<"rsqrt", "K2", "", "K2">]>,
                    Pass<["IB0"] # !if(useWeight, ["IB1"], []) # !if(useBias, ["IB2"], []), ["OB0"],
                         [Run<"sub", "IB0", "K1", "T0">,
                          Run<"mul", "T0", "K2", !if(!or(useWeight, useBias), "T0", "OB0")>] #
                         !if(useWeight, [Run<"mul", "T0", "IB1", !if(useBias, "T0", "OB0")>], []) #
                         !if(useBias, [Run<"add", "T0", "IB2", "OB0">], [])>],
                   [Run<"recip", "COLS", "", "K3">]> {
  let Scalars = ["eps"];
  let RowStores = !if(writeStats, [RowStore<"stats", "K1", 2>], []);
}

def LAYERNORM : Instruction<"layernorm", 0x62, "nn",
    [AddrOp<"dst", S_Dst, "rows x cols output">, AddrOp<"src", S_Src0, "rows x cols input">,
     AddrOp<"weight", S_Src1, "cols weights (read when use_weight)">,
     AddrOp<"bias", S_P01, "cols biases (read when use_bias)">,
     AddrOp<"stats", S_P23, "rows (mean, rstd) pairs, binary32 whatever dtype (written when write_stats)">,
     DimOp<"rows", S_P4, "rows">, DimOp<"cols", S_P5, "columns (normalised dimension)">,
     F32Op<"eps", S_P6, "added to the variance">,
     FlagOp<"use_weight", 4, "multiply by weight">, FlagOp<"use_bias", 5, "add bias">,
     FlagOp<"write_stats", 6, "store the per-row mean and rstd for the backward pass">,
     DTypeOf<FloatTypes>],
    "$dst, $src, $weight, $bias, $stats, $rows, $cols, $eps", Cost<E_Vector, 8, 8>,
    "Layer normalisation."> {
  let Semantics = !strconcat("Per row i: m = ROW_SUM(x) * (1/cols); v = ROW_SUM((x - m)*(x - m)) * (1/cols); "
                  "r = rsqrt(v + eps); dst[i][j] = ((x[j] - m) * r) * weight[j] + bias[j] (the "
                  "weight step only with use_weight, the bias step only with use_bias); "
                  "stats[i] = (m, r) with write_stats (binary32). ", RowHalfFloats);
  let Memory = [MemOperand<"dst", "w", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"src", "r", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"weight", "r", Product<["cols"], 1, "dtype">, "use_weight">,
                MemOperand<"bias", "r", Product<["cols"], 1, "dtype">, "use_bias">,
                MemOperand<"stats", "w", Product<["rows"], 8>, "write_stats">];
  let Disjoints = [Disjoint<"dst", "src", 1>, Disjoint<"dst", "weight">, Disjoint<"dst", "bias">,
                   Disjoint<"stats", "src">, Disjoint<"stats", "dst">, Disjoint<"stats", "weight">,
                   Disjoint<"stats", "bias">];
  let Recipes = !foldl([]<VectorRecipe>, [0, 1, 2, 3, 4, 5, 6, 7], acc, v,
                       acc # [LayernormRecipe<!and(v, 1), !and(!srl(v, 1), 1), !srl(v, 2)>]);
}

// Pass 0: K1 = sum dy*y (or sum dy); pass 1: y * (dy - K1), or
// dy - exp(y) * K1.
class SoftmaxBwdRecipe<bit log>
    : VectorRecipe<[When<"log", log>], "rows", "cols",
                   [Stream<"IB0", "y", 1, 0, "dtype">, Stream<"IB1", "dy", 1, 0, "dtype">,
                    Stream<"OB0", "dx", 1, 0, "dtype">],
                   [Pass<!if(log, ["IB1"], ["IB0", "IB1"]), [],
                         !if(log, [Reduce<"IB1">], [Run<"mul", "IB1", "IB0", "T0">, Reduce<"T0">]),
                         "sum", "K1">,
                    Pass<["IB0", "IB1"], ["OB0"],
                         !if(log, [Run<"exp", "IB0", "", "T0">, Run<"mul", "T0", "K1", "T0">,
                                   Run<"sub", "IB1", "T0", "OB0">],
                                  [Run<"sub", "IB1", "K1", "T0">, Run<"mul", "IB0", "T0", "OB0">])>]>;

def SOFTMAX_BWD : Instruction<"softmax_bwd", 0x70, "backward",
    [AddrOp<"dx", S_Dst, "gradient of the logits">, AddrOp<"y", S_Src0, "forward output">,
     AddrOp<"dy", S_Src1, "gradient of the output">] # RowsCols #
    [FlagOp<"log", 5, "y is a log-softmax output">, DTypeOf<FloatTypes>],
    "$dx, $y, $dy, $rows, $cols", Cost<E_Vector, 8, 6>, "Backward of SOFTMAX."> {
  let Semantics = !strconcat("Per row: s = ROW_SUM(dy*y); dx[j] = y[j] * (dy[j] - s). "
                  "With log: s = ROW_SUM(dy); dx[j] = dy[j] - exp(y[j]) * s. ", RowHalfFloats);
  let Memory = [MemOperand<"dx", "w", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"y", "r", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"dy", "r", Product<["rows", "cols"], 1, "dtype">>];
  let Disjoints = [Disjoint<"dx", "y", 1>, Disjoint<"dx", "dy", 1>];
  let Recipes = [SoftmaxBwdRecipe<0>, SoftmaxBwdRecipe<1>];
}

// The streams of RMSNORM_BWD and LAYERNORM_BWD: x, dy, weight and dx of
// dtype; the dweight accumulator, kept in memory across rows, binary32
// whatever dtype (a 16-bit one would be rounded once per row).
defvar NormBwdStreams = [Stream<"IB0", "x", 1, 0, "dtype">, Stream<"IB1", "dy", 1, 0, "dtype">,
                         Stream<"IB2", "weight", 0, 0, "dtype">, Stream<"IB3", "dweight", 0, 1>,
                         Stream<"OB0", "dx", 1, 0, "dtype">, Stream<"OB1", "dweight", 0>];
defvar NormBwdHalfFloats = " On bf16 and f16, x, dy, weight and dx are of dtype (widened exactly, "
                           "every intermediate binary32, dx rounded once on store); the statistics "
                           "and dweight are binary32.";

// K2 = r (the row's rstd), K3 = 1/cols. Pass 0: dweight += (dy * x) * r in
// memory, g = dy * weight (or dy), K1 = sum g * x, then c = K1 * K3 * r * r;
// pass 1: dx = r * (g - x * c).
class RmsnormBwdRecipe<bit useWeight, bit writeDweight>
    : VectorRecipe<[When<"use_weight", useWeight>, When<"write_dweight", writeDweight>],
                   "rows", "cols",
                   NormBwdStreams,
                   [Pass<["IB0", "IB1"] # !if(useWeight, ["IB2"], []) #
                         !if(writeDweight, ["IB3"], []), !if(writeDweight, ["OB1"], []),
                         !if(writeDweight, [Run<"mul", "IB1", "IB0", "T0">, Run<"mul", "T0", "K2", "T0">,
                                            Run<"add", "IB3", "T0", "OB1">], []) #
                         !if(useWeight, [Run<"mul", "IB1", "IB2", "T1">, Run<"mul", "T1", "IB0", "T2">],
                                        [Run<"mul", "IB1", "IB0", "T2">]) #
                         [Reduce<"T2">], "sum", "K1",
                         [Run<"mul", "K1", "K3", "K1">, Run<"mul", "K1", "K2", "K1">,
                          Run<"mul", "K1", "K2", "K1">]>,
                    Pass<["IB0", "IB1"] # !if(useWeight, ["IB2"], []), ["OB0"],
                         !if(useWeight, [Run<"mul", "IB1", "IB2", "T1">], []) #
                         [Run<"mul", "IB0", "K1", "T0">,
                          Run<"sub", !if(useWeight, "T1", "IB1"), "T0", "T0">,
                          Run<"mul", "K2", "T0", "OB0">]>],
                   [Run<"recip", "COLS", "", "K3">]> {
  let RowLoads = [RowLoad<"rstd", "K2">];
}

def RMSNORM_BWD : Instruction<"rmsnorm_bwd", 0x71, "backward",
    [AddrOp<"dx", S_Dst, "gradient of the input">, AddrOp<"x", S_Src0, "forward input">,
     AddrOp<"dy", S_Src1, "gradient of the output">,
     AddrOp<"weight", S_P01, "cols weights (read when use_weight)">,
     AddrOp<"rstd", S_P23, "rows rstd from the forward pass, binary32 whatever dtype">,
     AddrOp<"dweight", S_P45, "cols weight gradient, binary32 whatever dtype (written when write_dweight)">,
     DimOp<"rows", S_P6, "rows">, DimOp<"cols", S_P7, "columns">,
     FlagOp<"use_weight", 4, "the forward pass multiplied by weight">,
     FlagOp<"write_dweight", 5, "store the weight gradient">, DTypeOf<FloatTypes>],
    "$dx, $x, $dy, $weight, $rstd, $dweight, $rows, $cols", Cost<E_Vector, 8, 10>,
    "Backward of RMSNORM: input and weight gradients."> {
  let Semantics = !strconcat("Per row with r = rstd[i], g[j] = dy[j]*weight[j] (or dy[j]): "
                  "c = ROW_SUM(g*x) * (1/cols) * r*r; dx[j] = r * (g[j] - x[j]*c). "
                  "dweight[j] = sum over rows in increasing i of dy[i][j]*x[i][j]*r_i.", NormBwdHalfFloats);
  // The RTL accumulates dweight in memory (it reads it back): "rw".
  let Memory = [MemOperand<"dx", "w", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"x", "r", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"dy", "r", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"weight", "r", Product<["cols"], 1, "dtype">, "use_weight">,
                MemOperand<"rstd", "r", Product<["rows"]>>,
                MemOperand<"dweight", "rw", Product<["cols"]>, "write_dweight">];
  let Disjoints = [Disjoint<"dx", "x", 1>, Disjoint<"dx", "dy", 1>, Disjoint<"dx", "rstd">,
                   Disjoint<"dx", "weight">, Disjoint<"dweight", "x">, Disjoint<"dweight", "dy">,
                   Disjoint<"dweight", "dx">, Disjoint<"dweight", "weight">,
                   Disjoint<"dweight", "rstd">];
  let Recipes = [RmsnormBwdRecipe<0, 0>, RmsnormBwdRecipe<0, 1>, RmsnormBwdRecipe<1, 0>,
                 RmsnormBwdRecipe<1, 1>];
}

// K1, K2 = the row's (mean, rstd), K3 = 1/cols. Pass 0: K4 = sum g * K3
// (g = dy * weight, or dy); pass 1: xhat = (x - K1) * K2, dweight += dy * xhat
// in memory, K5 = sum g * xhat * K3; pass 2: dx = K2 * ((g - K4) - xhat * K5).
class LayernormBwdRecipe<bit useWeight, bit writeDweight>
    : VectorRecipe<[When<"use_weight", useWeight>, When<"write_dweight", writeDweight>],
                   "rows", "cols",
                   NormBwdStreams,
                   [Pass<["IB1"] # !if(useWeight, ["IB2"], []), [],
                         !if(useWeight, [Run<"mul", "IB1", "IB2", "T0">, Reduce<"T0">],
                                        [Reduce<"IB1">]), "sum", "K4",
                         [Run<"mul", "K4", "K3", "K4">]>,
                    Pass<["IB0", "IB1"] # !if(useWeight, ["IB2"], []) #
                         !if(writeDweight, ["IB3"], []), !if(writeDweight, ["OB1"], []),
                         [Run<"sub", "IB0", "K1", "T0">, Run<"mul", "T0", "K2", "T0">] #
                         !if(writeDweight, [Run<"mul", "IB1", "T0", "T1">,
                                            Run<"add", "IB3", "T1", "OB1">], []) #
                         !if(useWeight, [Run<"mul", "IB1", "IB2", "T1">, Run<"mul", "T1", "T0", "T2">],
                                        [Run<"mul", "IB1", "T0", "T2">]) #
                         [Reduce<"T2">], "sum", "K5", [Run<"mul", "K5", "K3", "K5">]>,
                    Pass<["IB0", "IB1"] # !if(useWeight, ["IB2"], []), ["OB0"],
                         [Run<"sub", "IB0", "K1", "T0">, Run<"mul", "T0", "K2", "T0">] #
                         !if(useWeight, [Run<"mul", "IB1", "IB2", "T1">,
                                         Run<"sub", "T1", "K4", "T1">],
                                        [Run<"sub", "IB1", "K4", "T1">]) #
                         [Run<"mul", "T0", "K5", "T2">, Run<"sub", "T1", "T2", "T1">,
                          Run<"mul", "K2", "T1", "OB0">]>],
                   [Run<"recip", "COLS", "", "K3">]> {
  let RowLoads = [RowLoad<"stats", "K1", 2>];
}

def LAYERNORM_BWD : Instruction<"layernorm_bwd", 0x75, "backward",
    [AddrOp<"dx", S_Dst, "gradient of the input">, AddrOp<"x", S_Src0, "forward input">,
     AddrOp<"dy", S_Src1, "gradient of the output">,
     AddrOp<"weight", S_P01, "cols weights (read when use_weight)">,
     AddrOp<"stats", S_P23, "rows (mean, rstd) pairs from LAYERNORM's write_stats, binary32 whatever dtype">,
     AddrOp<"dweight", S_P45, "cols weight gradient, binary32 whatever dtype (written when write_dweight)">,
     DimOp<"rows", S_P6, "rows">, DimOp<"cols", S_P7, "columns (normalised dimension)">,
     FlagOp<"use_weight", 4, "the forward pass multiplied by weight">,
     FlagOp<"write_dweight", 5, "store the weight gradient">, DTypeOf<FloatTypes>],
    "$dx, $x, $dy, $weight, $stats, $dweight, $rows, $cols", Cost<E_Vector, 8, 14>,
    "Backward of LAYERNORM: input and weight gradients (the bias gradient is COL_SUM of dy)."> {
  let Semantics = !strconcat("Per row i with (m, r) = stats[i], xhat[j] = (x[j] - m) * r, "
                  "g[j] = dy[j]*weight[j] (or dy[j]): a = ROW_SUM(g) * (1/cols); "
                  "b = ROW_SUM(g*xhat) * (1/cols); dx[j] = r * ((g[j] - a) - xhat[j]*b). "
                  "dweight[j] = sum over rows in increasing i of dy[i][j]*xhat[i][j].", NormBwdHalfFloats);
  // The RTL accumulates dweight in memory (it reads it back): "rw".
  let Memory = [MemOperand<"dx", "w", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"x", "r", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"dy", "r", Product<["rows", "cols"], 1, "dtype">>,
                MemOperand<"weight", "r", Product<["cols"], 1, "dtype">, "use_weight">,
                MemOperand<"stats", "r", Product<["rows"], 8>>,
                MemOperand<"dweight", "rw", Product<["cols"]>, "write_dweight">];
  let Disjoints = [Disjoint<"dx", "x", 1>, Disjoint<"dx", "dy", 1>, Disjoint<"dx", "stats">,
                   Disjoint<"dx", "weight">, Disjoint<"dweight", "x">, Disjoint<"dweight", "dy">,
                   Disjoint<"dweight", "dx">, Disjoint<"dweight", "weight">,
                   Disjoint<"dweight", "stats">];
  let Recipes = [LayernormBwdRecipe<0, 0>, LayernormBwdRecipe<0, 1>, LayernormBwdRecipe<1, 0>,
                 LayernormBwdRecipe<1, 1>];
}

// dx = dy * f'(x) by a micro-program of microcode.td taking (x, dy), then
// the f32 operands `extra` in order; x, dy and dx of type dtype.
defvar PointwiseStreams = [Stream<"IB0", "x", 1, 0, "dtype">, Stream<"IB1", "dy", 1, 0, "dtype">,
                           Stream<"OB0", "dx", 1, 0, "dtype">];
defvar PointwiseHalfFloats = " on binary32 lanes (bf16 and f16 elements widened exactly, the "
                             "result rounded once to dtype).";
class PointwiseBwd<string mnemonic, int opcode, MicroProgram prog, string fn,
                   list<Operand> extra = [], string saved = "forward input">
    : Instruction<mnemonic, opcode, "backward",
        [AddrOp<"dx", S_Dst, "gradient of the input">, AddrOp<"x", S_Src0, saved>,
         AddrOp<"dy", S_Src1, "gradient of the output">, DimOp<"n", S_P0, "number of elements">,
         DTypeOf<FloatTypes>] # extra,
        !foldl("$dx, $x, $dy, $n", extra, syntax, o, syntax # ", $" # o.Name),
        Cost<E_Vector, 4, !size(prog.Steps)>, "Backward of " # fn # "."> {
  MicroProgram Program = prog;
  let Semantics = !strconcat("dx[i] = dy[i] * ", fn, "'(x[i]), evaluated by the micro-program '",
                             prog.Name, "' of docs/arith.md", PointwiseHalfFloats);
  let Memory = [MemOperand<"dx", "w", Product<["n"], 1, "dtype">>,
                MemOperand<"x", "r", Product<["n"], 1, "dtype">>,
                MemOperand<"dy", "r", Product<["n"], 1, "dtype">>];
  let Disjoints = [Disjoint<"dx", "x", 1>, Disjoint<"dx", "dy", 1>];
  let Recipes = [ElementwiseRecipe<prog.Name, "IB0", "IB1", PointwiseStreams>];
}
def SILU_BWD : PointwiseBwd<"silu_bwd", 0x72, MP_silu_bwd, "SILU">;
def GELU_BWD : PointwiseBwd<"gelu_bwd", 0x73, MP_gelu_bwd, "GELU">;
def GELU_ERF_BWD : PointwiseBwd<"gelu_erf_bwd", 0x74, MP_gelu_erf_bwd, "GELU_ERF">;

// tanh'(u) = 1 - tanh(u)^2 from the forward's output y = tanh(u), as
// PyTorch's tanh_backward takes it. 1 - y^2 is one fused multiply-add, so
// near |y| = 1, where it cancels, it is still rounded once.
let Reference = "dy * (1.0 - y * y)" in
def MP_tanh_bwd : MicroProgram<"tanh_bwd", ["y", "dy"],
    [(fneg:$ny $y),
     (ffma:$d $ny, $y, 0x3f800000),           // 1 - y^2, one rounding
     (fmul:$dx $dy, $d)], "dx",
    "dy * (1 - y^2), y = tanh(u) the forward's output; 1 - y^2 by a fused multiply-add.">;
def TANH_BWD : PointwiseBwd<"tanh_bwd", 0x77, MP_tanh_bwd, "TANH", [],
                            "forward output y = tanh(u)"> {
  let Semantics = !strconcat("dx[i] = dy[i] * (1 - x[i]^2), x being TANH's output (tanh' = 1 - tanh^2), "
                             "evaluated by the micro-program 'tanh_bwd' of docs/arith.md",
                             PointwiseHalfFloats);
}

// A program of four inputs: the engine's steps take two, and each step
// loads its inputs canonicalised (a compare's all-ones mask arrives as the
// canonical NaN), so the recipe computes MP_clamp_bwd's result in its own
// steps: dy where lo <= x (K0), then that where x <= hi (K1).
class ClampBwdRecipe
    : VectorRecipe<[], "", "n", PointwiseStreams,
                   [Pass<["IB0", "IB1"], ["OB0"], [Run<"le", "K0", "IB0", "T0">,
                                                   Run<"le", "IB0", "K1", "T1">,
                                                   Run<"mask_pass", "T0", "IB1", "T2">,
                                                   Run<"mask_pass", "T1", "T2", "OB0">]>]> {
  let Scalars = ["lo", "hi"];
}
def CLAMP_BWD : PointwiseBwd<"clamp_bwd", 0x76, MP_clamp_bwd, "CLAMP",
                             [F32Op<"lo", S_P1, "lower bound">, F32Op<"hi", S_P2, "upper bound">]> {
  let Semantics = !strconcat("dx[i] = dy[i] where lo <= x[i] <= hi (ordered: +0 for a NaN x, lo or hi), "
                             "else +0, evaluated by the micro-program 'clamp_bwd' of docs/arith.md",
                             PointwiseHalfFloats);
  let Recipes = [ClampBwdRecipe<>];
}
