//===- rng.td - Counter-based random numbers: rand -------------------------===//
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

// One round on the counter words (c0, T1, c2, c3) with round key r: the new
// words are (s, T1, T2, T3), s the register c0 is not in. Round 0 reads c2
// and c3 as ZERO (the counter's high words) and the key from K0, K1 (the
// seed); later rounds add r times the increments to them in T1 and T3
// after their old words are spent.
class PhiloxRoundSteps<string c0, string c2, string c3, string s, int r> {
  list<Step> Key0 = !if(!eq(r, 0), [Run<"ixor", s, "K0", s>],
                        [Run<"philox_key0_" # r, "K0", "", "T1">, Run<"ixor", s, "T1", s>]);
  list<Step> Key1 = !if(!eq(r, 0), [Run<"ixor", "T2", "K1", "T2">],
                        [Run<"philox_key1_" # r, "K1", "", "T3">, Run<"ixor", "T2", "T3", "T2">]);
  list<Step> Steps = !listconcat(
      // c0' = hi(M1 c2) ^ c1 ^ k0; c1' = lo(M1 c2).
      [Run<"philox_hi1", c2, "", s>, Run<"ixor", s, "T1", s>], Key0,
      [Run<"philox_lo1", c2, "", "T1">],
      // c2' = hi(M0 c0) ^ c3 ^ k1; c3' = lo(M0 c0).
      [Run<"philox_hi0", c0, "", "T2">, Run<"ixor", "T2", c3, "T2">], Key1,
      [Run<"philox_lo0", c0, "", "T3">]);
}

// The element steps of rand for a lane form: K0, K1 the seed's words, K2
// the offset; COL is i.
class RandSteps<string form> {
  // The counter: offset + i / 4 in T0 (low word) and T1 (the carry), its
  // high words zero.
  list<Step> Counter = [Run<"philox_block", "COL", "", "T0">, Run<"iadd", "T0", "K2", "T0">,
                        Run<"iltu", "T0", "K2", "T1">, Run<"isub", "ZERO", "T1", "T1">];
  // Ten rounds; c0 alternates between T0 and OB0 and ends in T0.
  list<Step> Rounds = !foldl([]<Step>, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], acc, r,
      !listconcat(acc, PhiloxRoundSteps<!if(!eq(!and(r, 1), 0), "T0", "OB0"),
                                        !if(!eq(r, 0), "ZERO", "T2"),
                                        !if(!eq(r, 0), "ZERO", "T3"),
                                        !if(!eq(!and(r, 1), 0), "OB0", "T0"), r>.Steps));
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
  list<Step> Steps = !listconcat(Counter, Rounds, Pick, Out);
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
