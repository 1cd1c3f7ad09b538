// A byte-addressed staging buffer of ROWS beat-wide rows, written and read
// a beat's worth of bytes at a time at any byte offset (wrapping at the
// end). It realigns data between memory beats and the byte streams of the
// DMA engine: a beat whose first byte belongs at buffer offset `wr_offset`
// is rotated into place across two rows; a read at `rd_offset` returns the
// BEAT_BYTES bytes starting there, byte 0 in the low bits.
module npu_byte_buffer #(
  parameter int unsigned ROWS = 16
) (
  input  logic clk,
  input  logic wr_en,
  input  logic [$clog2(ROWS)+$clog2(npu_isa_pkg::HW_AXI_DATA_BYTES)-1:0] wr_offset,
  input  logic [8*npu_isa_pkg::HW_AXI_DATA_BYTES-1:0]  wr_data,
  input  logic [npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] wr_strb,   // which bytes of wr_data to store
  input  logic [$clog2(ROWS)+$clog2(npu_isa_pkg::HW_AXI_DATA_BYTES)-1:0] rd_offset,
  output logic [8*npu_isa_pkg::HW_AXI_DATA_BYTES-1:0]  rd_data
);

  localparam int unsigned BYTES = npu_isa_pkg::HW_AXI_DATA_BYTES;
  localparam int unsigned SHIFT = $clog2(npu_isa_pkg::HW_AXI_DATA_BYTES);
  localparam int unsigned ROW_BITS = $clog2(ROWS);

  logic [8*BYTES-1:0] rows [ROWS];

  // Rotating left by k bytes puts byte i of a beat at position (i + k) mod
  // BYTES; positions at or after k stay in the first row, those before it
  // spill into the next.
  function automatic logic [8*BYTES-1:0] rotate_left(input logic [8*BYTES-1:0] v,
                                                      input logic [SHIFT-1:0] k);
    rotate_left = v << (8 * k) | v >> (8 * (BYTES - 32'(k)));
  endfunction
  function automatic logic [BYTES-1:0] rotate_mask(input logic [BYTES-1:0] v,
                                                   input logic [SHIFT-1:0] k);
    rotate_mask = v << k | v >> (BYTES - 32'(k));
  endfunction

  logic [SHIFT-1:0]    wr_rot;
  logic [ROW_BITS-1:0] wr_row0, wr_row1;
  logic [8*BYTES-1:0]  wr_rotated;
  logic [BYTES-1:0]    wr_mask_rotated;

  assign wr_rot = wr_offset[SHIFT-1:0];
  assign wr_row0 = wr_offset[SHIFT+ROW_BITS-1:SHIFT];
  assign wr_row1 = wr_row0 + ROW_BITS'(1);
  // Rotated only in the cycles that write (a Verilated model then skips the
  // wide shifts in the others).
  always_comb begin
    wr_rotated = '0;
    wr_mask_rotated = '0;
    if (wr_en) begin
      wr_rotated = rotate_left(wr_data, wr_rot);
      wr_mask_rotated = rotate_mask(wr_strb, wr_rot);
    end
  end

  always_ff @(posedge clk) begin
    if (wr_en) begin
      for (int i = 0; i < BYTES; i++) begin
        if (wr_mask_rotated[i]) begin
          if (i >= 32'(wr_rot)) rows[wr_row0][8*i +: 8] <= wr_rotated[8*i +: 8];
          else rows[wr_row1][8*i +: 8] <= wr_rotated[8*i +: 8];
        end
      end
    end
  end

  logic [SHIFT-1:0]    rd_rot;
  logic [ROW_BITS-1:0] rd_row0, rd_row1;

  assign rd_rot = rd_offset[SHIFT-1:0];
  assign rd_row0 = rd_offset[SHIFT+ROW_BITS-1:SHIFT];
  assign rd_row1 = rd_row0 + ROW_BITS'(1);
  // Bytes rd_rot.. of the first row, then the start of the next.
  assign rd_data = rows[rd_row0] >> (8 * rd_rot) | rows[rd_row1] << (8 * (BYTES - 32'(rd_rot)));

endmodule
