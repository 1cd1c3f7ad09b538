// The matrix engine: MATMUL and BMM on a T x T output-stationary array of
// fused multiply-add PEs (T = HW_MATRIX_TILE).
//
// C is computed one T x T output tile at a time. PE (i, j) holds the
// accumulator of C[i][j]: +0, or the old C with the acc flag. The reduction
// dimension streams through in panels of KC: the engine loads the tile's
// A panel (T rows x KC) and B panel (KC x T) into local buffers, then on
// each of KC cycles every PE computes acc = fma(A[i][k], B[k][j], acc) with
// A[i][k] broadcast along its row and B[k][j] along its column. Every
// output therefore accumulates k = 0 .. K-1 strictly in order, one rounding
// per step, as docs/arith.md §3.2 requires. Finished tiles are written back
// row by row.
//
// Operand rows are contiguous runs in memory; a panel (or the old C tile)
// is one request of many runs, which the memory port pipelines: with
// transa (A stored K x M) the A panel is loaded column by column, with
// transb (B stored N x K) the B panel too. The C tile is stored as one
// request of its rows, whose write bursts the port posts. BMM repeats the product per batch
// element at base + 4 * p * stride (dense pitches; stride 0 broadcasts).
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
  localparam int unsigned KC = 32;                    // reduction panel depth
  localparam int unsigned WORDS = npu_isa_pkg::HW_AXI_DATA_BYTES / 4;
  localparam int unsigned TB = $clog2(T);
  localparam int unsigned KB = $clog2(KC);

  typedef enum logic [3:0] {
    S_IDLE, S_BATCH, S_TILE, S_RUN_ADDR, S_RUN_REQ, S_RUN, S_COMPUTE, S_NEXT, S_FINISH
  } state_e;
  state_e state;
  assign dbg_state = state;

  // What a run moves: a row or a column of a buffer, or a row of the tile.
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
  assign stride_a = packet[npu_isa_pkg::BMM_STRIDE_A_LSB +: 32];
  assign stride_b = packet[npu_isa_pkg::BMM_STRIDE_B_LSB +: 32];
  assign stride_c = packet[npu_isa_pkg::BMM_STRIDE_C_LSB +: 32];
  assign trans_a = packet[npu_isa_pkg::MATMUL_TRANSA_LSB];
  assign trans_b = packet[npu_isa_pkg::MATMUL_TRANSB_LSB];
  assign accumulate = packet[npu_isa_pkg::MATMUL_ACC_LSB];

  // Stored shapes and the pitches with 0 meaning dense.
  logic [31:0] a_cols, b_cols, lda, ldb, ldc;
  assign a_cols = trans_a ? m : k;
  assign b_cols = trans_b ? k : n;
  assign lda = lda_field != 32'd0 ? lda_field : a_cols;
  assign ldb = ldb_field != 32'd0 ? ldb_field : b_cols;
  assign ldc = ldc_field != 32'd0 ? ldc_field : n;

  // ---- the shared 32 x 32 multiplier for the address arithmetic -------------------
  logic [31:0] mul_x, mul_y;
  // Element offsets within checked extents: times 4 they fit in 64 bits.
  logic [61:0] product;
  assign product = 62'({32'd0, mul_x} * {32'd0, mul_y});

  logic [31:0] batch_stride [3];         // of A, B and C
  assign batch_stride[0] = stride_a;
  assign batch_stride[1] = stride_b;
  assign batch_stride[2] = stride_c;

  // ---- loop state -----------------------------------------------------------------------
  logic [31:0] p;                         // batch element
  logic [63:0] a_base, b_base, c_base;    // this batch element's matrices
  logic [31:0] i0, j0, k0;                // tile origin and panel start
  logic [TB:0] tile_m, tile_n;            // valid rows and columns of the tile
  logic [KB:0] kc_len;                    // depth of the panel
  logic [KB:0] kk;                        // compute step within the panel
  run_kind_e   run_kind;
  logic [KB:0] run_count;
  logic [63:0] run_addr;
  logic [KB:0] run_words;                 // elements of the run
  logic [1:0]  batch_step;

  // The panels, as rows that shift towards the array while computing:
  // a_row[i] holds A[i][kk..] and b_col[j] holds B[kk..][j], the operand of
  // the next step in bits 31:0.
  logic [32*KC-1:0] a_row [T];
  logic [32*KC-1:0] b_col [T];

  // ---- the PE array ---------------------------------------------------------------------
  // PE (i, j) accumulates C[i][j]: cleared or loaded with the old C per tile,
  // then one fma per compute cycle with A[i][kk] and B[kk][j].
  logic [31:0] acc [T][T];
  logic        pe_load [T][T];
  logic [31:0] pe_value [T][T];
  for (genvar i = 0; i < T; i++) begin : g_row
    for (genvar j = 0; j < T; j++) begin : g_col
      npu_matrix_pe u_pe (.clk, .enable(state == S_COMPUTE), .a(a_row[i][31:0]), .b(b_col[j][31:0]),
                          .load(pe_load[i][j]),
                          .load_value(pe_value[i][j]), .acc(acc[i][j]));
    end
  end

  // ---- runs ----------------------------------------------------------------------------------
  // The first run of the phase and its memory position: a run covers
  // `run_words` contiguous elements at row `run_row`, column `run_col` of a
  // matrix with pitch `run_pitch`; the phase's other runs follow it
  // `run_pitch` elements apart.
  logic [31:0] run_row, run_col, run_pitch;
  logic [63:0] run_base;
  always_comb begin
    run_base = c_base;
    run_pitch = ldc;
    run_row = i0;
    run_col = j0;
    run_words = (KB+1)'(tile_n);
    unique case (run_kind)
      RUN_A_ROW: begin   // A[i0 + r][k0 ..]
        run_base = a_base; run_pitch = lda; run_row = i0; run_col = k0;
        run_words = kc_len;
      end
      RUN_A_COL: begin   // A stored K x M: row k0 + c, columns i0 ..
        run_base = a_base; run_pitch = lda; run_row = k0; run_col = i0;
        run_words = (KB+1)'(tile_m);
      end
      RUN_B_ROW: begin   // B[k0 + r][j0 ..]
        run_base = b_base; run_pitch = ldb; run_row = k0; run_col = j0;
        run_words = (KB+1)'(tile_n);
      end
      RUN_B_COL: begin   // B stored N x K: row j0 + c, columns k0 ..
        run_base = b_base; run_pitch = ldb; run_row = j0; run_col = k0;
        run_words = kc_len;
      end
      default: ;         // C rows i0 + r, columns j0 ..
    endcase
  end

  // Multiplier operands: batch bases, run addresses.
  assign mul_x = state == S_BATCH ? p : run_row;
  assign mul_y = state == S_BATCH ? batch_stride[batch_step] : run_pitch;

  // ---- beats to buffers -----------------------------------------------------------------
  // A read beat holds consecutive elements of run mem_rd_row, the first of
  // them at index `beat_first` of the run (runs are at most KC elements,
  // so the low address bits suffice; the first beat of a run may start
  // before it, which the strobes exclude). Element x of the run is in the
  // beat when `beat_hit[x]`; its value is `beat_word[x mod WORDS]`, the
  // beat rotated so that every buffer entry has one fixed source.
  logic [KB:0] beat_first;
  logic [KC-1:0] beat_hit;
  logic [31:0] beat_word [WORDS];
  logic [KB-1:0] beat_row;
  assign beat_first = (KB+1)'(mem_rd_addr[KB+2:2] - mem_rd_row_start[KB+2:2]);
  assign beat_row = KB'(mem_rd_row);
  always_comb begin
    for (int x = 0; x < KC; x++) begin
      logic [KB:0] offset;
      offset = (KB+1)'(x) - beat_first;
      beat_hit[x] = mem_rd_valid && offset < (KB+1)'(WORDS) && mem_rd_strb[4 * offset[2:0]];
    end
    for (int j = 0; j < WORDS; j++) begin
      logic [2:0] w;
      w = 3'(j) - beat_first[2:0];
      beat_word[j] = mem_rd_data[32 * w +: 32];
    end
  end

  // A write beat of C row mem_wr_row: element x of the row (x < T) is word
  // (x - the beat's first element) of the beat.
  logic [KB:0] store_first;
  logic [31:0] store_row [T];
  assign store_first = (KB+1)'(mem_wr_addr[KB+2:2] - mem_wr_row_start[KB+2:2]);
  always_comb begin
    for (int j = 0; j < T; j++) store_row[j] = acc[mem_wr_row[TB-1:0]][j];
    for (int w = 0; w < WORDS; w++)
      mem_wr_data[32*w +: 32] = store_row[TB'(3'(w) + store_first[2:0])];
  end

  // Panel entries: A[i][x] is element x of run i (A_ROW) or element i of run
  // x (A_COL); B[x][j] element j of run x (B_ROW) or element x of run j
  // (B_COL). (C rows go to the PEs, pe_load.) Entries are written at
  // constant positions (no address decoders), and the panels are touched
  // only in the cycles that load or consume them.
  always_ff @(posedge clk) begin
    if (state == S_COMPUTE) begin
      for (int i = 0; i < T; i++) begin
        a_row[i] <= a_row[i] >> 32;
        b_col[i] <= b_col[i] >> 32;
      end
    end else if (state == S_RUN && mem_rd_valid) begin
      unique case (run_kind)
        RUN_A_ROW:
          for (int i = 0; i < T; i++)
            if (beat_row == KB'(i))
              for (int x = 0; x < KC; x++)
                if (beat_hit[x]) a_row[i][32*x +: 32] <= beat_word[x % WORDS];
        RUN_A_COL:
          for (int i = 0; i < T; i++)
            if (beat_hit[i])
              for (int x = 0; x < KC; x++)
                if (beat_row == KB'(x)) a_row[i][32*x +: 32] <= beat_word[i % WORDS];
        RUN_B_ROW:
          for (int j = 0; j < T; j++)
            if (beat_hit[j])
              for (int x = 0; x < KC; x++)
                if (beat_row == KB'(x)) b_col[j][32*x +: 32] <= beat_word[j % WORDS];
        RUN_B_COL:
          for (int j = 0; j < T; j++)
            if (beat_row == KB'(j))
              for (int x = 0; x < KC; x++)
                if (beat_hit[x]) b_col[j][32*x +: 32] <= beat_word[x % WORDS];
        default: ;
      endcase
    end
  end

  // Run positions need only the low address bits.
  logic unused_beat_addr;
  assign unused_beat_addr = ^{mem_rd_addr[63:KB+3], mem_rd_addr[1:0], mem_wr_addr[63:KB+3],
                              mem_wr_addr[1:0], mem_rd_row_start[63:KB+3],
                              mem_rd_row_start[1:0], mem_rd_row[15:KB], store_first[KB:3],
                              mem_wr_row_start[63:KB+3], mem_wr_row_start[1:0], mem_wr_row[15:TB]};

  // Accumulator loads: +0 for a new tile, the old C row by row with acc.
  always_comb begin
    for (int i = 0; i < T; i++)
      for (int j = 0; j < T; j++) begin
        pe_load[i][j] = state == S_TILE ||
                        (state == S_RUN && run_kind == RUN_C_LOAD && beat_row == KB'(i) && beat_hit[j]);
        pe_value[i][j] = state == S_TILE ? 32'd0 : beat_word[j % WORDS];
      end
  end

  // All runs of the kind in one request (the port posts the C rows' writes).
  assign mem_req_valid = state == S_RUN_REQ;
  assign mem_req_write = run_kind == RUN_C_STORE;
  assign mem_req_addr = run_addr;
  assign mem_req_bytes = 32'(run_words) << 2;
  assign mem_req_rows = 16'(run_count);
  assign mem_req_pitch = {30'd0, run_pitch, 2'b00};
  assign done = state == S_FINISH;
  // The command processor checked every range: only the interconnect's
  // errors end a packet here, and they name no operand.
  assign fault_operand = npu_isa_pkg::NO_OPERAND;
  assign fault_length = '0;

  // The next tile after (i0, j0), or the next batch element.
  logic last_j, last_i, last_k, last_p;
  assign last_j = j0 + 32'(T) >= n;
  assign last_i = i0 + 32'(T) >= m;
  assign last_k = k0 + 32'(KC) >= k;
  assign last_p = p + 32'd1 >= batch;

  function automatic logic [TB:0] clip_tile(input logic [31:0] total, input logic [31:0] origin);
    clip_tile = total - origin >= 32'(T) ? (TB+1)'(T) : (TB+1)'(total - origin);
  endfunction

  // Sets up the panel loads of the current k0: the A panel, then the B panel.
  task automatic begin_runs(input run_kind_e kind, input logic [KB:0] count);
    run_kind <= kind;
    run_count <= count;
    state <= S_RUN_ADDR;
  endtask

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      state <= S_IDLE;
      fault <= 1'b0;
      fault_code <= npu_isa_pkg::FAULT_NONE;
      fault_addr <= '0;
      batch_step <= '0;
      p <= '0;
      a_base <= '0;
      b_base <= '0;
      c_base <= '0;
      i0 <= '0;
      j0 <= '0;
      k0 <= '0;
      tile_m <= '0;
      tile_n <= '0;
      kc_len <= '0;
      kk <= '0;
      run_kind <= RUN_C_LOAD;
        run_count <= '0;
      run_addr <= '0;
    end else if (soft_reset) begin
      state <= S_IDLE;
    end else begin
      unique case (state)
        S_IDLE: if (start) begin
          fault <= 1'b0;
          fault_code <= npu_isa_pkg::FAULT_NONE;
          fault_addr <= '0;
          p <= '0;
          batch_step <= '0;
          state <= S_BATCH;
        end
        S_BATCH: begin
          // This batch element's bases: base + 4 * p * stride, one per cycle.
          unique case (batch_step)
            2'd0: a_base <= a_addr + {product, 2'b00};
            2'd1: b_base <= b_addr + {product, 2'b00};
            default: c_base <= c_addr + {product, 2'b00};
          endcase
          batch_step <= batch_step + 2'd1;
          if (batch_step == 2'd2) begin
            batch_step <= '0;
            i0 <= '0;
            j0 <= '0;
            state <= S_TILE;
          end
        end
        S_TILE: begin
          tile_m <= clip_tile(m, i0);
          tile_n <= clip_tile(n, j0);
          k0 <= '0;
          kc_len <= k >= 32'(KC) ? (KB+1)'(KC) : (KB+1)'(k);
          if (accumulate) begin
            begin_runs(RUN_C_LOAD, (KB+1)'(clip_tile(m, i0)));
          end else begin
            if (trans_a) begin_runs(RUN_A_COL, k >= 32'(KC) ? (KB+1)'(KC) : (KB+1)'(k));
            else begin_runs(RUN_A_ROW, (KB+1)'(clip_tile(m, i0)));
          end
        end
        S_RUN_ADDR: begin
          run_addr <= run_base + {product + {30'd0, run_col}, 2'b00};
          state <= S_RUN_REQ;
        end
        S_RUN_REQ: begin
          if (mem_req_ready) state <= S_RUN;
        end
        S_RUN: begin
          if (mem_done) begin
            if (mem_error) begin
              fault <= 1'b1;
              fault_code <= mem_error_code;
              fault_addr <= mem_error_addr;
              state <= S_FINISH;
            end else begin
              state <= S_NEXT;
            end
          end
        end
        S_COMPUTE: begin
          kk <= kk + (KB+1)'(1);
          if (kk + (KB+1)'(1) == kc_len) state <= S_NEXT;
        end
        S_NEXT: begin
          // What follows the runs or the compute steps just finished.
          unique case (run_kind)
            RUN_C_LOAD: begin
              if (trans_a) begin_runs(RUN_A_COL, kc_len);
              else begin_runs(RUN_A_ROW, (KB+1)'(tile_m));
            end
            RUN_A_ROW, RUN_A_COL: begin
              if (trans_b) begin_runs(RUN_B_COL, (KB+1)'(tile_n));
              else begin_runs(RUN_B_ROW, kc_len);
            end
            RUN_B_ROW, RUN_B_COL: begin
              // The panels are in: compute (S_COMPUTE returns here with
              // run_kind still naming the B panel and kk == kc_len).
              if (kk != kc_len) state <= S_COMPUTE;
              else if (!last_k) begin
                kk <= '0;
                k0 <= k0 + 32'(KC);
                kc_len <= k - (k0 + 32'(KC)) >= 32'(KC) ? (KB+1)'(KC)
                                                        : (KB+1)'(k - (k0 + 32'(KC)));
                if (trans_a) begin_runs(RUN_A_COL, k - (k0 + 32'(KC)) >= 32'(KC) ? (KB+1)'(KC)
                                                   : (KB+1)'(k - (k0 + 32'(KC))));
                else begin_runs(RUN_A_ROW, (KB+1)'(tile_m));
              end else begin
                begin_runs(RUN_C_STORE, (KB+1)'(tile_m));
              end
            end
            default: begin   // the tile is stored: next tile, batch element or the end
              kk <= '0;
              if (!last_j) begin
                j0 <= j0 + 32'(T);
                state <= S_TILE;
              end else if (!last_i) begin
                j0 <= '0;
                i0 <= i0 + 32'(T);
                state <= S_TILE;
              end else if (!last_p) begin
                p <= p + 32'd1;
                state <= S_BATCH;
              end else begin
                state <= S_FINISH;
              end
            end
          endcase
        end
        S_FINISH: state <= S_IDLE;
        default: state <= S_IDLE;
      endcase
    end
  end

endmodule
