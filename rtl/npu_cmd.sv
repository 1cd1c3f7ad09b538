// The command processor: while RING_HEAD != RING_TAIL (and the device is
// neither halted nor faulted) it fetches the packet at RING_HEAD from the
// ring in memory, decodes and checks it with the generated npu_isa_pkg
// (unknown opcode, reserved bits, operand ranges, enumerations and
// alignment, in isa::decode's order), runs NOP/FENCE/HALT itself and hands
// every other packet to its engine, one packet at a time. A completed packet
// advances RING_HEAD; a fault stops the ring with the packet's index.
module npu_cmd (
  input  logic        clk,
  input  logic        rst_n,
  input  logic        soft_reset,

  input  logic [63:0] ring_base,
  input  logic [31:0] ring_entries,
  input  logic [31:0] ring_head,
  input  logic [31:0] ring_tail,
  input  logic [63:0] packets,
  input  logic        halted,
  input  logic        faulted,
  input  logic [63:0] cycles,

  output logic        active,
  output logic        pkt_done,
  output logic        pkt_halt,
  output logic        pkt_fault,
  output logic [3:0]  fault_code,
  output logic [63:0] fault_addr,

  // the memory port while fetching, and the owner of the port
  output logic [1:0]  port_owner,
  output logic        fetch_req_valid,
  output logic [63:0] fetch_req_addr,
  input  logic        mem_req_ready,
  input  logic        mem_req_valid,      // the owner's request, for the byte counters
  input  logic        mem_req_write,
  input  logic [31:0] mem_req_bytes,
  input  logic        mem_rd_valid,
  input  logic [63:0] mem_rd_addr,
  input  logic [8*npu_isa_pkg::HW_AXI_DATA_BYTES-1:0] mem_rd_data,
  input  logic        mem_done,
  input  logic        mem_error,
  input  logic [3:0]  mem_error_code,
  input  logic [63:0] mem_error_addr,

  // the engines
  output logic [npu_isa_pkg::PACKET_BITS-1:0] packet,
  output logic        dma_start,
  output logic        matrix_start,
  output logic        vector_start,
  input  logic        engine_done,        // the started engine finished ...
  input  logic        engine_fault,       // ... with a fault
  input  logic [3:0]  engine_fault_code,
  input  logic [63:0] engine_fault_addr,

  // per-packet trace for the harness (records, progress reports)
  output logic        trace_valid,
  output logic [63:0] trace_index,
  output logic [31:0] trace_opcode,
  output logic [63:0] trace_start_cycle,
  output logic [63:0] trace_bytes_read,
  output logic [63:0] trace_bytes_written,
  output logic [3:0]  trace_state
);

  localparam int unsigned SHIFT = $clog2(npu_isa_pkg::HW_AXI_DATA_BYTES);
  localparam int unsigned BEAT_BITS = 8*npu_isa_pkg::HW_AXI_DATA_BYTES;

  typedef enum logic [3:0] {
    // (in this order in the harness's hang report, rtl/harness/npu_device.cpp)
    S_IDLE, S_FETCH_REQ, S_FETCH, S_DECODE, S_DISPATCH, S_EXECUTE, S_COMPLETE, S_FAULT
  } state_e;

  state_e state;
  assign trace_state = state;

  logic [63:0] slot_addr;
  assign slot_addr = ring_base + {26'd0, ring_head & (ring_entries - 32'd1), 6'd0};

  // A packet spans at most three beats; they are staged by their distance
  // from the beat holding the packet's first byte.
  logic [3*BEAT_BITS-1:0] staged;
  logic [63:0] first_beat;
  logic [63:0] beat_distance;
  logic [1:0]  beat_index;
  logic [npu_isa_pkg::PACKET_BITS-1:0] aligned;
  assign first_beat = {slot_addr[63:SHIFT], SHIFT'(0)};
  assign beat_distance = (mem_rd_addr - first_beat) >> SHIFT;
  assign beat_index = beat_distance[1:0];
  assign aligned = npu_isa_pkg::PACKET_BITS'(staged >> (8 * slot_addr[SHIFT-1:0]));

  // A packet's beats are at most two beats past the first.
  logic unused_distance;
  assign unused_distance = ^beat_distance[63:2];

  logic [31:0] opcode;
  assign opcode = packet[31:0];

  logic is_dma, is_matrix, is_control;
  always_comb begin
    is_dma = opcode == npu_isa_pkg::OP_COPY || opcode == npu_isa_pkg::OP_FILL ||
             opcode == npu_isa_pkg::OP_COPY_STRIDED || opcode == npu_isa_pkg::OP_EMBEDDING;
    is_matrix = opcode == npu_isa_pkg::OP_MATMUL || opcode == npu_isa_pkg::OP_BMM;
    is_control = opcode == npu_isa_pkg::OP_NOP || opcode == npu_isa_pkg::OP_FENCE ||
                 opcode == npu_isa_pkg::OP_HALT;
  end

  // Decode checks, in isa::decode's order.
  logic [3:0] decode_fault;
  logic [1:0] operand_status;
  assign operand_status = npu_isa_pkg::operand_check(packet);
  always_comb begin
    if (!npu_isa_pkg::is_known_opcode(opcode)) decode_fault = npu_pkg::FAULT_UNKNOWN_OPCODE;
    else if ((packet & ~npu_isa_pkg::used_bits(opcode)) != '0)
      decode_fault = npu_pkg::FAULT_RESERVED_BITS;
    else if (operand_status == npu_isa_pkg::OPERAND_INVALID)
      decode_fault = npu_pkg::FAULT_INVALID_OPERAND;
    else if (operand_status == npu_isa_pkg::OPERAND_MISALIGNED)
      decode_fault = npu_pkg::FAULT_MISALIGNED;
    else decode_fault = npu_pkg::FAULT_NONE;
  end

  assign active = state != S_IDLE;
  assign fetch_req_valid = state == S_FETCH_REQ;
  assign fetch_req_addr = slot_addr;
  assign pkt_done = state == S_COMPLETE;
  assign pkt_halt = opcode == npu_isa_pkg::OP_HALT;
  assign pkt_fault = state == S_FAULT;
  assign trace_valid = pkt_done || pkt_fault;
  assign trace_index = packets;
  assign trace_opcode = opcode;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      state <= S_IDLE;
      port_owner <= npu_pkg::PORT_FETCH;
      staged <= '0;
      packet <= '0;
      dma_start <= 1'b0;
      matrix_start <= 1'b0;
      vector_start <= 1'b0;
      fault_code <= npu_pkg::FAULT_NONE;
      fault_addr <= '0;
      trace_start_cycle <= '0;
      trace_bytes_read <= '0;
      trace_bytes_written <= '0;
    end else if (soft_reset) begin
      state <= S_IDLE;
      port_owner <= npu_pkg::PORT_FETCH;
      dma_start <= 1'b0;
      matrix_start <= 1'b0;
      vector_start <= 1'b0;
    end else begin
      dma_start <= 1'b0;
      matrix_start <= 1'b0;
      vector_start <= 1'b0;
      if (mem_req_valid && mem_req_ready && port_owner != npu_pkg::PORT_FETCH) begin
        if (mem_req_write) trace_bytes_written <= trace_bytes_written + {32'd0, mem_req_bytes};
        else trace_bytes_read <= trace_bytes_read + {32'd0, mem_req_bytes};
      end
      unique case (state)
        S_IDLE:
          if (ring_entries != 32'd0 && ring_head != ring_tail && !halted && !faulted) begin
            state <= S_FETCH_REQ;
            port_owner <= npu_pkg::PORT_FETCH;
            trace_start_cycle <= cycles;
            trace_bytes_read <= '0;
            trace_bytes_written <= '0;
          end
        S_FETCH_REQ: if (mem_req_ready) state <= S_FETCH;
        S_FETCH: begin
          if (mem_rd_valid)
            staged[BEAT_BITS * beat_index +: BEAT_BITS] <= mem_rd_data;
          if (mem_done) begin
            if (mem_error) begin
              fault_code <= mem_error_code;
              fault_addr <= mem_error_addr;
              state <= S_FAULT;
            end else begin
              state <= S_DECODE;
            end
          end
        end
        S_DECODE: begin
          packet <= aligned;
          state <= S_DISPATCH;
        end
        S_DISPATCH: begin
          if (decode_fault != npu_pkg::FAULT_NONE) begin
            fault_code <= decode_fault;
            fault_addr <= '0;
            state <= S_FAULT;
          end else if (is_control) begin
            state <= S_COMPLETE;
          end else begin
            if (is_dma) begin
              port_owner <= npu_pkg::PORT_DMA;
              dma_start <= 1'b1;
            end else if (is_matrix) begin
              port_owner <= npu_pkg::PORT_MATRIX;
              matrix_start <= 1'b1;
            end else begin
              port_owner <= npu_pkg::PORT_VECTOR;
              vector_start <= 1'b1;
            end
            state <= S_EXECUTE;
          end
        end
        S_EXECUTE:
          if (engine_done) begin
            if (engine_fault) begin
              fault_code <= engine_fault_code;
              fault_addr <= engine_fault_addr;
              state <= S_FAULT;
            end else begin
              state <= S_COMPLETE;
            end
          end
        S_COMPLETE: state <= S_IDLE;
        S_FAULT: state <= S_IDLE;
        default: state <= S_IDLE;
      endcase
    end
  end

endmodule
