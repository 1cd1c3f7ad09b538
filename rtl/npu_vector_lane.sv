// One lane of the vector engine: its slice of the chunk buffers (element
// g * L + lane of every stream; NS slots of the input buffers, so that the
// next chunks are read while the current one computes, and two of the output
// buffers, so that it computes while the chunk before is written), the
// 16-register file of the micro-code ROM,
// four temporaries, the reduction accumulator and the primitive unit. The
// engine (npu_vector) broadcasts the step and the ROM word to every lane;
// the lane picks its operands and stores the results.
//
// Step sources and destinations: 0..3 the input streams' chunk word of the
// current group, 4..6 the output streams', 8..11 the temporaries; a scalar
// source arrives as its value (src0_scalar, scalar0). The unit's modes:
// a ROM word (registers and constants; the first word reads the step's
// inputs directly and loads them, canonicalised unless the program takes
// integer lane forms (raw_inputs), into registers 0 and 1; the
// last word writes the program's result register to the step's
// destination), an accumulation (accumulator ⊕ source 0), a level of the
// reduction tree (two accumulators from the engine).
module npu_vector_lane #(
  parameter int unsigned G = 8,       // element groups per chunk
  parameter int unsigned NS = 3,      // input buffer slots
  parameter int unsigned P = 4        // buffer words a memory beat moves at once
) (
  input  logic        clk,

  // chunk buffers: up to P words of a memory beat (in lane form) on each
  // side per cycle, word p into input stream ib_stream's p-th field of slot
  // ib_slot. Word p's fields are at [2p +: 2] (stream), [GB p +: GB] (group)
  // and [32p +: 32] (data): flat vectors, as Yosys 0.23 reads no array ports.
  input  logic [P-1:0] ib_write,
  input  logic [$clog2(NS)-1:0] ib_slot,
  input  logic [2*P-1:0] ib_stream,
  input  logic [$clog2(G)*P-1:0] ib_group,
  input  logic [32*P-1:0] ib_data,
  input  logic        ob_slot,
  input  logic [2*P-1:0] ob_stream,
  input  logic [$clog2(G)*P-1:0] ob_group,
  output logic [32*P-1:0] ob_data,

  // the step
  input  logic [$clog2(NS)-1:0] slot, // of the chunk computing: its inputs
  input  logic        oslot,          // and its outputs
  input  logic [3:0]  ib_zero,        // input streams that read +0 (an accumulator's first row)
  input  logic [$clog2(G)-1:0] group,
  input  logic [4:0]  src0,
  input  logic [4:0]  src1,
  input  logic        src0_scalar,
  input  logic        src1_scalar,
  input  logic [31:0] scalar0,
  input  logic [31:0] scalar1,
  input  logic [4:0]  dst,
  input  logic        mask_write,     // dst = masked ? -inf : source 0
  input  logic        masked,
  input  logic        acc_init,
  input  logic [31:0] acc_init_value,

  // the unit
  input  logic        alu_enable,
  input  logic [1:0]  alu_mode,
  input  logic [npu_microcode_pkg::MC_PRIM_BITS-1:0] prim,
  input  logic [npu_microcode_pkg::MC_SRC_BITS-1:0] word_src0,
  input  logic [npu_microcode_pkg::MC_SRC_BITS-1:0] word_src1,
  input  logic [npu_microcode_pkg::MC_SRC_BITS-1:0] word_src2,
  input  logic [31:0] word_const0,
  input  logic [31:0] word_const1,
  input  logic [31:0] word_const2,
  input  logic [npu_microcode_pkg::MC_REG_BITS-1:0] word_dst,
  input  logic        first_word,
  input  logic        raw_inputs,     // the program's inputs are integers: load them as bits
  input  logic        last_word,
  input  logic [npu_microcode_pkg::MC_REG_BITS-1:0] result_reg,
  input  logic        element_valid,  // accumulate: the lane holds an element
  input  logic [31:0] tree_a,
  input  logic [31:0] tree_b,
  input  logic        tree_keep,      // tree: the lane keeps the level's result

  output logic [31:0] acc,
  output logic [31:0] alu_result,     // the unit's output this cycle
  output logic [31:0] step_result     // the program's result (last word)
);

  localparam int unsigned RB = npu_microcode_pkg::MC_REG_BITS;
  localparam int unsigned SB = npu_microcode_pkg::MC_SRC_BITS;
  localparam int unsigned GB = $clog2(G);

  logic [31:0] ib [NS][4][G];
  logic [31:0] ob [2][3][G];
  logic [31:0] rf [npu_microcode_pkg::MC_NUM_REGISTERS];
  logic [31:0] tmp [4];

  function automatic logic [31:0] element(input logic [4:0] sel);
    if (sel <= 5'd3) element = ib_zero[sel[1:0]] ? 32'd0 : ib[slot][sel[1:0]][group];
    else if (sel <= 5'd6) element = ob[oslot][2'(sel - 5'd4)][group];
    else element = tmp[sel[1:0]];
  endfunction

  logic [31:0] val0, val1;
  assign val0 = src0_scalar ? scalar0 : element(src0);
  assign val1 = src1_scalar ? scalar1 : element(src1);
  for (genvar p = 0; p < P; p++) begin : g_ob_data
    assign ob_data[32*p +: 32] = ob[ob_slot][ob_stream[2*p +: 2]][ob_group[GB*p +: GB]];
  end

  // The inputs as the program's registers 0 and 1 hold them: binary32
  // canonicalised (docs/arith.md §1.1), integer lane forms as they are.
  logic [31:0] in0, in1;
  assign in0 = raw_inputs ? val0 : npu_fp_pkg::fp_canonical(val0);
  assign in1 = raw_inputs ? val1 : npu_fp_pkg::fp_canonical(val1);

  // Register r as the running word sees it: the loaded inputs during the
  // first word.
  function automatic logic [31:0] reg_value(input logic [RB-1:0] r);
    if (first_word && r == RB'(0)) reg_value = in0;
    else if (first_word && r == RB'(1)) reg_value = in1;
    else reg_value = rf[r];
  endfunction
  function automatic logic [31:0] word_operand(input logic [SB-1:0] s, input logic [31:0] c);
    word_operand = s[SB-1] ? c : reg_value(s[RB-1:0]);
  endfunction

  logic [31:0] alu_a, alu_b, alu_c;
  always_comb begin
    unique case (alu_mode)
      npu_pkg::LANE_REDUCE: begin alu_a = acc; alu_b = val0; alu_c = 32'd0; end
      npu_pkg::LANE_TREE: begin alu_a = tree_a; alu_b = tree_b; alu_c = 32'd0; end
      default: begin
        alu_a = word_operand(word_src0, word_const0);
        alu_b = word_operand(word_src1, word_const1);
        alu_c = word_operand(word_src2, word_const2);
      end
    endcase
  end

  npu_fp_alu u_alu (.enable(alu_enable), .prim, .src0(alu_a), .src1(alu_b), .src2(alu_c),
                    .result(alu_result));

  assign step_result = word_dst == result_reg ? alu_result : reg_value(result_reg);

  always_ff @(posedge clk) begin
    for (int p = 0; p < P; p++)
      if (ib_write[p]) ib[ib_slot][ib_stream[2*p +: 2]][ib_group[GB*p +: GB]] <= ib_data[32*p +: 32];
    if (mask_write) tmp[dst[1:0]] <= masked ? 32'hff80_0000 : val0;
    if (acc_init) acc <= acc_init_value;
    if (alu_enable) begin
      unique case (alu_mode)
        npu_pkg::LANE_REDUCE: if (element_valid) acc <= alu_result;
        npu_pkg::LANE_TREE: if (tree_keep) acc <= alu_result;
        default: begin
          // The inputs stay in registers 0 and 1 for the later words; the
          // word's own result takes precedence.
          if (first_word) begin
            rf[0] <= in0;
            rf[1] <= in1;
          end
          rf[word_dst] <= alu_result;
          if (last_word && !dst[4]) begin
            if (dst[3]) tmp[dst[1:0]] <= step_result;
            else ob[oslot][2'(dst - 5'd4)][group] <= step_result;
          end
        end
      endcase
    end
  end

endmodule
