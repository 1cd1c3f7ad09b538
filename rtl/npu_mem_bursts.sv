// The issue position of one memory request: its rows (`rows` ranges of
// `bytes` bytes, `pitch` apart from `addr` on) split into INCR bursts of
// full-width beats, at most HW_AXI_MAX_BURST beats and never across a 4 KiB
// boundary. The memory port keeps one for its reads and one for its writes,
// so that a read request and a write request are issued at the same time.
module npu_mem_bursts (
  input  logic        clk,
  input  logic        rst_n,

  input  logic        load,               // start the request below
  input  logic [63:0] addr,
  input  logic [31:0] bytes,              // per row, at least 1
  input  logic [15:0] rows,               // at least 1
  input  logic [63:0] pitch,
  input  logic        advance,            // the burst at next_beat was issued

  output logic        issuing,            // bursts of the request remain to be issued
  output logic [63:0] next_beat,          // the next burst's first beat
  output logic [7:0]  burst_beats,        // its length
  output logic        last_burst,         // it ends the request
  output logic [15:0] row,                // its row
  output logic [63:0] row_start,          // first byte of that row
  output logic [64:0] row_end             // one past its last byte
);

  localparam int unsigned SHIFT = $clog2(npu_isa_pkg::HW_AXI_DATA_BYTES);
  localparam int unsigned MAX_BURST = npu_isa_pkg::HW_AXI_MAX_BURST;
  localparam int unsigned BEATS_PER_4K = 4096 / npu_isa_pkg::HW_AXI_DATA_BYTES;

  logic [31:0] row_bytes;
  logic [15:0] rows_total;
  logic [63:0] row_pitch;

  // The next burst: from next_beat to the row's end, at most MAX_BURST beats
  // and within the 4 KiB page.
  logic [64-SHIFT:0] last_beat;           // index of the row's last beat
  logic [58:0] beats_to_end;
  logic [7:0]  beats_to_page;
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

  logic [63:0] next_row_start;
  assign next_row_start = row_start + row_pitch;
  assign last_burst = burst_next >= row_end && row + 16'd1 >= rows_total;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      row_bytes <= '0;
      rows_total <= '0;
      row_pitch <= '0;
      row <= '0;
      row_start <= '0;
      row_end <= '0;
      next_beat <= '0;
      issuing <= 1'b0;
    end else if (load) begin
      row_bytes <= bytes;
      rows_total <= rows;
      row_pitch <= pitch;
      row <= '0;
      row_start <= addr;
      row_end <= {1'b0, addr} + {33'd0, bytes};
      next_beat <= {addr[63:SHIFT], SHIFT'(0)};
      issuing <= 1'b1;
    end else if (advance) begin
      // The rest of the row, else the next row, else the request is issued.
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
    end
  end

endmodule
