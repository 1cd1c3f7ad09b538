// EXPECT: 4:5: error: 'copy': memory operand 'src' holds bytes, not indices, but has an index bound or wrap
include "test_preamble.td"

def COPY : Instruction<"copy", 0x17, "data",
    [AddrOp<"dst", S_Dst, "destination">, AddrOp<"src", S_Src0, "source">,
     DimOp<"n", S_P0, "bytes">, FlagOp<"wrap", 0, "a flag">],
    "$dst, $src, $n", Cost<E_Dma, 2, 0>, "Copy."> {
  // Bytes moved are not indices: a wrap flag on them means nothing.
  let Memory = [MemOperand<"dst", "w", Product<["n"], 1>>,
                MemOperand<"src", "r", Product<["n"], 1>, "", "", "bytes", "", "wrap">];
  let Disjoints = [Disjoint<"dst", "src">];
}
