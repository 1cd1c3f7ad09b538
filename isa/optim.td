//===- optim.td - Optimizer steps ------------------------------------------===//

class AdamwRecipe
    : VectorRecipe<[], "", "n",
                   [Stream<"IB0", "param">, Stream<"IB1", "grad">, Stream<"IB2", "exp_avg">,
                    Stream<"IB3", "exp_avg_sq">, Stream<"OB0", "param">, Stream<"OB1", "exp_avg">,
                    Stream<"OB2", "exp_avg_sq">],
                   [Pass<["IB0", "IB1", "IB2", "IB3"], ["OB0", "OB1", "OB2"],
                         [Run<"mul", "IB0", "K8", "T0">, Run<"mul", "K1", "IB2", "T1">,
                          Run<"mul", "K9", "IB1", "T2">, Run<"add", "T1", "T2", "OB1">,
                          Run<"mul", "K2", "IB3", "T1">, Run<"mul", "K10", "IB1", "T2">,
                          Run<"mul", "T2", "IB1", "T2">, Run<"add", "T1", "T2", "OB2">,
                          Run<"sqrt", "OB2", "", "T1">, Run<"div", "T1", "K6", "T1">,
                          Run<"add", "T1", "K3", "T1">, Run<"div", "OB1", "T1", "T1">,
                          Run<"mul", "K11", "T1", "T1">, Run<"sub", "T0", "T1", "OB0">]>],
                   [Run<"mul", "K0", "K4", "K8">, Run<"sub", "ONE", "K8", "K8">,
                    Run<"sub", "ONE", "K1", "K9">, Run<"sub", "ONE", "K2", "K10">,
                    Run<"div", "K0", "K5", "K11">]> {
  let PreLoads = [PreLoad<"hyper", 8, "K0">];
}

def ADAMW : Instruction<"adamw", 0x80, "optimizer",
    [AddrOp<"param", S_Dst, "parameters, updated in place">,
     AddrOp<"grad", S_Src0, "gradients">,
     AddrOp<"exp_avg", S_Src1, "first moments, updated in place">,
     AddrOp<"exp_avg_sq", S_P01, "second moments, updated in place">,
     AddrOp<"hyper", S_P23, "block of 8 f32: lr, beta1, beta2, eps, weight_decay, "
                            "bias_correction1, sqrt(bias_correction2), 0", 32>,
     DimOp<"n", S_P4, "number of parameters">, DTypeOp],
    "$param, $grad, $exp_avg, $exp_avg_sq, $hyper, $n", Cost<E_Vector, 16, 14>,
    "One AdamW step (decoupled weight decay)."> {
  let Semantics = "p *= 1 - lr*wd; m = beta1*m + (1-beta1)*g; v = beta2*v + (1-beta2)*g*g; "
                  "p -= (lr/bc1) * m / (sqrt(v)/sqrt_bc2 + eps). The exact operation "
                  "order is given in docs/arith.md.";
  let Memory = [MemOperand<"param", "rw", Product<["n"]>>, MemOperand<"grad", "r", Product<["n"]>>,
                MemOperand<"exp_avg", "rw", Product<["n"]>>,
                MemOperand<"exp_avg_sq", "rw", Product<["n"]>>,
                HyperOperand<"hyper", Product<[], 32>>];
  let Disjoints = [Disjoint<"param", "grad">, Disjoint<"param", "exp_avg">,
                   Disjoint<"param", "exp_avg_sq">, Disjoint<"param", "hyper">,
                   Disjoint<"grad", "exp_avg">, Disjoint<"grad", "exp_avg_sq">,
                   Disjoint<"grad", "hyper">, Disjoint<"exp_avg", "exp_avg_sq">,
                   Disjoint<"exp_avg", "hyper">, Disjoint<"exp_avg_sq", "hyper">];
  // K0..K6: lr, beta1, beta2, eps, weight_decay, bc1, sqrt(bc2); K8 decay,
  // K9 1 - beta1, K10 1 - beta2, K11 lr / bc1. p: IB0/OB0, g: IB1, m:
  // IB2/OB1, v: IB3/OB2.
  let Recipes = [AdamwRecipe<>];
}
