// The vector engine: L = HW_VECTOR_LANES lanes, each a micro-sequenced
// primitive unit (npu_fp_alu) with the 16-register file of the micro-code
// ROM (npu_microcode_pkg), four temporaries and a reduction accumulator.
// It runs every elementwise, unary, reduction, fused, backward, optimizer
// and scatter instruction.
//
// An instruction is a recipe (generated into npu_recipe_pkg from the
// Recipes of isa/*.td; isa/recipe.td describes them) over rows of `cols`
// elements:
//   * once per packet: scalar loads (a broadcast b[0], the AdamW
//     hyper-parameter block) and scalar steps (1/cols, AdamW constants);
//   * per row: scalar loads (b[i], rstd[i], an EMBEDDING_BWD index), then
//     one to three passes over the row, then scalar stores (row results,
//     rstd[i]);
//   * a pass walks the row in chunks of CH elements: it reads the chunk of
//     each of its input streams into the lanes' buffers, runs its steps on
//     every group of L elements (element j in lane j mod L), then writes its
//     output streams. The reads run ahead (see "memory" below): the next
//     chunks' are requested while the current one computes, into the other
//     slots of the input buffers, each request as soon as the port has issued
//     the one before, so that the memory latency is paid once per pass; the
//     writes are posted. A pass may reduce one value per element into the lane
//     accumulators; at its end they combine by the pairwise tree into a
//     scalar register, and the pass's scalar steps run.
// A step runs a micro-program of the ROM (inputs loaded into registers 0 and
// 1, canonicalised unless the program takes integer lane forms; the ROM
// words in order; the result register written back), applies the causal
// mask, accumulates, or scans (one lane a cycle: scan_lane below). Scalar
// steps run the same way on broadcast scalar values and keep lane 0's
// result.
//
// Streams are typed (docs/types.md §2): a stream's elements are of the
// type its recipe names (STREAM_TYPE of the setup), its requests are the
// element count times the type's size, and it converts between storage and
// a lane's 32-bit form as beats arrive and leave (lane_form, storage_form).
// An i64 stream fills two slots, its low words in its own and its high
// words in the next, which makes no request of its own.
//
// The command processor checked every operand's range and the overlap
// rules before the start; an index out of range faults here, and so does a
// packet no recipe runs (an illegal instruction: it never reaches the engine
// through the command processor's routing).
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
  input  logic        mem_read_ready, // the port would take a read request now
  output logic        port_quiet,     // computing, with no request in sight
  input  logic        mem_rd_valid,
  input  logic [63:0] mem_rd_addr,
  input  logic        mem_rd_last,    // the beat ends its request
  input  logic [8*npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] mem_rd_data,
  input  logic [npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] mem_rd_strb,
  input  logic [63:0] mem_wr_addr,
  input  logic        mem_wr_accept,  // the beat at mem_wr_addr is sent
  output logic [8*npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] mem_wr_data,
  input  logic        mem_rd_done,
  input  logic        mem_rd_error,
  input  logic [3:0]  mem_rd_error_code,
  input  logic [63:0] mem_rd_error_addr,
  input  logic        mem_wr_done,
  input  logic        mem_wr_error,
  input  logic [3:0]  mem_wr_error_code,
  input  logic [63:0] mem_wr_error_addr
);

  localparam int unsigned L = npu_isa_pkg::HW_VECTOR_LANES;
  localparam int unsigned G = 16;                // element groups per chunk
  localparam int unsigned CH = L * G;            // elements per chunk
  localparam int unsigned LB = $clog2(L);
  localparam int unsigned GB = $clog2(G);
  localparam int unsigned EB = $clog2(CH);
  // Input buffer slots: the chunk computing and two read ahead, so that
  // the reads of the chunk after next are requested a chunk's steps before
  // their beats are due.
  localparam int unsigned NS = 3;
  localparam int unsigned SB = $clog2(NS);
  localparam int unsigned WORDS = npu_isa_pkg::HW_AXI_DATA_BYTES / 4;
  localparam int unsigned RB = npu_microcode_pkg::MC_REG_BITS;
  localparam int unsigned BO = $clog2(npu_isa_pkg::HW_AXI_DATA_BYTES);  // a byte in a beat
  // A lane's elements in one beat: its share of the beat's bytes, as many
  // elements as b8 packs there (fewer of wider types; an i64 uses two
  // ports, its low and high words).
  localparam int unsigned P = npu_isa_pkg::HW_AXI_DATA_BYTES / L;
  localparam int unsigned PB = npu_microcode_pkg::MC_PROG_BITS;

  // ---- the recipe ---------------------------------------------------------------------------
  // npu_recipe_pkg (generated from the Recipes of isa/*.td) picks the recipe
  // of the packet at the start and describes it: the streams and scalar
  // work (recipe_setup), the passes (recipe_pass) and the steps
  // (recipe_step). The engine names no instruction.
  // Not traced: recipe_e's FST enum table is longer than the 512
  // characters fstapi's readers keep, and GTKWave gives up on the file.
  /* verilator tracing_off */
  npu_recipe_pkg::recipe_e recipe_q;     // of the running packet
  npu_recipe_pkg::recipe_e recipe_d;
  /* verilator tracing_on */
  assign recipe_d = npu_recipe_pkg::recipe_select(packet);

  // The recipe's shape, streams and scalar work (npu_recipe_pkg::SU_*).
  logic [npu_recipe_pkg::SU_BITS-1:0] setup;
  assign setup = npu_recipe_pkg::recipe_setup(recipe_q, packet);
  logic [31:0] su_rows, su_cols, su_mask_offset, su_index_bound, su_index_skip;
  logic [63:0] su_stream_base [7];
  logic [6:0]  su_stream_per_row, su_zero_first_row, su_rebase;
  logic        su_pre_load, su_index_wide, su_row_store;
  logic [63:0] su_pre_load_addr, su_row_load_addr, su_index_base, su_row_store_addr;
  logic [3:0]  su_pre_load_words, su_pre_load_first, su_row_load_dst, su_row_store_src;
  logic [1:0]  su_row_load, su_row_load_words, su_row_store_words;
  // The pre-load's, the row load's and the row store's element type: [3]
  // one element of the DType [2:0] (a row's at row times its size), else
  // their words.
  logic [3:0]  su_pre_load_type, su_row_load_type, su_row_store_type;
  logic [7:0]  su_index_operand;
  assign su_rows = setup[npu_recipe_pkg::SU_ROWS_LSB +: 32];
  assign su_cols = setup[npu_recipe_pkg::SU_COLS_LSB +: 32];
  assign su_mask_offset = setup[npu_recipe_pkg::SU_MASK_OFFSET_LSB +: 32];
  for (genvar k = 0; k < 7; k++) begin : g_stream_base
    assign su_stream_base[k] = setup[npu_recipe_pkg::SU_STREAM_BASE_LSB + 64 * k +: 64];
  end
  assign su_stream_per_row = setup[npu_recipe_pkg::SU_STREAM_PER_ROW_LSB +: 7];
  // Each stream's element type (docs/types.md §2): its DType, the log2 of
  // its size in bytes, and whether the slot holds the high words of the i64
  // stream in the slot before it (which moves them: the slot is never
  // requested itself).
  logic [2:0] stream_type [7];
  logic [1:0] stream_size [7];
  logic [6:0] stream_high;
  for (genvar k = 0; k < 7; k++) begin : g_stream_type
    assign {stream_high[k], stream_type[k]} = setup[npu_recipe_pkg::SU_STREAM_TYPE_LSB + 4 * k +: 4];
    assign stream_size[k] = npu_isa_pkg::dtype_bytes_log2(stream_type[k]);
  end
  assign su_zero_first_row = setup[npu_recipe_pkg::SU_ZERO_FIRST_ROW_LSB +: 7];
  assign su_pre_load = setup[npu_recipe_pkg::SU_PRE_LOAD_LSB];
  assign su_pre_load_addr = setup[npu_recipe_pkg::SU_PRE_LOAD_ADDR_LSB +: 64];
  assign su_pre_load_words = setup[npu_recipe_pkg::SU_PRE_LOAD_WORDS_LSB +: 4];
  assign su_pre_load_first = setup[npu_recipe_pkg::SU_PRE_LOAD_FIRST_LSB +: 4];
  assign su_pre_load_type = setup[npu_recipe_pkg::SU_PRE_LOAD_TYPE_LSB +: 4];
  assign su_row_load_type = setup[npu_recipe_pkg::SU_ROW_LOAD_TYPE_LSB +: 4];
  assign su_row_store_type = setup[npu_recipe_pkg::SU_ROW_STORE_TYPE_LSB +: 4];
  assign su_row_load = setup[npu_recipe_pkg::SU_ROW_LOAD_LSB +: 2];
  assign su_row_load_addr = setup[npu_recipe_pkg::SU_ROW_LOAD_ADDR_LSB +: 64];
  assign su_row_load_dst = setup[npu_recipe_pkg::SU_ROW_LOAD_DST_LSB +: 4];
  assign su_row_load_words = setup[npu_recipe_pkg::SU_ROW_LOAD_WORDS_LSB +: 2];
  assign su_index_wide = setup[npu_recipe_pkg::SU_INDEX_WIDE_LSB];
  assign su_index_bound = setup[npu_recipe_pkg::SU_INDEX_BOUND_LSB +: 32];
  assign su_index_skip = setup[npu_recipe_pkg::SU_INDEX_SKIP_LSB +: 32];
  assign su_index_operand = setup[npu_recipe_pkg::SU_INDEX_OPERAND_LSB +: 8];
  assign su_rebase = setup[npu_recipe_pkg::SU_REBASE_LSB +: 7];
  assign su_index_base = setup[npu_recipe_pkg::SU_INDEX_BASE_LSB +: 64];
  assign su_row_store = setup[npu_recipe_pkg::SU_ROW_STORE_LSB];
  assign su_row_store_addr = setup[npu_recipe_pkg::SU_ROW_STORE_ADDR_LSB +: 64];
  assign su_row_store_src = setup[npu_recipe_pkg::SU_ROW_STORE_SRC_LSB +: 4];
  assign su_row_store_words = setup[npu_recipe_pkg::SU_ROW_STORE_WORDS_LSB +: 2];

  // The bits of the packet no recipe reads.
  logic unused_packet;
  assign unused_packet = ^{packet, su_zero_first_row[6:4]};

  // ---- state ---------------------------------------------------------------------------------
  typedef enum logic [4:0] {
    S_IDLE, S_SETUP, S_START, S_PRE_LOAD_REQ, S_PRE_LOAD, S_SCALAR, S_ROW, S_ROW_LOAD_REQ, S_ROW_LOAD,
    S_INDEX_CHECK, S_PASS, S_IN, S_WRITE_WAIT, S_STEP, S_OUT_REQ, S_TREE, S_ROW_STORE_REQ,
    S_ROW_STORE, S_NEXT_ROW, S_DRAIN, S_FINISH
  } state_e;
  state_e state;
  assign dbg_state = state;

  logic [31:0] rows, cols, row;
  logic [31:0] j0;                       // first element of the chunk
  logic [EB:0] chunk_len;
  logic [GB-1:0] group;
  logic [1:0]  pass_idx;
  logic [2:0]  section;                  // of the steps running (section_e)
  logic [npu_recipe_pkg::STEP_IDX_BITS-1:0] step_idx;
  logic [npu_recipe_pkg::PASS_BITS-1:0] cur_pass;
  logic [2:0]  stream;                   // stream being moved: 0..3 inputs, 4..6 outputs
  logic        row_skipped;              // an index row load's skipped index

  // Per-stream row addresses and pitches; a stream that reads +0 on the
  // first row (an accumulator kept in memory).
  logic [63:0] stream_addr [7];
  logic [63:0] stream_pitch [7];
  logic [3:0]  zero_first_row;            // (only input streams read +0)

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
  logic [5:0]  load_bytes;
  logic [31:0] staged [8];
  logic [63:0] index_addr;

  logic [npu_recipe_pkg::STEP_BITS-1:0] cur_step;
  logic [2:0]  step_kind;
  logic [PB-1:0] step_prog;
  logic [4:0]  step_s0, step_s1, step_dst;
  assign cur_step = npu_recipe_pkg::recipe_step(recipe_q, section, step_idx);
  assign {step_kind, step_prog, step_s0, step_s1, step_dst} = cur_step;

  // A Scan step runs its one-word program in one lane a cycle, lane
  // scan_lane, so that the running value (a K register, read as +0 at the
  // row's first element) passes the group's elements in their order: a
  // chain through one unit a cycle rather than L adders in one.
  logic [LB-1:0] scan_lane;
  logic scan_step, scan_first;
  assign scan_step = step_kind == npu_recipe_pkg::STEP_SCAN;
  assign scan_first = j0 == '0 && group == '0 && scan_lane == '0;

  // A step is done after its last ROM word, in its one cycle (Mask,
  // Reduce), or after its last lane (Scan). A group's last step also ends
  // the group: the next step of the table is its end (a pass without steps
  // spends a cycle on the end).
  logic step_done, group_ends;
  logic [2:0] following_kind;
  logic [npu_recipe_pkg::STEP_BITS-4:0] following_rest;
  assign {following_kind, following_rest} = npu_recipe_pkg::recipe_step(recipe_q, section, step_idx + 1'b1);
  assign step_done = step_kind == npu_recipe_pkg::STEP_MASK || step_kind == npu_recipe_pkg::STEP_REDUCE ||
                     (step_kind == npu_recipe_pkg::STEP_RUN && last_word) ||
                     (scan_step && scan_lane == LB'(L - 1));
  assign group_ends = state == S_STEP &&
                      (step_kind == npu_recipe_pkg::STEP_END ||
                       (step_done && following_kind == npu_recipe_pkg::STEP_END));
  // Of the following step only its kind matters here.
  logic unused_following;
  assign unused_following = ^following_rest;

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
      npu_recipe_pkg::SRC_ONE: scalar_value = 32'h3f80_0000;
      npu_recipe_pkg::SRC_COLS: scalar_value = cols_float;
      npu_recipe_pkg::SRC_ROW: scalar_value = row;
      npu_recipe_pkg::SRC_ZERO: scalar_value = 32'd0;
      default: scalar_value = ks[sel[3:0]];
    endcase
  endfunction

  function automatic logic is_scalar(input logic [4:0] sel);
    is_scalar = sel[4] || sel == npu_recipe_pkg::SRC_ZERO || sel == npu_recipe_pkg::SRC_ONE ||
                sel == npu_recipe_pkg::SRC_COLS || sel == npu_recipe_pkg::SRC_COL ||
                sel == npu_recipe_pkg::SRC_ROW;
  endfunction

  // A source as lane l sees it: the element's column index (COL) differs
  // per lane, every other scalar source is broadcast (ROW, the row counter,
  // among them). The column is the one the causal mask compares, so both
  // index sources come from counters the engine keeps anyway.
  logic [31:0] lane_column [L];
  function automatic logic [31:0] lane_scalar(input logic [LB-1:0] l, input logic [4:0] sel);
    lane_scalar = sel == npu_recipe_pkg::SRC_COL ? lane_column[l] : scalar_value(sel);
  endfunction

  // Which lanes hold elements of the chunk, and the causal limit.
  logic [L-1:0] lane_valid, lane_masked;
  logic signed [64:0] causal_limit;     // last visible column: row + offset
  assign causal_limit = $signed({33'd0, row}) + 65'($signed(su_mask_offset));
  always_comb begin
    for (int l = 0; l < L; l++) begin
      logic [EB:0] e;
      logic [32:0] column;
      e = (EB+1)'({group, LB'(l)});
      column = {1'b0, j0} + 33'(e);
      lane_column[l] = column[31:0];
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
    else if (step_kind == npu_recipe_pkg::STEP_REDUCE) alu_mode = npu_pkg::LANE_REDUCE;
    if (alu_mode != npu_pkg::LANE_WORD)
      alu_prim = pass_reduce == npu_recipe_pkg::RED_MAX ? npu_microcode_pkg::MC_FMAX : npu_microcode_pkg::MC_FADD;
  end

  // The lanes' units run in cycles that store their result: a ROM word, an
  // accumulation, a level of the reduction tree.
  logic alu_used;
  assign alu_used = ((state == S_STEP || state == S_SCALAR) &&
                     (step_kind == npu_recipe_pkg::STEP_RUN || step_kind == npu_recipe_pkg::STEP_REDUCE ||
                      scan_step)) ||
                    state == S_TREE;

  // ---- the lanes ---------------------------------------------------------------------------------
  // Streams convert between storage and lane form (docs/types.md §2) as
  // they move beats: bf16 and f16 widen to binary32 and narrow with one
  // rounding (npu_convert_pkg), b8 reads as a mask and stores 0 or 1, every
  // other type is its words.
  function automatic logic [31:0] lane_form(input logic [2:0] dtype, input logic [31:0] storage);
    unique case (32'(dtype))
      npu_isa_pkg::DTYPE_BF16: lane_form = npu_convert_pkg::widen_bf16(storage[15:0]);
      npu_isa_pkg::DTYPE_F16: lane_form = npu_convert_pkg::widen_f16(storage[15:0]);
      npu_isa_pkg::DTYPE_B8: lane_form = npu_convert_pkg::widen_b8(storage[7:0]);
      default: lane_form = storage;
    endcase
  endfunction
  function automatic logic [31:0] storage_form(input logic [2:0] dtype, input logic [31:0] lane);
    unique case (32'(dtype))
      npu_isa_pkg::DTYPE_BF16: storage_form = {16'd0, npu_convert_pkg::narrow_bf16(lane)};
      npu_isa_pkg::DTYPE_F16: storage_form = {16'd0, npu_convert_pkg::narrow_f16(lane)};
      npu_isa_pkg::DTYPE_B8: storage_form = {24'd0, npu_convert_pkg::narrow_b8(lane)};
      default: storage_form = lane;
    endcase
  endfunction

  // Port p of lane l in a beat `offset` bytes from its chunk's start, for
  // elements of 2^size bytes: the lane's p-th element there (element e of
  // the chunk is lane e mod L's, in its group e / L), whether the beat holds
  // it, and the position of its first byte in the beat. An i64's words are
  // two ports of one element: the low word (its stream's slot) and the high
  // word (the next slot). The result is {in_beat, high, group, pos}.
  localparam int unsigned PORT_BITS = 2 + GB + BO;
  function automatic logic [PORT_BITS-1:0] beat_port(input logic [LB-1:0] l, input int unsigned p,
                                                     input logic [EB+3:0] offset,
                                                     input logic [1:0] size);
    logic [EB+3:0] first, e, pos;
    logic [LB-1:0] skip;
    logic used, high;
    // The element holding the beat's first byte, then the lane's first
    // element from there on. Positions are modulo 8 CH, the largest chunk:
    // one before the beat's start is far beyond its end.
    first = offset >> size;
    skip = l - first[LB-1:0];
    e = first + (EB+4)'(skip);
    high = size == 2'd3 && p == 1;
    used = size == 2'd3 ? p < 2 : p < (P >> size);
    if (size != 2'd3) e = e + (EB+4)'(p * L);
    pos = (e << size) - offset + (high ? (EB+4)'(4) : '0);
    beat_port = {used && pos < (EB+4)'(npu_isa_pkg::HW_AXI_DATA_BYTES), high, e[LB +: GB],
                 pos[BO-1:0]};
  endfunction

  // Memory beats into the input buffers and out of the output buffers,
  // each lane's elements through its P ports (beat_port). A posted write's
  // beats leave while the next chunk's reads arrive, so each side has its
  // own.
  logic [31:0] lane_acc [L], lane_alu [L], lane_result [L];
  logic pass_start;                      // S_PASS starts the pass's first chunk
  assign pass_start = state == S_PASS && pass_valid && !row_skipped && j0 == '0;
  // An accumulator's stream reads +0 on the first row (nothing is read).
  logic [3:0] ib_zero;
  assign ib_zero = row == '0 ? zero_first_row[3:0] : 4'd0;
  // The requests of the reader in flight, oldest first: the slot and stream
  // their beats fill, and the low bits of their chunk's address.
  localparam int unsigned RQ = 4;
  logic [SB-1:0] rq_slot [RQ];
  logic [1:0]    rq_stream [RQ];
  logic [EB+3:0] rq_base [RQ];
  logic [1:0]    rq_head, rq_tail;      // rq_head: the oldest not done
  logic [1:0]    rb_head;               // the oldest whose beats are arriving
  logic [2:0]    rq_count;
  logic [SB-1:0] cslot;                  // the input slot of the chunk computing
  logic          oslot;                  // its output slot (the next chunk's after its writes)
  // The beats' byte offsets from the start of their chunk (modulo the
  // largest chunk, 8 CH bytes), and the types of their streams.
  logic [EB+3:0] rd_offset, wr_offset;
  logic [2:0]    rd_type;
  logic [1:0]    rd_size;
  assign rd_offset = mem_rd_addr[EB+3:0] - rq_base[rb_head];
  assign rd_type = stream_type[3'(rq_stream[rb_head])];
  assign rd_size = stream_size[3'(rq_stream[rb_head])];
  // The lanes' output words of the beat leaving, in storage form.
  logic [31:0]   lane_ob_storage [L][P];
  logic [BO-1:0] lane_ob_pos [L][P];
  logic [P-1:0]  lane_ob_in_beat [L];
  // The ports are placed only in the cycles that move beats (a read beat
  // for the reader, a write with beats to leave): a Verilated model
  // evaluates the placement under these conditions, and the buffers use
  // the ports' other fields only with a write strobe or a beat leaving.
  logic beat_arriving, beats_leaving;
  assign beat_arriving = rq_count != '0 && mem_rd_valid;
  for (genvar l = 0; l < L; l++) begin : g_lane
    // The lane's ports, word p's at [2p +: 2], [GB p +: GB] and [32p +: 32].
    logic [P-1:0]    ib_write;
    logic [2*P-1:0]  ib_stream, ob_stream;
    logic [GB*P-1:0] ib_group, ob_group;
    logic [32*P-1:0] ib_data, ob_data;
    always_comb begin
      logic          in_beat, in_high;
      logic [BO-1:0] in_pos;
      ib_write = '0;
      ib_stream = '0;
      ib_group = '0;
      ib_data = '0;
      {in_beat, in_high, in_pos} = '0;
      if (beat_arriving)
        for (int p = 0; p < P; p++) begin
          {in_beat, in_high, ib_group[GB*p +: GB], in_pos} = beat_port(LB'(l), p, rd_offset, rd_size);
          ib_write[p] = in_beat && mem_rd_strb[in_pos];
          ib_stream[2*p +: 2] = rq_stream[rb_head] + 2'(in_high);
          ib_data[32*p +: 32] = lane_form(rd_type, 32'(mem_rd_data >> {in_pos, 3'b000}));
        end
    end
    always_comb begin
      logic out_high;
      ob_stream = '0;
      ob_group = '0;
      lane_ob_in_beat[l] = '0;
      for (int p = 0; p < P; p++) lane_ob_pos[l][p] = '0;
      out_high = 1'b0;
      if (beats_leaving)
        for (int p = 0; p < P; p++) begin
          {lane_ob_in_beat[l][p], out_high, ob_group[GB*p +: GB], lane_ob_pos[l][p]} =
              beat_port(LB'(l), p, wr_offset, stream_size[wr_stream]);
          ob_stream[2*p +: 2] = 2'(wr_stream - 3'd4) + 2'(out_high);
        end
    end
    always_comb
      for (int p = 0; p < P; p++)
        if (beats_leaving) lane_ob_storage[l][p] = storage_form(stream_type[wr_stream], ob_data[32*p +: 32]);
        else lane_ob_storage[l][p] = '0;
    npu_vector_lane #(.G(G), .NS(NS), .P(P)) u_lane (
      .clk,
      .ib_write, .ib_slot(rq_slot[rb_head]), .ib_stream, .ib_group, .ib_data,
      .ob_slot(wr_slot), .ob_stream, .ob_group, .ob_data,
      .slot(cslot), .oslot, .ib_zero, .group, .src0(step_s0), .src1(step_s1), .src0_scalar(is_scalar(step_s0)),
      .src1_scalar(is_scalar(step_s1)),
      .scalar0(scan_step && scan_first ? 32'd0 : lane_scalar(LB'(l), step_s0)),
      .scalar1(lane_scalar(LB'(l), step_s1)), .dst(step_dst),
      .mask_write(state == S_STEP && step_kind == npu_recipe_pkg::STEP_MASK), .masked(lane_masked[l]),
      .acc_init(pass_start), .acc_init_value(pass_reduce == npu_recipe_pkg::RED_MAX ? 32'hff80_0000 : 32'd0),
      .alu_enable(alu_used && (!scan_step || scan_lane == LB'(l))), .alu_mode, .prim(alu_prim),
      .word_src0(word_src[0]), .word_src1(word_src[1]), .word_src2(word_src[2]),
      .word_const0(word_const[0]), .word_const1(word_const[1]), .word_const2(word_const[2]),
      .word_dst, .first_word, .raw_inputs(npu_microcode_pkg::mc_prog_raw_inputs(step_prog)),
      .last_word, .result_reg, .element_valid(lane_valid[l]),
      .tree_a(lane_acc[(2 * l) % L]), .tree_b(lane_acc[(2 * l + 1) % L]),
      .tree_keep(l < (L >> (tree_level + 1))),
      .acc(lane_acc[l]), .alu_result(lane_alu[l]), .step_result(lane_result[l]));
  end

  // ---- memory ----------------------------------------------------------------------------------
  // Reads run ahead of the steps: the reader requests a pass's chunks in
  // order into the NS slots of the input buffers, a slot as soon as the
  // steps are done with the chunk it held, each request as soon as the port
  // takes it (the port issues it once the one before has issued its
  // bursts). The steps of a chunk wait for its slot's reads.
  //
  // Writes are posted: the engine goes on once the port took a chunk's
  // write, while its beats leave from the output buffers; the steps write
  // those buffers again once the beats have left (`wr_beats`). Writes whose
  // response is pending are tracked (`wq_*`, up to WQ): no read is requested
  // of bytes they cover, and the packet ends after them. A failed write
  // (`wr_failed`) is the packet's fault: the engine issues nothing after it,
  // as the ISS stops at the failing store; a read's fault meanwhile yields
  // to it (the ISS stored before it read). A failed read is the fault of the
  // chunk whose slot it filled, when the steps reach it.
  logic [63:0] chunk_addr;
  assign chunk_addr = stream_addr[stream] + (64'(j0) << stream_size[stream]);

  // The reader: its chunk, slot and next stream (4: the chunk's requests
  // are all taken), and per slot whether it holds a chunk (`slot_busy`)
  // whose requests are all taken (`slot_issued`), how many of them are in
  // flight, and whether one failed.
  logic        rd_active;                // reading the pass of the steps
  logic [31:0] rd_j0;
  logic [SB-1:0] rd_slot;
  logic [2:0]  rd_stream;
  logic [3:0]  rd_mask;                  // the pass's streams that are read
  logic [NS-1:0] slot_busy, slot_issued, slot_failed;
  logic [2:0]  slot_pending [NS];
  logic [3:0]  slot_fault_code [NS];
  logic [63:0] slot_fault_addr [NS];
  function automatic logic [SB-1:0] next_slot(input logic [SB-1:0] s);
    next_slot = s == SB'(NS - 1) ? '0 : s + SB'(1);
  endfunction
  logic [63:0] rd_chunk_addr;
  logic [EB:0] rd_chunk_len;
  logic [31:0] rd_chunk_bytes;
  logic        rd_wanted;
  assign rd_chunk_addr = stream_addr[rd_stream] + (64'(rd_j0) << stream_size[rd_stream]);
  assign rd_chunk_len = {1'b0, cols} - {1'b0, rd_j0} >= 33'(CH) ? (EB+1)'(CH) : (EB+1)'(cols - rd_j0);
  assign rd_chunk_bytes = 32'(rd_chunk_len) << stream_size[rd_stream];
  assign rd_wanted = rd_active && rd_stream != 3'd4 && state != S_DRAIN && state != S_FINISH;
  // The steps' chunk may start: its slot's reads are all done.
  logic slot_ready;
  assign slot_ready = slot_busy[cslot] && slot_issued[cslot] && slot_pending[cslot] == '0;

  logic        wr_failed;
  logic        wr_slot;                   // output buffer of the write sending its beats
  logic [2:0]  wr_stream;
  logic [EB+3:0] wr_base;                 // its chunk's first byte, modulo 8 CH
  logic [5:0]  wr_beats, wr_beats_next;   // its beats still to leave
  logic [3:0]  wr_fault_code;
  logic [63:0] wr_fault_addr;
  localparam int unsigned WQ = 4;
  logic [63:0] wq_addr [WQ];
  logic [31:0] wq_bytes [WQ];
  logic [1:0]  wq_head, wq_tail;
  logic [2:0]  wq_count;
  assign wr_beats_next = wr_beats - 6'(mem_wr_accept);
  assign beats_leaving = wr_beats != '0;

  // The reader's request goes when the port's read engine can take it; the
  // steps' write otherwise (the reader asks at most two chunks ahead). The
  // steps' other requests (scalar loads, a row store) come while the reader
  // is idle. No read is requested of bytes a tracked write covers.
  function automatic logic overlaps_write(input logic [63:0] addr, input logic [31:0] bytes);
    overlaps_write = 1'b0;
    for (int q = 0; q < WQ; q++)
      if (3'(q) < wq_count &&
          {1'b0, addr} < {1'b0, wq_addr[2'(wq_head + 2'(q))]} + {33'd0, wq_bytes[2'(wq_head + 2'(q))]} &&
          {1'b0, wq_addr[2'(wq_head + 2'(q))]} < {1'b0, addr} + {33'd0, bytes})
        overlaps_write = 1'b1;
  endfunction
  logic        own_wanted, rd_go, req_wanted, own_req;
  always_comb begin
    own_wanted = 1'b1;
    mem_req_write = 1'b0;
    mem_req_addr = chunk_addr;
    mem_req_bytes = 32'(chunk_len) << stream_size[stream];
    unique case (state)
      S_PRE_LOAD_REQ, S_ROW_LOAD_REQ: begin
        mem_req_addr = load_addr;
        mem_req_bytes = 32'(load_bytes);
        own_wanted = !overlaps_write(load_addr, 32'(load_bytes));
      end
      S_OUT_REQ: begin
        mem_req_write = 1'b1;
        own_wanted = wq_count != 3'(WQ);
      end
      S_ROW_STORE_REQ: begin
        mem_req_write = 1'b1;
        mem_req_addr = load_addr;
        mem_req_bytes = 32'd1 << row_size(su_row_store_type, su_row_store_words);
        own_wanted = wq_count != 3'(WQ);
      end
      default: own_wanted = 1'b0;
    endcase
    rd_go = rd_wanted && mem_read_ready && !overlaps_write(rd_chunk_addr, rd_chunk_bytes);
    own_req = !rd_go;
    if (rd_go) begin
      mem_req_write = 1'b0;
      mem_req_addr = rd_chunk_addr;
      mem_req_bytes = rd_chunk_bytes;
    end
    req_wanted = rd_go || own_wanted;
  end
  assign mem_req_valid = req_wanted && !wr_failed;
  logic req_taken, rd_req_taken, own_taken;
  assign req_taken = mem_req_valid && mem_req_ready;
  assign rd_req_taken = req_taken && !own_req;
  assign own_taken = req_taken && own_req;
  assign port_quiet = state == S_STEP && !rd_active && rq_count == '0;

  assign wr_offset = mem_wr_addr[EB+3:0] - wr_base;
  always_comb begin
    mem_wr_data = '0;
    // A row store writes its registers, in the order of their words from
    // load_addr; the strobes pick the words.
    // A typed store of a 1- or 2-byte element repeats its storage form over
    // the beat (the strobes pick its bytes); a wider one is words.
    if (state == S_ROW_STORE) begin
      for (int w = 0; w < WORDS; w++) mem_wr_data[32*w +: 32] = ks[su_row_store_src + row_store_word[w]];
      if (su_row_store_type[3] && npu_isa_pkg::dtype_bytes_log2(su_row_store_type[2:0]) < 2'd2)
        for (int w = 0; w < WORDS; w++)
          mem_wr_data[32*w +: 32] = npu_isa_pkg::dtype_bytes_log2(su_row_store_type[2:0]) == 2'd0
                                    ? {4{row_store_storage[7:0]}} : {2{row_store_storage[15:0]}};
    end else if (beats_leaving) begin
      // Every byte of the beat is one lane's (of its element in the chunk):
      // each element's storage form is placed at its position.
      for (int l = 0; l < L; l++)
        for (int p = 0; p < P; p++)
          if (lane_ob_in_beat[l][p])
            mem_wr_data = mem_wr_data | ((8*npu_isa_pkg::HW_AXI_DATA_BYTES)'(lane_ob_storage[l][p])
                                         << {lane_ob_pos[l][p], 3'b000});
    end
  end

  // Word w of a row store's beat: its distance from load_addr, in words
  // (modulo 16: a store moves at most two).
  logic [3:0] row_store_word [WORDS];
  for (genvar w = 0; w < WORDS; w++) begin : g_row_store_word
    assign row_store_word[w] = mem_wr_addr[5:2] + 4'(w) - load_addr[5:2];
  end

  // A typed row store's element (only its 1 or 2 bytes are repeated: a
  // wider element goes as words).
  logic [31:0] row_store_storage;
  logic        unused_row_store_storage;
  assign row_store_storage = storage_form(su_row_store_type[2:0], ks[su_row_store_src]);
  assign unused_row_store_storage = ^row_store_storage[31:16];

  // A staged scalar load: byte i of a beat at its distance from load_addr
  // (a typed load of a 1- or 2-byte element may start inside a word).
  logic [31:0] staged_next [8];
  always_comb begin
    logic [255:0] bytes;
    logic [63:0] distance;
    for (int x = 0; x < 8; x++) bytes[32*x +: 32] = staged[x];
    distance = '0;
    // (Only for a beat of a scalar load, the one use.)
    if (mem_rd_valid && (state == S_PRE_LOAD || state == S_ROW_LOAD))
      for (int i = 0; i < npu_isa_pkg::HW_AXI_DATA_BYTES; i++) begin
        distance = mem_rd_addr + 64'(i) - load_addr;
        if (mem_rd_strb[i] && distance < 64'd32) bytes[{distance[4:0], 3'b000} +: 8] = mem_rd_data[8*i +: 8];
      end
    for (int x = 0; x < 8; x++) staged_next[x] = bytes[32*x +: 32];
  end

  // A scalar access's registers: one element of its type (two for an i64),
  // or its words; log2 of a row's bytes of a row load or store.
  function automatic logic [3:0] access_regs(input logic [3:0] dtype, input logic [3:0] words);
    access_regs = !dtype[3] ? words : 32'(dtype[2:0]) == npu_isa_pkg::DTYPE_I64 ? 4'd2 : 4'd1;
  endfunction
  function automatic logic [1:0] row_size(input logic [3:0] dtype, input logic [1:0] words);
    row_size = dtype[3] ? npu_isa_pkg::dtype_bytes_log2(dtype[2:0])
                        : (words == 2'd2 ? 2'd3 : 2'd2);
  endfunction

  logic signed [63:0] index_value;
  assign index_value = su_index_wide ? $signed({staged[1], staged[0]})
                                        : 64'($signed(staged[0]));

  assign done = state == S_FINISH;
  // Only an index fault names an operand (the interconnect's errors do not).
  assign fault_operand = fault_code == npu_isa_pkg::FAULT_INDEX_OUT_OF_RANGE
                         ? su_index_operand : npu_isa_pkg::NO_OPERAND;
  assign fault_length = fault_code == npu_isa_pkg::FAULT_INDEX_OUT_OF_RANGE
                        ? (su_index_wide ? 64'd8 : 64'd4) : 64'd0;

  // Chunk positions need only the low address bits.
  logic unused_wr_addr;
  assign unused_wr_addr = ^mem_wr_addr[63:EB+4];

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

  // The row's element or words of the row store.
  logic [63:0] row_store_addr;
  assign row_store_addr = su_row_store_addr + (64'(row) << row_size(su_row_store_type,
                                                                     su_row_store_words));

  // An index row load: the index's row of the base address.
  logic [63:0] index_row_addr;
  assign index_row_addr = su_index_base + {30'd0, staged[0]} * {30'd0, row_bytes};

  // A chunk's steps write their output slot once the write sending its
  // beats from that slot is done with them.
  logic   ob_busy;
  state_e compute_state;
  assign ob_busy = wr_beats_next != '0 && wr_slot == oslot;
  assign compute_state = ob_busy ? S_WRITE_WAIT : S_STEP;

  // The reader and the write tracker. (A pass with nothing to read, or a
  // skipped row, starts no reader.)
  logic [3:0] pass_read;
  logic [2:0] pass_write;
  assign pass_read = pass_in & ~ib_zero & ~stream_high[3:0];
  assign pass_write = pass_out & ~stream_high[6:4];
  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      rd_active <= 1'b0;
      rd_j0 <= '0;
      rd_slot <= '0;
      rd_stream <= 3'd4;
      rd_mask <= '0;
      slot_busy <= '0;
      slot_issued <= '0;
      slot_failed <= '0;
      for (int k = 0; k < NS; k++) begin
        slot_pending[k] <= '0;
        slot_fault_code[k] <= npu_isa_pkg::FAULT_NONE;
        slot_fault_addr[k] <= '0;
      end
      rq_head <= '0;
      rb_head <= '0;
      rq_tail <= '0;
      rq_count <= '0;
      for (int q = 0; q < RQ; q++) begin
        rq_slot[q] <= '0;
        rq_stream[q] <= '0;
        rq_base[q] <= '0;
      end
      cslot <= '0;
      wr_failed <= 1'b0;
      wr_slot <= 1'b0;
      wr_stream <= '0;
      wr_base <= '0;
      wr_beats <= '0;
      wr_fault_code <= npu_isa_pkg::FAULT_NONE;
      wr_fault_addr <= '0;
      wq_head <= '0;
      wq_tail <= '0;
      wq_count <= '0;
      for (int q = 0; q < WQ; q++) begin
        wq_addr[q] <= '0;
        wq_bytes[q] <= '0;
      end
    end else if (soft_reset) begin
      rd_active <= 1'b0;
      slot_busy <= '0;
      rq_count <= '0;
      rq_head <= '0;
      rb_head <= '0;
      rq_tail <= '0;
      wq_count <= '0;
      wq_head <= '0;
      wq_tail <= '0;
      wr_beats <= '0;
    end else begin
      // ---- reader
      if (pass_start) begin
        // The pass's first chunk goes to slot 0 (all are free between passes).
        rd_active <= pass_read != '0;
        rd_mask <= pass_read;
        rd_j0 <= '0;
        rd_slot <= '0;
        rd_stream <= next_in(pass_read, 3'd0);
        slot_busy <= NS'(pass_read != '0);
        slot_issued <= '0;
        slot_failed <= '0;
        cslot <= '0;
      end else begin
        if (rd_req_taken) begin
          rq_slot[rq_tail] <= rd_slot;
          rq_stream[rq_tail] <= rd_stream[1:0];
          rq_base[rq_tail] <= rd_chunk_addr[EB+3:0];
          rq_tail <= rq_tail + 2'd1;
        end
        if (rd_req_taken || (rd_active && rd_stream == 3'd4)) begin
          if (rd_req_taken && next_in(rd_mask, rd_stream + 3'd1) != 3'd4) begin
            rd_stream <= next_in(rd_mask, rd_stream + 3'd1);
          end else if (rd_req_taken) begin
            // The chunk's requests are taken: on to the next chunk, into the
            // next slot once the steps are done with it.
            slot_issued[rd_slot] <= 1'b1;
            rd_slot <= next_slot(rd_slot);
            rd_j0 <= rd_j0 + 32'(CH);
            rd_active <= {1'b0, rd_j0} + 33'(CH) < {1'b0, cols};
            rd_stream <= 3'd4;
          end else if (!slot_busy[rd_slot]) begin
            slot_busy[rd_slot] <= 1'b1;
            slot_issued[rd_slot] <= 1'b0;
            slot_failed[rd_slot] <= 1'b0;
            rd_stream <= next_in(rd_mask, 3'd0);
          end
        end
        // The steps are done with their chunk: its slot is free.
        if (state == S_STEP && group_ends && last_group && rd_mask != '0) begin
          slot_busy[cslot] <= 1'b0;
          cslot <= next_slot(cslot);
        end
      end
      // A request's beats end with its last; its done follows a cycle later.
      // (A failed request may end without its last beat: with nothing in
      // flight the heads agree again.)
      if (mem_rd_valid && mem_rd_last && rq_count != '0) rb_head <= rb_head + 2'd1;
      else if (rq_count == '0) rb_head <= rq_head;
      if (mem_rd_done && rq_count != '0) begin
        rq_head <= rq_head + 2'd1;
        if (mem_rd_error && !slot_failed[rq_slot[rq_head]]) begin
          slot_failed[rq_slot[rq_head]] <= 1'b1;
          slot_fault_code[rq_slot[rq_head]] <= mem_rd_error_code;
          slot_fault_addr[rq_slot[rq_head]] <= mem_rd_error_addr;
        end
      end
      rq_count <= rq_count + 3'(rd_req_taken) - 3'(mem_rd_done && rq_count != '0);
      for (int k = 0; k < NS; k++)
        slot_pending[k] <= slot_pending[k] + 3'(rd_req_taken && rd_slot == SB'(k)) -
                           3'(mem_rd_done && rq_count != '0 && rq_slot[rq_head] == SB'(k));
      // ---- writes
      wr_beats <= wr_beats_next;
      if (req_taken && mem_req_write) begin
        wr_slot <= oslot;
        wr_stream <= stream;
        wr_base <= mem_req_addr[EB+3:0];
        wr_beats <= 6'((({27'd0, mem_req_addr[4:0]} + mem_req_bytes + 32'(npu_isa_pkg::HW_AXI_DATA_BYTES - 1))
                        >> $clog2(npu_isa_pkg::HW_AXI_DATA_BYTES)));
        wq_addr[wq_tail] <= mem_req_addr;
        wq_bytes[wq_tail] <= mem_req_bytes;
        wq_tail <= wq_tail + 2'd1;
      end
      if (mem_wr_done) wq_head <= wq_head + 2'd1;
      wq_count <= wq_count + 3'(req_taken && mem_req_write) - 3'(mem_wr_done);
      if (mem_wr_done && mem_wr_error && !wr_failed) begin
        wr_failed <= 1'b1;
        wr_fault_code <= mem_wr_error_code;
        wr_fault_addr <= mem_wr_error_addr;
      end
      if (state == S_IDLE && start) wr_failed <= 1'b0;
    end
  end

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      state <= S_IDLE;
      fault <= 1'b0;
      fault_code <= npu_isa_pkg::FAULT_NONE;
      fault_addr <= '0;
      oslot <= 1'b0;
      recipe_q <= npu_recipe_pkg::R_ILLEGAL;
      rows <= '0;
      cols <= '0;
      row <= '0;
      j0 <= '0;
      chunk_len <= '0;
      group <= '0;
      pass_idx <= '0;
      section <= npu_recipe_pkg::SEC_PRE;
      step_idx <= '0;
      cur_pass <= '0;
      stream <= '0;
      row_skipped <= 1'b0;
      zero_first_row <= '0;
      word_index <= '0;
      scan_lane <= '0;
      tree_level <= '0;
      load_addr <= '0;
      load_bytes <= '0;
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
          // A packet no recipe runs is an illegal instruction.
          recipe_q <= recipe_d;
          fault <= recipe_d == npu_recipe_pkg::R_ILLEGAL;
          fault_code <= recipe_d == npu_recipe_pkg::R_ILLEGAL ? npu_isa_pkg::FAULT_UNKNOWN_OPCODE
                                                              : npu_isa_pkg::FAULT_NONE;
          fault_addr <= '0;
          state <= recipe_d == npu_recipe_pkg::R_ILLEGAL ? S_FINISH : S_SETUP;
        end
        S_SETUP: begin
          // Shape, streams and packet scalars of the recipe.
          for (int k = 0; k < 7; k++) begin
            stream_addr[k] <= su_stream_base[k];
            stream_pitch[k] <= su_stream_per_row[k] ? 64'(su_cols) << stream_size[k] : 64'd0;
          end
          zero_first_row <= su_zero_first_row[3:0];
          row <= '0;
          pass_idx <= '0;
          rows <= su_rows;
          cols <= su_cols;
          for (int k = 0; k < npu_recipe_pkg::SU_SCALARS_COUNT; k++)
            ks[k] <= setup[npu_recipe_pkg::SU_SCALARS_LSB + 32 * k +: 32];
          index_addr <= su_row_load_addr;
          load_addr <= su_pre_load_addr;
          load_bytes <= su_pre_load_type[3]
                        ? 6'd1 << npu_isa_pkg::dtype_bytes_log2(su_pre_load_type[2:0])
                        : {su_pre_load_words, 2'b00};
          state <= S_START;
        end
        S_START: begin
          if (su_pre_load) begin
            state <= S_PRE_LOAD_REQ;
          end else begin
            section <= npu_recipe_pkg::SEC_PRE;
            step_idx <= '0;
            word_index <= '0;
            state <= S_SCALAR;
          end
        end
        S_PRE_LOAD_REQ, S_ROW_LOAD_REQ: if (own_taken) begin
          state <= state == S_PRE_LOAD_REQ ? S_PRE_LOAD : S_ROW_LOAD;
        end
        S_PRE_LOAD: begin
          if (mem_rd_valid) for (int x = 0; x < 8; x++) staged[x] <= staged_next[x];
          if (mem_rd_done) begin
            if (mem_rd_error) begin
              fault <= 1'b1;
              fault_code <= mem_rd_error_code;
              fault_addr <= mem_rd_error_addr;
              state <= S_DRAIN;
            end else begin
              // The words, or the element in lane form, into K<first>...
              for (int x = 0; x < 8; x++)
                if (4'(x) < access_regs(su_pre_load_type, su_pre_load_words))
                  ks[su_pre_load_first + 4'(x)] <= x == 0 ? lane_form(su_pre_load_type[2:0], staged[0])
                                                          : staged[x];
              section <= npu_recipe_pkg::SEC_PRE;
              step_idx <= '0;
              word_index <= '0;
              state <= S_SCALAR;
            end
          end
        end
        S_SCALAR, S_STEP: begin
          // One step: load the inputs, run the ROM words, write back. The
          // lanes store the result; a scalar one is lane 0's.
          if (step_kind == npu_recipe_pkg::STEP_RUN && last_word && step_dst[4])
            ks[step_dst[3:0]] <= lane_result[0];
          // A scan's running value: the lane's result, while it holds an element.
          if (scan_step && lane_valid[scan_lane]) ks[step_s0[3:0]] <= lane_result[scan_lane];
          if (scan_step) scan_lane <= step_done ? '0 : scan_lane + LB'(1);
          if (group_ends) begin
            step_idx <= '0;
            word_index <= '0;
            if (!last_group) group <= group + GB'(1);
            else begin
              stream <= next_out(pass_write, 3'd4);
              state <= next_out(pass_write, 3'd4) == 3'd7 ? S_PASS : S_OUT_REQ;
              if (next_out(pass_write, 3'd4) == 3'd7) j0 <= j0 + 32'(CH);
            end
          end else if (step_kind == npu_recipe_pkg::STEP_END) begin
            if (section == npu_recipe_pkg::SEC_PRE) begin
              state <= S_ROW;
            end else begin
              // After pass pass_idx's scalar steps: the next pass or the row's end.
              pass_idx <= pass_idx + 2'd1;
              cur_pass <= npu_recipe_pkg::recipe_pass(recipe_q, pass_idx + 2'd1);
              state <= npu_recipe_pkg::recipe_pass(recipe_q, pass_idx + 2'd1) == '0
                       ? (su_row_store ? S_ROW_STORE_REQ : S_NEXT_ROW) : S_PASS;
              j0 <= '0;
              if (su_row_store) load_addr <= row_store_addr;
            end
          end else if (step_done) begin
            word_index <= '0;
            step_idx <= step_idx + 1'b1;
          end else if (!scan_step) begin
            word_index <= word_index + 1'b1;
          end
        end
        S_ROW: begin
          // Row prologue: the row's scalar load, if any.
          row_skipped <= 1'b0;
          pass_idx <= '0;
          cur_pass <= npu_recipe_pkg::recipe_pass(recipe_q, 2'd0);
          j0 <= '0;
          if (su_row_load != npu_recipe_pkg::ROW_LOAD_NONE) begin
            load_addr <= index_addr;
            load_bytes <= su_row_load == npu_recipe_pkg::ROW_LOAD_INDEX
                          ? (su_index_wide ? 6'd8 : 6'd4)
                          : 6'd1 << row_size(su_row_load_type, su_row_load_words);
            state <= S_ROW_LOAD_REQ;
          end else begin
            state <= S_PASS;
          end
        end
        S_ROW_LOAD: begin
          if (mem_rd_valid) for (int x = 0; x < 8; x++) staged[x] <= staged_next[x];
          if (mem_rd_done) begin
            if (mem_rd_error) begin
              fault <= 1'b1;
              fault_code <= mem_rd_error_code;
              fault_addr <= mem_rd_error_addr;
              state <= S_DRAIN;
            end else if (su_row_load == npu_recipe_pkg::ROW_LOAD_INDEX) begin
              state <= S_INDEX_CHECK;
            end else begin
              for (int x = 0; x < 2; x++)
                if (4'(x) < access_regs(su_row_load_type, 4'(su_row_load_words)))
                  ks[su_row_load_dst + 4'(x)] <= x == 0 ? lane_form(su_row_load_type[2:0], staged[0])
                                                        : staged[x];
              index_addr <= index_addr + (64'd1 << row_size(su_row_load_type, su_row_load_words));
              state <= S_PASS;
            end
          end
        end
        S_INDEX_CHECK: begin
          if (index_value < 0 || index_value >= $signed({32'd0, su_index_bound})) begin
            fault <= 1'b1;
            fault_code <= npu_isa_pkg::FAULT_INDEX_OUT_OF_RANGE;
            fault_addr <= index_addr;
            state <= S_DRAIN;
          end else begin
            row_skipped <= $signed(su_index_skip) >= 0 &&
                           index_value == 64'($signed(su_index_skip));
            for (int k = 0; k < 7; k++) if (su_rebase[k]) stream_addr[k] <= index_row_addr;
            index_addr <= index_addr + (su_index_wide ? 64'd8 : 64'd4);
            state <= S_PASS;
          end
        end
        S_PASS: begin
          // Start of a pass (j0 == 0) or of its next chunk.
          if (!pass_valid || row_skipped) begin
            state <= su_row_store ? S_ROW_STORE_REQ : S_NEXT_ROW;
            if (su_row_store) load_addr <= row_store_addr;
          end else if (j0 != '0 && {1'b0, j0} >= {1'b0, cols}) begin
            // The pass is over: combine the lanes, or go on.
            if (pass_reduce != npu_recipe_pkg::RED_NONE) begin
              tree_level <= '0;
              state <= S_TREE;
            end else begin
              section <= npu_recipe_pkg::SEC_AFTER0 + 3'(pass_idx);
              step_idx <= '0;
              word_index <= '0;
              state <= S_SCALAR;
            end
          end else begin
            // (The lanes clear their accumulators at the pass's first chunk.)
            chunk_len <= {1'b0, cols} - {1'b0, j0} >= 33'(CH) ? (EB+1)'(CH) : (EB+1)'(cols - j0);
            state <= pass_read == '0 ? compute_state : S_IN;
            group <= '0;
            section <= npu_recipe_pkg::SEC_PASS0 + 3'(pass_idx);
            step_idx <= '0;
            word_index <= '0;
          end
        end
        // The chunk's reads (the reader's).
        S_IN: if (slot_ready) begin
          if (slot_failed[cslot]) begin
            fault <= 1'b1;
            fault_code <= slot_fault_code[cslot];
            fault_addr <= slot_fault_addr[cslot];
            state <= S_DRAIN;
          end else begin
            state <= compute_state;
          end
        end
        S_WRITE_WAIT: if (!ob_busy) state <= S_STEP;
        // The write is posted (the tracker follows it).
        S_OUT_REQ: if (own_taken) begin
          stream <= next_out(pass_write, stream + 3'd1);
          state <= next_out(pass_write, stream + 3'd1) == 3'd7 ? S_PASS : S_OUT_REQ;
          if (next_out(pass_write, stream + 3'd1) == 3'd7) begin
            j0 <= j0 + 32'(CH);
            oslot <= !oslot;
          end
        end
        S_TREE: begin
          // ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)), level by level.
          tree_level <= tree_level + 2'd1;
          if ((L >> (tree_level + 1)) == 1) begin
            ks[pass_kdst] <= lane_alu[0];
            section <= npu_recipe_pkg::SEC_AFTER0 + 3'(pass_idx);
            step_idx <= '0;
            word_index <= '0;
            state <= S_SCALAR;
          end
        end
        S_ROW_STORE_REQ: if (own_taken) state <= S_ROW_STORE;
        // Once its beats have left the registers may change. (A failed
        // store is the tracker's: S_NEXT_ROW stops.)
        S_ROW_STORE: if (wr_beats_next == '0) state <= S_NEXT_ROW;
        S_NEXT_ROW: begin
          for (int k = 0; k < 7; k++) stream_addr[k] <= stream_addr[k] + stream_pitch[k];
          row <= row + 32'd1;
          state <= row + 32'd1 == rows ? S_DRAIN : S_ROW;
        end
        // The packet ends with its last write's response and its last
        // read; a failed write is its fault, even after a read's or an index's.
        S_DRAIN: if (wq_count == '0 && rq_count == '0) begin
          if (wr_failed) begin
            fault <= 1'b1;
            fault_code <= wr_fault_code;
            fault_addr <= wr_fault_addr;
          end
          state <= S_FINISH;
        end
        S_FINISH: state <= S_IDLE;
        default: state <= S_IDLE;
      endcase
      // After a failed write the engine requests nothing more.
      if (wr_failed && (state == S_PRE_LOAD_REQ || state == S_ROW_LOAD_REQ || state == S_IN ||
                        state == S_OUT_REQ || state == S_ROW_STORE_REQ || state == S_NEXT_ROW))
        state <= S_DRAIN;

    end
  end

endmodule
