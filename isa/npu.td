//===- npu.td - The NPU instruction set, v1 -------------------------------===//
//
// The single source of truth: npu-tblgen generates the codec, the assembler
// and printer syntax tables, the timing-model costs, the RTL decode package
// and docs/isa.md from this file and the files it includes.
//
//===----------------------------------------------------------------------===//

include "base.td"
include "packet.td"
include "hardware.td"
include "csr.td"
include "faults.td"
include "common.td"
include "control.td"
include "data.td"
include "matrix.td"
include "elementwise.td"
include "microcode.td"
include "unary.td"
include "reduction.td"
include "nn.td"
include "optim.td"
include "gather.td"
include "cast.td"
include "compare.td"
include "sequence.td"
include "bits.td"
include "rng.td"
