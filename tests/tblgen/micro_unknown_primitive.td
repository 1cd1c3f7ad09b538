// EXPECT: 4:5: error: primitive 'fdiv' has no semantics in npu-tblgen: add it to the host providers, the reference model and the loader's table first
include "test_preamble.td"

def fdiv : Prim<"fdiv", 2, "a / b">;
