// The device's one AXI4 master. A unit asks for a byte range
// [req_addr, req_addr + req_bytes) to be read or written; the port splits it
// into INCR bursts of full-width beats (at most HW_AXI_MAX_BURST beats, never
// across a 4 KiB boundary) and runs them one at a time.
//
// Reads: every beat is handed up as (rd_addr, rd_data, rd_strb), rd_strb
// marking the bytes that belong to the request. Writes: the port shows the
// address of the beat it sends on wr_addr and takes wr_data from the unit
// in the same cycle; it computes the strobes itself. `done` pulses once per
// request; with `error` it carries the fault the interconnect classified on
// RUSER/BUSER (npu::mem::FaultCode) and the first faulting byte address of
// the request. After an error the port finishes the burst in flight (AXI
// requires it) and issues no more.
module npu_mem_port (
  input  logic        clk,
  input  logic        rst_n,

  input  logic        req_valid,
  output logic        req_ready,
  input  logic        req_write,
  input  logic [63:0] req_addr,
  input  logic [31:0] req_bytes,      // at least 1

  output logic        rd_valid,
  output logic [63:0] rd_addr,
  output logic [8*npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] rd_data,
  output logic [npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] rd_strb,

  output logic [63:0] wr_addr,
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

  localparam int unsigned SHIFT = $clog2(npu_isa_pkg::HW_AXI_DATA_BYTES);
  localparam int unsigned MAX_BURST = npu_isa_pkg::HW_AXI_MAX_BURST;
  localparam int unsigned BEATS_PER_4K = 4096 / npu_isa_pkg::HW_AXI_DATA_BYTES;

  typedef enum logic [2:0] {
    S_IDLE, S_ADDR_READ, S_READ, S_ADDR_WRITE, S_WRITE, S_RESPONSE, S_DONE
  } state_e;

  state_e state;
  logic [63:0] start_addr;     // first byte of the request
  logic [64:0] end_addr;       // one past its last byte (65 bits: may be 2^64)
  logic [63:0] next_beat;      // address of the next burst's first beat
  logic [63:0] beat_addr;      // address of the beat in flight
  logic [63:0] burst_addr;     // address of the first beat of the burst in flight
  logic [7:0]  beats_left;     // beats of the current burst still to move
  logic        failed;

  // The next burst: from next_beat to the request's end, at most MAX_BURST
  // beats and within the 4 KiB page.
  logic [64-SHIFT:0] last_beat;   // index of the request's last beat
  logic [58:0] beats_to_end;
  logic [7:0]  beats_to_page, burst_beats;

  always_comb begin
    last_beat = (65-SHIFT)'((end_addr - 65'd1) >> SHIFT);
    beats_to_end = 59'(last_beat - {1'b0, next_beat[63:SHIFT]} + 60'd1);
    beats_to_page = 8'(BEATS_PER_4K) - 8'(next_beat[11:SHIFT]);
    burst_beats = 8'(MAX_BURST);
    if (beats_to_end < 59'(burst_beats)) burst_beats = 8'(beats_to_end);
    if (beats_to_page < burst_beats) burst_beats = beats_to_page;
  end

  // Bytes of the beat at beat_addr inside [start_addr, end_addr).
  logic [npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] strobe;
  always_comb begin
    for (int i = 0; i < npu_isa_pkg::HW_AXI_DATA_BYTES; i++) begin
      strobe[i] = {1'b0, beat_addr + 64'(i)} < end_addr && beat_addr + 64'(i) >= start_addr;
    end
  end

  assign req_ready = state == S_IDLE;

  // Bit 1 of a response is the error bit (SLVERR, DECERR).
  logic unused_resp;
  assign unused_resp = m_axi_rresp[0] ^ m_axi_bresp[0];
  assign done = state == S_DONE;
  assign error = failed;

  assign m_axi_araddr = next_beat;
  assign m_axi_arlen = burst_beats - 8'd1;
  assign m_axi_arsize = 3'(SHIFT);
  assign m_axi_arburst = 2'b01;
  assign m_axi_arvalid = state == S_ADDR_READ;
  assign m_axi_rready = state == S_READ;

  assign m_axi_awaddr = next_beat;
  assign m_axi_awlen = burst_beats - 8'd1;
  assign m_axi_awsize = 3'(SHIFT);
  assign m_axi_awburst = 2'b01;
  assign m_axi_awvalid = state == S_ADDR_WRITE;
  assign m_axi_wvalid = state == S_WRITE;
  assign m_axi_wdata = wr_data;
  assign m_axi_wstrb = strobe;
  assign m_axi_wlast = beats_left == 8'd1;
  assign m_axi_bready = state == S_RESPONSE;
  assign wr_addr = beat_addr;

  assign rd_valid = state == S_READ && m_axi_rvalid;
  assign rd_addr = beat_addr;
  assign rd_data = m_axi_rdata;
  assign rd_strb = strobe;

  // The first byte of the request at or after `addr`: where a fault is reported.
  function automatic logic [63:0] first_byte(input logic [63:0] addr, input logic [63:0] start);
    first_byte = addr < start ? start : addr;
  endfunction

  logic [64:0] request_end;
  assign request_end = {1'b0, req_addr} + {33'd0, req_bytes};

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      state <= S_IDLE;
      burst_addr <= '0;
      start_addr <= '0;
      end_addr <= '0;
      next_beat <= '0;
      beat_addr <= '0;
      beats_left <= '0;
      failed <= 1'b0;
      error_code <= npu_pkg::FAULT_NONE;
      error_addr <= '0;
    end else begin
      unique case (state)
        S_IDLE: if (req_valid) begin
          start_addr <= req_addr;
          end_addr <= request_end;
          next_beat <= {req_addr[63:SHIFT], SHIFT'(0)};
          failed <= 1'b0;
          error_code <= npu_pkg::FAULT_NONE;
          error_addr <= '0;
          // A range that wraps past 2^64 reaches no memory.
          if (request_end[64] && request_end[63:0] != 64'd0) begin
            failed <= 1'b1;
            error_code <= npu_pkg::FAULT_UNMAPPED;
            error_addr <= req_addr;
            state <= S_DONE;
          end else begin
            state <= req_write ? S_ADDR_WRITE : S_ADDR_READ;
          end
        end
        S_ADDR_READ: if (m_axi_arready) begin
          beat_addr <= next_beat;
          burst_addr <= next_beat;
          beats_left <= burst_beats;
          next_beat <= next_beat + (64'(burst_beats) << SHIFT);
          state <= S_READ;
        end
        S_READ: if (m_axi_rvalid) begin
          if (m_axi_rresp[1] && !failed) begin
            failed <= 1'b1;
            error_code <= m_axi_ruser;
            error_addr <= first_byte(beat_addr, start_addr);
          end
          beat_addr <= beat_addr + 64'(npu_isa_pkg::HW_AXI_DATA_BYTES);
          beats_left <= beats_left - 8'd1;
          if (m_axi_rlast) begin
            if (failed || m_axi_rresp[1] || {1'b0, next_beat} >= end_addr) state <= S_DONE;
            else state <= S_ADDR_READ;
          end
        end
        S_ADDR_WRITE: if (m_axi_awready) begin
          beat_addr <= next_beat;
          burst_addr <= next_beat;
          beats_left <= burst_beats;
          next_beat <= next_beat + (64'(burst_beats) << SHIFT);
          state <= S_WRITE;
        end
        S_WRITE: if (m_axi_wready) begin
          beat_addr <= beat_addr + 64'(npu_isa_pkg::HW_AXI_DATA_BYTES);
          beats_left <= beats_left - 8'd1;
          if (beats_left == 8'd1) state <= S_RESPONSE;
        end
        S_RESPONSE: if (m_axi_bvalid) begin
          if (m_axi_bresp[1]) begin
            failed <= 1'b1;
            error_code <= m_axi_buser;
            error_addr <= first_byte(burst_addr, start_addr);
            state <= S_DONE;
          end else if ({1'b0, next_beat} >= end_addr) state <= S_DONE;
          else state <= S_ADDR_WRITE;
        end
        S_DONE: state <= S_IDLE;
        default: state <= S_IDLE;
      endcase
    end
  end

endmodule
