//===- optim.td - Optimizer steps ------------------------------------------===//

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
}
