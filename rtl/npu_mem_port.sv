// The device's one AXI4 master. A unit asks for `req_rows` byte ranges of
// `req_bytes` bytes each, `req_pitch` bytes apart from req_addr on, to be
// read (or one range to be written); the port splits every range into INCR
// bursts of full-width beats (at most HW_AXI_MAX_BURST beats, never across a
// 4 KiB boundary).
//
// Reads are pipelined: the port issues read bursts while earlier ones
// return, up to OUTSTANDING in flight, so that a request of many short
// rows (a matrix panel) costs one memory latency, not one per row. Every
// beat is handed up in order as (rd_addr, rd_data, rd_strb, rd_row), the
// strobe marking the bytes of row rd_row. Writes are posted: the port sends
// a burst's address and beats and goes on to the next burst (of the same
// row or the next one) without waiting for the response, up to OUTSTANDING
// responses pending, so that a request of many short rows (a C tile) also
// costs one memory latency. It shows the address of the beat it sends on
// wr_addr with its row (wr_row, starting at wr_row_start) and takes wr_data
// from the unit in the same cycle; it computes the strobes itself.
//
// `done` pulses once per request; with `error` it carries the fault the
// interconnect classified on RUSER/BUSER (npu::mem::FaultCode) and the
// first faulting byte address of the request. After an error the port
// issues no more bursts and drains those in flight (AXI requires it).
module npu_mem_port (
  input  logic        clk,
  input  logic        rst_n,

  input  logic        req_valid,
  output logic        req_ready,
  input  logic        req_write,
  input  logic [63:0] req_addr,
  input  logic [31:0] req_bytes,      // per row, at least 1
  input  logic [15:0] req_rows,       // at least 1
  input  logic [63:0] req_pitch,

  output logic        rd_valid,
  output logic [63:0] rd_addr,
  output logic [8*npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] rd_data,
  output logic [npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] rd_strb,
  output logic [15:0] rd_row,
  output logic [63:0] rd_row_start,   // first byte of row rd_row

  output logic [63:0] wr_addr,
  output logic [15:0] wr_row,
  output logic [63:0] wr_row_start,   // first byte of row wr_row
  input  logic [8*npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] wr_data,

  output logic        done,
  output logic        error,
  output logic [3:0]  error_code,
  output logic [63:0] error_addr,

  output logic [63:0] m_axi_araddr,
  output logic [7:0]  m_axi_arlen,
  output logic [2:0]  m_axi_arsize,
  output logic [1:0]  m_axi_arburst,
  output logic        m_axi_arvalid,
  input  logic        m_axi_arready,
  input  logic [8*npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] m_axi_rdata,
  input  logic [1:0]  m_axi_rresp,
  input  logic [3:0]  m_axi_ruser,
  input  logic        m_axi_rlast,
  input  logic        m_axi_rvalid,
  output logic        m_axi_rready,

  output logic [63:0] m_axi_awaddr,
  output logic [7:0]  m_axi_awlen,
  output logic [2:0]  m_axi_awsize,
  output logic [1:0]  m_axi_awburst,
  output logic        m_axi_awvalid,
  input  logic        m_axi_awready,
  output logic [8*npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] m_axi_wdata,
  output logic [npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] m_axi_wstrb,
  output logic        m_axi_wlast,
  output logic        m_axi_wvalid,
  input  logic        m_axi_wready,
  input  logic [1:0]  m_axi_bresp,
  input  logic [3:0]  m_axi_buser,
  input  logic        m_axi_bvalid,
  output logic        m_axi_bready
);

  localparam int unsigned BYTES = npu_isa_pkg::HW_AXI_DATA_BYTES;
  localparam int unsigned SHIFT = $clog2(BYTES);
  localparam int unsigned MAX_BURST = npu_isa_pkg::HW_AXI_MAX_BURST;
  localparam int unsigned BEATS_PER_4K = 4096 / BYTES;
  localparam int unsigned OUTSTANDING = npu_isa_pkg::HW_AXI_OUTSTANDING;  // read bursts in flight
  localparam int unsigned QB = $clog2(OUTSTANDING);

  typedef enum logic [2:0] {
    S_IDLE, S_READ, S_ADDR_WRITE, S_WRITE, S_RESPONSE, S_DONE
  } state_e;
  state_e state;

  // ---- the request's rows -------------------------------------------------------
  logic [31:0] row_bytes;
  logic [15:0] rows_total, row;           // row: the row whose bursts are being issued
  logic [63:0] pitch;
  logic [63:0] row_start;                 // first byte of that row
  logic [64:0] row_end;                   // one past its last byte
  logic [63:0] next_beat;                 // its next burst's first beat
  logic        issuing;                   // bursts of the request remain to be issued
  logic        failed;

  // The next burst: from next_beat to the row's end, at most MAX_BURST beats
  // and within the 4 KiB page.
  logic [64-SHIFT:0] last_beat;           // index of the row's last beat
  logic [58:0] beats_to_end;
  logic [7:0]  beats_to_page, burst_beats;
  logic [64:0] burst_next;                // where the burst after it starts (2^64 at the top)
  always_comb begin
    last_beat = (65-SHIFT)'((row_end - 65'd1) >> SHIFT);
    beats_to_end = 59'(last_beat - {1'b0, next_beat[63:SHIFT]} + 60'd1);
    beats_to_page = 8'(BEATS_PER_4K) - 8'(next_beat[11:SHIFT]);
    burst_beats = 8'(MAX_BURST);
    if (beats_to_end < 59'(burst_beats)) burst_beats = 8'(beats_to_end);
    if (beats_to_page < burst_beats) burst_beats = beats_to_page;
    burst_next = {1'b0, next_beat} + (65'(burst_beats) << SHIFT);
  end

  // The bytes of the beat at `beat` inside [start, stop).
  // Bytes from `beat` to `to`, clamped to [0, BYTES].
  function automatic logic [SHIFT:0] beat_offset(input logic [63:0] beat, input logic [64:0] to);
    if (to <= {1'b0, beat}) beat_offset = '0;
    else if (to - {1'b0, beat} >= 65'(BYTES)) beat_offset = (SHIFT+1)'(BYTES);
    else beat_offset = (SHIFT+1)'(to - {1'b0, beat});
  endfunction
  // The n lowest bits set (n <= BYTES).
  function automatic logic [BYTES-1:0] low_bits(input logic [SHIFT:0] n);
    low_bits = BYTES'(((BYTES+1)'(1) << n) - (BYTES+1)'(1));
  endfunction
  function automatic logic [BYTES-1:0] strobes(input logic [63:0] beat, input logic [63:0] start,
                                               input logic [64:0] stop);
    strobes = low_bits(beat_offset(beat, stop)) & ~low_bits(beat_offset(beat, {1'b0, start}));
  endfunction

  // The first byte of the request at or after `addr`: where a fault is reported.
  function automatic logic [63:0] first_byte(input logic [63:0] addr, input logic [63:0] start);
    first_byte = addr < start ? start : addr;
  endfunction

  // Moves the issue position past the burst just issued: the rest of the
  // row, else the next row, else the request is issued.
  logic [63:0] next_row_start;
  logic        last_burst;                // the burst at next_beat ends the request
  assign next_row_start = row_start + pitch;
  assign last_burst = burst_next >= row_end && row + 16'd1 >= rows_total;
  task automatic advance_issue();
    if (burst_next < row_end) begin
      next_beat <= burst_next[63:0];
    end else if (!last_burst) begin
      row <= row + 16'd1;
      row_start <= next_row_start;
      row_end <= {1'b0, next_row_start} + {33'd0, row_bytes};
      next_beat <= {next_row_start[63:SHIFT], SHIFT'(0)};
    end else begin
      issuing <= 1'b0;
    end
  endtask

  // ---- read bursts in flight ----------------------------------------------------
  logic [63:0] q_beat [OUTSTANDING];      // address of the burst's next beat
  logic [63:0] q_start [OUTSTANDING];     // its row's bounds
  logic [64:0] q_stop [OUTSTANDING];
  logic [15:0] q_row [OUTSTANDING];
  logic [QB-1:0] q_head, q_tail;
  logic [QB:0]  q_count;

  logic ar_fire, r_fire, r_pop;
  assign ar_fire = m_axi_arvalid && m_axi_arready;
  assign r_fire = m_axi_rvalid && m_axi_rready;
  assign r_pop = r_fire && m_axi_rlast;

  assign m_axi_araddr = next_beat;
  assign m_axi_arlen = burst_beats - 8'd1;
  assign m_axi_arsize = 3'(SHIFT);
  assign m_axi_arburst = 2'b01;
  assign m_axi_arvalid = state == S_READ && issuing && !failed && q_count != (QB+1)'(OUTSTANDING);
  assign m_axi_rready = state == S_READ && q_count != '0;

  assign rd_valid = r_fire;
  assign rd_addr = q_beat[q_head];
  assign rd_data = m_axi_rdata;
  assign rd_strb = strobes(q_beat[q_head], q_start[q_head], q_stop[q_head]);
  assign rd_row = q_row[q_head];
  assign rd_row_start = q_start[q_head];

  // ---- writes -----------------------------------------------------------------------
  logic [63:0] beat_addr;                 // the write beat in flight
  logic [63:0] w_start;                   // its row's bounds and index
  logic [64:0] w_stop;
  logic [15:0] w_row;
  logic [7:0]  beats_left;
  // Bursts sent whose response is pending, oldest first: the first byte of
  // the request in each, where an error response is reported.
  logic [63:0] b_first [OUTSTANDING];
  logic [QB-1:0] b_head, b_tail;
  logic [QB:0]  b_count, b_count_next;
  logic aw_fire, b_fire;
  assign aw_fire = m_axi_awvalid && m_axi_awready;
  assign b_fire = m_axi_bvalid && m_axi_bready;
  assign b_count_next = b_count + (QB+1)'(aw_fire) - (QB+1)'(b_fire);

  assign m_axi_awaddr = next_beat;
  assign m_axi_awlen = burst_beats - 8'd1;
  assign m_axi_awsize = 3'(SHIFT);
  assign m_axi_awburst = 2'b01;
  assign m_axi_awvalid = state == S_ADDR_WRITE;
  assign m_axi_wvalid = state == S_WRITE;
  assign m_axi_wdata = wr_data;
  assign m_axi_wstrb = strobes(beat_addr, w_start, w_stop);
  assign m_axi_wlast = beats_left == 8'd1;
  assign m_axi_bready = (state == S_ADDR_WRITE || state == S_WRITE || state == S_RESPONSE) &&
                        b_count != '0;
  assign wr_addr = beat_addr;
  assign wr_row = w_row;
  assign wr_row_start = w_start;

  assign req_ready = state == S_IDLE;
  assign done = state == S_DONE;
  assign error = failed;

  // Bit 1 of a response is the error bit (SLVERR, DECERR).
  logic unused_resp;
  assign unused_resp = m_axi_rresp[0] ^ m_axi_bresp[0];

  logic [64:0] request_end;
  assign request_end = {1'b0, req_addr} + {33'd0, req_bytes};

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      state <= S_IDLE;
      row_bytes <= '0;
      rows_total <= '0;
      row <= '0;
      pitch <= '0;
      row_start <= '0;
      row_end <= '0;
      next_beat <= '0;
      issuing <= 1'b0;
      failed <= 1'b0;
      error_code <= npu_isa_pkg::FAULT_NONE;
      error_addr <= '0;
      q_head <= '0;
      q_tail <= '0;
      q_count <= '0;
      beat_addr <= '0;
      w_start <= '0;
      w_stop <= '0;
      w_row <= '0;
      beats_left <= '0;
      b_head <= '0;
      b_tail <= '0;
      b_count <= '0;
      for (int i = 0; i < OUTSTANDING; i++) begin
        q_beat[i] <= '0;
        q_start[i] <= '0;
        q_stop[i] <= '0;
        q_row[i] <= '0;
        b_first[i] <= '0;
      end
    end else begin
      unique case (state)
        S_IDLE: if (req_valid) begin
          row_bytes <= req_bytes;
          rows_total <= req_rows;
          row <= '0;
          pitch <= req_pitch;
          row_start <= req_addr;
          row_end <= request_end;
          next_beat <= {req_addr[63:SHIFT], SHIFT'(0)};
          issuing <= 1'b1;
          failed <= 1'b0;
          error_code <= npu_isa_pkg::FAULT_NONE;
          error_addr <= '0;
          // A range that wraps past 2^64 reaches no memory.
          if (request_end[64] && request_end[63:0] != 64'd0) begin
            failed <= 1'b1;
            error_code <= npu_isa_pkg::FAULT_UNMAPPED;
            error_addr <= req_addr;
            state <= S_DONE;
          end else begin
            state <= req_write ? S_ADDR_WRITE : S_READ;
          end
        end
        S_READ: begin
          if (ar_fire) begin
            q_beat[q_tail] <= next_beat;
            q_start[q_tail] <= row_start;
            q_stop[q_tail] <= row_end;
            q_row[q_tail] <= row;
            q_tail <= q_tail + QB'(1);
            advance_issue();
          end
          if (r_fire) begin
            if (m_axi_rresp[1] && !failed) begin
              failed <= 1'b1;
              error_code <= m_axi_ruser;
              error_addr <= first_byte(q_beat[q_head], q_start[q_head]);
            end
            q_beat[q_head] <= q_beat[q_head] + 64'(BYTES);
            if (m_axi_rlast) q_head <= q_head + QB'(1);
          end
          q_count <= q_count + (QB+1)'(ar_fire) - (QB+1)'(r_pop);
          // Done when nothing is left to issue (or an error stopped it) and
          // every burst returned.
          if ((!issuing || failed || (ar_fire && last_burst)) &&
              q_count + (QB+1)'(ar_fire) - (QB+1)'(r_pop) == '0)
            state <= S_DONE;
        end
        // Write states: responses return in any of them (b_fire); an error
        // response stops further bursts once the one being sent is complete
        // (an accepted address must get its beats).
        S_ADDR_WRITE: if (m_axi_awready) begin
          beat_addr <= next_beat;
          w_start <= row_start;
          w_stop <= row_end;
          w_row <= row;
          beats_left <= burst_beats;
          b_first[b_tail] <= first_byte(next_beat, row_start);
          b_tail <= b_tail + QB'(1);
          advance_issue();
          state <= S_WRITE;
        end
        S_WRITE: if (m_axi_wready) begin
          beat_addr <= beat_addr + 64'(BYTES);
          beats_left <= beats_left - 8'd1;
          if (beats_left == 8'd1) state <= S_RESPONSE;
        end
        S_RESPONSE: begin
          if (issuing && !failed && !(b_fire && m_axi_bresp[1]) &&
              b_count_next != (QB+1)'(OUTSTANDING))
            state <= S_ADDR_WRITE;
          else if (b_count_next == '0)
            state <= S_DONE;
        end
        S_DONE: state <= S_IDLE;
        default: state <= S_IDLE;
      endcase
      if (b_fire) begin
        if (m_axi_bresp[1] && !failed) begin
          failed <= 1'b1;
          error_code <= m_axi_buser;
          error_addr <= b_first[b_head];
        end
        b_head <= b_head + QB'(1);
      end
      b_count <= b_count_next;
    end
  end

endmodule
