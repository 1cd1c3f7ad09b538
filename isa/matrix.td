//===- matrix.td - Matrix engine -------------------------------------------===//

// The type of C (flags bits 8-11), of the same enumeration as dtype. The
// matrix engine reads and stores the float types (docs/types.md §2): bf16
// and f16 widen exactly to binary32 as they arrive, and C is rounded once
// (RNE) to its type as it leaves.
class OTypeOf<list<string> accepts>
    : EnumOp<"otype", DType, FlagBits<8, 4>, "element type of C"> {
  let Accepts = accepts;
}

defvar MatFlags = [FlagOp<"transa", 4, "A is stored transposed (K x M)">,
                   FlagOp<"transb", 5, "B is stored transposed (N x K)">,
                   FlagOp<"acc", 6, "accumulate into the existing C">,
                   DTypeOf<FloatTypes>, OTypeOf<FloatTypes>];

// How every element of C is computed, in words shared by both records.
defvar MatSemantics =
    "A and B elements are of type dtype, C elements of type otype; pitches and strides count "
    "elements of their own matrix's type. bf16 and f16 elements widen exactly to binary32 as "
    "they are read (docs/types.md §2), so the products and the sums are the binary32 ones of "
    "the widened values. For every i < m, j < n: acc = (acc flag ? C[i][j] widened : +0), then "
    "for kk = 0 .. k-1 in increasing order acc = fma(A[i][kk], B[kk][j], acc); C[i][j] = acc "
    "rounded once to otype (RNE; docs/types.md §2). A[i][kk] is a[i*lda + kk] or, with "
    "transa, a[kk*lda + i]; B likewise with ldb and transb. A dense pitch is the stored row "
    "length.";

def MATMUL : Instruction<"matmul", 0x20, "matrix",
    [AddrOp<"c", S_Dst, "M x N result">, AddrOp<"a", S_Src0, "M x K left operand">,
     AddrOp<"b", S_Src1, "K x N right operand">,
     DimOp<"m", S_P0, "rows of C">, DimOp<"k", S_P1, "reduction length">,
     DimOp<"n", S_P2, "columns of C">,
     U32Op<"lda", S_P3, "row pitch of A as stored, in elements; 0 = dense">,
     U32Op<"ldb", S_P4, "row pitch of B as stored, in elements; 0 = dense">,
     U32Op<"ldc", S_P5, "row pitch of C, in elements; 0 = dense (n)">] # MatFlags,
    "$c, $a, $b, $m, $k, $n, $lda, $ldb, $ldc", Cost<E_Matrix, 8, 0>,
    "Matrix multiply C = A * B (+ C)."> {
  let Semantics = MatSemantics;
  let Memory = [MemOperand<"c", "w", MatrixExtent<"m", "n", "ldc", "", "", "", 0, "otype">, "",
                           "acc">,
                MemOperand<"a", "r", MatrixExtent<"m", "k", "lda", "transa", "", "", 0, "dtype">>,
                MemOperand<"b", "r", MatrixExtent<"k", "n", "ldb", "transb", "", "", 0, "dtype">>];
  let Disjoints = [Disjoint<"c", "a">, Disjoint<"c", "b">];
}

def BMM : Instruction<"bmm", 0x21, "matrix",
    [AddrOp<"c", S_Dst, "batch of M x N results">, AddrOp<"a", S_Src0, "batch of left operands">,
     AddrOp<"b", S_Src1, "batch of right operands">,
     DimOp<"m", S_P0, "rows of each C">, DimOp<"k", S_P1, "reduction length">,
     DimOp<"n", S_P2, "columns of each C">, DimOp<"batch", S_P3, "number of products">,
     U32Op<"stride_a", S_P4, "elements between consecutive A matrices; 0 = broadcast">,
     U32Op<"stride_b", S_P5, "elements between consecutive B matrices; 0 = broadcast">,
     DimOp<"stride_c", S_P6, "elements between consecutive C matrices">] # MatFlags,
    "$c, $a, $b, $m, $k, $n, $batch, $stride_a, $stride_b, $stride_c", Cost<E_Matrix, 8, 0>,
    "Batched matrix multiply."> {
  let Semantics = "For every p < batch: MATMUL with dense pitches of the matrices at "
                  "element p*stride_c of c, p*stride_a of a and p*stride_b of b, in "
                  "increasing p (dtype and otype as MATMUL's).";
  let Memory = [MemOperand<"c", "w", MatrixExtent<"m", "n", "", "", "batch", "stride_c", 1,
                                                  "otype">, "", "acc">,
                MemOperand<"a", "r", MatrixExtent<"m", "k", "", "transa", "batch", "stride_a", 0,
                                                  "dtype">>,
                MemOperand<"b", "r", MatrixExtent<"k", "n", "", "transb", "batch", "stride_b", 0,
                                                  "dtype">>];
  let Disjoints = [Disjoint<"c", "a">, Disjoint<"c", "b">];
}
