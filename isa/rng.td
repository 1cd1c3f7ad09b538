//===- rng.td - Counter-based random numbers: rand, randn ------------------===//
//
// RAND (docs/types.md §5 "RNG", docs/arith.md §3.5): element i is word
// i mod 4 of the Philox4x32-10 block of the counter offset + floor(i / 4)
// keyed by the 64-bit seed (npu/arith/philox.h). Each lane computes the
// whole block of its element from the column index COL, with no state
// shared between lanes or packets, so the bits depend on (seed, offset, i)
// alone and every backend reproduces them. The steps are single-primitive
// integer programs (RawInputs: the words are not binary32), whose constants
// are Philox's multipliers and round keys: a round is ten steps, the block
// about a hundred (the engine runs up to 127 per pass for this).
//
// RANDN: a normal from two words of the same block by Box-Muller.
//
//===----------------------------------------------------------------------===//

// The types rand writes.
defvar RandTypes = ["f32", "i32"];

let RawInputs = 1 in {
// A round's products: the low and high words of M0 * c0 and M1 * c2
// (npu::arith::kPhiloxM0, kPhiloxM1).
def MP_philox_lo0 : MicroProgram<"philox_lo0", ["c"], [(imul:$y $c, 0xd2511f53)], "y",
                                 "Philox: the low word of 0xd2511f53 * c.">;
def MP_philox_hi0 : MicroProgram<"philox_hi0", ["c"], [(imulhu:$y $c, 0xd2511f53)], "y",
                                 "Philox: the high word of 0xd2511f53 * c.">;
def MP_philox_lo1 : MicroProgram<"philox_lo1", ["c"], [(imul:$y $c, 0xcd9e8d57)], "y",
                                 "Philox: the low word of 0xcd9e8d57 * c.">;
def MP_philox_hi1 : MicroProgram<"philox_hi1", ["c"], [(imulhu:$y $c, 0xcd9e8d57)], "y",
                                 "Philox: the high word of 0xcd9e8d57 * c.">;
// Round r's key words: the seed's words plus r times the Weyl increments
// (kPhiloxW0, kPhiloxW1), modulo 2^32; round 0 takes the seed itself.
foreach r = 1...9 in {
  def MP_philox_key0_ # r : MicroProgram<"philox_key0_" # r, ["k"],
      [(iadd:$y $k, !and(!mul(r, 0x9e3779b9), 0xffffffff))], "y",
      "Philox: round " # r # "'s first key word from the seed's low word.">;
  def MP_philox_key1_ # r : MicroProgram<"philox_key1_" # r, ["k"],
      [(iadd:$y $k, !and(!mul(r, 0xbb67ae85), 0xffffffff))], "y",
      "Philox: round " # r # "'s second key word from the seed's high word.">;
}
// The element's block (i / 4) and its word within it (bits 0 and 1 of i,
// at the sign for sign_fill's masks).
def MP_philox_block : MicroProgram<"philox_block", ["i"], [(ishr:$y $i, 2)], "y",
                                   "i / 4, unsigned: the element's Philox block.">;
def MP_philox_bit0 : MicroProgram<"philox_bit0", ["i"], [(ishl:$y $i, 31)], "y",
                                  "Bit 0 of i at the sign.">;
def MP_philox_bit1 : MicroProgram<"philox_bit1", ["i"], [(ishl:$y $i, 30)], "y",
                                  "Bit 1 of i at the sign.">;
// The uniform's significand: the top 24 bits.
def MP_rand_top24 : MicroProgram<"rand_top24", ["x"], [(ishr:$y $x, 8)], "y",
                                 "x >> 8: the top 24 bits of a random word.">;
}
def MP_rand_unit : MicroProgram<"rand_unit", ["x"], [(fmul:$y $x, 0x33800000)], "y",
                                "x * 2^-24, exact for the integers below 2^24.">;

// One round on the counter words (c0, T1, T2, T3) with round key r: the new
// words are (s, T1, T2, T3), s the register c0 is not in. Round 0's counter
// has c2 = c3 = 0 (so hi(M1 c2) = lo(M1 c2) = 0) and its key is K0, K1 (the
// seed); later rounds add r times the increments to the seed in T1 and T3
// after their old words are spent.
class PhiloxRoundSteps<string c0, string s, int r> {
  list<Step> Steps = !if(!eq(r, 0),
      [Run<"ixor", "T1", "K0", s>, Run<"philox_lo1", "ZERO", "", "T1">,
       Run<"philox_hi0", c0, "", "T2">, Run<"ixor", "T2", "K1", "T2">,
       Run<"philox_lo0", c0, "", "T3">],
      // c0' = hi(M1 c2) ^ c1 ^ k0; c1' = lo(M1 c2).
      [Run<"philox_hi1", "T2", "", s>, Run<"ixor", s, "T1", s>,
       Run<"philox_key0_" # r, "K0", "", "T1">, Run<"ixor", s, "T1", s>,
       Run<"philox_lo1", "T2", "", "T1">,
       // c2' = hi(M0 c0) ^ c3 ^ k1; c3' = lo(M0 c0).
       Run<"philox_hi0", c0, "", "T2">, Run<"ixor", "T2", "T3", "T2">,
       Run<"philox_key1_" # r, "K1", "", "T3">, Run<"ixor", "T2", "T3", "T2">,
       Run<"philox_lo0", c0, "", "T3">]);
}

// The block of an element in T0..T3: K0, K1 the seed's words, K2 the
// offset; COL is i.
defvar PhiloxBlockSteps = !listconcat(
    // The counter: offset + i / 4 in T0 (low word) and T1 (the carry); its
    // high words are zero (round 0 knows).
    [Run<"philox_block", "COL", "", "T0">, Run<"iadd", "T0", "K2", "T0">,
     Run<"iltu", "T0", "K2", "T1">, Run<"isub", "ZERO", "T1", "T1">],
    // Ten rounds; c0 alternates between T0 and OB0 and ends in T0.
    !foldl([]<Step>, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], acc, r,
           !listconcat(acc, PhiloxRoundSteps<!if(!eq(!and(r, 1), 0), "T0", "OB0"),
                                             !if(!eq(!and(r, 1), 0), "OB0", "T0"), r>.Steps)));

// The element steps of rand for a lane form.
class RandSteps<string form> {
  // Word i mod 4 of (T0, T1, T2, T3): bit 0 of i picks within the pairs,
  // bit 1 between them, each pick y ^ ((x ^ y) & m).
  list<Step> Pick = [Run<"philox_bit0", "COL", "", "OB0">, Run<"sign_fill", "OB0", "", "OB0">,
                     Run<"ixor", "T1", "T0", "T1">, Run<"iand", "T1", "OB0", "T1">,
                     Run<"ixor", "T0", "T1", "T0">,
                     Run<"ixor", "T3", "T2", "T3">, Run<"iand", "T3", "OB0", "T3">,
                     Run<"ixor", "T2", "T3", "T2">,
                     Run<"philox_bit1", "COL", "", "T1">, Run<"sign_fill", "T1", "", "T1">,
                     Run<"ixor", "T2", "T0", "T2">, Run<"iand", "T2", "T1", "T2">];
  // i32: the word; f32: its top 24 bits times 2^-24.
  list<Step> Out = !if(!eq(form, "I"), [Run<"ixor", "T0", "T2", "OB0">],
                       [Run<"ixor", "T0", "T2", "T0">, Run<"rand_top24", "T0", "", "T0">,
                        Run<"l2f", "T0", "ZERO", "T0">, Run<"rand_unit", "T0", "", "OB0">]);
  list<Step> Steps = !listconcat(PhiloxBlockSteps, Pick, Out);
}

class RandRecipe<string type>
    : VectorRecipe<[When<"dtype", DTypeValue<type>.Value>], "", "n",
                   [Stream<"OB0", "dst", 1, 0, "dtype">],
                   [Pass<[], ["OB0"], RandSteps<LaneForm<type>.Form>.Steps>]> {
  let Scalars = ["seed_lo", "seed_hi", "offset"];
}

def RAND : Instruction<"rand", 0xd0, "rng",
    [AddrOp<"dst", S_Dst, "result, of type dtype">, DimOp<"n", S_P0, "number of elements">,
     Operand<"seed_lo", K_Bits32, S_P1, "the seed's low 32 bits (Philox key word 0)">,
     Operand<"seed_hi", K_Bits32, S_P2, "the seed's high 32 bits (Philox key word 1)">,
     Operand<"offset", K_Bits32, S_P3, "the first element's Philox block (a u32 counter)">,
     DTypeOf<RandTypes>],
    "$dst, $n, $seed_lo, $seed_hi, $offset", Cost<E_Vector, 4, 1>,
    "Uniform random numbers: Philox4x32-10 (torch.rand, dropout masks).">  {
  let Semantics = "w(i) = word i mod 4 of Philox4x32-10 with the 128-bit counter (offset + "
                  "floor(i / 4), 0) -- the 64-bit sum in words 0 (low) and 1, words 2 and 3 "
                  "zero -- and the key (seed_lo, seed_hi), for i < n (docs/arith.md §3.5). "
                  "i32: dst[i] = w(i), its 32 bits. f32: dst[i] = (w(i) >> 8) * 2^-24, a "
                  "uniform in [0, 1) from the top 24 bits, exact. The same seed and offset give "
                  "the same bits; a packet of n elements at offset o followed by one at o + n / "
                  "4 (n a multiple of 4) continues the stream.";
  let Memory = [MemOperand<"dst", "w", Product<["n"], 1, "dtype">>];
  let Recipes = !foreach(type, RandTypes, RandRecipe<type>);
}

//===----------------------------------------------------------------------===//
// randn: Box-Muller on a pair of words of the element's block
//===----------------------------------------------------------------------===//

// The types randn writes.
defvar RandnTypes = ["f32"];

// u1 = 1 - k 2^-24 in (0, 1] (log never sees 0), -2 log(u1), and the angle
// k binary32(2 pi 2^-24) in [0, 2 pi): one primitive each.
def MP_randn_u1 : MicroProgram<"randn_u1", ["k"], [(ffma:$y $k, 0xb3800000, 0x3f800000)], "y",
                               "1 - k * 2^-24, exact for the integers k below 2^24.">;
def MP_randn_m2 : MicroProgram<"randn_m2", ["x"], [(fmul:$y $x, 0xc0000000)], "y", "-2 x.">;
def MP_randn_angle : MicroProgram<"randn_angle", ["k"], [(fmul:$y $k, 0x34c90fdb)], "y",
                                  "k * 0x34c90fdb (2 pi 2^-24 rounded to binary32).">;

// Element i of block b takes the pair of words 2j, 2j + 1 with j = bit 1 of
// i: u1 from the first, the angle from the second; r cos(angle) for an
// even i, r sin(angle) for an odd one (the pair's two normals).
defvar RandnSteps = !listconcat(PhiloxBlockSteps,
    // The pair: words 2 and 3 where bit 1 of i is set, into T0, T1.
    [Run<"philox_bit1", "COL", "", "OB0">, Run<"sign_fill", "OB0", "", "OB0">,
     Run<"ixor", "T2", "T0", "T2">, Run<"iand", "T2", "OB0", "T2">, Run<"ixor", "T0", "T2", "T0">,
     Run<"ixor", "T3", "T1", "T3">, Run<"iand", "T3", "OB0", "T3">, Run<"ixor", "T1", "T3", "T1">],
    // r = sqrt(-2 log(u1)).
    [Run<"rand_top24", "T0", "", "T0">, Run<"l2f", "T0", "ZERO", "T0">,
     Run<"randn_u1", "T0", "", "T0">, Run<"log", "T0", "", "T0">, Run<"randn_m2", "T0", "", "T0">,
     Run<"sqrt", "T0", "", "T0">],
    // cos and sin of the angle; bit 0 of i picks.
    [Run<"rand_top24", "T1", "", "T1">, Run<"l2f", "T1", "ZERO", "T1">,
     Run<"randn_angle", "T1", "", "T1">, Run<"cos", "T1", "", "T2">, Run<"sin", "T1", "", "T3">,
     Run<"philox_bit0", "COL", "", "OB0">, Run<"sign_fill", "OB0", "", "OB0">,
     Run<"ixor", "T3", "T2", "T3">, Run<"iand", "T3", "OB0", "T3">, Run<"ixor", "T2", "T3", "T2">,
     Run<"mul", "T0", "T2", "OB0">]);

class RandnRecipe<string type>
    : VectorRecipe<[When<"dtype", DTypeValue<type>.Value>], "", "n",
                   [Stream<"OB0", "dst", 1, 0, "dtype">], [Pass<[], ["OB0"], RandnSteps>]> {
  let Scalars = ["seed_lo", "seed_hi", "offset"];
}

def RANDN : Instruction<"randn", 0xd1, "rng",
    [AddrOp<"dst", S_Dst, "result, of type dtype">, DimOp<"n", S_P0, "number of elements">,
     Operand<"seed_lo", K_Bits32, S_P1, "the seed's low 32 bits (Philox key word 0)">,
     Operand<"seed_hi", K_Bits32, S_P2, "the seed's high 32 bits (Philox key word 1)">,
     Operand<"offset", K_Bits32, S_P3, "the first element's Philox block (a u32 counter)">,
     DTypeOf<RandnTypes>],
    "$dst, $n, $seed_lo, $seed_hi, $offset", Cost<E_Vector, 4, 1>,
    "Standard normal random numbers: Box-Muller on Philox4x32-10 (torch.randn).">  {
  let Semantics = "w0..w3 = the Philox4x32-10 block of element i, as RAND's (counter offset + "
                  "floor(i / 4), key (seed_lo, seed_hi)); j = bit 1 of i; u1 = 1 - (w(2j) >> 8) "
                  "* 2^-24 in (0, 1], exact; a = (w(2j+1) >> 8) * binary32(2 pi 2^-24), one "
                  "rounding; r = sqrt(-2 log(u1)); dst[i] = r * cos(a) for an even i, r * sin(a) "
                  "for an odd one, each of log, sqrt, cos, sin the lanes' micro-program and each "
                  "product rounded (docs/arith.md §3.5). Reproducible from (seed, offset) as RAND.";
  let Memory = [MemOperand<"dst", "w", Product<["n"], 1, "dtype">>];
  let Recipes = !foreach(type, RandnTypes, RandnRecipe<type>);
}
