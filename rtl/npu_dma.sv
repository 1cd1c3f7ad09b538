// The DMA engine: COPY, FILL, COPY_STRIDED and EMBEDDING.
//
// Everything but FILL is a gather: the operation is a sequence of source
// runs (address, length) whose bytes, concatenated, form the contiguous
// destination. Runs are read into a byte buffer at its fill position; a
// full buffer, and the rest at the end, is written to the destination
// cursor. COPY is one run; COPY_STRIDED one run per innermost row when the
// innermost stride is 1, else one per element; EMBEDDING one per index,
// after reading and range-checking the index. FILL writes the 32-bit
// pattern directly.
//
// The command processor checked every operand's range before the start;
// an index outside [0, rows) faults here (IndexOutOfRange, at the index's
// address) after the rows before it are written, as in the ISS.
module npu_dma (
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

  localparam int unsigned BUF_ROWS = npu_isa_pkg::HW_AXI_MAX_BURST;
  localparam int unsigned BUF_BYTES = BUF_ROWS * npu_isa_pkg::HW_AXI_DATA_BYTES;   // one full burst
  localparam int unsigned OFF_BITS = $clog2(BUF_BYTES);
  // Bytes per FILL write request: small enough that a request completes
  // well within the harness's hang budget even on the slowest memory.
  localparam logic [63:0] FILL_CHUNK = 64'h1000;

  typedef enum logic [3:0] {
    S_IDLE, S_SETUP, S_NEXT, S_INDEX_REQ, S_INDEX, S_INDEX_CHECK, S_READ_REQ, S_READ,
    S_FLUSH_REQ, S_FLUSH, S_FILL_REQ, S_FILL, S_FINISH
  } state_e;
  state_e state;
  assign dbg_state = state;

  // ---- packet fields (npu_isa_pkg slots) --------------------------------------
  logic [31:0] opcode;
  assign opcode = packet[31:0];
  // EMBEDDING is the fourth: whatever is not one of these.
  logic is_copy, is_fill, is_strided;
  assign is_copy = opcode == npu_isa_pkg::OP_COPY;
  assign is_fill = opcode == npu_isa_pkg::OP_FILL;
  assign is_strided = opcode == npu_isa_pkg::OP_COPY_STRIDED;

  logic [63:0] dst, src;        // dst and the source (COPY/COPY_STRIDED src, EMBEDDING table)
  logic [63:0] indices;
  assign dst = packet[npu_isa_pkg::COPY_DST_LSB +: 64];
  assign src = packet[npu_isa_pkg::COPY_SRC_LSB +: 64];
  assign indices = packet[npu_isa_pkg::EMBEDDING_INDICES_LSB +: 64];

  logic [31:0] copy_bytes, fill_value, fill_count;
  assign copy_bytes = packet[npu_isa_pkg::COPY_BYTES_LSB +: 32];
  assign fill_value = packet[npu_isa_pkg::FILL_VALUE_LSB +: 32];
  assign fill_count = packet[npu_isa_pkg::FILL_COUNT_LSB +: 32];

  logic [31:0] size [4];
  logic signed [31:0] stride [4];
  logic [1:0] esize_log2;
  assign size[0] = packet[npu_isa_pkg::COPY_STRIDED_SIZE0_LSB +: 32];
  assign size[1] = packet[npu_isa_pkg::COPY_STRIDED_SIZE1_LSB +: 32];
  assign size[2] = packet[npu_isa_pkg::COPY_STRIDED_SIZE2_LSB +: 32];
  assign size[3] = packet[npu_isa_pkg::COPY_STRIDED_SIZE3_LSB +: 32];
  assign stride[0] = packet[npu_isa_pkg::COPY_STRIDED_STRIDE0_LSB +: 32];
  assign stride[1] = packet[npu_isa_pkg::COPY_STRIDED_STRIDE1_LSB +: 32];
  assign stride[2] = packet[npu_isa_pkg::COPY_STRIDED_STRIDE2_LSB +: 32];
  assign stride[3] = packet[npu_isa_pkg::COPY_STRIDED_STRIDE3_LSB +: 32];
  assign esize_log2 = packet[npu_isa_pkg::COPY_STRIDED_ESIZE_LSB +: 2];

  logic [31:0] emb_count, emb_dim, emb_rows;
  logic emb_i64;
  assign emb_count = packet[npu_isa_pkg::EMBEDDING_COUNT_LSB +: 32];
  assign emb_dim = packet[npu_isa_pkg::EMBEDDING_DIM_LSB +: 32];
  assign emb_rows = packet[npu_isa_pkg::EMBEDDING_ROWS_LSB +: 32];
  assign emb_i64 = packet[npu_isa_pkg::EMBEDDING_ITYPE_LSB];

  // ---- the byte buffer ----------------------------------------------------------
  logic                 buf_wr_en;
  logic [OFF_BITS-1:0]  buf_wr_offset, buf_rd_offset;
  logic [8*npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] buf_rd_data;

  npu_byte_buffer #(.ROWS(BUF_ROWS)) u_buffer (
    .clk(clk), .wr_en(buf_wr_en), .wr_offset(buf_wr_offset), .wr_data(mem_rd_data),
    .wr_strb(mem_rd_strb), .rd_offset(buf_rd_offset), .rd_data(buf_rd_data));

  // ---- state ---------------------------------------------------------------------
  logic [63:0] run_addr;        // the current source run
  logic [63:0] run_left;
  logic [OFF_BITS:0] fill;      // bytes in the buffer
  logic [OFF_BITS:0] take;      // bytes of the read in flight
  logic [63:0] cursor;          // next destination byte
  logic        exhausted;       // no more runs
  logic        pending_fault;   // raise fault_code/fault_addr once the buffer is flushed
  logic [63:0] fill_left;       // FILL bytes still to write

  // COPY_STRIDED position: indices and the element offsets of the dims.
  logic [31:0] idx [4];
  logic signed [65:0] offset [4];   // element offset of (idx[0..d], 0...)

  // EMBEDDING position and the index read.
  logic [31:0] token;
  logic [63:0] index_value;
  logic [63:0] index_addr;
  logic [63:0] row_bytes;

  // ---- the next run of each gather ------------------------------------------------
  logic [63:0] strided_run_addr, strided_run_bytes;
  logic inner_contiguous;
  assign inner_contiguous = stride[3] == 32'sd1;
  assign strided_run_addr = src + 64'($unsigned(offset[3] <<< esize_log2));
  assign strided_run_bytes = (inner_contiguous ? {32'd0, size[3]} : 64'd1) << esize_log2;

  logic [63:0] buffer_space;
  assign buffer_space = 64'(BUF_BYTES) - {{(63-OFF_BITS){1'b0}}, fill};

  // ---- memory requests ---------------------------------------------------------------
  always_comb begin
    mem_req_valid = 1'b0;
    mem_req_write = 1'b0;
    mem_req_addr = run_addr;
    mem_req_bytes = 32'(take);
    unique case (state)
      S_INDEX_REQ: begin
        mem_req_valid = 1'b1;
        mem_req_addr = index_addr;
        mem_req_bytes = emb_i64 ? 32'd8 : 32'd4;
      end
      S_READ_REQ: mem_req_valid = 1'b1;
      S_FLUSH_REQ: begin
        mem_req_valid = 1'b1;
        mem_req_write = 1'b1;
        mem_req_addr = cursor;
        mem_req_bytes = 32'(fill);
      end
      S_FILL_REQ: begin
        mem_req_valid = 1'b1;
        mem_req_write = 1'b1;
        mem_req_addr = cursor;
        mem_req_bytes = fill_left > FILL_CHUNK ? 32'(FILL_CHUNK) : 32'(fill_left);
      end
      default: ;
    endcase
  end

  // Beats land at the fill position, shifted by their distance from the run.
  assign buf_wr_en = state == S_READ && mem_rd_valid;
  assign buf_wr_offset = OFF_BITS'(fill) + OFF_BITS'(mem_rd_addr) - OFF_BITS'(run_addr);
  // A flush writes the buffer from offset 0 to the cursor.
  assign buf_rd_offset = OFF_BITS'(mem_wr_addr) - OFF_BITS'(cursor);
  // Offsets within the buffer need only the low address bits.
  logic unused_wr_addr;
  assign unused_wr_addr = ^mem_wr_addr[63:OFF_BITS];
  assign mem_wr_data = state == S_FILL ? {(8*npu_isa_pkg::HW_AXI_DATA_BYTES / 32){fill_value}} : buf_rd_data;

  assign done = state == S_FINISH;
  // Only an index fault names an operand (the interconnect's errors do not).
  assign fault_operand = fault_code == npu_isa_pkg::FAULT_INDEX_OUT_OF_RANGE
                         ? npu_isa_pkg::EMBEDDING_INDICES_INDEX : npu_isa_pkg::NO_OPERAND;
  assign fault_length = fault_code == npu_isa_pkg::FAULT_INDEX_OUT_OF_RANGE
                        ? (emb_i64 ? 64'd8 : 64'd4) : 64'd0;

  // The index bytes of a beat: each byte at its distance from index_addr.
  logic [63:0] index_captured;
  always_comb begin
    index_captured = index_value;
    for (int i = 0; i < npu_isa_pkg::HW_AXI_DATA_BYTES; i++) begin
      logic [63:0] distance;
      distance = mem_rd_addr + 64'(i) - index_addr;
      if (mem_rd_strb[i] && distance < 64'd8) index_captured[8 * distance[2:0] +: 8] = mem_rd_data[8*i +: 8];
    end
  end
  logic signed [63:0] index_signed;
  assign index_signed = emb_i64 ? $signed(index_value) : 64'($signed(index_value[31:0]));

  // The strided position after the current run: the innermost dimension
  // that can still step steps, the ones inside it restart at 0 (with the
  // innermost fixed at 0 when it is one contiguous run). None can step
  // after the last run.
  logic [31:0] next_idx [4];
  logic signed [65:0] next_offset [4];
  logic strided_last;
  always_comb begin
    logic found;
    logic [1:0] k;
    found = 1'b0;
    k = 2'd0;
    for (int d = 3; d >= 0; d--) begin
      if (!found && (d != 3 || !inner_contiguous) && idx[d] + 32'd1 < size[d]) begin
        found = 1'b1;
        k = 2'(d);
      end
    end
    strided_last = !found;
    for (int d = 0; d < 4; d++) begin
      next_idx[d] = idx[d];
      next_offset[d] = offset[d];
    end
    for (int d = 0; d < 4; d++) begin
      if (found && d == 32'(k)) begin
        next_idx[d] = idx[d] + 32'd1;
        next_offset[d] = offset[d] + 66'(stride[d]);
      end else if (found && d > 32'(k)) begin
        next_idx[d] = '0;
        next_offset[d] = offset[k] + 66'(stride[k]);
      end
    end
  end

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      state <= S_IDLE;
      fault <= 1'b0;
      fault_code <= npu_isa_pkg::FAULT_NONE;
      fault_addr <= '0;
      run_addr <= '0;
      run_left <= '0;
      fill <= '0;
      take <= '0;
      cursor <= '0;
      exhausted <= 1'b0;
      pending_fault <= 1'b0;
      fill_left <= '0;
      token <= '0;
      index_value <= '0;
      index_addr <= '0;
      row_bytes <= '0;
      for (int d = 0; d < 4; d++) begin
        idx[d] <= '0;
        offset[d] <= '0;
      end
    end else if (soft_reset) begin
      state <= S_IDLE;
    end else begin
      unique case (state)
        S_IDLE: if (start) begin
          fault <= 1'b0;
          fault_code <= npu_isa_pkg::FAULT_NONE;
          fault_addr <= '0;
          fill <= '0;
          run_left <= '0;
          exhausted <= 1'b0;
          pending_fault <= 1'b0;
          cursor <= dst;
          token <= '0;
          index_addr <= indices;
          row_bytes <= {30'd0, emb_dim, 2'b00};
          for (int d = 0; d < 4; d++) begin
            idx[d] <= '0;
            offset[d] <= '0;
          end
          state <= S_SETUP;
        end
        S_SETUP: begin
          // FILL writes directly; COPY is one run; the gathers find their
          // runs in S_NEXT.
          state <= S_NEXT;
          if (is_fill) begin
            fill_left <= {30'd0, fill_count, 2'b00};
            state <= S_FILL_REQ;
          end else if (is_copy) begin
            run_addr <= src;
            run_left <= {32'd0, copy_bytes};
            exhausted <= 1'b1;
          end
        end
        S_NEXT: begin
          if (run_left != '0) begin
            if (fill == (OFF_BITS+1)'(BUF_BYTES)) state <= S_FLUSH_REQ;
            else begin
              take <= (OFF_BITS+1)'(run_left < buffer_space ? run_left : buffer_space);
              state <= S_READ_REQ;
            end
          end else if (!exhausted) begin
            if (is_strided) begin
              run_addr <= strided_run_addr;
              run_left <= strided_run_bytes;
              for (int d = 0; d < 4; d++) begin
                idx[d] <= next_idx[d];
                offset[d] <= next_offset[d];
              end
              exhausted <= strided_last;
            end else begin   // EMBEDDING: fetch the next index
              state <= S_INDEX_REQ;
            end
          end else begin
            state <= fill != '0 ? S_FLUSH_REQ : S_FINISH;
            if (fill == '0 && pending_fault) fault <= 1'b1;
          end
        end
        S_INDEX_REQ: if (mem_req_ready) begin
          index_value <= '0;
          state <= S_INDEX;
        end
        S_INDEX: begin
          if (mem_rd_valid) index_value <= index_captured;
          if (mem_done) begin
            if (mem_error) begin
              fault <= 1'b1;
              fault_code <= mem_error_code;
              fault_addr <= mem_error_addr;
              state <= S_FINISH;
            end else state <= S_INDEX_CHECK;
          end
        end
        S_INDEX_CHECK: begin
          if (index_signed < 0 || index_signed >= $signed({32'd0, emb_rows})) begin
            // Out of range: write what was gathered, then fault.
            pending_fault <= 1'b1;
            fault_code <= npu_isa_pkg::FAULT_INDEX_OUT_OF_RANGE;
            fault_addr <= index_addr;
            exhausted <= 1'b1;
          end else begin
            run_addr <= src + {32'd0, index_value[31:0]} * {30'd0, row_bytes[33:0]};
            run_left <= row_bytes;
            token <= token + 32'd1;
            index_addr <= index_addr + (emb_i64 ? 64'd8 : 64'd4);
            exhausted <= token + 32'd1 == emb_count;
          end
          state <= S_NEXT;
        end
        S_READ_REQ: if (mem_req_ready) state <= S_READ;
        S_READ: if (mem_done) begin
          if (mem_error) begin
            fault <= 1'b1;
            fault_code <= mem_error_code;
            fault_addr <= mem_error_addr;
            state <= S_FINISH;
          end else begin
            fill <= fill + take;
            run_addr <= run_addr + {{(63-OFF_BITS){1'b0}}, take};
            run_left <= run_left - {{(63-OFF_BITS){1'b0}}, take};
            state <= S_NEXT;
          end
        end
        S_FLUSH_REQ: if (mem_req_ready) state <= S_FLUSH;
        S_FLUSH: if (mem_done) begin
          if (mem_error) begin
            fault <= 1'b1;
            fault_code <= mem_error_code;
            fault_addr <= mem_error_addr;
            state <= S_FINISH;
          end else begin
            cursor <= cursor + {{(63-OFF_BITS){1'b0}}, fill};
            fill <= '0;
            state <= S_NEXT;
          end
        end
        S_FILL_REQ: if (mem_req_ready) state <= S_FILL;
        S_FILL: if (mem_done) begin
          if (mem_error) begin
            fault <= 1'b1;
            fault_code <= mem_error_code;
            fault_addr <= mem_error_addr;
            state <= S_FINISH;
          end else begin
            cursor <= cursor + (fill_left > FILL_CHUNK ? FILL_CHUNK : fill_left);
            fill_left <= fill_left > FILL_CHUNK ? fill_left - FILL_CHUNK : 64'd0;
            state <= fill_left > FILL_CHUNK ? S_FILL_REQ : S_FINISH;
          end
        end
        S_FINISH: state <= S_IDLE;
        default: state <= S_IDLE;
      endcase

    end
  end

endmodule
