// The matrix engine: MATMUL and BMM on a T x T output-stationary array of
// fused multiply-add PEs (T = HW_MATRIX_TILE).
//
// C is computed one block of BT x BT output tiles (BT =
// HW_MATRIX_BLOCK_TILES; BR = T * BT rows and columns) at a time. PE (i, j)
// holds one accumulator per tile of the block, for C[ta*T + i][tb*T + j]:
// +0, or the old C with the acc flag. The reduction dimension streams
// through in panels of KC: the block's A panel (BR rows x KC) and B panel
// (KC x BR). For each k of the panel, every tile of the block takes one
// cycle in which every PE computes acc = fma(A[i][k], B[k][j], acc) on that
// tile's accumulator, with A[ta*T + i][k] broadcast along row i and
// B[k][tb*T + j] along column j. Every output therefore accumulates k = 0
// .. K-1 strictly in order, one rounding per step, as docs/arith.md §3.2
// requires. A panel word feeds BT tiles, so a compute cycle needs 2 / BT
// words per PE row and column where a single tile needs 2 (docs/rtl.md,
// "Matrix engine throughput").
//
// Two machines share the engine. The memory side issues the requests in
// order: the old C of a block (or clears the accumulators), the block's
// panels into the load buffers, and the finished block's C rows as one
// request, whose write bursts the port posts. The compute side copies
// full load buffers into the panels it shifts through the array, so the
// memory side loads the next panels (of this block or the next) while the
// current ones compute; a block's store waits only for its last compute
// step, and the next block's first panels are already loaded by then.
//
// Operand rows are contiguous runs in memory; a panel (or the old C block)
// is one request of many runs, which the memory port pipelines: with
// transa (A stored K x M) the A panel is loaded column by column, with
// transb (B stored N x K) the B panel too. BMM repeats the product per
// batch element at base + p * stride elements (dense pitches; stride 0
// broadcasts).
//
// Elements are 4 or 2 bytes (docs/types.md §2): A and B of type dtype, C
// of type otype, each f32, bf16 or f16. A 2-byte element widens exactly to
// binary32 as its beat arrives (npu_convert_pkg), so the buffers, the
// panels and the PEs hold binary32 only, and a 2-byte C element is rounded
// once (RNE) from its accumulator as its beat leaves. C is disjoint from A and B (the command processor checked
// it), so loading the next block's panels before storing C is safe.
//
// The command processor checked the pitches, the extents and the overlaps
// before the start (the memory operands of isa/matrix.td).
module npu_matrix (
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
  output logic [3:0]  dbg_state,
  output logic        port_quiet,         // the memory side waits for the compute side

  output logic        mem_req_valid,
  output logic        mem_req_write,
  output logic [63:0] mem_req_addr,
  output logic [31:0] mem_req_bytes,
  output logic [15:0] mem_req_rows,
  output logic [63:0] mem_req_pitch,
  input  logic        mem_req_ready,
  input  logic        mem_rd_valid,
  input  logic [63:0] mem_rd_addr,
  input  logic [8*npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] mem_rd_data,
  input  logic [npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] mem_rd_strb,
  input  logic [15:0] mem_rd_row,
  input  logic [63:0] mem_rd_row_start,
  input  logic [63:0] mem_wr_addr,
  input  logic [15:0] mem_wr_row,
  input  logic [63:0] mem_wr_row_start,
  output logic [8*npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] mem_wr_data,
  input  logic        mem_done,
  input  logic        mem_error,
  input  logic [3:0]  mem_error_code,
  input  logic [63:0] mem_error_addr
);

  localparam int unsigned T = npu_isa_pkg::HW_MATRIX_TILE;
  localparam int unsigned BT = npu_isa_pkg::HW_MATRIX_BLOCK_TILES;
  localparam int unsigned BR = T * BT;                // rows and columns of a block
  localparam int unsigned SLOTS = BT * BT;            // accumulators per PE
  localparam int unsigned KC = 16;                    // reduction panel depth (<= BR)
  localparam int unsigned WORDS = npu_isa_pkg::HW_AXI_DATA_BYTES / 4;
  localparam int unsigned HALVES = 2 * WORDS;          // 2-byte elements per beat
  localparam int unsigned HB = $clog2(HALVES);
  localparam int unsigned TB = $clog2(T);
  localparam int unsigned BTB = $clog2(BT);
  localparam int unsigned SB = $clog2(SLOTS);
  localparam int unsigned XB = $clog2(BR);            // runs are at most BR elements
  localparam int unsigned WB = $clog2(WORDS);

  // The memory side and the compute side (see the header).
  typedef enum logic [2:0] {
    M_IDLE, M_DECIDE, M_ADDR_BATCH, M_ADDR_RUN, M_REQ, M_RUN, M_FINISH
  } mem_state_e;
  typedef enum logic [0:0] {X_WAIT, X_RUN} compute_state_e;
  // Who owns the accumulators: the memory side initialising them for the
  // block at the C cursor, the compute side, or the memory side storing them.
  typedef enum logic [1:0] {ACC_INIT, ACC_COMPUTE, ACC_STORE} acc_phase_e;
  mem_state_e mstate;
  compute_state_e xstate;
  acc_phase_e acc_phase;
  assign dbg_state = {xstate == X_RUN, mstate};

  // What a run moves: a row or a column of a panel, or a row of the block.
  typedef enum logic [2:0] {
    RUN_A_ROW, RUN_A_COL, RUN_B_ROW, RUN_B_COL, RUN_C_LOAD, RUN_C_STORE
  } run_kind_e;

  // ---- packet fields ---------------------------------------------------------------
  logic is_bmm;
  assign is_bmm = packet[31:0] == npu_isa_pkg::OP_BMM;
  logic [63:0] c_addr, a_addr, b_addr;
  logic [31:0] m, k, n, lda_field, ldb_field, ldc_field, batch, stride_a, stride_b, stride_c;
  logic trans_a, trans_b, accumulate;
  assign c_addr = packet[npu_isa_pkg::MATMUL_C_LSB +: 64];
  assign a_addr = packet[npu_isa_pkg::MATMUL_A_LSB +: 64];
  assign b_addr = packet[npu_isa_pkg::MATMUL_B_LSB +: 64];
  assign m = packet[npu_isa_pkg::MATMUL_M_LSB +: 32];
  assign k = packet[npu_isa_pkg::MATMUL_K_LSB +: 32];
  assign n = packet[npu_isa_pkg::MATMUL_N_LSB +: 32];
  assign lda_field = is_bmm ? 32'd0 : packet[npu_isa_pkg::MATMUL_LDA_LSB +: 32];
  assign ldb_field = is_bmm ? 32'd0 : packet[npu_isa_pkg::MATMUL_LDB_LSB +: 32];
  assign ldc_field = is_bmm ? 32'd0 : packet[npu_isa_pkg::MATMUL_LDC_LSB +: 32];
  assign batch = is_bmm ? packet[npu_isa_pkg::BMM_BATCH_LSB +: 32] : 32'd1;
  // MATMUL's batch element is always 0: its "strides" (other fields) multiply 0.
  assign stride_a = packet[npu_isa_pkg::BMM_STRIDE_A_LSB +: 32];
  assign stride_b = packet[npu_isa_pkg::BMM_STRIDE_B_LSB +: 32];
  assign stride_c = packet[npu_isa_pkg::BMM_STRIDE_C_LSB +: 32];
  assign trans_a = packet[npu_isa_pkg::MATMUL_TRANSA_LSB];
  assign trans_b = packet[npu_isa_pkg::MATMUL_TRANSB_LSB];
  assign accumulate = packet[npu_isa_pkg::MATMUL_ACC_LSB];
  // The element types (the command processor accepted only f32, bf16, f16).
  logic [2:0] in_type, out_type;
  logic out_half;
  assign in_type = packet[npu_isa_pkg::MATMUL_DTYPE_LSB +: 3];
  assign out_type = packet[npu_isa_pkg::MATMUL_OTYPE_LSB +: 3];
  assign out_half = npu_isa_pkg::dtype_bytes_log2(out_type) == 2'd1;
  logic unused_type_bits;
  assign unused_type_bits = ^{packet[npu_isa_pkg::MATMUL_DTYPE_LSB + 3],
                              packet[npu_isa_pkg::MATMUL_OTYPE_LSB + 3]};

  // Stored shapes and the pitches with 0 meaning dense.
  logic [31:0] a_cols, b_cols, lda, ldb, ldc;
  assign a_cols = trans_a ? m : k;
  assign b_cols = trans_b ? k : n;
  assign lda = lda_field != 32'd0 ? lda_field : a_cols;
  assign ldb = ldb_field != 32'd0 ? ldb_field : b_cols;
  assign ldc = ldc_field != 32'd0 ? ldc_field : n;

  // The part of a dimension from `origin` on, at most `limit`.
  function automatic logic [XB:0] clip(input logic [31:0] total, input logic [31:0] origin,
                                       input logic [XB:0] limit);
    clip = total - origin >= 32'(limit) ? limit : (XB+1)'(total - origin);
  endfunction
  // Tiles covering `rows` rows (1 .. BT).
  function automatic logic [BTB:0] tiles_of(input logic [XB:0] rows);
    tiles_of = (BTB+1)'((rows + (XB+1)'(T - 1)) >> TB);
  endfunction

  // ---- cursors ---------------------------------------------------------------------------
  // The panel cursor: the next panel to load (batch element, block origin,
  // reduction start). The C cursor: the block whose accumulators are in
  // the array (loaded, computing or to be stored). The panel cursor runs at
  // most one panel ahead of the compute side, into the next block.
  logic [31:0] pp, pbi, pbj, pk0;
  logic        panels_left;
  logic [31:0] cp, cbi, cbj;
  logic [XB:0] p_rows, p_cols, p_depth;   // the panel's block rows, columns and depth
  logic [XB:0] c_rows, c_cols;            // the C block's rows and columns
  assign p_rows = clip(m, pbi, (XB+1)'(BR));
  assign p_cols = clip(n, pbj, (XB+1)'(BR));
  assign p_depth = clip(k, pk0, (XB+1)'(KC));
  assign c_rows = clip(m, cbi, (XB+1)'(BR));
  assign c_cols = clip(n, cbj, (XB+1)'(BR));

  logic last_pk, last_pj, last_pi, last_pp, last_cj, last_ci, last_cp;
  assign last_pk = pk0 + 32'(KC) >= k;
  assign last_pj = pbj + 32'(BR) >= n;
  assign last_pi = pbi + 32'(BR) >= m;
  assign last_pp = pp + 32'd1 >= batch;
  assign last_cj = cbj + 32'(BR) >= n;
  assign last_ci = cbi + 32'(BR) >= m;
  assign last_cp = cp + 32'd1 >= batch;

  // ---- runs ----------------------------------------------------------------------------------
  // The request of the current run kind: `run_count` runs of `run_words`
  // contiguous elements, the first at row `run_row`, column `run_col` of
  // the matrix at `run_matrix` + 4 * run_batch * run_stride with pitch
  // `run_pitch`, the others following it `run_pitch` elements apart.
  run_kind_e   run_kind;
  logic [31:0] run_batch, run_stride, run_row, run_col, run_pitch;
  logic [63:0] run_matrix;
  logic [XB:0] run_words, run_count;
  always_comb begin
    run_batch = pp;
    run_matrix = a_addr;
    run_stride = stride_a;
    run_pitch = lda;
    run_row = pbi;
    run_col = pk0;
    run_words = p_depth;
    run_count = p_rows;
    unique case (run_kind)
      RUN_A_ROW: ;       // A[pbi + r][pk0 ..]
      RUN_A_COL: begin   // A stored K x M: row pk0 + c, columns pbi ..
        run_row = pk0; run_col = pbi; run_words = p_rows; run_count = p_depth;
      end
      RUN_B_ROW: begin   // B[pk0 + r][pbj ..]
        run_matrix = b_addr; run_stride = stride_b; run_pitch = ldb;
        run_row = pk0; run_col = pbj; run_words = p_cols; run_count = p_depth;
      end
      RUN_B_COL: begin   // B stored N x K: row pbj + c, columns pk0 ..
        run_matrix = b_addr; run_stride = stride_b; run_pitch = ldb;
        run_row = pbj; run_col = pk0; run_words = p_depth; run_count = p_cols;
      end
      default: begin     // C rows cbi + r, columns cbj ..
        run_batch = cp; run_matrix = c_addr; run_stride = stride_c; run_pitch = ldc;
        run_row = cbi; run_col = cbj; run_words = c_cols; run_count = c_rows;
      end
    endcase
  end

  // The run's element type: its size's log2 (1 or 2) and whether it is 2 bytes.
  logic [2:0]  run_type;
  logic [1:0]  run_shift;
  logic        run_half;
  assign run_type = run_kind == RUN_C_LOAD || run_kind == RUN_C_STORE ? out_type : in_type;
  assign run_shift = npu_isa_pkg::dtype_bytes_log2(run_type);
  assign run_half = run_shift == 2'd1;

  // The shared 32 x 32 multiplier: the batch offset, then the run's row offset.
  logic [31:0] mul_x, mul_y;
  // Element offsets within checked extents: in bytes they fit in 64 bits.
  logic [61:0] product, batch_offset;
  logic [63:0] run_addr;
  assign mul_x = mstate == M_ADDR_BATCH ? run_batch : run_row;
  assign mul_y = mstate == M_ADDR_BATCH ? run_stride : run_pitch;
  assign product = 62'({32'd0, mul_x} * {32'd0, mul_y});

  // ---- buffers -------------------------------------------------------------------------------
  // The load buffers: a_load[r] holds A[pbi + r][pk0 ..], b_load[c] holds
  // B[pk0 ..][pbj + c], element x in bits 32x. `load_full` marks a complete
  // panel pair, with its shape. The compute side copies them into the
  // panels a_cur and b_cur, which shift towards the array: bits 31:0 hold
  // the operands of the current k.
  logic [32*KC-1:0] a_load [BR];
  logic [32*KC-1:0] b_load [BR];
  logic [32*KC-1:0] a_cur [BR];
  logic [32*KC-1:0] b_cur [BR];
  logic        load_full, load_last;
  logic [XB:0] load_depth;
  logic [BTB:0] load_row_tiles, load_col_tiles;
  logic        cur_last;
  logic [XB:0] cur_depth, kk;
  logic [BTB:0] cur_row_tiles, cur_col_tiles;
  logic [BTB-1:0] ta, tb;                 // the tile computing this cycle

  logic take, last_tile_of_k, shift;
  assign take = xstate == X_WAIT && load_full && acc_phase == ACC_COMPUTE &&
                mstate != M_IDLE && mstate != M_FINISH;
  assign last_tile_of_k = (BTB+1)'(tb) + (BTB+1)'(1) == cur_col_tiles &&
                          (BTB+1)'(ta) + (BTB+1)'(1) == cur_row_tiles;
  assign shift = xstate == X_RUN && last_tile_of_k;

  // ---- the PE array ---------------------------------------------------------------------
  logic [31:0] a_op [T];
  logic [31:0] b_op [T];
  always_comb begin
    for (int i = 0; i < T; i++) a_op[i] = a_cur[{ta, TB'(i)}][31:0];
    for (int j = 0; j < T; j++) b_op[j] = b_cur[{tb, TB'(j)}][31:0];
  end
  logic [32*SLOTS-1:0] acc [T][T];
  logic        pe_clear;
  // A beat holds up to LOADS elements of one PE column (2-byte elements:
  // HALVES consecutive ones), each of another tile: one load port each.
  localparam int unsigned LOADS = HALVES > T ? HALVES / T : 1;
  logic [LOADS-1:0] pe_load [T][T];
  logic [LOADS*SB-1:0] pe_load_slot [T][T];
  logic [32*LOADS-1:0] pe_value [T][T];
  for (genvar i = 0; i < T; i++) begin : g_row
    for (genvar j = 0; j < T; j++) begin : g_col
      npu_matrix_pe #(.SLOTS(SLOTS), .LOADS(LOADS)) u_pe (
        .clk, .enable(xstate == X_RUN), .slot({ta, tb}), .a(a_op[i]), .b(b_op[j]),
        .clear(pe_clear), .load(pe_load[i][j]), .load_slot(pe_load_slot[i][j]),
        .load_value(pe_value[i][j]), .acc(acc[i][j]));
    end
  end

  // ---- beats to buffers -----------------------------------------------------------------
  // A read beat holds consecutive elements of run mem_rd_row, the first of
  // them at index `beat_first` of the run (runs are at most BR elements,
  // so the low address bits suffice; the first beat of a run may start
  // before it, which the strobes exclude). Element x of the run is in the
  // beat when `beat_hit[x]`; its binary32 value is `beat_word[x mod
  // HALVES]`, the beat rotated (and 2-byte elements widened) so that every
  // buffer entry has one fixed source.
  logic [XB:0] beat_first;
  logic [BR-1:0] beat_hit;
  logic [31:0] beat_word [HALVES];
  logic [XB-1:0] beat_row;
  assign beat_first = run_half ? (XB+1)'(mem_rd_addr[XB+1:1] - mem_rd_row_start[XB+1:1])
                               : (XB+1)'(mem_rd_addr[XB+2:2] - mem_rd_row_start[XB+2:2]);
  assign beat_row = XB'(mem_rd_row);
  // (Placed only while a beat arrives: a Verilated model evaluates this
  // block in both evaluations of every cycle, and skips the loops then.)
  always_comb begin
    logic [XB:0] offset;
    logic [WB-1:0] w;
    logic [HB-1:0] h;
    {offset, w, h} = '0;
    beat_hit = '0;
    for (int j = 0; j < HALVES; j++) beat_word[j] = '0;
    if (mem_rd_valid) begin
      for (int x = 0; x < BR; x++) begin
        offset = (XB+1)'(x) - beat_first;
        beat_hit[x] = run_half ? offset < (XB+1)'(HALVES) && mem_rd_strb[2 * offset[HB-1:0]]
                               : offset < (XB+1)'(WORDS) && mem_rd_strb[4 * offset[WB-1:0]];
      end
      for (int j = 0; j < HALVES; j++) begin
        w = WB'(j) - beat_first[WB-1:0];
        h = HB'(j) - beat_first[HB-1:0];
        if (!run_half)
          beat_word[j] = mem_rd_data[32 * w +: 32];
        else if (32'(run_type) == npu_isa_pkg::DTYPE_BF16)
          beat_word[j] = npu_convert_pkg::widen_bf16(mem_rd_data[16 * h +: 16]);
        else
          beat_word[j] = npu_convert_pkg::widen_f16(mem_rd_data[16 * h +: 16]);
      end
    end
  end

  // A write beat of C block row mem_wr_row (tile row ta, PE row i): element
  // x of the row is element (x - the beat's first element) of the beat,
  // from PE (i, x mod T), slot (ta, x / T); a 2-byte C rounded to otype.
  logic [XB:0] store_first;
  logic [31:0] store_row [BR];
  logic [TB-1:0] store_i;
  logic [BTB-1:0] store_ta;
  assign store_first = out_half ? (XB+1)'(mem_wr_addr[XB+1:1] - mem_wr_row_start[XB+1:1])
                                : (XB+1)'(mem_wr_addr[XB+2:2] - mem_wr_row_start[XB+2:2]);
  assign store_i = mem_wr_row[TB-1:0];
  assign store_ta = mem_wr_row[XB-1:TB];
  // The row and its beat are formed only while C is stored (the port takes
  // the matrix engine's write data only then), so that a Verilated model
  // skips them in the other cycles.
  logic storing;
  assign storing = mstate == M_RUN && run_kind == RUN_C_STORE;
  always_comb begin
    logic [31:0] value;
    value = '0;
    for (int x = 0; x < BR; x++)
      store_row[x] = storing ? acc[store_i][x % T][32 * {store_ta, BTB'(x / T)} +: 32] : '0;
    mem_wr_data = '0;
    if (storing && out_half)
      for (int h = 0; h < HALVES; h++) begin
        value = store_row[XB'(h) + store_first[XB-1:0]];
        if (32'(out_type) == npu_isa_pkg::DTYPE_BF16)
          mem_wr_data[16*h +: 16] = npu_convert_pkg::narrow_bf16(value);
        else
          mem_wr_data[16*h +: 16] = npu_convert_pkg::narrow_f16(value);
      end
    else if (storing)
      for (int w = 0; w < WORDS; w++)
        mem_wr_data[32*w +: 32] = store_row[XB'(w) + store_first[XB-1:0]];
  end

  // Panel entries: A[r][x] is element x of run r (A_ROW) or element r of run
  // x (A_COL); B[x][c] element c of run x (B_ROW) or element x of run c
  // (B_COL). (C rows go to the PEs, pe_load.) Entries are written at
  // constant positions (no address decoders), and the panels are touched
  // only in the cycles that load, copy or consume them. A beat writes
  // a_entries[r] of load buffer row r (b_entries[c] of column c): the
  // elements of the beat in order along a run (A_ROW, B_COL), or element r
  // (c) of the beat into entry beat_row across the runs (A_COL, B_ROW). A
  // row is written whole, so that a Verilated model keeps one pending write
  // per row rather than one per entry.
  logic [KC-1:0] a_entries [BR];
  logic [KC-1:0] b_entries [BR];
  logic [32*HALVES-1:0] beat_words;
  always_comb begin
    for (int r = 0; r < BR; r++) begin
      a_entries[r] = '0;
      b_entries[r] = '0;
    end
    for (int j = 0; j < HALVES; j++) beat_words[32*j +: 32] = beat_word[j];
    if (mstate == M_RUN && mem_rd_valid)
      for (int r = 0; r < BR; r++)
        unique case (run_kind)
          RUN_A_ROW: if (beat_row == XB'(r)) a_entries[r] = beat_hit[KC-1:0];
          RUN_A_COL: if (beat_hit[r]) a_entries[r] = KC'(1) << beat_row;
          RUN_B_ROW: if (beat_hit[r]) b_entries[r] = KC'(1) << beat_row;
          RUN_B_COL: if (beat_row == XB'(r)) b_entries[r] = beat_hit[KC-1:0];
          default: ;
        endcase
  end
  // `row` with the entries of `entries` replaced: entry x by word x mod
  // HALVES of `words` (along a run) or by `word`.
  function automatic logic [32*KC-1:0] with_entries(input logic [32*KC-1:0] row,
                                                    input logic [KC-1:0] entries, input logic along,
                                                    input logic [32*HALVES-1:0] words,
                                                    input logic [31:0] word);
    with_entries = row;
    for (int x = 0; x < KC; x++)
      if (entries[x]) with_entries[32*x +: 32] = along ? words[32*(x % HALVES) +: 32] : word;
  endfunction
  always_ff @(posedge clk) begin
    if (take) begin
      for (int r = 0; r < BR; r++) begin
        a_cur[r] <= a_load[r];
        b_cur[r] <= b_load[r];
      end
    end else if (shift) begin
      for (int r = 0; r < BR; r++) begin
        a_cur[r] <= a_cur[r] >> 32;
        b_cur[r] <= b_cur[r] >> 32;
      end
    end
  end
  for (genvar r = 0; r < BR; r++) begin : g_load_row
    always_ff @(posedge clk) begin
      if (|a_entries[r])
        a_load[r] <= with_entries(a_load[r], a_entries[r], run_kind == RUN_A_ROW, beat_words,
                                  beat_word[r % HALVES]);
      if (|b_entries[r])
        b_load[r] <= with_entries(b_load[r], b_entries[r], run_kind == RUN_B_COL, beat_words,
                                  beat_word[r % HALVES]);
    end
  end

  // Run positions need only the low address bits.
  logic unused_beat_addr;
  assign unused_beat_addr = ^{mem_rd_addr[63:XB+3], mem_rd_addr[0], mem_wr_addr[63:XB+3],
                              mem_wr_addr[0], mem_rd_row_start[63:XB+3],
                              mem_rd_row_start[0], mem_rd_row[15:XB], store_first[XB],
                              mem_wr_row_start[63:XB+3], mem_wr_row_start[0], mem_wr_row[15:XB]};

  // Accumulator initialisation: +0 for every tile, or the old C row by row
  // with acc (a beat's elements are in one block row; those of one PE
  // column, in tiles tb, tb + 1, ..., go to its load ports in that order).
  // (Decoded only while a beat of old C arrives: a Verilated model skips the
  // array's ports in every other cycle.)
  assign pe_clear = mstate == M_DECIDE && acc_phase == ACC_INIT && !accumulate;
  logic c_beat;
  assign c_beat = mstate == M_RUN && run_kind == RUN_C_LOAD && mem_rd_valid;
  always_comb begin
    int unsigned port;
    port = 0;
    for (int i = 0; i < T; i++)
      for (int j = 0; j < T; j++) begin
        pe_load[i][j] = '0;
        pe_load_slot[i][j] = '0;
        pe_value[i][j] = '0;
      end
    if (c_beat)
      for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) begin
          port = 0;
          for (int ta_load = 0; ta_load < BT; ta_load++)
            for (int tb_load = 0; tb_load < BT; tb_load++)
              if (port < LOADS && beat_row == XB'(ta_load * T + i) && beat_hit[tb_load * T + j]) begin
                pe_load[i][j][port] = 1'b1;
                pe_load_slot[i][j][SB*port +: SB] = SB'(ta_load * BT + tb_load);
                pe_value[i][j][32*port +: 32] = beat_word[(tb_load * T + j) % HALVES];
                port = port + 1;
              end
        end
  end

  // All runs of the kind in one request (the port posts the C rows' writes).
  assign mem_req_valid = mstate == M_REQ;
  assign mem_req_write = run_kind == RUN_C_STORE;
  assign mem_req_addr = run_addr;
  assign mem_req_bytes = 32'(run_words) << run_shift;
  assign mem_req_rows = 16'(run_count);
  assign mem_req_pitch = {32'd0, run_pitch} << run_shift;
  assign done = mstate == M_FINISH;
  // Nothing to load until the compute side takes the loaded panels or
  // finishes the block: the command processor may read the next packet.
  assign port_quiet = mstate == M_DECIDE && acc_phase == ACC_COMPUTE &&
                      (!panels_left || load_full);
  // The command processor checked every range: only the interconnect's
  // errors end a packet here, and they name no operand.
  assign fault_operand = npu_isa_pkg::NO_OPERAND;
  assign fault_length = '0;

  // Starts the request of a run kind (its address takes two cycles).
  task automatic begin_run(input run_kind_e kind);
    run_kind <= kind;
    mstate <= M_ADDR_BATCH;
  endtask

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      mstate <= M_IDLE;
      xstate <= X_WAIT;
      acc_phase <= ACC_INIT;
      fault <= 1'b0;
      fault_code <= npu_isa_pkg::FAULT_NONE;
      fault_addr <= '0;
      pp <= '0;
      pbi <= '0;
      pbj <= '0;
      pk0 <= '0;
      panels_left <= 1'b0;
      cp <= '0;
      cbi <= '0;
      cbj <= '0;
      run_kind <= RUN_C_LOAD;
      batch_offset <= '0;
      run_addr <= '0;
      load_full <= 1'b0;
      load_last <= 1'b0;
      load_depth <= '0;
      load_row_tiles <= '0;
      load_col_tiles <= '0;
      cur_last <= 1'b0;
      cur_depth <= '0;
      cur_row_tiles <= '0;
      cur_col_tiles <= '0;
      kk <= '0;
      ta <= '0;
      tb <= '0;
    end else if (soft_reset) begin
      mstate <= M_IDLE;
      xstate <= X_WAIT;
    end else begin
      // ---- the memory side ----
      unique case (mstate)
        M_IDLE: if (start) begin
          fault <= 1'b0;
          fault_code <= npu_isa_pkg::FAULT_NONE;
          fault_addr <= '0;
          pp <= '0;
          pbi <= '0;
          pbj <= '0;
          pk0 <= '0;
          panels_left <= 1'b1;
          cp <= '0;
          cbi <= '0;
          cbj <= '0;
          acc_phase <= ACC_INIT;
          load_full <= 1'b0;
          mstate <= M_DECIDE;
        end
        M_DECIDE: begin
          // The accumulators first (the compute side waits for them), then
          // the next panels once the load buffers are free.
          if (acc_phase == ACC_INIT) begin
            if (accumulate) begin_run(RUN_C_LOAD);
            else acc_phase <= ACC_COMPUTE;   // pe_clear
          end else if (acc_phase == ACC_STORE) begin
            begin_run(RUN_C_STORE);
          end else if (panels_left && !load_full) begin
            begin_run(trans_a ? RUN_A_COL : RUN_A_ROW);
          end
        end
        M_ADDR_BATCH: begin
          batch_offset <= product;
          mstate <= M_ADDR_RUN;
        end
        M_ADDR_RUN: begin
          run_addr <= run_matrix + ({2'b00, batch_offset + product + {30'd0, run_col}} << run_shift);
          mstate <= M_REQ;
        end
        M_REQ: if (mem_req_ready) mstate <= M_RUN;
        M_RUN: if (mem_done) begin
          if (mem_error) begin
            fault <= 1'b1;
            fault_code <= mem_error_code;
            fault_addr <= mem_error_addr;
            mstate <= M_FINISH;
          end else begin
            mstate <= M_DECIDE;
            unique case (run_kind)
              RUN_C_LOAD: acc_phase <= ACC_COMPUTE;
              RUN_C_STORE: begin
                // The next block, batch element or the end.
                acc_phase <= ACC_INIT;
                if (!last_cj) begin
                  cbj <= cbj + 32'(BR);
                end else if (!last_ci) begin
                  cbj <= '0;
                  cbi <= cbi + 32'(BR);
                end else if (!last_cp) begin
                  cbj <= '0;
                  cbi <= '0;
                  cp <= cp + 32'd1;
                end else begin
                  mstate <= M_FINISH;
                end
              end
              RUN_A_ROW, RUN_A_COL: begin_run(trans_b ? RUN_B_COL : RUN_B_ROW);
              default: begin   // the B panel: the pair is loaded; advance the panel cursor
                load_full <= 1'b1;
                load_last <= last_pk;
                load_depth <= p_depth;
                load_row_tiles <= tiles_of(p_rows);
                load_col_tiles <= tiles_of(p_cols);
                if (!last_pk) begin
                  pk0 <= pk0 + 32'(KC);
                end else begin
                  pk0 <= '0;
                  if (!last_pj) begin
                    pbj <= pbj + 32'(BR);
                  end else if (!last_pi) begin
                    pbj <= '0;
                    pbi <= pbi + 32'(BR);
                  end else if (!last_pp) begin
                    pbj <= '0;
                    pbi <= '0;
                    pp <= pp + 32'd1;
                  end else begin
                    panels_left <= 1'b0;
                  end
                end
              end
            endcase
          end
        end
        M_FINISH: mstate <= M_IDLE;
        default: mstate <= M_IDLE;
      endcase

      // ---- the compute side ----
      // It takes a loaded panel pair while the memory side is busy in other
      // states (load_full is set only while it is clear, and cleared here
      // only while it is set).
      if (mstate == M_FINISH || mstate == M_IDLE) begin
        xstate <= X_WAIT;
      end else if (take) begin
        load_full <= 1'b0;
        cur_last <= load_last;
        cur_depth <= load_depth;
        cur_row_tiles <= load_row_tiles;
        cur_col_tiles <= load_col_tiles;
        kk <= '0;
        ta <= '0;
        tb <= '0;
        xstate <= X_RUN;
      end else if (xstate == X_RUN) begin
        // Tiles in order within a k, k in order within the panel.
        if ((BTB+1)'(tb) + (BTB+1)'(1) != cur_col_tiles) begin
          tb <= tb + BTB'(1);
        end else begin
          tb <= '0;
          if ((BTB+1)'(ta) + (BTB+1)'(1) != cur_row_tiles) begin
            ta <= ta + BTB'(1);
          end else begin
            ta <= '0;
            kk <= kk + (XB+1)'(1);
            if (kk + (XB+1)'(1) == cur_depth) begin
              xstate <= X_WAIT;
              if (cur_last) acc_phase <= ACC_STORE;
            end
          end
        end
      end
    end
  end

endmodule
