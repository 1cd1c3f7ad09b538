// The vector engine: L = HW_VECTOR_LANES lanes, each a micro-sequenced
// primitive unit (npu_fp_alu) with the 16-register file of the micro-code
// ROM (npu_microcode_pkg), four temporaries and a reduction accumulator.
// It runs every elementwise, unary, reduction, fused, backward, optimizer
// and scatter instruction.
//
// An instruction is a recipe (the functions recipe_step/recipe_pass below)
// over rows of `cols` elements:
//   * once per packet: scalar loads (a broadcast b[0], the AdamW
//     hyper-parameter block) and scalar steps (1/cols, AdamW constants);
//   * per row: scalar loads (b[i], rstd[i], an EMBEDDING_BWD index), then
//     one to three passes over the row, then scalar stores (row results,
//     rstd[i]);
//   * a pass walks the row in chunks of CH elements: it reads the chunk of
//     each of its input streams into the lanes' buffers, runs its steps on
//     every group of L elements (element j in lane j mod L), then writes its
//     output streams. A pass may reduce one value per element into the lane
//     accumulators; at its end they combine by the pairwise tree into a
//     scalar register, and the pass's scalar steps run.
// A step runs a micro-program of the ROM (inputs loaded canonicalised into
// registers 0 and 1, the ROM words in order, the result register written
// back), applies the causal mask, or accumulates. Scalar steps run the
// same way on broadcast scalar values and keep lane 0's result.
//
// The command processor checked every operand's range and the overlap
// rules before the start; an EMBEDDING_BWD index out of range faults here.
//
// The recipes reproduce the ISS's operation order exactly (simulator/lib/
// ops/*.cpp): each of its `map(Program, ...)` calls is one step, each
// laneSum/laneMax a reduction, each `scalar(...)` a scalar step.
// Accumulating outputs (COL_SUM, the RMSNORM_BWD weight gradient) are kept
// in memory: their stream reads +0 on the first row and the running value
// after it.
module npu_vector (
  input  logic        clk,
  input  logic        rst_n,
  input  logic        soft_reset,

  input  logic        start,
  input  logic [npu_isa_pkg::PACKET_BITS-1:0] packet,
  output logic        done,
  output logic        fault,
  output logic [3:0]  fault_code,
  output logic [63:0] fault_addr,
  output logic [7:0]  fault_operand,
  output logic [63:0] fault_length,
  output logic [4:0]  dbg_state,

  output logic        mem_req_valid,
  output logic        mem_req_write,
  output logic [63:0] mem_req_addr,
  output logic [31:0] mem_req_bytes,
  input  logic        mem_req_ready,
  input  logic        mem_rd_valid,
  input  logic [63:0] mem_rd_addr,
  input  logic [8*npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] mem_rd_data,
  input  logic [npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] mem_rd_strb,
  input  logic [63:0] mem_wr_addr,
  output logic [8*npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] mem_wr_data,
  input  logic        mem_done,
  input  logic        mem_error,
  input  logic [3:0]  mem_error_code,
  input  logic [63:0] mem_error_addr
);

  localparam int unsigned L = npu_isa_pkg::HW_VECTOR_LANES;
  localparam int unsigned G = 8;                 // element groups per chunk
  localparam int unsigned CH = L * G;            // elements per chunk
  localparam int unsigned LB = $clog2(L);
  localparam int unsigned GB = $clog2(G);
  localparam int unsigned EB = $clog2(CH);
  localparam int unsigned WORDS = npu_isa_pkg::HW_AXI_DATA_BYTES / 4;
  localparam int unsigned RB = npu_microcode_pkg::MC_REG_BITS;
  localparam int unsigned PB = npu_microcode_pkg::MC_PROG_BITS;

  // ---- recipe encoding --------------------------------------------------------------
  // Value sources and destinations of a step.
  localparam logic [4:0] SRC_IB0 = 5'd0;    // input streams IB0..IB3: 0..3
  localparam logic [4:0] SRC_IB1 = 5'd1;
  localparam logic [4:0] SRC_IB2 = 5'd2;
  localparam logic [4:0] SRC_IB3 = 5'd3;
  localparam logic [4:0] SRC_OB0 = 5'd4;    // output streams OB0..OB2: 4..6
  localparam logic [4:0] SRC_OB1 = 5'd5;
  localparam logic [4:0] SRC_OB2 = 5'd6;
  localparam logic [4:0] SRC_ZERO = 5'd7;   // +0
  localparam logic [4:0] SRC_T0 = 5'd8;     // lane temporaries T0..T3: 8..11
  localparam logic [4:0] SRC_T1 = 5'd9;
  localparam logic [4:0] SRC_T2 = 5'd10;
  localparam logic [4:0] SRC_ONE = 5'd12;   // 1.0
  localparam logic [4:0] SRC_COLS = 5'd13;  // cols as binary32
  localparam logic [4:0] SRC_K0 = 5'd16;    // scalar registers K0..K15: 16..31
  localparam logic [4:0] SRC_K1 = 5'd17;
  localparam logic [4:0] SRC_K2 = 5'd18;
  localparam logic [4:0] SRC_K3 = 5'd19;
  localparam logic [4:0] SRC_K4 = 5'd20;
  localparam logic [4:0] SRC_K5 = 5'd21;
  localparam logic [4:0] SRC_K6 = 5'd22;
  localparam logic [4:0] SRC_K8 = 5'd24;
  localparam logic [4:0] SRC_K9 = 5'd25;
  localparam logic [4:0] SRC_K10 = 5'd26;
  localparam logic [4:0] SRC_K11 = 5'd27;

  // Step kinds; a step word is {kind, prog, src0, src1, dst}.
  localparam logic [1:0] STEP_END = 2'd0;
  localparam logic [1:0] STEP_RUN = 2'd1;      // dst = prog(src0, src1)
  localparam logic [1:0] STEP_MASK = 2'd2;     // dst = column beyond the causal limit ? -inf : src0
  localparam logic [1:0] STEP_REDUCE = 2'd3;   // accumulator = fadd/fmax(accumulator, src0)
  localparam int unsigned STEP_BITS = 2 + PB + 15;

  // Reductions of a pass.
  localparam logic [1:0] RED_NONE = 2'd0;
  localparam logic [1:0] RED_SUM = 2'd1;
  localparam logic [1:0] RED_MAX = 2'd2;

  // Recipe sections: scalar steps once per packet, the element steps of
  // passes 0..2, and the scalar steps after each pass.
  localparam logic [2:0] SEC_PRE = 3'd0;
  localparam logic [2:0] SEC_PASS0 = 3'd1;
  localparam logic [2:0] SEC_POST0 = 3'd4;

  function automatic logic [STEP_BITS-1:0] st(input logic [1:0] kind, input logic [PB-1:0] prog,
                                               input logic [4:0] s0, input logic [4:0] s1,
                                               input logic [4:0] dst);
    st = {kind, prog, s0, s1, dst};
  endfunction
  function automatic logic [STEP_BITS-1:0] run(input logic [PB-1:0] prog, input logic [4:0] s0,
                                                input logic [4:0] s1, input logic [4:0] dst);
    run = st(STEP_RUN, prog, s0, s1, dst);
  endfunction

  // ---- packet fields -------------------------------------------------------------------
  logic [31:0] opcode;
  assign opcode = packet[31:0];
  logic [63:0] f_dst, f_src0, f_src1, f_p01, f_p23, f_p45;
  logic [31:0] f_p0, f_p1, f_p2, f_p3, f_p4, f_p6, f_p7;
  assign f_dst = packet[npu_isa_pkg::PF_DST_LSB +: 64];
  assign f_src0 = packet[npu_isa_pkg::PF_SRC0_LSB +: 64];
  assign f_src1 = packet[npu_isa_pkg::PF_SRC1_LSB +: 64];
  assign f_p0 = packet[npu_isa_pkg::PF_PARAM0_LSB +: 32];
  assign f_p1 = packet[npu_isa_pkg::PF_PARAM1_LSB +: 32];
  assign f_p2 = packet[npu_isa_pkg::PF_PARAM2_LSB +: 32];
  assign f_p3 = packet[npu_isa_pkg::PF_PARAM3_LSB +: 32];
  assign f_p4 = packet[npu_isa_pkg::PF_PARAM4_LSB +: 32];
  assign f_p6 = packet[npu_isa_pkg::PF_PARAM6_LSB +: 32];
  assign f_p7 = packet[npu_isa_pkg::PF_PARAM7_LSB +: 32];
  assign f_p01 = packet[npu_isa_pkg::PF_PARAM0_LSB +: 64];
  assign f_p23 = packet[npu_isa_pkg::PF_PARAM2_LSB +: 64];
  assign f_p45 = packet[npu_isa_pkg::PF_PARAM4_LSB +: 64];

  // Modifier bits (the flag slots of npu_isa_pkg).
  logic [1:0] bcast;
  logic causal, log_form, use_weight, write_extra, index_i64;
  assign bcast = packet[npu_isa_pkg::ADD_BCAST_LSB +: 2];
  assign causal = packet[npu_isa_pkg::SOFTMAX_CAUSAL_LSB];
  assign log_form = packet[npu_isa_pkg::SOFTMAX_LOG_LSB];
  assign use_weight = packet[npu_isa_pkg::RMSNORM_USE_WEIGHT_LSB];
  assign write_extra = packet[npu_isa_pkg::RMSNORM_WRITE_RSTD_LSB];   // write_rstd / write_dweight
  assign index_i64 = packet[npu_isa_pkg::EMBEDDING_BWD_ITYPE_LSB];

  // Instruction classes.
  logic is_binary, is_scalar_form, is_row_reduce, is_embedding_bwd;
  always_comb begin
    is_binary = opcode >= npu_isa_pkg::OP_ADD && opcode <= npu_isa_pkg::OP_MIN;
    is_scalar_form = opcode >= npu_isa_pkg::OP_ADDS && opcode <= npu_isa_pkg::OP_RDIVS;
    is_row_reduce = opcode == npu_isa_pkg::OP_ROW_SUM || opcode == npu_isa_pkg::OP_ROW_MAX ||
                    opcode == npu_isa_pkg::OP_ROW_MEAN;
    is_embedding_bwd = opcode == npu_isa_pkg::OP_EMBEDDING_BWD;
  end

  // The program of a binary or scalar-form instruction.
  function automatic logic [PB-1:0] arith_prog(input logic [31:0] op);
    unique case (op)
      npu_isa_pkg::OP_ADD, npu_isa_pkg::OP_ADDS: arith_prog = npu_microcode_pkg::MC_PROG_ADD;
      npu_isa_pkg::OP_SUB, npu_isa_pkg::OP_SUBS, npu_isa_pkg::OP_RSUBS:
        arith_prog = npu_microcode_pkg::MC_PROG_SUB;
      npu_isa_pkg::OP_MUL, npu_isa_pkg::OP_MULS: arith_prog = npu_microcode_pkg::MC_PROG_MUL;
      npu_isa_pkg::OP_DIV, npu_isa_pkg::OP_DIVS, npu_isa_pkg::OP_RDIVS:
        arith_prog = npu_microcode_pkg::MC_PROG_DIV;
      npu_isa_pkg::OP_MAX, npu_isa_pkg::OP_MAXS: arith_prog = npu_microcode_pkg::MC_PROG_MAX;
      default: arith_prog = npu_microcode_pkg::MC_PROG_MIN;
    endcase
  endfunction

  // ADD and SUB scale b by alpha first unless alpha is exactly 1.0 (the ISS
  // compares floats: only the pattern 0x3f800000 equals 1.0).
  logic alpha_scales;
  assign alpha_scales = (opcode == npu_isa_pkg::OP_ADD || opcode == npu_isa_pkg::OP_SUB) &&
                        f_p2 != 32'h3f80_0000;
  // b is an element stream (no broadcast, row broadcast) or a scalar in K1.
  logic b_scalar;
  assign b_scalar = bcast == 2'(npu_isa_pkg::BROADCAST_COL) ||
                    bcast == 2'(npu_isa_pkg::BROADCAST_SCALAR);

  // ---- the recipes ------------------------------------------------------------------------
  // Step `idx` of `section` of the current instruction.
  function automatic logic [STEP_BITS-1:0] recipe_step(input logic [2:0] section,
                                                        input logic [3:0] idx);
    logic [4:0] b_src;
    logic [4:0] g;             // RMSNORM_BWD's g: dy * weight, or dy itself
    b_src = b_scalar ? SRC_K1 : SRC_IB1;
    g = use_weight ? SRC_T1 : SRC_IB1;
    recipe_step = '0;
    if (is_binary) begin
      if (section == SEC_PASS0) begin
        if (alpha_scales) begin
          if (idx == 4'd0) recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_K0, b_src, SRC_T0);
          if (idx == 4'd1) recipe_step = run(arith_prog(opcode), SRC_IB0, SRC_T0, SRC_OB0);
        end else if (idx == 4'd0) recipe_step = run(arith_prog(opcode), SRC_IB0, b_src, SRC_OB0);
      end
    end else if (is_scalar_form) begin
      if (section == SEC_PASS0 && idx == 4'd0) begin
        if (opcode == npu_isa_pkg::OP_RSUBS || opcode == npu_isa_pkg::OP_RDIVS)
          recipe_step = run(arith_prog(opcode), SRC_K0, SRC_IB0, SRC_OB0);
        else recipe_step = run(arith_prog(opcode), SRC_IB0, SRC_K0, SRC_OB0);
      end
    end else if (npu_microcode_pkg::mc_has_program(opcode)) begin
      // Unary (POWS: x, p), SILU_BWD and GELU_BWD (x, dy).
      if (section == SEC_PASS0 && idx == 4'd0)
        recipe_step = run(npu_microcode_pkg::mc_program_of(opcode), SRC_IB0,
                          opcode == npu_isa_pkg::OP_POWS ? SRC_K0 : SRC_IB1, SRC_OB0);
    end else begin
      unique case (opcode)
        npu_isa_pkg::OP_ROW_SUM, npu_isa_pkg::OP_ROW_MAX, npu_isa_pkg::OP_ROW_MEAN: begin
          if (section == SEC_PASS0 && idx == 4'd0) recipe_step = st(STEP_REDUCE, '0, SRC_IB0, '0, '0);
          if (opcode == npu_isa_pkg::OP_ROW_MEAN && idx == 4'd0) begin
            if (section == SEC_PRE) recipe_step = run(npu_microcode_pkg::MC_PROG_RECIP, SRC_COLS, SRC_ZERO, SRC_K3);
            if (section == SEC_POST0) recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_K2, SRC_K3, SRC_K2);
          end
        end
        npu_isa_pkg::OP_COL_SUM:
          if (section == SEC_PASS0 && idx == 4'd0)
            recipe_step = run(npu_microcode_pkg::MC_PROG_ADD, SRC_IB1, SRC_IB0, SRC_OB0);
        npu_isa_pkg::OP_SOFTMAX: begin
          // Every pass recomputes z = scale * x (masked); pass 0: m = max z;
          // pass 1: s = sum exp(z - m); pass 2: exp(z - m) * (1/s), or
          // (z - m) - log(s). Without the causal mask its step is left out.
          logic [3:0] k;
          k = !causal && idx != 4'd0 ? idx + 4'd1 : idx;
          if (section >= SEC_PASS0 && section <= SEC_PASS0 + 3'd2) begin
            unique case (k)
              4'd0: recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_IB0, SRC_K0, SRC_T0);
              4'd1: recipe_step = st(STEP_MASK, '0, SRC_T0, '0, SRC_T0);
              4'd2: recipe_step = section == SEC_PASS0
                                  ? st(STEP_REDUCE, '0, SRC_T0, '0, '0)
                                  : run(npu_microcode_pkg::MC_PROG_SUB, SRC_T0, SRC_K1, SRC_T0);
              4'd3:
                if (section == SEC_PASS0 + 3'd2 && log_form)
                  recipe_step = run(npu_microcode_pkg::MC_PROG_SUB, SRC_T0, SRC_K3, SRC_OB0);
                else if (section != SEC_PASS0)
                  recipe_step = run(npu_microcode_pkg::MC_PROG_EXP, SRC_T0, SRC_ZERO, SRC_T1);
              4'd4:
                if (section == SEC_PASS0 + 3'd1) recipe_step = st(STEP_REDUCE, '0, SRC_T1, '0, '0);
                else if (section == SEC_PASS0 + 3'd2 && !log_form)
                  recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_T1, SRC_K3, SRC_OB0);
              default: ;
            endcase
          end
          if (section == SEC_POST0 + 3'd1 && idx == 4'd0)
            recipe_step = run(log_form ? npu_microcode_pkg::MC_PROG_LOG : npu_microcode_pkg::MC_PROG_RECIP,
                              SRC_K2, SRC_ZERO, SRC_K3);
        end
        npu_isa_pkg::OP_RMSNORM: begin
          unique case ({section, idx})
            {SEC_PRE, 4'd0}: recipe_step = run(npu_microcode_pkg::MC_PROG_RECIP, SRC_COLS, SRC_ZERO, SRC_K3);
            {SEC_PASS0, 4'd0}: recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_IB0, SRC_IB0, SRC_T0);
            {SEC_PASS0, 4'd1}: recipe_step = st(STEP_REDUCE, '0, SRC_T0, '0, '0);
            {SEC_POST0, 4'd0}: recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_K1, SRC_K3, SRC_K1);
            {SEC_POST0, 4'd1}: recipe_step = run(npu_microcode_pkg::MC_PROG_ADD, SRC_K1, SRC_K0, SRC_K1);
            {SEC_POST0, 4'd2}: recipe_step = run(npu_microcode_pkg::MC_PROG_RSQRT, SRC_K1, SRC_ZERO, SRC_K2);
            {SEC_PASS0 + 3'd1, 4'd0}:
              recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_IB0, SRC_K2, use_weight ? SRC_T0 : SRC_OB0);
            {SEC_PASS0 + 3'd1, 4'd1}:
              if (use_weight) recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_T0, SRC_IB1, SRC_OB0);
            default: ;
          endcase
        end
        npu_isa_pkg::OP_SOFTMAX_BWD: begin
          unique case ({section, idx})
            {SEC_PASS0, 4'd0}: recipe_step = log_form ? st(STEP_REDUCE, '0, SRC_IB1, '0, '0)
                                                      : run(npu_microcode_pkg::MC_PROG_MUL, SRC_IB1, SRC_IB0, SRC_T0);
            {SEC_PASS0, 4'd1}: if (!log_form) recipe_step = st(STEP_REDUCE, '0, SRC_T0, '0, '0);
            {SEC_PASS0 + 3'd1, 4'd0}:
              recipe_step = log_form ? run(npu_microcode_pkg::MC_PROG_EXP, SRC_IB0, SRC_ZERO, SRC_T0)
                                     : run(npu_microcode_pkg::MC_PROG_SUB, SRC_IB1, SRC_K1, SRC_T0);
            {SEC_PASS0 + 3'd1, 4'd1}:
              recipe_step = log_form ? run(npu_microcode_pkg::MC_PROG_MUL, SRC_T0, SRC_K1, SRC_T0)
                                     : run(npu_microcode_pkg::MC_PROG_MUL, SRC_IB0, SRC_T0, SRC_OB0);
            {SEC_PASS0 + 3'd1, 4'd2}:
              if (log_form) recipe_step = run(npu_microcode_pkg::MC_PROG_SUB, SRC_IB1, SRC_T0, SRC_OB0);
            default: ;
          endcase
        end
        npu_isa_pkg::OP_RMSNORM_BWD: begin
          // Pass 0: the weight gradient (into memory), g and t = sum(g * x);
          // pass 1: dx = r * (g - x * c).
          unique case (section)
            SEC_PRE: if (idx == 4'd0) recipe_step = run(npu_microcode_pkg::MC_PROG_RECIP, SRC_COLS, SRC_ZERO, SRC_K3);
            SEC_PASS0: begin
              logic [3:0] k;
              k = write_extra ? idx : idx + 4'd3;
              unique case (k)
                4'd0: recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_IB1, SRC_IB0, SRC_T0);
                4'd1: recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_T0, SRC_K2, SRC_T0);
                4'd2: recipe_step = run(npu_microcode_pkg::MC_PROG_ADD, SRC_IB3, SRC_T0, SRC_OB1);
                4'd3: recipe_step = use_weight ? run(npu_microcode_pkg::MC_PROG_MUL, SRC_IB1, SRC_IB2, SRC_T1)
                                               : run(npu_microcode_pkg::MC_PROG_MUL, g, SRC_IB0, SRC_T2);
                4'd4: recipe_step = use_weight ? run(npu_microcode_pkg::MC_PROG_MUL, g, SRC_IB0, SRC_T2)
                                               : st(STEP_REDUCE, '0, SRC_T2, '0, '0);
                4'd5: if (use_weight) recipe_step = st(STEP_REDUCE, '0, SRC_T2, '0, '0);
                default: ;
              endcase
            end
            SEC_POST0: unique case (idx)
              4'd0: recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_K1, SRC_K3, SRC_K1);
              4'd1: recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_K1, SRC_K2, SRC_K1);
              4'd2: recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_K1, SRC_K2, SRC_K1);
              default: ;
            endcase
            SEC_PASS0 + 3'd1: begin
              logic [3:0] k;
              k = use_weight ? idx : idx + 4'd1;
              unique case (k)
                4'd0: recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_IB1, SRC_IB2, SRC_T1);
                4'd1: recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_IB0, SRC_K1, SRC_T0);
                4'd2: recipe_step = run(npu_microcode_pkg::MC_PROG_SUB, g, SRC_T0, SRC_T0);
                4'd3: recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_K2, SRC_T0, SRC_OB0);
                default: ;
              endcase
            end
            default: ;
          endcase
        end
        npu_isa_pkg::OP_ADAMW: begin
          // K0..K6: lr, beta1, beta2, eps, weight_decay, bc1, sqrt(bc2);
          // K8 decay, K9 1 - beta1, K10 1 - beta2, K11 lr / bc1.
          if (section == SEC_PRE) unique case (idx)
            4'd0: recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_K0, SRC_K4, SRC_K8);
            4'd1: recipe_step = run(npu_microcode_pkg::MC_PROG_SUB, SRC_ONE, SRC_K8, SRC_K8);
            4'd2: recipe_step = run(npu_microcode_pkg::MC_PROG_SUB, SRC_ONE, SRC_K1, SRC_K9);
            4'd3: recipe_step = run(npu_microcode_pkg::MC_PROG_SUB, SRC_ONE, SRC_K2, SRC_K10);
            4'd4: recipe_step = run(npu_microcode_pkg::MC_PROG_DIV, SRC_K0, SRC_K5, SRC_K11);
            default: ;
          endcase
          // p: IB0/OB0, g: IB1, m: IB2/OB1, v: IB3/OB2.
          if (section == SEC_PASS0) unique case (idx)
            4'd0: recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_IB0, SRC_K8, SRC_T0);
            4'd1: recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_K1, SRC_IB2, SRC_T1);
            4'd2: recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_K9, SRC_IB1, SRC_T2);
            4'd3: recipe_step = run(npu_microcode_pkg::MC_PROG_ADD, SRC_T1, SRC_T2, SRC_OB1);
            4'd4: recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_K2, SRC_IB3, SRC_T1);
            4'd5: recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_K10, SRC_IB1, SRC_T2);
            4'd6: recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_T2, SRC_IB1, SRC_T2);
            4'd7: recipe_step = run(npu_microcode_pkg::MC_PROG_ADD, SRC_T1, SRC_T2, SRC_OB2);
            4'd8: recipe_step = run(npu_microcode_pkg::MC_PROG_SQRT, SRC_OB2, SRC_ZERO, SRC_T1);
            4'd9: recipe_step = run(npu_microcode_pkg::MC_PROG_DIV, SRC_T1, SRC_K6, SRC_T1);
            4'd10: recipe_step = run(npu_microcode_pkg::MC_PROG_ADD, SRC_T1, SRC_K3, SRC_T1);
            4'd11: recipe_step = run(npu_microcode_pkg::MC_PROG_DIV, SRC_OB1, SRC_T1, SRC_T1);
            4'd12: recipe_step = run(npu_microcode_pkg::MC_PROG_MUL, SRC_K11, SRC_T1, SRC_T1);
            4'd13: recipe_step = run(npu_microcode_pkg::MC_PROG_SUB, SRC_T0, SRC_T1, SRC_OB0);
            default: ;
          endcase
        end
        default: begin   // EMBEDDING_BWD: dtable row += dy row
          if (section == SEC_PASS0 && idx == 4'd0)
            recipe_step = run(npu_microcode_pkg::MC_PROG_ADD, SRC_IB0, SRC_IB1, SRC_OB0);
        end
      endcase
    end
  endfunction

  // Pass `p` of the current instruction: {valid, input streams, output
  // streams, reduction, scalar register receiving it}.
  localparam int unsigned PASS_BITS = 1 + 4 + 3 + 2 + 4;
  function automatic logic [PASS_BITS-1:0] pass(input logic [3:0] in_mask, input logic [2:0] out_mask,
                                                 input logic [1:0] reduce, input logic [3:0] kdst);
    pass = {1'b1, in_mask, out_mask, reduce, kdst};
  endfunction
  function automatic logic [PASS_BITS-1:0] recipe_pass(input logic [1:0] p);
    recipe_pass = '0;
    if (is_binary) begin
      if (p == 2'd0) recipe_pass = pass(b_scalar ? 4'b0001 : 4'b0011, 3'b001, RED_NONE, 4'd0);
    end else if (is_scalar_form || (npu_microcode_pkg::mc_has_program(opcode) &&
                                    opcode != npu_isa_pkg::OP_SILU_BWD &&
                                    opcode != npu_isa_pkg::OP_GELU_BWD)) begin
      if (p == 2'd0) recipe_pass = pass(4'b0001, 3'b001, RED_NONE, 4'd0);
    end else begin
      unique case (opcode)
        npu_isa_pkg::OP_SILU_BWD, npu_isa_pkg::OP_GELU_BWD:
          if (p == 2'd0) recipe_pass = pass(4'b0011, 3'b001, RED_NONE, 4'd0);
        npu_isa_pkg::OP_ROW_SUM, npu_isa_pkg::OP_ROW_MEAN:
          if (p == 2'd0) recipe_pass = pass(4'b0001, 3'b000, RED_SUM, 4'd2);
        npu_isa_pkg::OP_ROW_MAX:
          if (p == 2'd0) recipe_pass = pass(4'b0001, 3'b000, RED_MAX, 4'd2);
        npu_isa_pkg::OP_COL_SUM:
          if (p == 2'd0) recipe_pass = pass(4'b0011, 3'b001, RED_NONE, 4'd0);
        npu_isa_pkg::OP_SOFTMAX: unique case (p)
          2'd0: recipe_pass = pass(4'b0001, 3'b000, RED_MAX, 4'd1);
          2'd1: recipe_pass = pass(4'b0001, 3'b000, RED_SUM, 4'd2);
          2'd2: recipe_pass = pass(4'b0001, 3'b001, RED_NONE, 4'd0);
          default: ;
        endcase
        npu_isa_pkg::OP_RMSNORM: unique case (p)
          2'd0: recipe_pass = pass(4'b0001, 3'b000, RED_SUM, 4'd1);
          2'd1: recipe_pass = pass(use_weight ? 4'b0011 : 4'b0001, 3'b001, RED_NONE, 4'd0);
          default: ;
        endcase
        npu_isa_pkg::OP_SOFTMAX_BWD: unique case (p)
          2'd0: recipe_pass = pass(log_form ? 4'b0010 : 4'b0011, 3'b000, RED_SUM, 4'd1);
          2'd1: recipe_pass = pass(4'b0011, 3'b001, RED_NONE, 4'd0);
          default: ;
        endcase
        npu_isa_pkg::OP_RMSNORM_BWD: unique case (p)
          2'd0: recipe_pass = pass({write_extra, use_weight, 2'b11}, {1'b0, write_extra, 1'b0},
                                   RED_SUM, 4'd1);
          2'd1: recipe_pass = pass({1'b0, use_weight, 2'b11}, 3'b001, RED_NONE, 4'd0);
          default: ;
        endcase
        npu_isa_pkg::OP_ADAMW:
          if (p == 2'd0) recipe_pass = pass(4'b1111, 3'b111, RED_NONE, 4'd0);
        default:   // EMBEDDING_BWD
          if (p == 2'd0) recipe_pass = pass(4'b0011, 3'b001, RED_NONE, 4'd0);
      endcase
    end
  endfunction

  // ---- state ---------------------------------------------------------------------------------
  typedef enum logic [4:0] {
    S_IDLE, S_SETUP, S_START, S_PRE_LOAD_REQ, S_PRE_LOAD, S_SCALAR, S_ROW, S_ROW_LOAD_REQ, S_ROW_LOAD,
    S_INDEX_CHECK, S_PASS, S_IN_REQ, S_IN, S_STEP, S_OUT_REQ, S_OUT, S_TREE, S_ROW_STORE_REQ,
    S_ROW_STORE, S_NEXT_ROW, S_FINISH
  } state_e;
  state_e state;
  assign dbg_state = state;

  logic [31:0] rows, cols, row;
  logic [31:0] j0;                       // first element of the chunk
  logic [EB:0] chunk_len;
  logic [GB-1:0] group;
  logic [1:0]  pass_idx;
  logic [2:0]  section;                  // of the steps running
  logic [3:0]  step_idx;
  logic [PASS_BITS-1:0] cur_pass;
  logic [2:0]  stream;                   // stream being moved: 0..3 inputs, 4..6 outputs
  logic        row_skipped;              // EMBEDDING_BWD padding row

  // Per-stream row addresses and pitches; a stream that reads +0 on the
  // first row (an accumulator kept in memory).
  logic [63:0] stream_addr [7];
  logic [63:0] stream_pitch [7];
  logic [6:0]  zero_first_row;

  logic [31:0] ks [16];                  // scalar registers

  // Step execution.
  // The ROM word of the running step: its first reads the inputs straight
  // from the step's sources (and loads them into registers 0 and 1), its
  // last writes the result to the step's destination, so a step takes one
  // cycle per ROM word.
  logic [npu_microcode_pkg::MC_ADDR_BITS-1:0] word_index;
  logic first_word, last_word;
  logic [RB-1:0] result_reg;
  logic [1:0]  tree_level;

  // Scalar loads: up to 8 words into a staging area.
  logic [63:0] load_addr;
  logic [3:0]  load_words;
  logic [31:0] staged [8];
  logic [63:0] index_addr;

  logic [STEP_BITS-1:0] cur_step;
  logic [1:0]  step_kind;
  logic [PB-1:0] step_prog;
  logic [4:0]  step_s0, step_s1, step_dst;
  assign cur_step = recipe_step(section, step_idx);
  assign {step_kind, step_prog, step_s0, step_s1, step_dst} = cur_step;

  logic pass_valid;
  logic [3:0] pass_in;
  logic [2:0] pass_out;
  logic [1:0] pass_reduce;
  logic [3:0] pass_kdst;
  assign {pass_valid, pass_in, pass_out, pass_reduce, pass_kdst} = cur_pass;

  // cols as binary32 (for 1/cols), exact up to 2^24.
  logic [31:0] cols_float;
  assign cols_float = npu_fp_pkg::fp_from_integer(1'b0, cols);

  // ---- values of the sources, per lane ----------------------------------------------------
  function automatic logic [31:0] scalar_value(input logic [4:0] sel);
    unique case (sel)
      SRC_ONE: scalar_value = 32'h3f80_0000;
      SRC_COLS: scalar_value = cols_float;
      SRC_ZERO: scalar_value = 32'd0;
      default: scalar_value = ks[sel[3:0]];
    endcase
  endfunction

  function automatic logic is_scalar(input logic [4:0] sel);
    is_scalar = sel[4] || sel == SRC_ZERO || sel == SRC_ONE || sel == SRC_COLS;
  endfunction

  // Which lanes hold elements of the chunk, and the causal limit.
  logic [L-1:0] lane_valid, lane_masked;
  logic signed [64:0] causal_limit;     // last visible column: row + offset
  assign causal_limit = $signed({33'd0, row}) + 65'($signed(f_p3));
  always_comb begin
    for (int l = 0; l < L; l++) begin
      logic [EB:0] e;
      logic [32:0] column;
      e = (EB+1)'({group, LB'(l)});
      column = {1'b0, j0} + 33'(e);
      lane_valid[l] = e < chunk_len;
      lane_masked[l] = $signed({32'd0, column}) > causal_limit;
    end
  end

  // ---- the lanes' primitive units -----------------------------------------------------------
  logic [npu_microcode_pkg::MC_WORD_BITS-1:0] word;
  logic [npu_microcode_pkg::MC_PRIM_BITS-1:0] word_prim;
  logic [RB-1:0] word_dst;
  logic [npu_microcode_pkg::MC_SRC_BITS-1:0] word_src [3];
  assign word = npu_microcode_pkg::mc_rom(npu_microcode_pkg::mc_prog_start(step_prog) + word_index);
  assign first_word = word_index == '0;
  assign last_word = {1'b0, word_index} + 1'b1 == npu_microcode_pkg::mc_prog_length(step_prog);
  assign result_reg = npu_microcode_pkg::mc_prog_result(step_prog);

  assign word_prim = word[npu_microcode_pkg::MC_PRIM_LSB +: npu_microcode_pkg::MC_PRIM_BITS];
  assign word_dst = word[npu_microcode_pkg::MC_DST_LSB +: RB];
  assign word_src[0] = word[npu_microcode_pkg::MC_SRC0_LSB +: npu_microcode_pkg::MC_SRC_BITS];
  assign word_src[1] = word[npu_microcode_pkg::MC_SRC1_LSB +: npu_microcode_pkg::MC_SRC_BITS];
  assign word_src[2] = word[npu_microcode_pkg::MC_SRC2_LSB +: npu_microcode_pkg::MC_SRC_BITS];

  // A constant source is the same in every lane.
  logic [31:0] word_const [3];
  always_comb
    for (int s = 0; s < 3; s++)
      word_const[s] = npu_microcode_pkg::mc_const(word_src[s][npu_microcode_pkg::MC_CONST_BITS-1:0]);

  logic [npu_microcode_pkg::MC_PRIM_BITS-1:0] alu_prim;
  logic [1:0] alu_mode;
  always_comb begin
    alu_prim = word_prim;
    alu_mode = npu_pkg::LANE_WORD;
    if (state == S_TREE) alu_mode = npu_pkg::LANE_TREE;
    else if (step_kind == STEP_REDUCE) alu_mode = npu_pkg::LANE_REDUCE;
    if (alu_mode != npu_pkg::LANE_WORD)
      alu_prim = pass_reduce == RED_MAX ? npu_microcode_pkg::MC_FMAX : npu_microcode_pkg::MC_FADD;
  end

  // The lanes' units run in cycles that store their result: a ROM word, an
  // accumulation, a level of the reduction tree.
  logic alu_used;
  assign alu_used = ((state == S_STEP || state == S_SCALAR) &&
                     (step_kind == STEP_RUN || step_kind == STEP_REDUCE)) ||
                    state == S_TREE;

  // ---- the lanes ---------------------------------------------------------------------------------
  // Memory beats into the input buffers: word w of a beat is element
  // beat_first + w of the chunk, which lane (beat_first + w) mod L holds.
  logic [EB-1:0] beat_first;
  logic [31:0] lane_acc [L], lane_alu [L], lane_result [L], lane_ob [L];
  logic [GB-1:0] lane_ob_group [L];
  logic pass_start;                      // S_PASS starts the pass's first chunk
  assign pass_start = state == S_PASS && pass_valid && !row_skipped && j0 == '0;
  for (genvar l = 0; l < L; l++) begin : g_lane
    logic [LB-1:0] in_word, out_word;
    logic [GB-1:0] in_group;
    assign in_word = LB'(l) - beat_first[LB-1:0];
    assign in_group = GB'((beat_first + EB'(in_word)) >> LB);
    assign out_word = LB'(l) - beat_first[LB-1:0];
    assign lane_ob_group[l] = GB'((beat_first + EB'(out_word)) >> LB);
    npu_vector_lane #(.G(G)) u_lane (
      .clk,
      .ib_write(state == S_IN && mem_rd_valid && mem_rd_strb[4 * in_word]),
      .ib_clear(state == S_IN_REQ && zero_first_row[stream] && row == '0),
      .ib_stream(stream[1:0]), .ib_group(in_group), .ib_data(mem_rd_data[32 * in_word +: 32]),
      .ob_stream(2'(stream - 3'd4)), .ob_group(lane_ob_group[l]), .ob_data(lane_ob[l]),
      .group, .src0(step_s0), .src1(step_s1), .src0_scalar(is_scalar(step_s0)),
      .src1_scalar(is_scalar(step_s1)), .scalar0(scalar_value(step_s0)),
      .scalar1(scalar_value(step_s1)), .dst(step_dst),
      .mask_write(state == S_STEP && step_kind == STEP_MASK), .masked(lane_masked[l]),
      .acc_init(pass_start), .acc_init_value(pass_reduce == RED_MAX ? 32'hff80_0000 : 32'd0),
      .alu_enable(alu_used), .alu_mode, .prim(alu_prim),
      .word_src0(word_src[0]), .word_src1(word_src[1]), .word_src2(word_src[2]),
      .word_const0(word_const[0]), .word_const1(word_const[1]), .word_const2(word_const[2]),
      .word_dst, .first_word, .last_word, .result_reg, .element_valid(lane_valid[l]),
      .tree_a(lane_acc[(2 * l) % L]), .tree_b(lane_acc[(2 * l + 1) % L]),
      .tree_keep(l < (L >> (tree_level + 1))),
      .acc(lane_acc[l]), .alu_result(lane_alu[l]), .step_result(lane_result[l]));
  end

  // ---- memory ----------------------------------------------------------------------------------
  logic [63:0] chunk_addr;
  assign chunk_addr = stream_addr[stream] + {30'd0, j0, 2'b00};

  always_comb begin
    mem_req_valid = 1'b0;
    mem_req_write = 1'b0;
    mem_req_addr = chunk_addr;
    mem_req_bytes = 32'(chunk_len) << 2;
    unique case (state)
      S_PRE_LOAD_REQ, S_ROW_LOAD_REQ: begin
        mem_req_valid = 1'b1;
        mem_req_addr = load_addr;
        mem_req_bytes = 32'(load_words) << 2;
      end
      S_IN_REQ: mem_req_valid = 1'b1;
      S_OUT_REQ: begin
        mem_req_valid = 1'b1;
        mem_req_write = 1'b1;
      end
      S_ROW_STORE_REQ: begin
        mem_req_valid = 1'b1;
        mem_req_write = 1'b1;
        mem_req_addr = load_addr;
        mem_req_bytes = 32'd4;
      end
      default: ;
    endcase
  end

  // Word w of a beat is element (beat - chunk) / 4 + w of the chunk.
  assign beat_first = EB'((state == S_OUT ? mem_wr_addr[EB+1:2] : mem_rd_addr[EB+1:2]) -
                          chunk_addr[EB+1:2]);
  always_comb begin
    mem_wr_data = '0;
    for (int w = 0; w < WORDS; w++) begin
      logic [LB-1:0] e;
      e = beat_first[LB-1:0] + LB'(w);
      // A row store writes K2 (the row's result); the strobes pick its word.
      if (state == S_ROW_STORE) mem_wr_data[32*w +: 32] = ks[2];
      else mem_wr_data[32*w +: 32] = lane_ob[e];
    end
  end

  // A staged scalar load: word w of a beat at its distance from load_addr.
  logic [31:0] staged_next [8];
  always_comb begin
    for (int x = 0; x < 8; x++) staged_next[x] = staged[x];
    for (int w = 0; w < WORDS; w++) begin
      logic [63:0] distance;
      distance = (mem_rd_addr + 64'(4 * w) - load_addr) >> 2;
      if (mem_rd_strb[4*w] && distance < 64'd8) staged_next[distance[2:0]] = mem_rd_data[32*w +: 32];
    end
  end

  logic signed [63:0] index_value;
  assign index_value = index_i64 ? $signed({staged[1], staged[0]}) : 64'($signed(staged[0]));

  assign done = state == S_FINISH;
  // Only an index fault names an operand (the interconnect's errors do not).
  assign fault_operand = fault_code == npu_pkg::FAULT_INDEX_OUT_OF_RANGE
                         ? npu_isa_pkg::EMBEDDING_BWD_INDICES_INDEX : npu_isa_pkg::NO_OPERAND;
  assign fault_length = fault_code == npu_pkg::FAULT_INDEX_OUT_OF_RANGE
                        ? (index_i64 ? 64'd8 : 64'd4) : 64'd0;

  // Chunk positions need only the low address bits.
  logic unused_wr_addr;
  assign unused_wr_addr = ^{mem_wr_addr[63:EB+2], mem_wr_addr[1:0]};

  // The address of every stream on row 0, its pitch, and the scalar work.
  logic [33:0] row_bytes;
  assign row_bytes = {cols, 2'b00};

  // Ends a pass's steps for the current group: the next group, the chunk's
  // outputs, or the next chunk.
  logic last_group;
  assign last_group = {1'b0, group, LB'(0)} + (EB+1)'(L) >= chunk_len;

  // The first input stream of the pass at or after `from`, or 4.
  function automatic logic [2:0] next_in(input logic [3:0] mask, input logic [2:0] from);
    next_in = 3'd4;
    for (int k = 3; k >= 0; k--) if (mask[k] && 3'(k) >= from) next_in = 3'(k);
  endfunction
  function automatic logic [2:0] next_out(input logic [2:0] mask, input logic [2:0] from);
    next_out = 3'd7;
    for (int k = 2; k >= 0; k--) if (mask[k] && 3'(k + 4) >= from) next_out = 3'(k + 4);
  endfunction

  // The per-row scalar load of the instruction, if any: b[i] of a column
  // broadcast, rstd[i] of RMSNORM_BWD, the EMBEDDING_BWD index.
  logic row_load, row_store;
  assign row_load = (is_binary && bcast == 2'(npu_isa_pkg::BROADCAST_COL)) ||
                    opcode == npu_isa_pkg::OP_RMSNORM_BWD || is_embedding_bwd;
  assign row_store = is_row_reduce || (opcode == npu_isa_pkg::OP_RMSNORM && write_extra);

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      state <= S_IDLE;
      fault <= 1'b0;
      fault_code <= npu_pkg::FAULT_NONE;
      fault_addr <= '0;
      rows <= '0;
      cols <= '0;
      row <= '0;
      j0 <= '0;
      chunk_len <= '0;
      group <= '0;
      pass_idx <= '0;
      section <= '0;
      step_idx <= '0;
      cur_pass <= '0;
      stream <= '0;
      row_skipped <= 1'b0;
      zero_first_row <= '0;
      word_index <= '0;
      tree_level <= '0;
      load_addr <= '0;
      load_words <= '0;
      index_addr <= '0;
      for (int k = 0; k < 7; k++) begin
        stream_addr[k] <= '0;
        stream_pitch[k] <= '0;
      end
      for (int x = 0; x < 16; x++) ks[x] <= '0;
      for (int x = 0; x < 8; x++) staged[x] <= '0;
    end else if (soft_reset) begin
      state <= S_IDLE;
    end else begin
      unique case (state)
        S_IDLE: if (start) begin
          fault <= 1'b0;
          fault_code <= npu_pkg::FAULT_NONE;
          fault_addr <= '0;
          state <= S_SETUP;
        end
        S_SETUP: begin
          // Shape, streams and packet scalars of the instruction.
          for (int k = 0; k < 7; k++) begin
            stream_addr[k] <= '0;
            stream_pitch[k] <= '0;
          end
          zero_first_row <= '0;
          row <= '0;
          pass_idx <= '0;
          ks[0] <= f_p2;                          // alpha, scale, eps
          if (is_binary) begin
            rows <= f_p0;
            cols <= f_p1;
            stream_addr[0] <= f_src0;
            stream_addr[1] <= f_src1;
            stream_addr[4] <= f_dst;
            stream_pitch[0] <= {30'd0, f_p1, 2'b00};
            stream_pitch[1] <= bcast == 2'(npu_isa_pkg::BROADCAST_NONE) ? {30'd0, f_p1, 2'b00} : 64'd0;
            stream_pitch[4] <= {30'd0, f_p1, 2'b00};
            index_addr <= f_src1;                 // b[i] of a column broadcast
          end else if (is_scalar_form || npu_microcode_pkg::mc_has_program(opcode)) begin
            // One row of n elements: scalar forms (s), unary (POWS: p),
            // SILU_BWD/GELU_BWD (x, dy).
            rows <= 32'd1;
            cols <= f_p0;
            ks[0] <= f_p1;
            stream_addr[0] <= f_src0;
            stream_addr[1] <= f_src1;
            stream_addr[4] <= f_dst;
          end else begin
            rows <= f_p0;
            cols <= f_p1;
            stream_addr[0] <= f_src0;
            stream_addr[4] <= f_dst;
            stream_pitch[0] <= {30'd0, f_p1, 2'b00};
            stream_pitch[4] <= {30'd0, f_p1, 2'b00};
            unique case (opcode)
              npu_isa_pkg::OP_COL_SUM: begin
                stream_addr[1] <= f_dst;
                stream_pitch[4] <= '0;
                zero_first_row[1] <= 1'b1;
              end
              npu_isa_pkg::OP_RMSNORM: begin
                stream_addr[1] <= f_src1;           // weight
              end
              npu_isa_pkg::OP_SOFTMAX_BWD: begin
                stream_addr[1] <= f_src1;
                stream_pitch[1] <= {30'd0, f_p1, 2'b00};
              end
              npu_isa_pkg::OP_RMSNORM_BWD: begin
                rows <= f_p6;
                cols <= f_p7;
                stream_pitch[0] <= {30'd0, f_p7, 2'b00};
                stream_pitch[4] <= {30'd0, f_p7, 2'b00};
                stream_addr[1] <= f_src1;           // dy
                stream_pitch[1] <= {30'd0, f_p7, 2'b00};
                stream_addr[2] <= f_p01;            // weight
                stream_addr[3] <= f_p45;            // dweight, accumulated
                stream_addr[5] <= f_p45;
                zero_first_row[3] <= 1'b1;
                index_addr <= f_p23;                // rstd
              end
              npu_isa_pkg::OP_ADAMW: begin
                rows <= 32'd1;
                cols <= f_p4;
                stream_addr[0] <= f_dst;            // param
                stream_addr[1] <= f_src0;           // grad
                stream_addr[2] <= f_src1;           // exp_avg
                stream_addr[3] <= f_p01;            // exp_avg_sq
                stream_addr[5] <= f_src1;
                stream_addr[6] <= f_p01;
                load_addr <= f_p23;                 // hyper block
                load_words <= 4'd8;
              end
              npu_isa_pkg::OP_EMBEDDING_BWD: begin
                stream_addr[1] <= f_src0;           // dy
                stream_pitch[1] <= {30'd0, f_p1, 2'b00};
                stream_pitch[4] <= '0;              // IB0, OB0: the row's table row
                index_addr <= f_src1;
              end
              default: ;
            endcase
          end
          state <= S_START;
        end
        S_START: begin
          if (is_binary && bcast == 2'(npu_isa_pkg::BROADCAST_SCALAR)) begin
            load_addr <= f_src1;
            load_words <= 4'd1;
            state <= S_PRE_LOAD_REQ;
          end else if (opcode == npu_isa_pkg::OP_ADAMW) begin
            state <= S_PRE_LOAD_REQ;
          end else begin
            section <= SEC_PRE;
            step_idx <= '0;
            word_index <= '0;
            state <= S_SCALAR;
          end
        end
        S_PRE_LOAD_REQ, S_ROW_LOAD_REQ: if (mem_req_ready) begin
          state <= state == S_PRE_LOAD_REQ ? S_PRE_LOAD : S_ROW_LOAD;
        end
        S_PRE_LOAD: begin
          if (mem_rd_valid) for (int x = 0; x < 8; x++) staged[x] <= staged_next[x];
          if (mem_done) begin
            if (mem_error) begin
              fault <= 1'b1;
              fault_code <= mem_error_code;
              fault_addr <= mem_error_addr;
              state <= S_FINISH;
            end else begin
              // b[0] of a scalar broadcast into K1; the AdamW block into K0..K7.
              if (opcode == npu_isa_pkg::OP_ADAMW) for (int x = 0; x < 8; x++) ks[x] <= staged[x];
              else ks[1] <= staged[0];
              section <= SEC_PRE;
              step_idx <= '0;
              word_index <= '0;
              state <= S_SCALAR;
            end
          end
        end
        S_SCALAR, S_STEP: begin
          // One step: load the inputs, run the ROM words, write back.
          if (step_kind == STEP_END) begin
            if (state == S_STEP) begin
              // The group is done.
              step_idx <= '0;
              if (!last_group) group <= group + GB'(1);
              else begin
                stream <= next_out(pass_out, 3'd4);
                state <= next_out(pass_out, 3'd4) == 3'd7 ? S_PASS : S_OUT_REQ;
                if (next_out(pass_out, 3'd4) == 3'd7) j0 <= j0 + 32'(CH);
              end
            end else if (section == SEC_PRE) begin
              state <= S_ROW;
            end else begin
              // After pass pass_idx's scalar steps: the next pass or the row's end.
              pass_idx <= pass_idx + 2'd1;
              cur_pass <= recipe_pass(pass_idx + 2'd1);
              state <= recipe_pass(pass_idx + 2'd1) == '0 ? (row_store ? S_ROW_STORE_REQ : S_NEXT_ROW)
                                                        : S_PASS;
              j0 <= '0;
              if (row_store) load_addr <= (opcode == npu_isa_pkg::OP_RMSNORM ? f_p45 : f_dst) +
                                          {30'd0, row, 2'b00};
            end
          end else if (step_kind == STEP_MASK) begin
            step_idx <= step_idx + 4'd1;
          end else if (step_kind == STEP_REDUCE) begin
            step_idx <= step_idx + 4'd1;
          end else begin
            // The lanes store the result; a scalar one is lane 0's.
            if (last_word) begin
              if (step_dst[4]) ks[step_dst[3:0]] <= lane_result[0];
              word_index <= '0;
              step_idx <= step_idx + 4'd1;
            end else begin
              word_index <= word_index + 1'b1;
            end
          end
        end
        S_ROW: begin
          // Row prologue: the row's scalar load, if any.
          row_skipped <= 1'b0;
          pass_idx <= '0;
          cur_pass <= recipe_pass(2'd0);
          j0 <= '0;
          if (row_load) begin
            load_addr <= index_addr;
            load_words <= is_embedding_bwd && index_i64 ? 4'd2 : 4'd1;
            state <= S_ROW_LOAD_REQ;
          end else begin
            state <= S_PASS;
          end
        end
        S_ROW_LOAD: begin
          if (mem_rd_valid) for (int x = 0; x < 8; x++) staged[x] <= staged_next[x];
          if (mem_done) begin
            if (mem_error) begin
              fault <= 1'b1;
              fault_code <= mem_error_code;
              fault_addr <= mem_error_addr;
              state <= S_FINISH;
            end else if (is_embedding_bwd) begin
              state <= S_INDEX_CHECK;
            end else begin
              // b[i] into K1; rstd[i] into K2.
              if (opcode == npu_isa_pkg::OP_RMSNORM_BWD) ks[2] <= staged[0];
              else ks[1] <= staged[0];
              index_addr <= index_addr + 64'd4;
              state <= S_PASS;
            end
          end
        end
        S_INDEX_CHECK: begin
          if (index_value < 0 || index_value >= $signed({32'd0, f_p2})) begin
            fault <= 1'b1;
            fault_code <= npu_pkg::FAULT_INDEX_OUT_OF_RANGE;
            fault_addr <= index_addr;
            state <= S_FINISH;
          end else begin
            row_skipped <= $signed(f_p3) >= 0 && index_value == 64'($signed(f_p3));
            stream_addr[0] <= f_dst + {30'd0, staged[0]} * {30'd0, row_bytes};
            stream_addr[4] <= f_dst + {30'd0, staged[0]} * {30'd0, row_bytes};
            index_addr <= index_addr + (index_i64 ? 64'd8 : 64'd4);
            state <= S_PASS;
          end
        end
        S_PASS: begin
          // Start of a pass (j0 == 0) or of its next chunk.
          if (!pass_valid || row_skipped) begin
            state <= row_store ? S_ROW_STORE_REQ : S_NEXT_ROW;
            if (row_store) load_addr <= (opcode == npu_isa_pkg::OP_RMSNORM ? f_p45 : f_dst) +
                                        {30'd0, row, 2'b00};
          end else if (j0 != '0 && {1'b0, j0} >= {1'b0, cols}) begin
            // The pass is over: combine the lanes, or go on.
            if (pass_reduce != RED_NONE) begin
              tree_level <= '0;
              state <= S_TREE;
            end else begin
              section <= SEC_POST0 + 3'(pass_idx);
              step_idx <= '0;
              word_index <= '0;
              state <= S_SCALAR;
            end
          end else begin
            // (The lanes clear their accumulators at the pass's first chunk.)
            chunk_len <= {1'b0, cols} - {1'b0, j0} >= 33'(CH) ? (EB+1)'(CH) : (EB+1)'(cols - j0);
            stream <= next_in(pass_in, 3'd0);
            state <= next_in(pass_in, 3'd0) == 3'd4 ? S_STEP : S_IN_REQ;
            group <= '0;
            section <= SEC_PASS0 + 3'(pass_idx);
            step_idx <= '0;
            word_index <= '0;
          end
        end
        S_IN_REQ: begin
          if (zero_first_row[stream] && row == '0) begin
            // An accumulator's first value: +0 without reading (the lanes
            // clear the stream's buffer).
            stream <= next_in(pass_in, stream + 3'd1);
            state <= next_in(pass_in, stream + 3'd1) == 3'd4 ? S_STEP : S_IN_REQ;
          end else if (mem_req_ready) state <= S_IN;
        end
        S_IN: begin
          // (The lanes take the beats.)
          if (mem_done) begin
            if (mem_error) begin
              fault <= 1'b1;
              fault_code <= mem_error_code;
              fault_addr <= mem_error_addr;
              state <= S_FINISH;
            end else begin
              stream <= next_in(pass_in, stream + 3'd1);
              state <= next_in(pass_in, stream + 3'd1) == 3'd4 ? S_STEP : S_IN_REQ;
            end
          end
        end
        S_OUT_REQ: if (mem_req_ready) state <= S_OUT;
        S_OUT: if (mem_done) begin
          if (mem_error) begin
            fault <= 1'b1;
            fault_code <= mem_error_code;
            fault_addr <= mem_error_addr;
            state <= S_FINISH;
          end else begin
            stream <= next_out(pass_out, stream + 3'd1);
            state <= next_out(pass_out, stream + 3'd1) == 3'd7 ? S_PASS : S_OUT_REQ;
            if (next_out(pass_out, stream + 3'd1) == 3'd7) j0 <= j0 + 32'(CH);
          end
        end
        S_TREE: begin
          // ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)), level by level.
          tree_level <= tree_level + 2'd1;
          if ((L >> (tree_level + 1)) == 1) begin
            ks[pass_kdst] <= lane_alu[0];
            section <= SEC_POST0 + 3'(pass_idx);
            step_idx <= '0;
            word_index <= '0;
            state <= S_SCALAR;
          end
        end
        S_ROW_STORE_REQ: if (mem_req_ready) state <= S_ROW_STORE;
        S_ROW_STORE: if (mem_done) begin
          if (mem_error) begin
            fault <= 1'b1;
            fault_code <= mem_error_code;
            fault_addr <= mem_error_addr;
            state <= S_FINISH;
          end else state <= S_NEXT_ROW;
        end
        S_NEXT_ROW: begin
          for (int k = 0; k < 7; k++) stream_addr[k] <= stream_addr[k] + stream_pitch[k];
          row <= row + 32'd1;
          state <= row + 32'd1 == rows ? S_FINISH : S_ROW;
        end
        S_FINISH: state <= S_IDLE;
        default: state <= S_IDLE;
      endcase

    end
  end

endmodule
