//===- data.td - Data movement ---------------------------------------------===//

def COPY : Instruction<"copy", 0x10, "data",
    [AddrOp<"dst", S_Dst, "destination", 1>, AddrOp<"src", S_Src0, "source", 1>,
     DimOp<"bytes", S_P0, "number of bytes">],
    "$dst, $src, $bytes", Cost<E_Dma, 2, 0>, "Copy bytes."> {
  let Semantics = "dst[i] = src[i] for i in [0, bytes). The two ranges must not "
                  "overlap (a fault otherwise).";
  let Memory = [BytesOperand<"dst", "w", Product<["bytes"], 1>>,
                BytesOperand<"src", "r", Product<["bytes"], 1>>];
  let Disjoints = [Disjoint<"dst", "src">];
}

def FILL : Instruction<"fill", 0x11, "data",
    [AddrOp<"dst", S_Dst, "destination">, Operand<"value", K_Bits32, S_P1, "32-bit pattern">,
     DimOp<"count", S_P0, "number of 32-bit words">],
    "$dst, $value, $count", Cost<E_Dma, 2, 0>, "Fill memory with a 32-bit pattern."> {
  let Semantics = "The count little-endian 32-bit words at dst are set to value.";
  let Memory = [BytesOperand<"dst", "w", Product<["count"]>>];
}

def COPY_STRIDED : Instruction<"copy_strided", 0x12, "data",
    [AddrOp<"dst", S_Dst, "contiguous destination", 1>,
     AddrOp<"src", S_Src0, "strided source (address of element [0,0,0,0])", 1>,
     DimOp<"size0", S_P0, "outermost extent">, DimOp<"size1", S_P1, "extent of dim 1">,
     DimOp<"size2", S_P2, "extent of dim 2">, DimOp<"size3", S_P3, "innermost extent">,
     I32Op<"stride0", S_P4, "stride of dim 0 in elements">,
     I32Op<"stride1", S_P5, "stride of dim 1 in elements">,
     I32Op<"stride2", S_P6, "stride of dim 2 in elements">,
     I32Op<"stride3", S_P7, "stride of dim 3 in elements">,
     EnumOp<"esize", ElemSize, FlagBits<4, 2>, "element size", 2>],
    "$dst, $src, [$size0, $size1, $size2, $size3], [$stride0, $stride1, $stride2, $stride3]",
    Cost<E_Dma, 4, 0>, "Gather a strided view of up to four dimensions into contiguous memory."> {
  let Semantics = "For every index (i0,i1,i2,i3) in row-major order, the next "
                  "element of dst is src[i0*stride0 + i1*stride1 + i2*stride2 + i3*stride3] "
                  "(offsets in elements of esize bytes; strides may be zero or negative). "
                  "Makes any PyTorch view of rank <= 4 contiguous.";
  let Memory = [BytesOperand<"dst", "w", Product<["size0", "size1", "size2", "size3"], 1, "esize">>,
                BytesOperand<"src", "r", StridedExtent<["size0", "size1", "size2", "size3"],
                                                     ["stride0", "stride1", "stride2", "stride3"],
                                                     "esize">>];
  let Disjoints = [Disjoint<"dst", "src">];
}
