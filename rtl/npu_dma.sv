// The DMA engine: COPY, FILL, COPY_STRIDED, EMBEDDING and GATHER.
//
// Everything but FILL is a gather: the operation is a sequence of source
// runs (address, length) whose bytes, concatenated, form the contiguous
// destination. COPY is one run; COPY_STRIDED one run per innermost row:
// read as one range when the innermost stride is 1; packed when its aligned
// elements are less than a beat apart (stride > 1): the range they span is
// read and each beat's elements are gathered into place together; else as
// a pitched request of one-element rows, whose bursts the port pipelines.
// EMBEDDING is one run per index, after reading and range-checking the
// index; GATHER likewise, a run being a row of `inner` elements (shared
// mode: every outer slice reads the count indices again) or one element
// (full mode: one index per element), its source row in its outer slice.
// FILL writes the 32-bit pattern.
//
// Reads and writes stream at the same time through a ring buffer (the
// memory port's read and write engines are independent): the gather side
// reads its runs in requests of at most CHUNK (64 KiB), and each beat lands
// in the ring at its position in the destination stream while the ring has
// room (the port holds RREADY low otherwise); the write side requests the
// destination bytes of the reads issued so far, CHUNK at most, and the port
// sends each beat once its bytes have landed. A copy thus pays the memory
// latency once per CHUNK in each direction, overlapped, instead of a read
// latency and a write latency per buffer.
//
// The command processor checked every operand's range before the start;
// an index outside [0, rows) (GATHER: [0, n), [-n, n) with wrap) faults
// here (IndexOutOfRange, at the index's address) after the rows before it
// are written, as in the ISS. A read the interconnect fails ends the write
// in flight with empty beats (no strobes) and faults; a failed write drains
// the read in flight and faults.
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
  output logic [15:0] mem_req_rows,
  output logic [63:0] mem_req_pitch,
  input  logic        mem_req_ready,
  input  logic        mem_rd_valid,
  output logic        mem_rd_ready,
  input  logic [63:0] mem_rd_addr,
  input  logic [8*npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] mem_rd_data,
  input  logic [npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] mem_rd_strb,
  input  logic [15:0] mem_rd_row,
  input  logic [63:0] mem_rd_row_start,
  input  logic [63:0] mem_wr_addr,
  input  logic        mem_wr_accept,
  output logic        mem_wr_data_valid,
  output logic        mem_wr_squash,
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

  localparam int unsigned BEAT_BYTES = npu_isa_pkg::HW_AXI_DATA_BYTES;
  // Two bursts of ring: a read can run a burst ahead of the write draining
  // the other while either waits for its next request.
  localparam int unsigned BUF_ROWS = 2 * npu_isa_pkg::HW_AXI_MAX_BURST;
  localparam int unsigned BUF_BYTES = BUF_ROWS * BEAT_BYTES;
  localparam int unsigned OFF_BITS = $clog2(BUF_BYTES);
  // Bytes per read or write request: long enough that the latency of
  // starting one is small against its beats (about 25 cycles against 2,048
  // beats at the default memory), short enough that a request completes
  // well within the harness's hang budget even on the slowest memory.
  localparam logic [63:0] CHUNK = 64'h10000;
  // Elements per pitched or packed read: within req_rows, and the span of
  // a packed read (elements less than a beat apart) within CHUNK.
  localparam logic [63:0] ELEMENT_ROWS = 64'd2048;
  // Elements of a packed run in one beat at most (they are 2 bytes apart
  // at least).
  localparam int unsigned PACK_MAX = BEAT_BYTES / 2;

  // The gather side's states (dbg_state); the write side has its own.
  typedef enum logic [3:0] {
    S_IDLE, S_SETUP, S_NEXT, S_INDEX_REQ, S_INDEX, S_INDEX_CHECK, S_READ_REQ, S_READ,
    S_DRAIN, S_FINISH
  } state_e;
  state_e state;
  assign dbg_state = state;
  typedef enum logic [1:0] {W_IDLE, W_REQ, W_WAIT} wstate_e;
  wstate_e wstate;

  // ---- packet fields (npu_isa_pkg slots) --------------------------------------
  logic [31:0] opcode;
  assign opcode = packet[31:0];
  // EMBEDDING is the fifth: whatever is not one of these.
  logic is_copy, is_fill, is_strided, is_gather;
  assign is_copy = opcode == npu_isa_pkg::OP_COPY;
  assign is_fill = opcode == npu_isa_pkg::OP_FILL;
  assign is_strided = opcode == npu_isa_pkg::OP_COPY_STRIDED;
  assign is_gather = opcode == npu_isa_pkg::OP_GATHER;

  logic [63:0] dst, src;        // dst and the source (src, or EMBEDDING's table)
  logic [63:0] indices;
  assign dst = packet[npu_isa_pkg::COPY_DST_LSB +: 64];
  assign src = packet[npu_isa_pkg::COPY_SRC_LSB +: 64];
  assign indices = is_gather ? packet[npu_isa_pkg::GATHER_INDEX_LSB +: 64]
                             : packet[npu_isa_pkg::EMBEDDING_INDICES_LSB +: 64];

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
  assign emb_i64 = is_gather ? packet[npu_isa_pkg::GATHER_ITYPE_LSB]
                             : packet[npu_isa_pkg::EMBEDDING_ITYPE_LSB];

  logic [31:0] g_outer, g_n, g_count, g_inner;
  logic g_shared, g_wrap;
  logic [1:0] g_esize_log2;
  assign g_outer = packet[npu_isa_pkg::GATHER_OUTER_LSB +: 32];
  assign g_n = packet[npu_isa_pkg::GATHER_N_LSB +: 32];
  assign g_count = packet[npu_isa_pkg::GATHER_COUNT_LSB +: 32];
  assign g_inner = packet[npu_isa_pkg::GATHER_INNER_LSB +: 32];
  assign g_shared = packet[npu_isa_pkg::GATHER_MODE_LSB] == 1'(npu_isa_pkg::GATHER_MODE_SHARED);
  assign g_wrap = packet[npu_isa_pkg::GATHER_WRAP_LSB];
  assign g_esize_log2 = npu_isa_pkg::dtype_bytes_log2(packet[npu_isa_pkg::GATHER_DTYPE_LSB +: 3]);

  // ---- the ring ----------------------------------------------------------------
  // Destination byte k (from dst on) is at ring offset k mod BUF_BYTES.
  logic                 buf_wr_en;
  logic [OFF_BITS-1:0]  buf_wr_offset, buf_rd_offset;
  logic [8*BEAT_BYTES-1:0] buf_rd_data;

  logic [8*BEAT_BYTES-1:0] buf_wr_data;
  logic [BEAT_BYTES-1:0]   buf_wr_strb;

  npu_byte_buffer #(.ROWS(BUF_ROWS)) u_buffer (
    .clk(clk), .wr_en(buf_wr_en), .wr_offset(buf_wr_offset), .wr_data(buf_wr_data),
    .wr_strb(buf_wr_strb), .rd_offset(buf_rd_offset), .rd_data(buf_rd_data));

  // ---- state ---------------------------------------------------------------------
  // Positions in the destination stream, in bytes from dst:
  //   consumed <= landed <= planned, requested <= planned
  // planned: the bytes of the reads issued; landed: those in the ring (or
  // written); requested: those of the writes issued; consumed: those sent.
  logic [63:0] planned, landed, requested, consumed;
  logic [63:0] run_addr;        // the current source run, from its unread part on
  logic [63:0] run_left;
  logic        run_pitched;     // the run is elements `pitch` bytes apart, read as rows
  logic        run_packed;      // ... read as the range they span
  logic [63:0] next_element;    // the packed read in flight: its next element, elements left
  logic [15:0] elements_left;
  logic [63:0] read_base;       // the read in flight: stream position, bytes
  logic [63:0] take;
  logic [63:0] write_end;       // stream position where the write in flight ends
  logic        exhausted;       // no more runs
  logic        pending_fault;   // raise fault_code/fault_addr once the gathered bytes are written
  logic        read_failed, write_failed;

  // COPY_STRIDED position: indices and the element offsets of the dims.
  logic [31:0] idx [4];
  logic signed [65:0] offset [4];   // element offset of (idx[0..d], 0...)

  // EMBEDDING position and the index read.
  logic [31:0] token;
  logic [63:0] index_value;
  logic [63:0] index_addr;
  logic [63:0] row_bytes;

  // GATHER position: outer slice, index of the slice, element of the row
  // (full mode), and the slice's first source byte.
  logic [31:0] g_o, g_j, g_i;
  logic [63:0] slab_base;
  logic g_last_i, g_last_j, g_last_o;
  assign g_last_i = g_shared || g_i + 32'd1 == g_inner;
  assign g_last_j = g_j + 32'd1 == g_count;
  assign g_last_o = g_o + 32'd1 == g_outer;

  // ---- the next run of each gather ------------------------------------------------
  logic [63:0] strided_run_addr, strided_run_bytes;
  logic [63:0] element_bytes, pitch;
  assign strided_run_addr = src + 64'($unsigned(offset[3] <<< esize_log2));
  assign strided_run_bytes = {32'd0, size[3]} << esize_log2;
  assign element_bytes = 64'd1 << esize_log2;
  assign pitch = 64'($signed(stride[3])) << esize_log2;

  // Elements less than a beat apart, each inside one beat (aligned).
  logic packable;
  assign packable = stride[3] > 32'sd1 && pitch < 64'(BEAT_BYTES) &&
                    (src & (element_bytes - 64'd1)) == 64'd0;

  // The next read of the run: a range, or up to ELEMENT_ROWS elements.
  logic [63:0] next_take;
  logic [15:0] take_rows;
  always_comb begin
    next_take = run_pitched || run_packed ? ELEMENT_ROWS << esize_log2 : CHUNK;
    if (run_left < next_take) next_take = run_left;
  end
  assign take_rows = 16'(take >> esize_log2);   // at most ELEMENT_ROWS when not a range
  logic [31:0] packed_span;     // bytes from the first element to past the last
  assign packed_span = {16'd0, take_rows - 16'd1} * {26'd0, pitch[5:0]} + 32'(element_bytes);

  logic [63:0] write_bytes;     // the next write request
  assign write_bytes = planned - requested > CHUNK ? CHUNK : planned - requested;

  // ---- memory requests: the write side first ------------------------------------------
  always_comb begin
    mem_req_valid = 1'b0;
    mem_req_write = 1'b0;
    mem_req_addr = run_addr;
    mem_req_bytes = run_pitched ? 32'(element_bytes) : run_packed ? packed_span : 32'(take);
    mem_req_rows = run_pitched ? take_rows : 16'd1;
    mem_req_pitch = pitch;
    if (wstate == W_REQ) begin
      mem_req_valid = 1'b1;
      mem_req_write = 1'b1;
      mem_req_addr = dst + requested;
      mem_req_bytes = 32'(write_bytes);
      mem_req_rows = 16'd1;
    end else if (state == S_INDEX_REQ) begin
      mem_req_valid = 1'b1;
      mem_req_addr = index_addr;
      mem_req_bytes = emb_i64 ? 32'd8 : 32'd4;
      mem_req_rows = 16'd1;
    end else if (state == S_READ_REQ) begin
      mem_req_valid = 1'b1;
    end
  end
  logic read_accepted, write_accepted;
  assign write_accepted = wstate == W_REQ && mem_req_ready;
  assign read_accepted = wstate != W_REQ && state == S_READ_REQ && mem_req_ready;

  // A beat lands at its stream position; it is taken while the ring has room
  // for a whole beat (or unconditionally once the write side failed: the
  // read drains).
  // Row r of a pitched read is at stream position read_base + r elements.
  logic [63:0] row_base, row_length, beat_past_row_start;
  logic [63:0] beat_reach;      // stream position just past the beat's bytes
  assign row_base = read_base + (run_pitched ? {48'd0, mem_rd_row} << esize_log2 : 64'd0);
  assign row_length = run_pitched ? element_bytes : take;
  assign beat_past_row_start = mem_rd_addr + 64'(BEAT_BYTES) - mem_rd_row_start;
  assign beat_reach = row_base + (beat_past_row_start > row_length ? row_length : beat_past_row_start);
  assign mem_rd_ready = state != S_READ || write_failed ||
                        landed - consumed <= 64'(BUF_BYTES) - 64'(BEAT_BYTES);
  assign buf_wr_en = state == S_READ && mem_rd_valid;
  assign buf_wr_offset = run_packed ? OFF_BITS'(landed)
                                    : OFF_BITS'(row_base + mem_rd_addr - mem_rd_row_start);
  assign buf_wr_data = run_packed ? packed_data : mem_rd_data;
  assign buf_wr_strb = run_packed ? packed_strb : mem_rd_strb;

  // A packed beat: its elements (those from next_element on, in the beat),
  // gathered to the low bytes. Positions are below 2^10: an element offset
  // under a beat plus up to PACK_MAX pitches under a beat.
  logic [63:0] element_gap;     // next_element from the beat's first byte
  logic [9:0]  first_offset, pitch_bytes;
  logic [4:0]  packed_count;
  logic [8*BEAT_BYTES-1:0] packed_data;
  logic [BEAT_BYTES-1:0]   packed_strb;
  assign element_gap = next_element - mem_rd_addr;
  assign first_offset = 10'(element_gap[5:0]);
  assign pitch_bytes = 10'(pitch[5:0]);
  // (Only for a beat of a packed run, the one use: a Verilated model skips
  // the byte multiplexers in every other cycle.)
  always_comb begin
    logic [4:0] at;             // a byte's place in the beat (when it is packed)
    packed_count = '0;
    packed_data = '0;
    packed_strb = '0;
    at = '0;
    if (buf_wr_en && run_packed) begin
      for (int k = 0; k < PACK_MAX; k++) begin
        if (element_gap < 64'(BEAT_BYTES) && first_offset + 10'(k) * pitch_bytes < 10'(BEAT_BYTES) &&
            16'(k) < elements_left)
          packed_count = 5'(k + 1);
      end
      for (int j = 0; j < BEAT_BYTES; j++) begin
        at = 5'(first_offset + 10'(j >> esize_log2) * pitch_bytes + (10'(j) & 10'(element_bytes - 64'd1)));
        packed_data[8*j +: 8] = mem_rd_data[8*at +: 8];
        packed_strb[j] = 32'(j >> esize_log2) < 32'(packed_count);
      end
    end
  end

  // A write beat goes once every byte it carries has landed.
  logic [63:0] wr_reach;
  assign wr_reach = mem_wr_addr + 64'(BEAT_BYTES) - dst > write_end
                    ? write_end : mem_wr_addr + 64'(BEAT_BYTES) - dst;
  assign buf_rd_offset = OFF_BITS'(mem_wr_addr - dst);
  assign mem_wr_data_valid = is_fill || wr_reach <= landed;
  assign mem_wr_squash = read_failed;
  assign mem_wr_data = is_fill ? {(8*BEAT_BYTES / 32){fill_value}} : buf_rd_data;

  assign done = state == S_FINISH;
  // Only an index fault names an operand (the interconnect's errors do not).
  assign fault_operand = fault_code != npu_isa_pkg::FAULT_INDEX_OUT_OF_RANGE
                         ? npu_isa_pkg::NO_OPERAND
                         : is_gather ? npu_isa_pkg::GATHER_INDEX_INDEX
                                     : npu_isa_pkg::EMBEDDING_INDICES_INDEX;
  assign fault_length = fault_code == npu_isa_pkg::FAULT_INDEX_OUT_OF_RANGE
                        ? (emb_i64 ? 64'd8 : 64'd4) : 64'd0;

  // The index bytes of a beat: each byte at its distance from index_addr.
  logic [63:0] index_captured;
  always_comb begin
    logic [63:0] distance;
    index_captured = index_value;
    distance = '0;
    // (Only for a beat of the index, the one use.)
    if (state == S_INDEX && mem_rd_valid)
      for (int i = 0; i < npu_isa_pkg::HW_AXI_DATA_BYTES; i++) begin
        distance = mem_rd_addr + 64'(i) - index_addr;
        if (mem_rd_strb[i] && distance < 64'd8) index_captured[8 * distance[2:0] +: 8] = mem_rd_data[8*i +: 8];
      end
  end
  logic signed [63:0] index_signed;
  assign index_signed = emb_i64 ? $signed(index_value) : 64'($signed(index_value[31:0]));

  // The index's range and the row it selects: [0, rows) for EMBEDDING;
  // [0, n) for GATHER, [-n, n) with wrap, a negative index counting from
  // the end.
  logic signed [63:0] index_bound, index_low;
  logic index_bad;
  logic [31:0] index_row;
  logic [63:0] run_start;
  assign index_bound = $signed({32'd0, is_gather ? g_n : emb_rows});
  assign index_low = is_gather && g_wrap ? -index_bound : 64'sd0;
  assign index_bad = index_signed < index_low || index_signed >= index_bound;
  assign index_row = index_signed < 0 ? 32'(index_signed + index_bound) : index_value[31:0];
  assign run_start = is_gather
                     ? slab_base + {32'd0, index_row} * {29'd0, row_bytes[34:0]} +
                       (g_shared ? 64'd0 : {32'd0, g_i} << g_esize_log2)
                     : src + {32'd0, index_value[31:0]} * {30'd0, row_bytes[33:0]};

  // The strided position after the current run (a whole innermost row, so
  // the innermost index stays 0): the innermost of the outer dimensions
  // that can still step steps, the ones inside it restart at 0. None can
  // step after the last run.
  logic [31:0] next_idx [4];
  logic signed [65:0] next_offset [4];
  logic strided_last;
  always_comb begin
    logic found;
    logic [1:0] k;
    found = 1'b0;
    k = 2'd0;
    for (int d = 3; d >= 0; d--) begin
      if (!found && d != 3 && idx[d] + 32'd1 < size[d]) begin
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

  // Every byte gathered is written, nothing in flight.
  logic all_written;
  assign all_written = wstate == W_IDLE && requested == planned && landed == planned;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      state <= S_IDLE;
      wstate <= W_IDLE;
      fault <= 1'b0;
      fault_code <= npu_isa_pkg::FAULT_NONE;
      fault_addr <= '0;
      planned <= '0;
      landed <= '0;
      requested <= '0;
      consumed <= '0;
      run_addr <= '0;
      run_left <= '0;
      run_pitched <= 1'b0;
      run_packed <= 1'b0;
      next_element <= '0;
      elements_left <= '0;
      read_base <= '0;
      take <= '0;
      write_end <= '0;
      exhausted <= 1'b0;
      pending_fault <= 1'b0;
      read_failed <= 1'b0;
      write_failed <= 1'b0;
      token <= '0;
      index_value <= '0;
      index_addr <= '0;
      row_bytes <= '0;
      g_o <= '0;
      g_j <= '0;
      g_i <= '0;
      slab_base <= '0;
      for (int d = 0; d < 4; d++) begin
        idx[d] <= '0;
        offset[d] <= '0;
      end
    end else if (soft_reset) begin
      state <= S_IDLE;
      wstate <= W_IDLE;
    end else begin
      // ---- the gather side ----
      unique case (state)
        S_IDLE: if (start) begin
          fault <= 1'b0;
          fault_code <= npu_isa_pkg::FAULT_NONE;
          fault_addr <= '0;
          planned <= '0;
          landed <= '0;
          requested <= '0;
          consumed <= '0;
          run_left <= '0;
          exhausted <= 1'b0;
          pending_fault <= 1'b0;
          run_pitched <= 1'b0;
          run_packed <= 1'b0;
          read_failed <= 1'b0;
          write_failed <= 1'b0;
          token <= '0;
          index_addr <= indices;
          row_bytes <= is_gather ? {32'd0, g_inner} << g_esize_log2 : {30'd0, emb_dim, 2'b00};
          g_o <= '0;
          g_j <= '0;
          g_i <= '0;
          slab_base <= src;
          for (int d = 0; d < 4; d++) begin
            idx[d] <= '0;
            offset[d] <= '0;
          end
          state <= S_SETUP;
        end
        S_SETUP: begin
          // FILL's bytes need no reads: all of them have landed. COPY is
          // one run; the gathers find their runs in S_NEXT.
          state <= S_NEXT;
          if (is_fill) begin
            planned <= {30'd0, fill_count, 2'b00};
            landed <= {30'd0, fill_count, 2'b00};
            exhausted <= 1'b1;
          end else if (is_copy) begin
            run_addr <= src;
            run_left <= {32'd0, copy_bytes};
            exhausted <= 1'b1;
          end
        end
        S_NEXT: begin
          if (write_failed) state <= S_DRAIN;
          else if (run_left != '0) begin
            take <= next_take;
            state <= S_READ_REQ;
          end else if (!exhausted) begin
            if (is_strided) begin
              run_addr <= strided_run_addr;
              run_left <= strided_run_bytes;
              run_pitched <= stride[3] != 32'sd1 && !packable;
              run_packed <= packable;
              for (int d = 0; d < 4; d++) begin
                idx[d] <= next_idx[d];
                offset[d] <= next_offset[d];
              end
              exhausted <= strided_last;
            end else begin   // EMBEDDING, GATHER: fetch the next index
              state <= S_INDEX_REQ;
            end
          end else state <= S_DRAIN;
        end
        S_INDEX_REQ: if (wstate != W_REQ && mem_req_ready) begin
          index_value <= '0;
          state <= S_INDEX;
        end
        S_INDEX: begin
          if (mem_rd_valid) index_value <= index_captured;
          if (mem_rd_done) begin
            if (mem_rd_error) begin
              read_failed <= 1'b1;
              fault_code <= mem_rd_error_code;
              fault_addr <= mem_rd_error_addr;
              state <= S_DRAIN;
            end else state <= S_INDEX_CHECK;
          end
        end
        S_INDEX_CHECK: begin
          if (index_bad) begin
            // Out of range: write what was gathered, then fault.
            pending_fault <= 1'b1;
            fault_code <= npu_isa_pkg::FAULT_INDEX_OUT_OF_RANGE;
            fault_addr <= index_addr;
            exhausted <= 1'b1;
          end else if (is_gather) begin
            run_addr <= run_start;
            run_left <= g_shared ? row_bytes : 64'd1 << g_esize_log2;
            // Shared mode reads index[0 .. count) again for each slice.
            index_addr <= g_shared && g_last_j ? indices
                                               : index_addr + (emb_i64 ? 64'd8 : 64'd4);
            g_i <= g_last_i ? 32'd0 : g_i + 32'd1;
            if (g_last_i) g_j <= g_last_j ? 32'd0 : g_j + 32'd1;
            if (g_last_i && g_last_j) begin
              g_o <= g_o + 32'd1;
              slab_base <= slab_base + {32'd0, g_n} * row_bytes;
            end
            exhausted <= g_last_i && g_last_j && g_last_o;
          end else begin
            run_addr <= run_start;
            run_left <= row_bytes;
            token <= token + 32'd1;
            index_addr <= index_addr + (emb_i64 ? 64'd8 : 64'd4);
            exhausted <= token + 32'd1 == emb_count;
          end
          state <= S_NEXT;
        end
        S_READ_REQ: if (read_accepted) begin
          read_base <= planned;
          planned <= planned + take;
          // A read of elements that does not end the run has ELEMENT_ROWS.
          run_addr <= run_addr + (run_pitched || run_packed ? pitch << $clog2(ELEMENT_ROWS) : take);
          next_element <= run_addr;
          elements_left <= take_rows;
          run_left <= run_left - take;
          state <= S_READ;
        end
        S_READ: begin
          if (mem_rd_valid) begin
            if (run_packed) begin
              landed <= landed + ({59'd0, packed_count} << esize_log2);
              next_element <= next_element + 64'(packed_count) * {54'd0, pitch_bytes};
              elements_left <= elements_left - 16'(packed_count);
            end else landed <= beat_reach;
          end
          if (mem_rd_done) begin
            if (mem_rd_error && !write_failed) begin
              read_failed <= 1'b1;
              fault_code <= mem_rd_error_code;
              fault_addr <= mem_rd_error_addr;
              state <= S_DRAIN;
            end else state <= S_NEXT;
          end
        end
        // Wait for the write side; a failure of either side, or an index
        // out of range, faults once nothing is in flight.
        S_DRAIN: begin
          if (read_failed || write_failed) begin
            if (wstate == W_IDLE) begin
              fault <= 1'b1;
              state <= S_FINISH;
            end
          end else if (all_written) begin
            fault <= pending_fault;
            state <= S_FINISH;
          end
        end
        S_FINISH: state <= S_IDLE;
        default: state <= S_IDLE;
      endcase

      // ---- the write side ----
      if (mem_wr_accept) consumed <= wr_reach;
      unique case (wstate)
        W_IDLE: if (state != S_IDLE && state != S_FINISH && !read_failed && !write_failed &&
                    requested != planned)
          wstate <= W_REQ;
        W_REQ: if (write_accepted) begin
          requested <= requested + write_bytes;
          write_end <= requested + write_bytes;
          wstate <= W_WAIT;
        end
        W_WAIT: if (mem_wr_done) begin
          if (mem_wr_error && !read_failed) begin
            write_failed <= 1'b1;
            fault_code <= mem_wr_error_code;
            fault_addr <= mem_wr_error_addr;
          end
          wstate <= W_IDLE;
        end
        default: wstate <= W_IDLE;
      endcase
    end
  end

endmodule
