// EXPECT: 4:5: error: micro-program 'pick' step 1: the first source of sel must be a mask (a result of flt, fle, fisnan, ieq, ilt, iltu, isra by 31, or iand/ior/ixor/sel of masks)
include "test_preamble.td"

def PickProgram : MicroProgram<"pick", ["x"],
    [(fadd:$m $x, 0x3f800000),
     (sel:$y $m, $x, 0)], "y", "Selects on a float, not on a compare result.">;
