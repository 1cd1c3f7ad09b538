// The register window (isa/csr.td, docs/isa.md "Device registers") behind an
// AXI4-Lite slave, and the ring state the command processor works from.
// It keeps RING_HEAD, the packet and cycle counters, the fault registers and
// the region table the operand checks use; the command processor reports
// each completed packet (pkt_done, pkt_halt) and each fault (pkt_fault with
// code, address, operands and length), and the cycle counter runs while the
// device is active. A CONTROL.RESET write clears everything but RING_BASE,
// RING_ENTRIES and the region table and pulses soft_reset for the engines.
module npu_csr (
  input  logic        clk,
  input  logic        rst_n,

  // AXI4-Lite slave (32-bit data, 12-bit addresses within the window)
  input  logic [11:0] s_axil_awaddr,
  input  logic        s_axil_awvalid,
  output logic        s_axil_awready,
  input  logic [31:0] s_axil_wdata,
  input  logic [3:0]  s_axil_wstrb,
  input  logic        s_axil_wvalid,
  output logic        s_axil_wready,
  output logic [1:0]  s_axil_bresp,
  output logic        s_axil_bvalid,
  input  logic        s_axil_bready,
  input  logic [11:0] s_axil_araddr,
  input  logic        s_axil_arvalid,
  output logic        s_axil_arready,
  output logic [31:0] s_axil_rdata,
  output logic [1:0]  s_axil_rresp,
  output logic        s_axil_rvalid,
  input  logic        s_axil_rready,

  // to and from the command processor
  output logic [63:0] ring_base,
  output logic [31:0] ring_entries,   // a power of two, or 0 (ring disabled)
  output logic [31:0] ring_head,
  output logic [31:0] ring_tail,
  output logic [63:0] packets,        // completed since reset: the next packet's index
  output logic        halted,
  output logic        faulted,
  output logic        soft_reset,
  output logic        ring_pending,   // packets wait and the device may run them
  input  logic        active,         // fetching or executing: the cycle counter runs
  input  logic        pkt_done,
  input  logic        pkt_halt,
  input  logic        pkt_fault,
  input  logic [3:0]  fault_code,
  input  logic [63:0] fault_addr,
  input  logic [17:0] fault_operand,
  input  logic [63:0] fault_length,
  output logic [63:0] cycles,

  // the region table: entry e in bits [64*e +: 64] and [2*e +: 2]
  output logic [64*npu_isa_pkg::HW_REGION_ENTRIES-1:0] region_base,
  output logic [64*npu_isa_pkg::HW_REGION_ENTRIES-1:0] region_size,
  output logic [2*npu_isa_pkg::HW_REGION_ENTRIES-1:0]  region_access
);

  localparam int unsigned REGIONS = npu_isa_pkg::HW_REGION_ENTRIES;
  localparam int unsigned RSB = $clog2(REGIONS);

  logic [3:0]  error_code;
  logic [63:0] fault_packet, fault_address, fault_bytes;
  logic [17:0] fault_operands;
  logic [RSB-1:0] region_select;
  logic [31:0] cycle_high_latch;

  // ---- writes: address and data are taken together, answered with B --------
  logic write_fire;
  assign write_fire = s_axil_awvalid && s_axil_wvalid && !s_axil_bvalid;
  assign s_axil_awready = write_fire;
  assign s_axil_wready = write_fire;
  assign s_axil_bresp = 2'b00;

  // Byte-lane merge of a partial write into a 32-bit register.
  function automatic logic [31:0] merged(input logic [31:0] old, input logic [31:0] data,
                                         input logic [3:0] strb);
    for (int i = 0; i < 4; i++) merged[8*i +: 8] = strb[i] ? data[8*i +: 8] : old[8*i +: 8];
  endfunction

  logic [31:0] entries_written;
  assign entries_written = merged(ring_entries, s_axil_wdata, s_axil_wstrb);

  logic control_reset, control_resume;
  assign control_reset = write_fire && s_axil_awaddr == npu_isa_pkg::CSR_CONTROL &&
                         s_axil_wstrb[0] && s_axil_wdata[npu_isa_pkg::CONTROL_RESET_BIT];
  assign control_resume = write_fire && s_axil_awaddr == npu_isa_pkg::CSR_CONTROL &&
                          s_axil_wstrb[0] && s_axil_wdata[npu_isa_pkg::CONTROL_RESUME_BIT];
  assign soft_reset = control_reset;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      s_axil_bvalid <= 1'b0;
      ring_base <= '0;
      ring_entries <= '0;
      ring_tail <= '0;
      ring_head <= '0;
      packets <= '0;
      halted <= 1'b0;
      faulted <= 1'b0;
      error_code <= npu_isa_pkg::FAULT_NONE;
      fault_packet <= '0;
      fault_address <= '0;
      fault_operands <= '0;
      fault_bytes <= '0;
      cycles <= '0;
      region_select <= '0;
      region_base <= '0;
      region_size <= '0;
      region_access <= '0;
    end else begin
      if (s_axil_bvalid && s_axil_bready) s_axil_bvalid <= 1'b0;
      if (active) cycles <= cycles + 64'd1;
      if (pkt_done) begin
        ring_head <= ring_head + 32'd1;
        packets <= packets + 64'd1;
        halted <= pkt_halt;
      end
      if (pkt_fault) begin
        faulted <= 1'b1;
        error_code <= fault_code;
        fault_packet <= packets;
        fault_address <= fault_addr;
        fault_operands <= fault_operand;
        fault_bytes <= fault_length;
      end
      if (write_fire) begin
        s_axil_bvalid <= 1'b1;
        unique case (s_axil_awaddr)
          npu_isa_pkg::CSR_RING_BASE_LO:
            ring_base[31:0] <= merged(ring_base[31:0], s_axil_wdata, s_axil_wstrb);
          npu_isa_pkg::CSR_RING_BASE_HI:
            ring_base[63:32] <= merged(ring_base[63:32], s_axil_wdata, s_axil_wstrb);
          npu_isa_pkg::CSR_RING_ENTRIES:
            // Anything but a power of two disables the ring.
            ring_entries <= (entries_written & (entries_written - 32'd1)) == 32'd0
                            ? entries_written : 32'd0;
          npu_isa_pkg::CSR_RING_TAIL:
            ring_tail <= merged(ring_tail, s_axil_wdata, s_axil_wstrb);
          npu_isa_pkg::CSR_REGION_SELECT:
            region_select <= RSB'(merged(32'(region_select), s_axil_wdata, s_axil_wstrb));
          npu_isa_pkg::CSR_REGION_BASE_LO:
            region_base[64*region_select +: 32] <=
                merged(region_base[64*region_select +: 32], s_axil_wdata, s_axil_wstrb);
          npu_isa_pkg::CSR_REGION_BASE_HI:
            region_base[64*region_select + 32 +: 32] <=
                merged(region_base[64*region_select + 32 +: 32], s_axil_wdata, s_axil_wstrb);
          npu_isa_pkg::CSR_REGION_SIZE_LO:
            region_size[64*region_select +: 32] <=
                merged(region_size[64*region_select +: 32], s_axil_wdata, s_axil_wstrb);
          npu_isa_pkg::CSR_REGION_SIZE_HI:
            region_size[64*region_select + 32 +: 32] <=
                merged(region_size[64*region_select + 32 +: 32], s_axil_wdata, s_axil_wstrb);
          npu_isa_pkg::CSR_REGION_ACCESS:
            if (s_axil_wstrb[0]) region_access[2*region_select +: 2] <= s_axil_wdata[1:0];
          default: ;
        endcase
        if (control_resume) halted <= 1'b0;
        if (control_reset) begin
          ring_tail <= '0;
          ring_head <= '0;
          packets <= '0;
          halted <= 1'b0;
          faulted <= 1'b0;
          error_code <= npu_isa_pkg::FAULT_NONE;
          fault_packet <= '0;
          fault_address <= '0;
          fault_operands <= '0;
          fault_bytes <= '0;
          cycles <= '0;
        end
      end
    end
  end

  // ---- reads: one cycle after the address --------------------------------
  logic busy;
  assign busy = ring_head != ring_tail && !halted && !faulted;
  assign ring_pending = busy && ring_entries != 32'd0;
  assign s_axil_arready = !s_axil_rvalid;
  assign s_axil_rresp = 2'b00;

  logic [31:0] read_value;
  always_comb begin
    unique case (s_axil_araddr)
      npu_isa_pkg::CSR_ID: read_value = 32'h4e50_5530;   // "NPU0"
      npu_isa_pkg::CSR_VERSION:
        read_value = {16'(npu_isa_pkg::ISA_VERSION_MAJOR), 16'(npu_isa_pkg::ISA_VERSION_MINOR)};
      npu_isa_pkg::CSR_HW_CONFIG:
        read_value = {8'd0, 8'(npu_isa_pkg::HW_AXI_DATA_BYTES), 8'(npu_isa_pkg::HW_VECTOR_LANES),
                      8'(npu_isa_pkg::HW_MATRIX_TILE)};
      npu_isa_pkg::CSR_RING_BASE_LO: read_value = ring_base[31:0];
      npu_isa_pkg::CSR_RING_BASE_HI: read_value = ring_base[63:32];
      npu_isa_pkg::CSR_RING_ENTRIES: read_value = ring_entries;
      npu_isa_pkg::CSR_RING_TAIL: read_value = ring_tail;
      npu_isa_pkg::CSR_RING_HEAD: read_value = ring_head;
      npu_isa_pkg::CSR_STATUS: begin
        read_value = '0;
        read_value[npu_isa_pkg::STATUS_BUSY_BIT] = busy;
        read_value[npu_isa_pkg::STATUS_HALTED_BIT] = halted;
        read_value[npu_isa_pkg::STATUS_FAULT_BIT] = faulted;
      end
      npu_isa_pkg::CSR_ERROR_CODE: read_value = {28'd0, error_code};
      npu_isa_pkg::CSR_FAULT_PACKET_LO: read_value = fault_packet[31:0];
      npu_isa_pkg::CSR_FAULT_PACKET_HI: read_value = fault_packet[63:32];
      npu_isa_pkg::CSR_FAULT_ADDR_LO: read_value = fault_address[31:0];
      npu_isa_pkg::CSR_FAULT_ADDR_HI: read_value = fault_address[63:32];
      npu_isa_pkg::CSR_CYCLE_LO: read_value = cycles[31:0];
      npu_isa_pkg::CSR_CYCLE_HI: read_value = cycle_high_latch;
      npu_isa_pkg::CSR_PACKETS_LO: read_value = packets[31:0];
      npu_isa_pkg::CSR_PACKETS_HI: read_value = packets[63:32];
      npu_isa_pkg::CSR_FAULT_OPERAND: read_value = {14'd0, fault_operands};
      npu_isa_pkg::CSR_FAULT_LENGTH_LO: read_value = fault_bytes[31:0];
      npu_isa_pkg::CSR_FAULT_LENGTH_HI: read_value = fault_bytes[63:32];
      npu_isa_pkg::CSR_REGION_SELECT: read_value = 32'(region_select);
      npu_isa_pkg::CSR_REGION_BASE_LO: read_value = region_base[64*region_select +: 32];
      npu_isa_pkg::CSR_REGION_BASE_HI: read_value = region_base[64*region_select + 32 +: 32];
      npu_isa_pkg::CSR_REGION_SIZE_LO: read_value = region_size[64*region_select +: 32];
      npu_isa_pkg::CSR_REGION_SIZE_HI: read_value = region_size[64*region_select + 32 +: 32];
      npu_isa_pkg::CSR_REGION_ACCESS: read_value = {30'd0, region_access[2*region_select +: 2]};
      default: read_value = '0;   // unassigned offsets read as zero
    endcase
  end

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      s_axil_rvalid <= 1'b0;
      s_axil_rdata <= '0;
      cycle_high_latch <= '0;
    end else begin
      if (s_axil_rvalid && s_axil_rready) s_axil_rvalid <= 1'b0;
      if (s_axil_arvalid && !s_axil_rvalid) begin
        s_axil_rvalid <= 1'b1;
        s_axil_rdata <= read_value;
        // Reading CYCLE_LO latches the high half so that LO, HI is one value.
        if (s_axil_araddr == npu_isa_pkg::CSR_CYCLE_LO) cycle_high_latch <= cycles[63:32];
      end
    end
  end

endmodule
