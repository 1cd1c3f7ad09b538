// The NPU: an AXI4-Lite register window (npu_csr), the command processor
// that fetches packets from the ring in memory and decodes them (npu_cmd),
// three engines (DMA, matrix, vector) and the AXI4 master they share
// (npu_mem_port). One packet executes at a time, so the port belongs to the
// command processor while it fetches and to the packet's engine while it
// runs, but for the prefetch of the next packet (below).
//
// The trace_* outputs describe each finished packet for the harness (index,
// opcode, cycles, bytes moved); dbg_* show whether the device makes
// progress and where it is when it stops.
module npu_top (
  input  logic        clk,
  input  logic        rst_n,

  // AXI4-Lite register window
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

  // AXI4 memory master (RUSER/BUSER: npu::mem::FaultCode of an error response)
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
  output logic        m_axi_bready,

  // per-packet trace and progress
  output logic        trace_valid,
  output logic        trace_fault,
  output logic [63:0] trace_index,
  output logic [31:0] trace_opcode,
  output logic [63:0] trace_start_cycle,
  output logic [63:0] trace_end_cycle,
  output logic [63:0] trace_bytes_read,
  output logic [63:0] trace_bytes_written,
  // Debug (the co-simulation harness): start no further packet from the
  // ring while set, so that the device stops between two packets.
  input  logic        dbg_hold,
  output logic        dbg_active,
  output logic        dbg_ring_pending,
  output logic        dbg_progress,       // a packet ended or a memory request completed
  output logic [4:0]  dbg_cmd_state,
  output logic [3:0]  dbg_dma_state,
  output logic [3:0]  dbg_matrix_state,
  output logic [4:0]  dbg_vector_state
);

  localparam int unsigned BEAT_BITS = 8*npu_isa_pkg::HW_AXI_DATA_BYTES;
  localparam int unsigned BEAT_BYTES = npu_isa_pkg::HW_AXI_DATA_BYTES;

  // ---- register window --------------------------------------------------------
  logic [63:0] ring_base, packets, cycles, cmd_fault_addr;
  logic [31:0] ring_entries, ring_head, ring_tail;
  logic halted, faulted, soft_reset, active;
  logic pkt_done, pkt_halt, pkt_fault;
  logic [3:0] cmd_fault_code;
  logic [17:0] cmd_fault_operand;
  logic [63:0] cmd_fault_length;
  localparam int unsigned REGIONS = npu_isa_pkg::HW_REGION_ENTRIES;
  logic [64*REGIONS-1:0] region_base, region_size;
  logic [2*REGIONS-1:0] region_access;

  npu_csr u_csr (
    .clk, .rst_n,
    .s_axil_awaddr, .s_axil_awvalid, .s_axil_awready, .s_axil_wdata, .s_axil_wstrb,
    .s_axil_wvalid, .s_axil_wready, .s_axil_bresp, .s_axil_bvalid, .s_axil_bready,
    .s_axil_araddr, .s_axil_arvalid, .s_axil_arready, .s_axil_rdata, .s_axil_rresp,
    .s_axil_rvalid, .s_axil_rready,
    .ring_base, .ring_entries, .ring_head, .ring_tail, .packets, .halted, .faulted, .soft_reset,
    .ring_pending(dbg_ring_pending), .active, .pkt_done, .pkt_halt, .pkt_fault, .fault_code(cmd_fault_code),
    .fault_addr(cmd_fault_addr), .fault_operand(cmd_fault_operand), .fault_length(cmd_fault_length),
    .cycles, .region_base, .region_size, .region_access);

  // ---- shared memory port ---------------------------------------------------------
  logic        req_valid, req_ready, req_write, read_ready;
  logic [63:0] req_addr;
  logic [31:0] req_bytes;
  logic [15:0] req_rows, rd_row;
  logic [63:0] req_pitch, rd_row_start;
  logic        rd_valid, rd_last;
  logic [63:0] rd_addr, wr_addr, wr_row_start;
  logic [15:0] wr_row;
  logic [BEAT_BITS-1:0] rd_data, wr_data;
  logic [BEAT_BYTES-1:0] rd_strb;
  logic        rd_ready, wr_accept, wr_data_valid, wr_squash;
  logic        rd_done, rd_error, wr_done, wr_error, port_idle;
  logic [3:0]  rd_error_code, wr_error_code;
  logic [63:0] rd_error_addr, wr_error_addr;
  // The command processor and the matrix engine have one request at a time:
  // either engine's completion is theirs. (The DMA and the vector engine
  // tell the read engine's from the write engine's.)
  logic        mem_done, mem_error;
  logic [3:0]  mem_error_code;
  logic [63:0] mem_error_addr;
  assign mem_done = rd_done || wr_done;
  assign mem_error = wr_done ? wr_error : rd_error;
  assign mem_error_code = wr_done ? wr_error_code : rd_error_code;
  assign mem_error_addr = wr_done ? wr_error_addr : rd_error_addr;

  npu_mem_port u_mem_port (
    .clk, .rst_n,
    .req_valid, .req_ready, .read_ready, .req_write, .req_concurrent(port_owner == npu_pkg::PORT_DMA || port_owner == npu_pkg::PORT_VECTOR),
    .req_pipelined(port_owner == npu_pkg::PORT_VECTOR),
    .req_addr, .req_bytes, .req_rows, .req_pitch,
    .rd_valid, .rd_ready, .rd_addr, .rd_data, .rd_strb, .rd_row, .rd_row_start, .rd_last, .wr_addr, .wr_row,
    .wr_row_start, .wr_accept, .wr_data_valid, .wr_squash, .wr_data,
    .idle(port_idle), .rd_done, .rd_error, .rd_error_code, .rd_error_addr,
    .wr_done, .wr_error, .wr_error_code, .wr_error_addr,
    .m_axi_araddr, .m_axi_arlen, .m_axi_arsize, .m_axi_arburst, .m_axi_arvalid, .m_axi_arready,
    .m_axi_rdata, .m_axi_rresp, .m_axi_ruser, .m_axi_rlast, .m_axi_rvalid, .m_axi_rready,
    .m_axi_awaddr, .m_axi_awlen, .m_axi_awsize, .m_axi_awburst, .m_axi_awvalid, .m_axi_awready,
    .m_axi_wdata, .m_axi_wstrb, .m_axi_wlast, .m_axi_wvalid, .m_axi_wready,
    .m_axi_bresp, .m_axi_buser, .m_axi_bvalid, .m_axi_bready);

  // ---- command processor --------------------------------------------------------
  logic [1:0]  port_owner;
  logic        fetch_req_valid;
  logic [63:0] fetch_req_addr;
  // The prefetch of the next packet takes the port between two requests of
  // the matrix or the vector engine (the DMA engine streams and keeps it):
  // when the port is idle, the engine is not asking for it and is likely to
  // compute for a while (the matrix engine says so; the vector engine when
  // its reader has read the whole pass and the steps run). While it is in flight (`prefetching`) the engine's request
  // waits and the beats and the completion are the command processor's.
  logic        prefetch_req_valid, prefetch_grant, prefetching, engine_req_valid;
  logic [63:0] prefetch_req_addr;
  logic [npu_isa_pkg::PACKET_BITS-1:0] packet;
  logic        dma_start, matrix_start, vector_start;
  logic        engine_done, engine_fault;
  logic [3:0]  engine_fault_code;
  logic [63:0] engine_fault_addr, engine_fault_length;
  logic [7:0]  engine_fault_operand;

  npu_cmd u_cmd (
    .clk, .rst_n, .soft_reset, .hold(dbg_hold),
    .ring_base, .ring_entries, .ring_head, .ring_tail, .packets, .halted, .faulted, .cycles,
    .active, .pkt_done, .pkt_halt, .pkt_fault, .fault_code(cmd_fault_code),
    .fault_addr(cmd_fault_addr), .fault_operand(cmd_fault_operand), .fault_length(cmd_fault_length),
    .region_base, .region_size, .region_access,
    .port_owner, .fetch_req_valid, .fetch_req_addr, .prefetch_req_valid, .prefetch_req_addr,
    .prefetch_grant, .prefetching,
    .mem_req_ready(req_ready), .mem_req_valid(req_valid), .mem_req_write(req_write),
    .mem_req_bytes(req_bytes), .mem_req_rows(req_rows), .mem_rd_valid(rd_valid),
    .mem_rd_addr(rd_addr),
    .mem_rd_data(rd_data), .mem_done, .mem_error, .mem_error_code, .mem_error_addr,
    .packet, .dma_start, .matrix_start, .vector_start,
    .engine_done, .engine_fault, .engine_fault_code, .engine_fault_addr, .engine_fault_operand,
    .engine_fault_length,
    .trace_valid, .trace_index, .trace_opcode, .trace_start_cycle, .trace_bytes_read,
    .trace_bytes_written, .trace_state(dbg_cmd_state));

  assign trace_fault = pkt_fault;
  // The completing cycle counts too: a packet ends where the next one starts.
  assign trace_end_cycle = cycles + 64'd1;
  assign dbg_active = active;
  // Progress for the harness's hang detection: work that moved forward, not
  // mere traffic on the bus.
  assign dbg_progress = pkt_done || pkt_fault || mem_done;

  // ---- engines ------------------------------------------------------------------------
  logic        dma_req_valid, dma_req_write, dma_done, dma_fault;
  logic [63:0] dma_req_addr, dma_fault_addr;
  logic [31:0] dma_req_bytes;
  logic [15:0] dma_req_rows;
  logic [63:0] dma_req_pitch;
  logic [BEAT_BITS-1:0] dma_wr_data;
  logic        dma_rd_ready, dma_wr_data_valid, dma_wr_squash;
  logic [3:0]  dma_fault_code;
  logic [7:0]  dma_fault_operand;
  logic [63:0] dma_fault_length;

  npu_dma u_dma (
    .clk, .rst_n, .soft_reset, .start(dma_start), .packet,
    .done(dma_done), .fault(dma_fault), .fault_code(dma_fault_code), .fault_addr(dma_fault_addr),
    .fault_operand(dma_fault_operand), .fault_length(dma_fault_length),
    .dbg_state(dbg_dma_state),
    .mem_req_valid(dma_req_valid), .mem_req_write(dma_req_write), .mem_req_addr(dma_req_addr),
    .mem_req_bytes(dma_req_bytes), .mem_req_rows(dma_req_rows), .mem_req_pitch(dma_req_pitch),
    .mem_req_ready(req_ready && port_owner == npu_pkg::PORT_DMA),
    .mem_rd_valid(rd_valid && port_owner == npu_pkg::PORT_DMA), .mem_rd_ready(dma_rd_ready),
    .mem_rd_addr(rd_addr), .mem_rd_data(rd_data), .mem_rd_strb(rd_strb), .mem_rd_row(rd_row),
    .mem_rd_row_start(rd_row_start), .mem_wr_addr(wr_addr),
    .mem_wr_accept(wr_accept), .mem_wr_data_valid(dma_wr_data_valid),
    .mem_wr_squash(dma_wr_squash), .mem_wr_data(dma_wr_data),
    .mem_rd_done(rd_done && port_owner == npu_pkg::PORT_DMA), .mem_rd_error(rd_error),
    .mem_rd_error_code(rd_error_code), .mem_rd_error_addr(rd_error_addr),
    .mem_wr_done(wr_done && port_owner == npu_pkg::PORT_DMA), .mem_wr_error(wr_error),
    .mem_wr_error_code(wr_error_code), .mem_wr_error_addr(wr_error_addr));

  logic        matrix_req_valid, matrix_req_write, matrix_done, matrix_fault, matrix_port_quiet;
  logic [63:0] matrix_req_addr, matrix_fault_addr;
  logic [31:0] matrix_req_bytes;
  logic [15:0] matrix_req_rows;
  logic [63:0] matrix_req_pitch;
  logic [BEAT_BITS-1:0] matrix_wr_data;
  logic [3:0]  matrix_fault_code;
  logic [7:0]  matrix_fault_operand;
  logic [63:0] matrix_fault_length;

  npu_matrix u_matrix (
    .clk, .rst_n, .soft_reset, .start(matrix_start), .packet,
    .done(matrix_done), .fault(matrix_fault), .fault_code(matrix_fault_code),
    .fault_addr(matrix_fault_addr), .fault_operand(matrix_fault_operand),
    .fault_length(matrix_fault_length), .dbg_state(dbg_matrix_state),
    .port_quiet(matrix_port_quiet),
    .mem_req_valid(matrix_req_valid), .mem_req_write(matrix_req_write),
    .mem_req_addr(matrix_req_addr), .mem_req_bytes(matrix_req_bytes),
    .mem_req_rows(matrix_req_rows), .mem_req_pitch(matrix_req_pitch),
    .mem_req_ready(req_ready && port_owner == npu_pkg::PORT_MATRIX && !prefetching),
    .mem_rd_valid(rd_valid && port_owner == npu_pkg::PORT_MATRIX && !prefetching),
    .mem_rd_addr(rd_addr),
    .mem_rd_data(rd_data), .mem_rd_strb(rd_strb), .mem_rd_row(rd_row),
    .mem_rd_row_start(rd_row_start), .mem_wr_addr(wr_addr), .mem_wr_row(wr_row),
    .mem_wr_row_start(wr_row_start), .mem_wr_data(matrix_wr_data),
    .mem_done(mem_done && port_owner == npu_pkg::PORT_MATRIX && !prefetching), .mem_error,
    .mem_error_code,
    .mem_error_addr);

  logic        vector_req_valid, vector_req_write, vector_done, vector_fault, vector_port_quiet;
  logic [63:0] vector_req_addr, vector_fault_addr;
  logic [31:0] vector_req_bytes;
  logic [BEAT_BITS-1:0] vector_wr_data;
  logic [3:0]  vector_fault_code;
  logic [7:0]  vector_fault_operand;
  logic [63:0] vector_fault_length;

  npu_vector u_vector (
    .clk, .rst_n, .soft_reset, .start(vector_start), .packet,
    .done(vector_done), .fault(vector_fault), .fault_code(vector_fault_code),
    .fault_addr(vector_fault_addr), .fault_operand(vector_fault_operand),
    .fault_length(vector_fault_length), .dbg_state(dbg_vector_state),
    .mem_req_valid(vector_req_valid), .mem_req_write(vector_req_write),
    .mem_req_addr(vector_req_addr), .mem_req_bytes(vector_req_bytes),
    .mem_req_ready(req_ready && port_owner == npu_pkg::PORT_VECTOR && !prefetching),
    .mem_read_ready(read_ready && port_owner == npu_pkg::PORT_VECTOR && !prefetching),
    .port_quiet(vector_port_quiet),
    .mem_rd_valid(rd_valid && port_owner == npu_pkg::PORT_VECTOR && !prefetching),
    .mem_rd_addr(rd_addr), .mem_rd_last(rd_last),
    .mem_rd_data(rd_data), .mem_rd_strb(rd_strb), .mem_wr_addr(wr_addr),
    .mem_wr_accept(wr_accept && port_owner == npu_pkg::PORT_VECTOR && !prefetching),
    .mem_wr_data(vector_wr_data),
    .mem_rd_done(rd_done && port_owner == npu_pkg::PORT_VECTOR && !prefetching),
    .mem_rd_error(rd_error), .mem_rd_error_code(rd_error_code), .mem_rd_error_addr(rd_error_addr),
    .mem_wr_done(wr_done && port_owner == npu_pkg::PORT_VECTOR && !prefetching),
    .mem_wr_error(wr_error), .mem_wr_error_code(wr_error_code), .mem_wr_error_addr(wr_error_addr));

  assign engine_req_valid = port_owner == npu_pkg::PORT_MATRIX ? matrix_req_valid :
                            port_owner == npu_pkg::PORT_VECTOR ? vector_req_valid : 1'b0;
  assign prefetch_grant = prefetch_req_valid && port_idle && !engine_req_valid &&
                          (port_owner == npu_pkg::PORT_MATRIX ? matrix_port_quiet
                                                              : port_owner == npu_pkg::PORT_VECTOR && vector_port_quiet);

  // ---- port and completion multiplexers ---------------------------------------------
  always_comb begin
    req_valid = 1'b0;
    req_write = 1'b0;
    req_addr = fetch_req_addr;
    req_bytes = 32'(npu_isa_pkg::PACKET_BYTES);
    req_rows = 16'd1;
    req_pitch = '0;
    wr_data = dma_wr_data;
    // Only the DMA engine streams: the others take every beat and have
    // every write beat ready.
    rd_ready = 1'b1;
    wr_data_valid = 1'b1;
    wr_squash = 1'b0;
    engine_done = 1'b0;
    engine_fault = 1'b0;
    engine_fault_code = npu_isa_pkg::FAULT_NONE;
    engine_fault_addr = '0;
    engine_fault_operand = npu_isa_pkg::NO_OPERAND;
    engine_fault_length = '0;
    unique case (port_owner)
      npu_pkg::PORT_FETCH: req_valid = fetch_req_valid;
      npu_pkg::PORT_DMA: begin
        req_valid = dma_req_valid;
        req_write = dma_req_write;
        req_addr = dma_req_addr;
        req_bytes = dma_req_bytes;
        req_rows = dma_req_rows;
        req_pitch = dma_req_pitch;
        rd_ready = dma_rd_ready;
        wr_data_valid = dma_wr_data_valid;
        wr_squash = dma_wr_squash;
        engine_done = dma_done;
        engine_fault = dma_fault;
        engine_fault_code = dma_fault_code;
        engine_fault_addr = dma_fault_addr;
        engine_fault_operand = dma_fault_operand;
        engine_fault_length = dma_fault_length;
      end
      npu_pkg::PORT_MATRIX: begin
        req_valid = matrix_req_valid;
        req_write = matrix_req_write;
        req_addr = matrix_req_addr;
        req_bytes = matrix_req_bytes;
        req_rows = matrix_req_rows;
        req_pitch = matrix_req_pitch;
        wr_data = matrix_wr_data;
        engine_done = matrix_done;
        engine_fault = matrix_fault;
        engine_fault_code = matrix_fault_code;
        engine_fault_addr = matrix_fault_addr;
        engine_fault_operand = matrix_fault_operand;
        engine_fault_length = matrix_fault_length;
      end
      default: begin
        req_valid = vector_req_valid;
        req_write = vector_req_write;
        req_addr = vector_req_addr;
        req_bytes = vector_req_bytes;
        wr_data = vector_wr_data;
        engine_done = vector_done;
        engine_fault = vector_fault;
        engine_fault_code = vector_fault_code;
        engine_fault_addr = vector_fault_addr;
        engine_fault_operand = vector_fault_operand;
        engine_fault_length = vector_fault_length;
      end
    endcase
    if (prefetch_grant) begin
      req_valid = 1'b1;
      req_write = 1'b0;
      req_addr = prefetch_req_addr;
      req_bytes = 32'(npu_isa_pkg::PACKET_BYTES);
      req_rows = 16'd1;
      req_pitch = '0;
    end else if (prefetching) begin
      req_valid = 1'b0;
    end
  end

endmodule
