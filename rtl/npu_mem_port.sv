// The device's one AXI4 master. A unit asks for `req_rows` byte ranges of
// `req_bytes` bytes each, `req_pitch` bytes apart from req_addr on, to be
// read (or one range to be written); the port splits every range into INCR
// bursts of full-width beats (at most HW_AXI_MAX_BURST beats, never across a
// 4 KiB boundary; npu_mem_bursts).
//
// Reads and writes are independent engines, like AXI4's channels: a read
// request and a write request can be in progress at the same time (the DMA
// engine streams a copy through its buffer that way), each ending with its
// own rd_done or wr_done, when the unit says so (req_concurrent: the vector
// engine posts a chunk's write and reads the next chunks meanwhile).
// Otherwise a request waits until both engines are idle: the unit has one
// request in progress, and either completion is its (the command processor
// and the matrix engine).
//
// A unit that tracks several requests per direction (req_pipelined: the
// vector engine reads the next chunk while it computes the current one)
// may have its next request of a direction taken as soon as the one before
// has issued all its bursts (a read) or sent all its beats (a write): the
// memory latency of the next request then runs under the beats of the one
// before. Each request still ends with its own done, in order.
//
// Reads are pipelined: the port issues read bursts while earlier ones
// return, up to OUTSTANDING in flight, so that a request of many short
// rows (a matrix panel) costs one memory latency, not one per row. Every
// beat is handed up in order as (rd_addr, rd_data, rd_strb, rd_row), the
// strobe marking the bytes of row rd_row, when the unit can take it
// (rd_ready; otherwise RREADY stays low). Writes are posted: the port sends
// a burst's address and beats and goes on to the next burst (of the same
// row or the next one) without waiting for the response, up to OUTSTANDING
// responses pending, so that a request of many short rows (a C tile) also
// costs one memory latency. It shows the address of the beat it sends on
// wr_addr with its row (wr_row, starting at wr_row_start) and takes wr_data
// from the unit in the same cycle once the unit has it (wr_data_valid;
// otherwise WVALID stays low; wr_accept marks the beat sent); it computes
// the strobes itself and zeroes the bytes outside them. A unit whose data
// will never come (its source read failed) raises wr_squash: the bursts
// whose address was sent get beats without strobes, which write nothing,
// and no more bursts are issued.
//
// Each done pulses once per request; with its error it carries the fault the
// interconnect classified on RUSER/BUSER (npu::mem::FaultCode) and the
// first faulting byte address of the request. After an error the engine
// issues no more bursts and drains those in flight (AXI requires it).
module npu_mem_port (
  input  logic        clk,
  input  logic        rst_n,

  input  logic        req_valid,
  output logic        req_ready,
  output logic        read_ready,     // a read request would be taken (whatever req_write says)
  input  logic        req_write,
  input  logic        req_concurrent, // see below
  input  logic        req_pipelined,  // see below
  input  logic [63:0] req_addr,
  input  logic [31:0] req_bytes,      // per row, at least 1
  input  logic [15:0] req_rows,       // at least 1
  input  logic [63:0] req_pitch,

  output logic        rd_valid,
  input  logic        rd_ready,
  output logic [63:0] rd_addr,
  output logic [8*npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] rd_data,
  output logic [npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] rd_strb,
  output logic [15:0] rd_row,
  output logic [63:0] rd_row_start,   // first byte of row rd_row
  output logic        rd_last,        // the beat is its request's last

  output logic [63:0] wr_addr,
  output logic [15:0] wr_row,
  output logic [63:0] wr_row_start,   // first byte of row wr_row
  output logic        wr_accept,      // the beat at wr_addr is sent this cycle
  input  logic        wr_data_valid,
  input  logic        wr_squash,      // the unit has no data: send empty beats, then stop
  input  logic [8*npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] wr_data,

  output logic        idle,           // no request in progress in either engine
  output logic        rd_done,
  output logic        rd_error,
  output logic [3:0]  rd_error_code,
  output logic [63:0] rd_error_addr,
  output logic        wr_done,
  output logic        wr_error,
  output logic [3:0]  wr_error_code,
  output logic [63:0] wr_error_addr,
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
  localparam int unsigned OUTSTANDING = npu_isa_pkg::HW_AXI_OUTSTANDING;  // bursts in flight
  localparam int unsigned QB = $clog2(OUTSTANDING);

  typedef enum logic [1:0] {R_IDLE, R_BUSY, R_DONE} rd_state_e;
  typedef enum logic [2:0] {W_IDLE, W_ADDR, W_DATA, W_RESPONSE, W_DONE} wr_state_e;
  rd_state_e r_state;
  wr_state_e w_state;

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

  // A range that wraps past 2^64 reaches no memory.
  logic [64:0] request_end;
  logic        request_wraps;
  assign request_end = {1'b0, req_addr} + {33'd0, req_bytes};
  assign request_wraps = request_end[64] && request_end[63:0] != 64'd0;

  // A pipelined request follows the one in progress; one whose range wraps
  // waits for the engine to be idle, where it fails at once.
  logic r_take, w_take, r_load, w_load, r_follow, w_follow;
  logic r_issuing, w_issuing, r_failed, w_failed;
  assign r_follow = req_pipelined && r_state == R_BUSY && !r_issuing && !r_failed && !request_wraps &&
                    r_open != 2'd3;
  assign w_follow = req_pipelined && w_state == W_RESPONSE && !w_issuing && !w_failed && !request_wraps &&
                    w_open != 2'd3;
  assign r_take = !req_write && ((r_state == R_IDLE && (req_concurrent || w_state == W_IDLE)) || r_follow);
  assign w_take = req_write && ((w_state == W_IDLE && (req_concurrent || r_state == R_IDLE)) || w_follow);
  assign r_load = req_valid && r_take && !request_wraps;
  assign w_load = req_valid && w_take && !request_wraps;
  assign req_ready = r_take || w_take;
  // (Without the wrap check: it depends on the request, which may depend on this.)
  assign read_ready = (r_state == R_IDLE && (req_concurrent || w_state == W_IDLE)) ||
                      (req_pipelined && r_state == R_BUSY && !r_issuing && !r_failed && r_open != 2'd3);

  // Requests taken and not yet done (at most three per direction), and the
  // done of one that another follows (the last one's is the done state).
  logic [1:0] r_open, w_open;
  logic       r_done_follow, w_done_follow, r_follow_done, w_follow_done;

  // ---- reads ---------------------------------------------------------------------
  logic        r_last_burst;
  logic [63:0] r_next_beat, r_row_start;
  logic [7:0]  r_burst_beats;
  logic [15:0] r_row;
  logic [64:0] r_row_end;
  logic        ar_fire, r_fire, r_pop;

  npu_mem_bursts u_read_bursts (
    .clk, .rst_n, .load(r_load), .addr(req_addr), .bytes(req_bytes), .rows(req_rows),
    .pitch(req_pitch), .advance(ar_fire), .issuing(r_issuing), .next_beat(r_next_beat),
    .burst_beats(r_burst_beats), .last_burst(r_last_burst), .row(r_row),
    .row_start(r_row_start), .row_end(r_row_end));

  // Read bursts in flight.
  logic [63:0] q_beat [OUTSTANDING];      // address of the burst's next beat
  logic [63:0] q_start [OUTSTANDING];     // its row's bounds
  logic [64:0] q_stop [OUTSTANDING];
  logic [15:0] q_row [OUTSTANDING];
  logic        q_last [OUTSTANDING];     // the last burst of its request
  logic [QB-1:0] q_head, q_tail;
  logic [QB:0]  q_count, q_count_next;

  assign ar_fire = m_axi_arvalid && m_axi_arready;
  assign r_fire = m_axi_rvalid && m_axi_rready;
  assign r_pop = r_fire && m_axi_rlast;
  assign q_count_next = q_count + (QB+1)'(ar_fire) - (QB+1)'(r_pop);
  assign r_follow_done = r_pop && q_last[q_head] && (r_open != 2'd1 || r_load);

  assign m_axi_araddr = r_next_beat;
  assign m_axi_arlen = r_burst_beats - 8'd1;
  assign m_axi_arsize = 3'(SHIFT);
  assign m_axi_arburst = 2'b01;
  assign m_axi_arvalid = r_state == R_BUSY && r_issuing && !r_failed &&
                         q_count != (QB+1)'(OUTSTANDING);
  assign m_axi_rready = r_state == R_BUSY && q_count != '0 && rd_ready;

  assign rd_valid = r_fire;
  assign rd_addr = q_beat[q_head];
  assign rd_data = m_axi_rdata;
  assign rd_strb = strobes(q_beat[q_head], q_start[q_head], q_stop[q_head]);
  assign rd_row = q_row[q_head];
  assign rd_row_start = q_start[q_head];
  assign rd_last = m_axi_rlast && q_last[q_head];
  assign rd_done = r_state == R_DONE || r_done_follow;
  assign idle = r_state == R_IDLE && w_state == W_IDLE;
  assign rd_error = r_failed;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      r_state <= R_IDLE;
      r_failed <= 1'b0;
      rd_error_code <= npu_isa_pkg::FAULT_NONE;
      rd_error_addr <= '0;
      q_head <= '0;
      q_tail <= '0;
      q_count <= '0;
      r_open <= '0;
      r_done_follow <= 1'b0;
      for (int i = 0; i < OUTSTANDING; i++) begin
        q_beat[i] <= '0;
        q_start[i] <= '0;
        q_stop[i] <= '0;
        q_row[i] <= '0;
        q_last[i] <= 1'b0;
      end
    end else begin
      r_done_follow <= 1'b0;
      unique case (r_state)
        R_IDLE: if (req_valid && r_take) begin
          r_failed <= request_wraps;
          rd_error_code <= request_wraps ? npu_isa_pkg::FAULT_UNMAPPED : npu_isa_pkg::FAULT_NONE;
          rd_error_addr <= request_wraps ? req_addr : '0;
          r_state <= request_wraps ? R_DONE : R_BUSY;
          r_open <= 2'd1;
        end
        R_BUSY: begin
          if (ar_fire) begin
            q_beat[q_tail] <= r_next_beat;
            q_start[q_tail] <= r_row_start;
            q_stop[q_tail] <= r_row_end;
            q_row[q_tail] <= r_row;
            q_last[q_tail] <= r_last_burst;
            q_tail <= q_tail + QB'(1);
          end
          if (r_fire) begin
            if (m_axi_rresp[1] && !r_failed) begin
              r_failed <= 1'b1;
              rd_error_code <= m_axi_ruser;
              rd_error_addr <= first_byte(q_beat[q_head], q_start[q_head]);
            end
            q_beat[q_head] <= q_beat[q_head] + 64'(BYTES);
            if (m_axi_rlast) q_head <= q_head + QB'(1);
          end
          q_count <= q_count_next;
          // A request that another follows is done with its last burst; the
          // last one when nothing is left to issue (or an error stopped it)
          // and every burst returned.
          r_open <= r_open + 2'(r_load) - 2'(r_follow_done);
          r_done_follow <= r_follow_done;
          if (r_open == 2'd1 && !r_load &&
              (!r_issuing || r_failed || (ar_fire && r_last_burst)) && q_count_next == '0)
            r_state <= R_DONE;
        end
        R_DONE: r_state <= R_IDLE;
        default: r_state <= R_IDLE;
      endcase
    end
  end

  // ---- writes ----------------------------------------------------------------------
  logic        w_last_burst;
  logic [63:0] w_next_beat, w_next_row_start;
  logic [7:0]  w_burst_beats;
  logic [15:0] w_next_row;
  logic [64:0] w_next_row_end;
  logic        aw_fire, w_fire, b_fire;

  npu_mem_bursts u_write_bursts (
    .clk, .rst_n, .load(w_load), .addr(req_addr), .bytes(req_bytes), .rows(req_rows),
    .pitch(req_pitch), .advance(aw_fire), .issuing(w_issuing), .next_beat(w_next_beat),
    .burst_beats(w_burst_beats), .last_burst(w_last_burst), .row(w_next_row),
    .row_start(w_next_row_start), .row_end(w_next_row_end));

  logic [63:0] beat_addr;                 // the write beat in flight
  logic [63:0] w_start;                   // its row's bounds and index
  logic [64:0] w_stop;
  logic [15:0] w_row;
  logic [7:0]  beats_left;
  // Bursts sent whose response is pending, oldest first: the first byte of
  // the request in each, where an error response is reported.
  logic [63:0] b_first [OUTSTANDING];
  logic        b_last [OUTSTANDING];     // the last burst of its request
  logic [QB-1:0] b_head, b_tail;
  logic [QB:0]  b_count, b_count_next;
  assign aw_fire = m_axi_awvalid && m_axi_awready;
  assign w_fire = m_axi_wvalid && m_axi_wready;
  assign b_fire = m_axi_bvalid && m_axi_bready;
  assign b_count_next = b_count + (QB+1)'(aw_fire) - (QB+1)'(b_fire);
  assign w_follow_done = b_fire && b_last[b_head] && (w_open != 2'd1 || (w_load && w_state != W_IDLE));
  // Another burst may go: bursts remain, no error (nor squash) stops them,
  // and a response slot is free.
  logic next_burst_allowed;
  assign next_burst_allowed = w_issuing && !w_failed && !wr_squash &&
                              !(b_fire && m_axi_bresp[1]) && b_count_next != (QB+1)'(OUTSTANDING);

  assign m_axi_awaddr = w_next_beat;
  assign m_axi_awlen = w_burst_beats - 8'd1;
  assign m_axi_awsize = 3'(SHIFT);
  assign m_axi_awburst = 2'b01;
  assign m_axi_awvalid = w_state == W_ADDR;
  // A beat's payload holds still while it waits for WREADY: the bytes
  // outside its strobes are zero (the unit's buffer may change under them),
  // and a squash empties only beats whose data never came.
  logic [BYTES-1:0] w_strobes;
  logic [8*BYTES-1:0] w_byte_mask;
  assign w_strobes = wr_squash && !wr_data_valid ? '0 : strobes(beat_addr, w_start, w_stop);
  always_comb for (int i = 0; i < BYTES; i++) w_byte_mask[8*i +: 8] = {8{w_strobes[i]}};
  assign m_axi_wvalid = w_state == W_DATA && (wr_data_valid || wr_squash);
  assign m_axi_wdata = wr_data & w_byte_mask;
  assign m_axi_wstrb = w_strobes;
  assign m_axi_wlast = beats_left == 8'd1;
  assign m_axi_bready = (w_state == W_ADDR || w_state == W_DATA || w_state == W_RESPONSE) &&
                        b_count != '0;
  assign wr_addr = beat_addr;
  assign wr_accept = w_fire;
  assign wr_row = w_row;
  assign wr_row_start = w_start;
  assign wr_done = w_state == W_DONE || w_done_follow;
  assign wr_error = w_failed;

  // Bit 1 of a response is the error bit (SLVERR, DECERR). The write
  // engine ends on its responses, not on its last burst.
  logic unused_resp;
  assign unused_resp = m_axi_rresp[0] ^ m_axi_bresp[0];

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      w_state <= W_IDLE;
      w_failed <= 1'b0;
      wr_error_code <= npu_isa_pkg::FAULT_NONE;
      wr_error_addr <= '0;
      beat_addr <= '0;
      w_start <= '0;
      w_stop <= '0;
      w_row <= '0;
      beats_left <= '0;
      b_head <= '0;
      b_tail <= '0;
      b_count <= '0;
      w_open <= '0;
      w_done_follow <= 1'b0;
      for (int i = 0; i < OUTSTANDING; i++) begin
        b_first[i] <= '0;
        b_last[i] <= 1'b0;
      end
    end else begin
      w_done_follow <= 1'b0;
      unique case (w_state)
        W_IDLE: if (req_valid && w_take) begin
          w_failed <= request_wraps;
          wr_error_code <= request_wraps ? npu_isa_pkg::FAULT_UNMAPPED : npu_isa_pkg::FAULT_NONE;
          wr_error_addr <= request_wraps ? req_addr : '0;
          w_state <= request_wraps ? W_DONE : W_ADDR;
          w_open <= 2'd1;
        end
        // Responses return in the states below (b_fire); an error response
        // stops further bursts once the one being sent is complete (an
        // accepted address must get its beats).
        W_ADDR: if (m_axi_awready) begin
          beat_addr <= w_next_beat;
          w_start <= w_next_row_start;
          w_stop <= w_next_row_end;
          w_row <= w_next_row;
          beats_left <= w_burst_beats;
          b_first[b_tail] <= first_byte(w_next_beat, w_next_row_start);
          b_last[b_tail] <= w_last_burst;
          b_tail <= b_tail + QB'(1);
          w_state <= W_DATA;
        end
        // After a burst's last beat the next burst's address goes out at
        // once (a bubble per burst would cost 1/16 of the bandwidth).
        W_DATA: if (w_fire) begin
          beat_addr <= beat_addr + 64'(BYTES);
          beats_left <= beats_left - 8'd1;
          if (beats_left == 8'd1) w_state <= next_burst_allowed ? W_ADDR : W_RESPONSE;
        end
        // A request that follows (w_load) starts its bursts.
        W_RESPONSE: begin
          if (next_burst_allowed || w_load) w_state <= W_ADDR;
          else if (b_count_next == '0 && w_open == 2'd1 && !w_follow_done) w_state <= W_DONE;
        end
        W_DONE: w_state <= W_IDLE;
        default: w_state <= W_IDLE;
      endcase
      if (b_fire) begin
        if (m_axi_bresp[1] && !w_failed) begin
          w_failed <= 1'b1;
          wr_error_code <= m_axi_buser;
          wr_error_addr <= b_first[b_head];
        end
        b_head <= b_head + QB'(1);
      end
      b_count <= b_count_next;
      // A request that another follows is done with its last response.
      if (w_state != W_IDLE) w_open <= w_open + 2'(w_load) - 2'(w_follow_done);
      w_done_follow <= w_follow_done;
    end
  end

endmodule
