// The command processor: while RING_HEAD != RING_TAIL (and the device is
// neither halted nor faulted) it fetches the packet at RING_HEAD from the
// ring in memory, checks it and hands it to its engine, one packet at a
// time; NOP/FENCE/HALT it completes itself. A completed packet advances
// RING_HEAD; a fault stops the ring with the packet's index.
//
// The checks come before any engine touches memory, in the order of
// sim::checkPacket (simulator/lib/checks.cpp), from the generated
// npu_isa_pkg: the decode checks (unknown opcode, reserved bits, operand
// ranges, enumerations and alignment); then per memory operand its extent
// (S_EXTENT: exact byte counts on one 64 x 32 multiplier; a start or length
// that does not fit in 64 bits, or a matrix pitch below its row, is an
// invalid operand) and its range against the region table (S_REGION); then
// the overlap rules (S_OVERLAP). The engines report only data-dependent
// faults and the interconnect's error responses.
module npu_cmd (
  input  logic        clk,
  input  logic        rst_n,
  input  logic        soft_reset,
  input  logic        hold,               // start no packet (debug: stop between packets)

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
  output logic [17:0] fault_operand,      // {access, other operand, operand} (FAULT_OPERAND)
  output logic [63:0] fault_length,

  // the region table (npu_csr): entry e in bits [64*e +: 64] and [2*e +: 2]
  input  logic [64*npu_isa_pkg::HW_REGION_ENTRIES-1:0] region_base,
  input  logic [64*npu_isa_pkg::HW_REGION_ENTRIES-1:0] region_size,
  input  logic [2*npu_isa_pkg::HW_REGION_ENTRIES-1:0]  region_access,

  // the memory port while fetching, and the owner of the port
  output logic [1:0]  port_owner,
  output logic        fetch_req_valid,
  output logic [63:0] fetch_req_addr,
  output logic        prefetch_req_valid, // the next packet, while an engine runs (see below)
  output logic [63:0] prefetch_req_addr,
  input  logic        prefetch_grant,     // the port is given the prefetch request this cycle
  output logic        prefetching,        // it is in flight: its beats and completion are ours
  input  logic        mem_req_ready,
  input  logic        mem_req_valid,      // the owner's request, for the byte counters
  input  logic        mem_req_write,
  input  logic [31:0] mem_req_bytes,      // per row ...
  input  logic [15:0] mem_req_rows,       // ... of this many
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
  input  logic [7:0]  engine_fault_operand,
  input  logic [63:0] engine_fault_length,

  // per-packet trace for the harness (records, progress reports)
  output logic        trace_valid,
  output logic [63:0] trace_index,
  output logic [31:0] trace_opcode,
  output logic [63:0] trace_start_cycle,
  output logic [63:0] trace_bytes_read,
  output logic [63:0] trace_bytes_written,
  output logic [4:0]  trace_state
);

  localparam int unsigned SHIFT = $clog2(npu_isa_pkg::HW_AXI_DATA_BYTES);
  localparam int unsigned BEAT_BITS = 8*npu_isa_pkg::HW_AXI_DATA_BYTES;

  typedef enum logic [4:0] {
    // (in this order in the harness's hang report, rtl/harness/npu_device.cpp)
    S_IDLE, S_FETCH_REQ, S_FETCH, S_DECODE, S_DISPATCH, S_EXTENT, S_REGION, S_OVERLAP, S_START,
    S_EXECUTE, S_COMPLETE, S_FAULT
  } state_e;

  state_e state;
  assign trace_state = state;

  logic [63:0] slot_addr;
  assign slot_addr = ring_base + {26'd0, ring_head & (ring_entries - 32'd1), 6'd0};

  // The prefetch: while an engine runs the packet at RING_HEAD, the next
  // published packet (RING_TAIL - RING_HEAD >= 2) is read into `staged`
  // when npu_top grants the port; S_IDLE then decodes it without a fetch if
  // it is still the packet of RING_HEAD's slot (the ring registers may have
  // been rewritten). RING_HEAD still advances only when a packet completes.
  // It is discarded on a fault, a HALT, a RESET or its own error response
  // (the fetch in its turn reports that), and not read when the running
  // packet writes its slot (an operand range checked before the start).
  logic        pf_busy, pf_valid, pf_cancel;
  logic [63:0] pf_addr;
  logic [63:0] next_slot_addr;
  logic        next_slot_written;
  logic        pf_discard;
  logic        engine_used_port;   // a request of the running engine completed
  assign next_slot_addr = ring_base + {26'd0, (ring_head + 32'd1) & (ring_entries - 32'd1), 6'd0};
  assign pf_discard = soft_reset || halted || faulted || state == S_FAULT;
  assign prefetching = pf_busy;
  assign prefetch_req_addr = next_slot_addr;

  // A packet spans at most three beats; they are staged by their distance
  // from the beat holding the packet's first byte (of the prefetched
  // packet while it is in flight).
  logic [3*BEAT_BITS-1:0] staged;
  logic [63:0] first_beat;
  logic [63:0] beat_distance;
  logic [1:0]  beat_index;
  logic [npu_isa_pkg::PACKET_BITS-1:0] aligned;
  assign first_beat = pf_busy ? {pf_addr[63:SHIFT], SHIFT'(0)} : {slot_addr[63:SHIFT], SHIFT'(0)};
  assign beat_distance = (mem_rd_addr - first_beat) >> SHIFT;
  assign beat_index = beat_distance[1:0];
  assign aligned = npu_isa_pkg::PACKET_BITS'(staged >> (8 * slot_addr[SHIFT-1:0]));

  // A packet's beats are at most two beats past the first.
  logic unused_distance;
  assign unused_distance = ^beat_distance[63:2];

  logic [31:0] opcode;
  assign opcode = packet[31:0];

  // For waveforms only (docs/rtl.md, "Waveforms"): the packet the command
  // processor holds, by index in the stream and by mnemonic (ASCII).
  // Engines run one packet at a time, so these also name the packet of the
  // busy engine. Simulation only: no hardware needs them. The mnemonic is
  // a register loaded with the packet, so that the model decodes it once
  // per packet rather than every cycle.
`ifndef SYNTHESIS
  /* verilator lint_off UNUSEDSIGNAL */
  logic [npu_isa_pkg::MNEMONIC_BITS-1:0] dbg_mnemonic;
  logic [63:0] dbg_packet_index;
  /* verilator lint_on UNUSEDSIGNAL */
  assign dbg_packet_index = packets;
  always_ff @(posedge clk or negedge rst_n)
    if (!rst_n) dbg_mnemonic <= npu_isa_pkg::mnemonic_of(npu_isa_pkg::OP_NOP);
    else if (state == S_DECODE) dbg_mnemonic <= npu_isa_pkg::mnemonic_of(aligned[31:0]);
`endif

  // The engine of the instruction (generated from each instruction's Engine).
  npu_isa_pkg::engine_e engine;
  assign engine = npu_isa_pkg::engine_of(opcode);

  // Decode checks, in isa::decode's order.
  logic [3:0] decode_fault;
  logic [1:0] operand_status;
  logic [7:0] operand_failing;
  logic [63:0] operand_value;
  assign {operand_value, operand_failing, operand_status} = npu_isa_pkg::operand_check(packet);
  always_comb begin
    if (!npu_isa_pkg::is_known_opcode(opcode)) decode_fault = npu_isa_pkg::FAULT_UNKNOWN_OPCODE;
    else if ((packet & ~npu_isa_pkg::used_bits(opcode)) != '0)
      decode_fault = npu_isa_pkg::FAULT_RESERVED_BITS;
    else if (operand_status == npu_isa_pkg::OPERAND_INVALID)
      decode_fault = npu_isa_pkg::FAULT_INVALID_OPERAND;
    else if (operand_status == npu_isa_pkg::OPERAND_MISALIGNED)
      decode_fault = npu_isa_pkg::FAULT_MISALIGNED;
    else decode_fault = npu_isa_pkg::FAULT_NONE;
  end

  // ---- the check stage ------------------------------------------------------------------
  localparam int unsigned MEMS = npu_isa_pkg::MEM_OPERANDS_MAX;
  localparam int unsigned MB = npu_isa_pkg::MEM_INDEX_BITS;
  localparam int unsigned DB = npu_isa_pkg::DISJOINT_INDEX_BITS;
  localparam int unsigned REGIONS = npu_isa_pkg::HW_REGION_ENTRIES;

  // Memory operand mem_k of the packet, its fields (npu_isa_pkg::mem_operand).
  logic [MB-1:0] mem_k;
  logic [npu_isa_pkg::MO_BITS-1:0] mo;
  assign mo = npu_isa_pkg::mem_operand(packet, mem_k);
  logic        mo_valid, mo_reads, mo_writes, mo_trans, mo_distinct;
  logic [7:0]  mo_operand, mo_pitch_operand;
  logic [1:0]  mo_kind;
  logic [63:0] mo_address;
  logic [31:0] mo_f [4];
  logic [31:0] mo_s [4];
  logic [3:0]  mo_shift;
  assign mo_valid = mo[npu_isa_pkg::MO_VALID_LSB];
  assign mo_operand = mo[npu_isa_pkg::MO_OPERAND_LSB +: 8];
  assign mo_reads = mo[npu_isa_pkg::MO_READS_LSB];
  assign mo_writes = mo[npu_isa_pkg::MO_WRITES_LSB];
  assign mo_kind = mo[npu_isa_pkg::MO_KIND_LSB +: 2];
  assign mo_address = mo[npu_isa_pkg::MO_ADDRESS_LSB +: 64];
  assign mo_f[0] = mo[npu_isa_pkg::MO_F0_LSB +: 32];
  assign mo_f[1] = mo[npu_isa_pkg::MO_F1_LSB +: 32];
  assign mo_f[2] = mo[npu_isa_pkg::MO_F2_LSB +: 32];
  assign mo_f[3] = mo[npu_isa_pkg::MO_F3_LSB +: 32];
  assign mo_s[0] = mo[npu_isa_pkg::MO_S0_LSB +: 32];
  assign mo_s[1] = mo[npu_isa_pkg::MO_S1_LSB +: 32];
  assign mo_s[2] = mo[npu_isa_pkg::MO_S2_LSB +: 32];
  assign mo_s[3] = mo[npu_isa_pkg::MO_S3_LSB +: 32];
  assign mo_shift = mo[npu_isa_pkg::MO_SHIFT_LSB +: 4];
  assign mo_trans = mo[npu_isa_pkg::MO_TRANS_LSB];
  assign mo_distinct = mo[npu_isa_pkg::MO_DISTINCT_LSB];
  assign mo_pitch_operand = mo[npu_isa_pkg::MO_PITCH_OPERAND_LSB +: 8];

  // The extent sequencer: `step` counts the cycles of one operand, all its
  // products on one 64 x 32 multiplier.
  logic [2:0]  step;
  logic [63:0] acc;                 // running product
  logic [63:0] one_bytes;           // MATRIX: one matrix
  logic [65:0] below, above;        // STRIDED: elements below and above the address
  logic [63:0] mul_a;
  logic [31:0] mul_b;
  logic [95:0] product;
  assign product = {32'd0, mul_a} * {64'd0, mul_b};

  // MATRIX: the stored shape and the pitch (0 = dense).
  logic [31:0] stored_rows, stored_cols, pitch;
  assign stored_rows = mo_trans ? mo_f[1] : mo_f[0];
  assign stored_cols = mo_trans ? mo_f[0] : mo_f[1];
  assign pitch = mo_f[2] != 32'd0 ? mo_f[2] : stored_cols;
  // STRIDED: the magnitude of stride `step`.
  logic [31:0] stride_magnitude;
  assign stride_magnitude = mo_s[step[1:0]][31] ? 32'(-mo_s[step[1:0]]) : mo_s[step[1:0]];

  always_comb begin
    mul_a = acc;
    mul_b = mo_f[step[1:0]];
    unique case (mo_kind)
      npu_isa_pkg::EXTENT_MATRIX: begin
        mul_a = step == 3'd0 ? {32'd0, stored_rows - 32'd1} : {32'd0, mo_f[3] - 32'd1};
        mul_b = step == 3'd0 ? pitch : mo_s[0];
      end
      npu_isa_pkg::EXTENT_STRIDED: begin
        mul_a = {32'd0, mo_f[step[1:0]] - 32'd1};
        mul_b = stride_magnitude;
      end
      default: ;
    endcase
  end

  // The end of the step sequence: the byte count or the fault.
  logic [74:0] product_bytes;       // PRODUCT: acc << shift
  logic [65:0] one_sum;             // MATRIX: ((rows - 1) * pitch + cols) << shift (1 or 2)
  logic [33:0] batch_apart;         // MATRIX: bytes between consecutive matrices
  logic [66:0] matrix_bytes;
  logic [68:0] below_bytes, strided_bytes;
  assign product_bytes = {11'd0, acc} << mo_shift;
  assign one_sum = {2'b00, acc + {32'd0, stored_cols}} << mo_shift;
  assign batch_apart = {2'b00, mo_s[0]} << mo_shift;
  assign matrix_bytes = {3'd0, one_bytes} + ({3'd0, acc} << mo_shift);
  assign below_bytes = {3'd0, below} << mo_shift;
  assign strided_bytes = {3'd0, below + above + 66'd1} << mo_shift;

  // The latched range of each memory operand, for the overlap rules (and
  // the prefetch: whether the packet writes the next slot).
  logic [MEMS-1:0] present, range_writes;
  logic [63:0] range_start [MEMS];
  logic [63:0] range_bytes [MEMS];
  logic [7:0]  range_operand [MEMS];
  logic [63:0] ext_start, ext_bytes;   // of operand mem_k, for S_REGION

  // The region table against [ext_start, ext_start + ext_bytes).
  logic [3:0] region_fault;
  always_comb begin
    logic hit;
    hit = 1'b0;
    region_fault = npu_isa_pkg::FAULT_UNMAPPED;
    for (int e = 0; e < REGIONS; e++) begin
      logic [63:0] base, size, offset;
      logic [1:0] access;
      base = region_base[64*e +: 64];
      size = region_size[64*e +: 64];
      access = region_access[2*e +: 2];
      offset = ext_start - base;
      if (!hit && size != 64'd0 && offset < size) begin
        hit = 1'b1;
        if ((mo_reads && !access[npu_isa_pkg::REGION_ACCESS_READ_BIT]) ||
            (mo_writes && !access[npu_isa_pkg::REGION_ACCESS_WRITE_BIT]))
          region_fault = npu_isa_pkg::FAULT_PERMISSION;
        else if (ext_bytes > size - offset) region_fault = npu_isa_pkg::FAULT_OUT_OF_REGION;
        else region_fault = npu_isa_pkg::FAULT_NONE;
      end
    end
  end

  // Overlap rule rule_j between two latched ranges (their ends are at most
  // 2^64: both passed the region check).
  logic [DB-1:0] rule_j;
  logic rule_valid, rule_in_place;
  logic [MB-1:0] rule_a, rule_b;
  assign {rule_in_place, rule_b, rule_a, rule_valid} = npu_isa_pkg::disjoint_rule(packet, rule_j);
  logic [64:0] end_a, end_b;
  logic [63:0] overlap_first;
  logic rule_fails;
  assign end_a = {1'b0, range_start[rule_a]} + {1'b0, range_bytes[rule_a]};
  assign end_b = {1'b0, range_start[rule_b]} + {1'b0, range_bytes[rule_b]};
  assign overlap_first = range_start[rule_a] > range_start[rule_b] ? range_start[rule_a]
                                                                   : range_start[rule_b];
  assign rule_fails = rule_valid && present[rule_a] && present[rule_b] &&
                      !(rule_in_place && range_start[rule_a] == range_start[rule_b] &&
                        range_bytes[rule_a] == range_bytes[rule_b]) &&
                      {1'b0, range_start[rule_a]} < end_b && {1'b0, range_start[rule_b]} < end_a;

  // Raises a fault of the packet with the facts FAULT_* report.
  task automatic raise(input logic [3:0] code, input logic [63:0] address, input logic [7:0] operand,
                       input logic [7:0] other, input logic [1:0] access, input logic [63:0] length);
    fault_code <= code;
    fault_addr <= address;
    fault_operand <= {access, other, operand};
    fault_length <= length;
    state <= S_FAULT;
  endtask

  // The next memory operand, or the overlap rules after the last.
  task automatic next_operand();
    step <= '0;
    acc <= 64'd1;
    below <= '0;
    above <= '0;
    if (mem_k + MB'(1) == npu_isa_pkg::mem_operand_count(opcode)) begin
      rule_j <= '0;
      state <= S_OVERLAP;
    end else begin
      mem_k <= mem_k + MB'(1);
    end
  endtask

  // The bytes of an engine's request, every row of it (the trace's counts).
  logic [47:0] request_bytes;
  assign request_bytes = {16'd0, mem_req_bytes} * {32'd0, mem_req_rows};

  always_comb begin
    next_slot_written = 1'b0;
    for (int k = 0; k < MEMS; k++)
      if (present[k] && range_writes[k] &&
          {1'b0, range_start[k]} < {1'b0, next_slot_addr} + 65'(npu_isa_pkg::PACKET_BYTES) &&
          {1'b0, next_slot_addr} < {1'b0, range_start[k]} + {1'b0, range_bytes[k]})
        next_slot_written = 1'b1;
  end
  assign prefetch_req_valid = state == S_EXECUTE && engine_used_port && !pf_busy && !pf_valid &&
                              !pf_discard &&
                              ring_entries > 32'd1 && ring_tail - ring_head >= 32'd2 &&
                              !next_slot_written;

  // The packet at RING_HEAD is to run.
  logic ring_ready;
  assign ring_ready = !hold && ring_entries != 32'd0 && ring_head != ring_tail && !halted && !faulted &&
                      !pf_busy;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      pf_busy <= 1'b0;
      pf_valid <= 1'b0;
      pf_cancel <= 1'b0;
      pf_addr <= '0;
      engine_used_port <= 1'b0;
    end else begin
      if (state == S_START) engine_used_port <= 1'b0;
      else if (state == S_EXECUTE && mem_done && !pf_busy) engine_used_port <= 1'b1;
      if (prefetch_grant && mem_req_ready) begin
        pf_busy <= 1'b1;
        pf_cancel <= 1'b0;
        pf_addr <= next_slot_addr;
      end else if (pf_busy && mem_done) begin
        pf_busy <= 1'b0;
        pf_valid <= !mem_error && !pf_cancel && !pf_discard;
      end
      if (pf_discard) begin
        pf_valid <= 1'b0;
        if (pf_busy) pf_cancel <= 1'b1;
      end
      // S_IDLE takes it, or fetches a packet of another slot.
      if (state == S_IDLE && ring_ready) pf_valid <= 1'b0;
    end
  end

  // A prefetch still in flight when its predecessor completes is the next
  // packet's fetch: the device is busy (and counts the cycle).
  assign active = state != S_IDLE || pf_busy;
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
      fault_code <= npu_isa_pkg::FAULT_NONE;
      fault_addr <= '0;
      fault_operand <= '0;
      fault_length <= '0;
      mem_k <= '0;
      step <= '0;
      acc <= '0;
      one_bytes <= '0;
      below <= '0;
      above <= '0;
      present <= '0;
      range_writes <= '0;
      ext_start <= '0;
      ext_bytes <= '0;
      rule_j <= '0;
      for (int k = 0; k < MEMS; k++) begin
        range_start[k] <= '0;
        range_bytes[k] <= '0;
        range_operand[k] <= '0;
      end
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
      if (pf_busy && mem_rd_valid) staged[BEAT_BITS * beat_index +: BEAT_BITS] <= mem_rd_data;
      if (mem_req_valid && mem_req_ready && port_owner != npu_pkg::PORT_FETCH &&
          !prefetch_grant) begin
        if (mem_req_write) trace_bytes_written <= trace_bytes_written + {16'd0, request_bytes};
        else trace_bytes_read <= trace_bytes_read + {16'd0, request_bytes};
      end
      unique case (state)
        S_IDLE:
          if (ring_ready) begin
            state <= pf_valid && pf_addr == slot_addr ? S_DECODE : S_FETCH_REQ;
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
            if (mem_error)
              raise(mem_error_code, mem_error_addr, npu_isa_pkg::NO_OPERAND,
                    npu_isa_pkg::NO_OPERAND, 2'd0, 64'd0);
            else state <= S_DECODE;
          end
        end
        S_DECODE: begin
          packet <= aligned;
          state <= S_DISPATCH;
        end
        S_DISPATCH: begin
          mem_k <= '0;
          step <= '0;
          acc <= 64'd1;
          below <= '0;
          above <= '0;
          present <= '0;
          if (decode_fault != npu_isa_pkg::FAULT_NONE)
            // Only a misaligned address's value is its fault address.
            raise(decode_fault, decode_fault == npu_isa_pkg::FAULT_MISALIGNED ? operand_value : 64'd0,
                  decode_fault == npu_isa_pkg::FAULT_UNKNOWN_OPCODE ||
                  decode_fault == npu_isa_pkg::FAULT_RESERVED_BITS ? npu_isa_pkg::NO_OPERAND
                                                               : operand_failing,
                  npu_isa_pkg::NO_OPERAND, 2'd0, 64'd0);
          else if (engine == npu_isa_pkg::ENGINE_CONTROL) state <= S_COMPLETE;
          else if (npu_isa_pkg::mem_operand_count(opcode) == '0) begin
            rule_j <= '0;
            state <= S_OVERLAP;
          end else state <= S_EXTENT;
        end
        S_EXTENT: begin
          // One product per cycle; the last step decides (see checks.cpp).
          step <= step + 3'd1;
          if (!mo_valid) begin
            next_operand();
          end else begin
            unique case (mo_kind)
              npu_isa_pkg::EXTENT_MATRIX:
                unique case (step)
                  3'd0:
                    if (pitch < stored_cols)
                      raise(npu_isa_pkg::FAULT_INVALID_OPERAND, 64'd0, mo_pitch_operand,
                            npu_isa_pkg::NO_OPERAND, 2'd0, {32'd0, stored_cols});
                    else acc <= product[63:0];
                  3'd1:
                    if (one_sum[65:64] != '0)
                      raise(npu_isa_pkg::FAULT_INVALID_OPERAND, mo_address, mo_operand,
                            npu_isa_pkg::NO_OPERAND, 2'd0, 64'd0);
                    else begin
                      one_bytes <= one_sum[63:0];
                      acc <= product[63:0];   // (batch - 1) * stride
                    end
                  default:
                    if (mo_distinct && mo_f[3] > 32'd1 && {30'd0, batch_apart} < one_bytes)
                      raise(npu_isa_pkg::FAULT_OVERLAP, mo_address + {30'd0, batch_apart}, mo_operand,
                            mo_operand, 2'd0, one_bytes - {30'd0, batch_apart});
                    else if (matrix_bytes[66:64] != '0)
                      raise(npu_isa_pkg::FAULT_INVALID_OPERAND, mo_address, mo_operand,
                            npu_isa_pkg::NO_OPERAND, 2'd0, 64'd0);
                    else begin
                      ext_start <= mo_address;
                      ext_bytes <= matrix_bytes[63:0];
                      state <= S_REGION;
                    end
                endcase
              npu_isa_pkg::EXTENT_STRIDED:
                if (step != 3'd4) begin
                  if (mo_s[step[1:0]][31]) below <= below + {2'b00, product[63:0]};
                  else above <= above + {2'b00, product[63:0]};
                end else if (below_bytes > {5'd0, mo_address} || strided_bytes[68:64] != '0)
                  raise(npu_isa_pkg::FAULT_INVALID_OPERAND, mo_address, mo_operand,
                        npu_isa_pkg::NO_OPERAND, 2'd0, 64'd0);
                else begin
                  ext_start <= mo_address - below_bytes[63:0];
                  ext_bytes <= strided_bytes[63:0];
                  state <= S_REGION;
                end
              default:   // PRODUCT: the factors, then the element size
                if (step != 3'd4) begin
                  if (product[95:64] != '0)
                    raise(npu_isa_pkg::FAULT_INVALID_OPERAND, mo_address, mo_operand,
                          npu_isa_pkg::NO_OPERAND, 2'd0, 64'd0);
                  else acc <= product[63:0];
                end else if (product_bytes[74:64] != '0)
                  raise(npu_isa_pkg::FAULT_INVALID_OPERAND, mo_address, mo_operand,
                        npu_isa_pkg::NO_OPERAND, 2'd0, 64'd0);
                else begin
                  ext_start <= mo_address;
                  ext_bytes <= product_bytes[63:0];
                  state <= S_REGION;
                end
            endcase
          end
        end
        S_REGION:
          if (region_fault != npu_isa_pkg::FAULT_NONE)
            raise(region_fault, ext_start, mo_operand, npu_isa_pkg::NO_OPERAND,
                  {mo_writes, mo_reads}, ext_bytes);
          else begin
            present[mem_k] <= 1'b1;
            range_start[mem_k] <= ext_start;
            range_bytes[mem_k] <= ext_bytes;
            range_operand[mem_k] <= mo_operand;
            range_writes[mem_k] <= mo_writes;
            state <= S_EXTENT;
            next_operand();
          end
        S_OVERLAP:
          if (rule_fails)
            raise(npu_isa_pkg::FAULT_OVERLAP, overlap_first, range_operand[rule_a],
                  range_operand[rule_b], 2'd0,
                  (end_a < end_b ? end_a[63:0] : end_b[63:0]) - overlap_first);
          else if (!rule_valid || rule_j + DB'(1) == npu_isa_pkg::disjoint_count(opcode))
            state <= S_START;
          else rule_j <= rule_j + DB'(1);
        S_START: begin
          unique case (engine)
            npu_isa_pkg::ENGINE_DMA: begin
              port_owner <= npu_pkg::PORT_DMA;
              dma_start <= 1'b1;
              state <= S_EXECUTE;
            end
            npu_isa_pkg::ENGINE_MATRIX: begin
              port_owner <= npu_pkg::PORT_MATRIX;
              matrix_start <= 1'b1;
              state <= S_EXECUTE;
            end
            npu_isa_pkg::ENGINE_VECTOR: begin
              port_owner <= npu_pkg::PORT_VECTOR;
              vector_start <= 1'b1;
              state <= S_EXECUTE;
            end
            // S_DISPATCH completed the control instructions and faulted
            // unknown opcodes: nothing else reaches here.
            default:
              raise(npu_isa_pkg::FAULT_UNKNOWN_OPCODE, 64'd0, npu_isa_pkg::NO_OPERAND,
                    npu_isa_pkg::NO_OPERAND, 2'd0, 64'd0);
          endcase
        end
        S_EXECUTE:
          if (engine_done) begin
            if (engine_fault)
              raise(engine_fault_code, engine_fault_addr, engine_fault_operand,
                    npu_isa_pkg::NO_OPERAND, 2'd0, engine_fault_length);
            else state <= S_COMPLETE;
          end
        S_COMPLETE: state <= S_IDLE;
        S_FAULT: state <= S_IDLE;
        default: state <= S_IDLE;
      endcase
    end
  end

endmodule
