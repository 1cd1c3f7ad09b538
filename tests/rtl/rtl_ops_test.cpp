// Every instruction family on the Verilated RTL against the ISS, bit for
// bit, from identical memory images: random shapes (1, odd sizes, sizes
// that are not multiples of the lane width, the tile or the vector chunk,
// K past the panel depth, every broadcast and flag), data full of special
// values (±0, ±inf, NaNs with payloads, denormals), in-place forms, every
// family also under wait states and back-pressure from a memory narrower
// than the bus. Then the faults: decode faults, bad addresses, bad indices
// and overlaps set ERROR_CODE and the packet index like the ISS, and
// nothing hangs.
#include "gather_cases.h"
#include "generated_cases.h"
#include "half_float_cases.h"
#include "integer_cases.h"
#include "matrix_cases.h"
#include "npu/isa/isa.h"
#include "npu/mem/fault.h"
#include "npu/sim/iss.h"
#include "npu_device.h"
#include "pow_cases.h"
#include "random_cases.h"
#include "rng_cases.h"
#include "sequence_cases.h"
#include "type_pairs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using namespace npu;
using cases::bitsOf;
using cases::randomFloat;
using cases::withRandomF32Operands;

constexpr uint64_t kArenaBase = 0x1000'0000; // the activations region
constexpr uint64_t kRingBase = 0x2000'0000;  // the ring region
constexpr uint32_t kRingEntries = 16;

struct Outcome {
  std::optional<mem::Fault> fault;
};

// The ISS and the RTL, each with its own memory holding the same buffers.
class Twin {
public:
  explicit Twin(uint64_t seed, rtl::DeviceOptions options = {})
      : rng(seed), device(rtlMemory, options), waits(options.stallPercent > 0) {}

  uint64_t floats(uint64_t count, int specialPercent = 10) {
    std::vector<uint32_t> bits(count);
    for (uint32_t &b : bits)
      b = randomFloat(rng, specialPercent);
    return place(bits.data(), count * 4);
  }
  uint64_t values(const std::vector<uint32_t> &bits) { return place(bits.data(), bits.size() * 4); }
  uint64_t bytes(uint64_t count) {
    std::vector<uint8_t> b(count);
    for (uint8_t &x : b)
      x = static_cast<uint8_t>(rng());
    return place(b.data(), count);
  }

  // Runs the packet on the ISS and through the RTL's ring (as packet 0
  // after a RESET); returns the RTL's fault, after checking that the ISS
  // faulted alike.
  Outcome run(const isa::Packet &packet, const std::string &what) {
    std::optional<mem::Fault> issFault;
    {
      sim::Iss iss(issMemory, sim::Mode::Both);
      try {
        iss.step(packet, 0);
      } catch (const mem::DeviceFault &e) {
        issFault = e.fault();
      }
    }
    using namespace isa::csr;
    device.writeCsr(CONTROL, CONTROL_RESET);
    device.writeCsr(RING_BASE_LO, static_cast<uint32_t>(kRingBase));
    device.writeCsr(RING_BASE_HI, static_cast<uint32_t>(kRingBase >> 32));
    device.writeCsr(RING_ENTRIES, kRingEntries);
    rtlMemory.write(kRingBase, packet.data(), packet.size());
    device.writeCsr(RING_TAIL, 1);
    device.runUntilIdle();
    Outcome out;
    const uint32_t status = device.readCsr(STATUS);
    if (status & STATUS_FAULT) {
      out.fault = device.fault();
    } else {
      EXPECT_EQ(device.readCsr(RING_HEAD), 1u) << what;
      EXPECT_EQ(device.readCsr(PACKETS_LO), 1u) << what;
    }
    EXPECT_EQ(issFault.has_value(), out.fault.has_value())
        << what << ": ISS " << (issFault ? issFault->describe() : "completed") << ", RTL "
        << (out.fault ? out.fault->describe() : "completed");
    if (issFault && out.fault) {
      EXPECT_EQ(issFault->describe(), out.fault->describe()) << what;
    }
    return out;
  }

  // Runs the packet on both and compares every buffer.
  void runAndCompare(const isa::Packet &packet, const std::string &what) {
    const Outcome out = run(packet, what);
    ASSERT_FALSE(out.fault) << what << ": " << out.fault->describe();
    // The memory withheld a handshake of some channel (a packet of few
    // handshakes may see none on one channel by chance, and one of fewer
    // than 16, as a 1x1 packet's, none on any).
    const rtl::AxiCounts &c = device.axiCounts();
    if (waits && c.arHandshakes + c.awHandshakes + c.wHandshakes >= 16) {
      EXPECT_GT(c.arWaits + c.awWaits + c.wWaits, 0u) << what << ": no wait state";
    }
    compareMemories(what);
  }

  // Every buffer of the ISS's memory against the RTL's.
  void compareMemories(const std::string &what) {
    compareRange(kArenaBase, next - kArenaBase, what);
  }

  void compareRange(uint64_t begin, uint64_t bytes, const std::string &what) {
    std::vector<uint8_t> a(bytes), b(bytes);
    issMemory.read(begin, a.data(), a.size());
    rtlMemory.read(begin, b.data(), b.size());
    for (size_t i = 0; i < a.size(); i += 4) {
      uint32_t x = 0, y = 0;
      std::memcpy(&x, a.data() + i, std::min<size_t>(4, a.size() - i));
      std::memcpy(&y, b.data() + i, std::min<size_t>(4, b.size() - i));
      ASSERT_EQ(x, y) << what << ": first difference at 0x" << std::hex << begin + i << " (ISS 0x"
                      << x << ", RTL 0x" << y << ")";
    }
  }

  // A generated stream's data segments, into both memories.
  void load(const bin::Object &object) {
    for (const bin::DataSegment &segment : object.data) {
      issMemory.write(segment.address, segment.bytes.data(), segment.bytes.size());
      rtlMemory.write(segment.address, segment.bytes.data(), segment.bytes.size());
    }
  }

  std::mt19937_64 rng;
  mem::PhysicalMemory issMemory, rtlMemory;
  rtl::Device device;
  const bool waits; // the memory has wait states

private:
  uint64_t place(const void *data, uint64_t size) {
    const uint64_t address = next;
    issMemory.write(address, data, size);
    rtlMemory.write(address, data, size);
    next = (address + size + 64 + 63) & ~uint64_t(63); // a gap keeps overruns visible
    return address;
  }
  uint64_t next = kArenaBase;
};

// The packet of a typed instruction, checked to decode (a test's own
// packets must be valid for the comparison to mean anything).
template <class T> isa::Packet validPacketOf(const T &typed) {
  const isa::Packet p = isa::packetOf(typed);
  std::string error;
  isa::Instruction decoded;
  EXPECT_TRUE(isa::decode(p, decoded, &error)) << error;
  return p;
}

// An instruction of another opcode with the same operand layout.
template <class T> isa::Packet packetAs(const T &typed, isa::Opcode opcode) {
  isa::Instruction inst = typed.toInstruction();
  inst.opcode = opcode;
  isa::Packet p;
  isa::encode(inst, p);
  return p;
}

uint32_t dim(std::mt19937_64 &rng, uint32_t max) {
  // Favour the edges: 1, lane/tile/chunk multiples and their neighbours.
  static const uint32_t edges[] = {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 127, 128, 129};
  if (rng() % 3 == 0)
    return std::min(edges[rng() % std::size(edges)], max);
  return 1 + static_cast<uint32_t>(rng() % max);
}

constexpr int kTrials = 12;

// Every family also runs under wait states and a memory narrower than the
// bus: every fourth trial, latency, width and wait-state rate cycling (the
// AXI monitor checks the protocol in every cycle, and Twin that the
// channels did wait).
rtl::DeviceOptions memoryFor(int trial) {
  rtl::DeviceOptions o;
  if (trial % 4 != 3)
    return o;
  const int k = trial / 4;
  o.memoryLatency = k % 2 ? 3 : 37;
  o.memoryWidth = 16u >> (k % 3);
  o.stallPercent = 30u + 15u * static_cast<unsigned>(k % 3);
  o.stallSeed = 11u + static_cast<unsigned>(trial);
  return o;
}

TEST(RtlOps, DataMovement) {
  for (int t = 0; t < kTrials; ++t) {
    Twin twin(100 + t, memoryFor(t));
    auto &rng = twin.rng;
    isa::inst::Copy copy;
    copy.bytes = t == 0 ? 2000 : dim(rng, 300);
    copy.src = twin.bytes(copy.bytes) + rng() % 7;
    copy.dst = twin.bytes(copy.bytes + 8) + rng() % 5;
    twin.runAndCompare(validPacketOf(copy), "copy");

    isa::inst::Fill fill;
    fill.count = dim(rng, 100);
    fill.value = static_cast<uint32_t>(rng());
    fill.dst = twin.floats(fill.count);
    twin.runAndCompare(validPacketOf(fill), "fill");

    isa::inst::CopyStrided cs;
    cs.esize = static_cast<isa::ElemSize>(rng() % 4);
    const uint32_t sizes[4] = {dim(rng, 3), dim(rng, 4), dim(rng, 5), dim(rng, 6)};
    int32_t strides[4];
    int64_t low = 0, high = 0;
    for (int d = 0; d < 4; ++d) {
      strides[d] = d == 3 && rng() % 3 == 0 ? 1 : static_cast<int32_t>(rng() % 61) - 30;
      const int64_t extent = int64_t(sizes[d] - 1) * strides[d];
      (extent < 0 ? low : high) += extent;
    }
    const uint64_t es = uint64_t(1) << static_cast<unsigned>(cs.esize);
    const uint64_t base = twin.bytes(static_cast<uint64_t>(high - low + 1) * es);
    cs.src = base + static_cast<uint64_t>(-low) * es;
    std::tie(cs.size0, cs.size1, cs.size2, cs.size3) =
        std::tuple(sizes[0], sizes[1], sizes[2], sizes[3]);
    std::tie(cs.stride0, cs.stride1, cs.stride2, cs.stride3) =
        std::tuple(strides[0], strides[1], strides[2], strides[3]);
    cs.dst = twin.bytes(uint64_t(sizes[0]) * sizes[1] * sizes[2] * sizes[3] * es);
    twin.runAndCompare(validPacketOf(cs), "copy_strided");
  }
}

TEST(RtlOps, Matmul) {
  for (int t = 0; t < kTrials; ++t) {
    Twin twin(200 + t, memoryFor(t));
    auto &rng = twin.rng;
    isa::inst::Matmul mm;
    // Some shapes span several blocks of output tiles (32 x 32 outputs each).
    mm.m = dim(rng, t % 2 ? 24 : 72);
    mm.n = dim(rng, t % 3 ? 24 : 72);
    mm.k = t % 5 == 0 ? 1 : (t % 7 == 0 ? 65 + static_cast<uint32_t>(rng() % 40) : dim(rng, 70));
    mm.transa = rng() & 1;
    mm.transb = rng() & 1;
    mm.acc = rng() & 1;
    const uint32_t aCols = mm.transa ? mm.m : mm.k, aRows = mm.transa ? mm.k : mm.m;
    const uint32_t bCols = mm.transb ? mm.k : mm.n, bRows = mm.transb ? mm.n : mm.k;
    mm.lda = rng() % 2 ? 0 : aCols + static_cast<uint32_t>(rng() % 5);
    mm.ldb = rng() % 2 ? 0 : bCols + static_cast<uint32_t>(rng() % 5);
    mm.ldc = rng() % 2 ? 0 : mm.n + static_cast<uint32_t>(rng() % 5);
    const int special = t % 4 == 0 ? 5 : 0;
    mm.a = twin.floats(uint64_t(aRows) * (mm.lda ? mm.lda : aCols), special);
    mm.b = twin.floats(uint64_t(bRows) * (mm.ldb ? mm.ldb : bCols), special);
    mm.c = twin.floats(uint64_t(mm.m) * (mm.ldc ? mm.ldc : mm.n), special);
    twin.runAndCompare(validPacketOf(mm), "matmul " + std::to_string(mm.m) + "x" +
                                              std::to_string(mm.k) + "x" + std::to_string(mm.n));
  }
}

TEST(RtlOps, BatchedMatmul) {
  for (int t = 0; t < kTrials; ++t) {
    Twin twin(300 + t, memoryFor(t));
    auto &rng = twin.rng;
    isa::inst::Bmm bmm;
    bmm.m = dim(rng, t % 4 == 1 ? 40 : 12);
    bmm.k = dim(rng, 12);
    bmm.n = dim(rng, t % 4 == 2 ? 40 : 12);
    bmm.batch = dim(rng, 4);
    bmm.transa = rng() & 1;
    bmm.transb = rng() & 1;
    bmm.acc = rng() & 1;
    const uint32_t aSize = bmm.m * bmm.k, bSize = bmm.k * bmm.n, cSize = bmm.m * bmm.n;
    bmm.stride_a = rng() % 3 == 0 ? 0 : aSize + static_cast<uint32_t>(rng() % 4);
    bmm.stride_b = rng() % 3 == 0 ? 0 : bSize;
    bmm.stride_c = cSize + static_cast<uint32_t>(rng() % 3);
    bmm.a = twin.floats(uint64_t(bmm.batch - 1) * bmm.stride_a + aSize, 3);
    bmm.b = twin.floats(uint64_t(bmm.batch - 1) * bmm.stride_b + bSize, 3);
    bmm.c = twin.floats(uint64_t(bmm.batch - 1) * bmm.stride_c + cSize, 3);
    twin.runAndCompare(validPacketOf(bmm), "bmm");
  }
}

// Runs runCase for every instruction of a generated list, the typed struct
// passed as a std::type_identity tag.
#define NPU_RUN_CASE(NAME, Type, family) runCase(std::type_identity<isa::inst::Type>{}, t);

TEST(RtlOps, ElementwiseBinaryWithBroadcast) {
  const auto runCase = []<class Op>(std::type_identity<Op>, int t) {
    Twin twin(400 + t, memoryFor(t));
    auto &rng = twin.rng;
    Op op;
    op.rows = dim(rng, 6);
    op.cols = dim(rng, 80);
    op.bcast = static_cast<isa::Broadcast>(rng() % 4);
    const uint64_t n = uint64_t(op.rows) * op.cols;
    op.a = twin.floats(n, 20);
    op.b = twin.floats(cases::broadcastCount(op.bcast, op.rows, op.cols), 20);
    op.dst = rng() % 4 == 0 ? op.a : twin.floats(n);
    twin.runAndCompare(withRandomF32Operands(op, rng), isa::info(Op::kOpcode).mnemonic);
  };
  for (int t = 0; t < kTrials / 2; ++t) {
    NPU_FOR_EACH_BINARY_OP(NPU_RUN_CASE)
  }
}

TEST(RtlOps, ElementwiseScalar) {
  const auto runCase = []<class Op>(std::type_identity<Op>, int t) {
    Twin twin(500 + t, memoryFor(t));
    Op op;
    op.n = dim(twin.rng, 150);
    op.a = twin.floats(op.n, 20);
    op.dst = twin.floats(op.n);
    twin.runAndCompare(withRandomF32Operands(op, twin.rng), isa::info(Op::kOpcode).mnemonic);
  };
  for (int t = 0; t < kTrials / 2; ++t) {
    NPU_FOR_EACH_SCALAR_OP(NPU_RUN_CASE)
  }
}

TEST(RtlOps, UnaryFunctions) {
  const auto runCase = []<class Op>(std::type_identity<Op>, int t) {
    Twin twin(600 + t, memoryFor(t));
    Op op;
    op.n = dim(twin.rng, 90);
    op.src = twin.floats(op.n, 25);
    op.dst = twin.rng() % 4 == 0 ? op.src : twin.floats(op.n);
    twin.runAndCompare(withRandomF32Operands(op, twin.rng), isa::info(Op::kOpcode).mnemonic);
  };
  for (int t = 0; t < kTrials / 2; ++t) {
    NPU_FOR_EACH_UNARY_OP(NPU_RUN_CASE)
  }
}

TEST(RtlOps, Reductions) {
  const auto runCase = []<class Op>(std::type_identity<Op>, int t) {
    Twin twin(700 + t, memoryFor(t));
    Op op;
    op.rows = dim(twin.rng, 6);
    op.cols = dim(twin.rng, 150);
    op.src = twin.floats(uint64_t(op.rows) * op.cols, t % 2 ? 15 : 0);
    // One value per row or per column: room for either.
    op.dst = twin.floats(std::max(op.rows, op.cols));
    twin.runAndCompare(validPacketOf(op), isa::info(Op::kOpcode).mnemonic);
  };
  for (int t = 0; t < kTrials / 2; ++t) {
    NPU_FOR_EACH_REDUCE_OP(NPU_RUN_CASE)
  }
}

TEST(RtlOps, PointwiseBackward) {
  const auto runCase = []<class Op>(std::type_identity<Op>, int t) {
    Twin twin(900 + t, memoryFor(t));
    Op pb;
    pb.n = dim(twin.rng, 70);
    pb.x = twin.floats(pb.n, 20);
    pb.dy = twin.floats(pb.n, 20);
    pb.dx = twin.floats(pb.n);
    twin.runAndCompare(withRandomF32Operands(pb, twin.rng), isa::info(Op::kOpcode).mnemonic);
  };
  for (int t = 0; t < kTrials; ++t) {
    NPU_FOR_EACH_POINTWISE_BWD(NPU_RUN_CASE)
  }
}

// Every instruction on streams generated from its record (generated_cases.h),
// each packet through the RTL's ring and on the ISS: the same outcome, and
// every range it may write equal bit for bit. A fused op's shapes, flags and
// aliasing come from its record; the last stream runs under wait states
// and a narrow memory (memoryFor).
class RtlRecordCases : public ::testing::TestWithParam<isa::Opcode> {};

TEST_P(RtlRecordCases, AgreeWithTheIss) {
  const isa::Opcode opcode = GetParam();
  constexpr uint32_t kStreams = 8;
  uint64_t completed = 0;
  for (uint32_t index = 0; index < kStreams; ++index) {
    const verify::GeneratorOptions options =
        cases::streamOptions(opcode, index, /*packets=*/8, /*largePercent=*/0);
    const verify::Stream stream = verify::generate(options);
    Twin twin(index, memoryFor(index == kStreams - 1 ? 3 : 0));
    twin.load(stream.object);
    for (size_t i = 0; i < stream.object.text.size(); ++i) {
      const isa::Packet &packet = stream.object.text[i];
      const std::string what = cases::reproducer(options) + ", packet " + std::to_string(i);
      const Outcome outcome = twin.run(packet, what);
      if (::testing::Test::HasFailure())
        return;
      // No fault is injected: every packet is meant to complete.
      ASSERT_FALSE(outcome.fault) << what << ": " << outcome.fault->describe();
      completed += cases::isOpcode(packet, opcode);
      for (const verify::Buffer &b : cases::writtenBuffers(packet))
        ASSERT_NO_FATAL_FAILURE(twin.compareRange(b.begin(), b.bytes, what));
    }
  }
  EXPECT_GT(completed, 0u) << "the generator made no completing packet of "
                           << isa::info(opcode).mnemonic;
}

INSTANTIATE_TEST_SUITE_P(EveryInstruction, RtlRecordCases,
                         ::testing::ValuesIn(cases::everyOpcode()), cases::mnemonicOf);

// CAST on every pair of types it accepts, over the edge values of the
// source type and the same spread over three chunks from inside a beat
// (type_pairs.h's castCases, the same pairs and values as IssOps'), out of
// place and, where the types have one size, in place, under wait states
// every fourth run.
TEST(RtlOps, CastEveryAcceptedTypePair) {
  int t = 0;
  const int pairs = test::forEachCastTest(
      [&](isa::DType from, isa::DType to, const test::CastCase &c, bool inPlace) {
        Twin twin(950, memoryFor(t++));
        const isa::inst::Cast op = test::castOf(
            from, to, c, inPlace, [&](const std::vector<uint32_t> &w) { return twin.values(w); });
        twin.runAndCompare(validPacketOf(op), test::castName(op, inPlace));
      });
  EXPECT_EQ(pairs, 36);
}

// MATMUL and BMM on the same cases as IssOps' (matrix_cases.h), under wait
// states every fourth run.
TEST(RtlOps, MatrixTypesOnEdgeValues) {
  int t = 0;
  const int tests = test::forEachMatrixTest([&](const auto &make, const std::string &name) {
    Twin twin(980, memoryFor(t++));
    auto place = [&](const std::vector<uint32_t> &w) { return twin.values(w); };
    twin.runAndCompare(make(place), name);
  });
  EXPECT_EQ(tests, 3 * 3 * (2 + 7));
}

// The bf16 and f16 vector forms on the same cases as IssOps'
// (half_float_cases.h), under wait states every fourth run.
TEST(RtlOps, HalfFloatVectorFormsOnEdgeValues) {
  int t = 0;
  const int tests = test::forEachHalfFloatTest([&](const auto &make, const std::string &name) {
    Twin twin(990, memoryFor(t++));
    auto place = [&](const std::vector<uint32_t> &w) { return twin.values(w); };
    twin.runAndCompare(make(place), name);
  });
  EXPECT_EQ(tests, 2 * (2 * 4 * 2 + 5 * 4 + 8 * 6 + 18 + 4 * 2 * 6 + 5));
}

// POW on every pair of edge base and exponent under each broadcast on f32,
// bf16 and f16, and on bf16 and f16 over the row shapes (pow_cases.h),
// against the ISS.
TEST(RtlOps, PowOnEdgePairs) {
  int t = 0;
  const int tests = test::forEachPowTest([&](const auto &make, const std::string &name) {
    Twin twin(995, memoryFor(t++));
    auto place = [&](const std::vector<uint32_t> &w) { return twin.values(w); };
    twin.runAndCompare(make(place), name);
  });
  EXPECT_EQ(tests, 3 * 4 + 2 * static_cast<int>(std::size(test::kRowShapes)) * 4);
}

// The row instructions on bf16 and f16 on the same cases as IssOps'
// (half_float_cases.h), under wait states every fourth run.
TEST(RtlOps, HalfFloatRowInstructions) {
  int t = 0;
  const int tests = test::forEachHalfFloatRowTest([&](const auto &make, const std::string &name) {
    Twin twin(991, memoryFor(t++));
    auto place = [&](const std::vector<uint32_t> &w) { return twin.values(w); };
    twin.runAndCompare(make(place), name);
  });
  EXPECT_EQ(tests, test::kHalfFloatRowTests);
}

// The integer forms of the binary instructions and their scalar forms on
// the same cases as IssOps' (integer_cases.h), under wait states every
// fourth run.
TEST(RtlOps, IntegerElementwiseOnEdgeValues) {
  int t = 0;
  const int tests =
      test::forEachIntegerElementwiseTest([&](const auto &make, const std::string &name) {
        Twin twin(960, memoryFor(t++));
        auto place = [&](const std::vector<uint32_t> &w) { return twin.values(w); };
        twin.runAndCompare(make(place), name);
      });
  EXPECT_EQ(tests, 2 * (2 * 16 + 3 * 4 + 6 * 9 + 1));
}

// The compares on the same cases as IssOps' (integer_cases.h), under wait
// states every fourth run.
TEST(RtlOps, ComparesOnEdgeValues) {
  int t = 0;
  const int tests = test::forEachCompareTest([&](const auto &make, const std::string &name) {
    Twin twin(970, memoryFor(t++));
    auto place = [&](const std::vector<uint32_t> &w) { return twin.values(w); };
    twin.runAndCompare(make(place), name);
  });
  EXPECT_EQ(tests, (6 * 5 + 2) * 4 + 2 * static_cast<int>(std::size(test::kRowShapes)) * 4 +
                       (6 * 5 + 2) * 5);
}

// IOTA of every type it accepts over sequence_cases.h's starts, steps and
// lengths (the same as IssOps'), under wait states every fourth run of a
// length of several beats (a packet of a few elements writes a single beat
// and reads nothing: it may see no wait state at all).
TEST(RtlOps, IotaEveryAcceptedType) {
  int t = 0;
  const int types = test::forEachIotaTest([&](isa::DType type, const test::IotaCase &c) {
    Twin twin(960, memoryFor(c.n >= 128 ? t++ : 0));
    const isa::inst::Iota op =
        test::iotaOf(type, c, [&](const std::vector<uint32_t> &w) { return twin.values(w); });
    twin.runAndCompare(validPacketOf(op), test::iotaName(op));
  });
  EXPECT_EQ(types, 3);
}

// TRI of every type it accepts over sequence_cases.h's shapes, diagonals
// and fills, lower and upper, in place and not (the same as IssOps').
TEST(RtlOps, TriEveryAcceptedType) {
  int t = 0;
  const int types = test::forEachTriTest([&](isa::DType type, const test::TriCase &c) {
    Twin twin(970, memoryFor(c.rows * c.cols >= 128 ? t++ : 0));
    const isa::inst::Tri op =
        test::triOf(type, c, [&](const std::vector<uint32_t> &w) { return twin.values(w); });
    twin.runAndCompare(validPacketOf(op), test::triName(op, c.inPlace));
  });
  EXPECT_EQ(types, 6);
}

// CUMSUM of every type it accepts over sequence_cases.h's shapes, edge and
// random rows, in place and not (the same as IssOps'), under wait states
// every fourth run of several beats.
TEST(RtlOps, CumsumEveryAcceptedType) {
  int t = 0;
  const int types = test::forEachCumsumTest([&](isa::DType type, const test::CumsumCase &c) {
    Twin twin(980, memoryFor(c.rows * c.cols >= 128 ? t++ : 0));
    const isa::inst::Cumsum op =
        test::cumsumOf(type, c, [&](const std::vector<uint32_t> &w) { return twin.values(w); });
    twin.runAndCompare(validPacketOf(op), test::cumsumName(op, c));
  });
  EXPECT_EQ(types, 5);
}

// RAND and RANDN of every type they accept over rng_cases.h's seeds,
// offsets and lengths (the same as IssOps'), under wait states every fourth
// run of a length of several beats.
TEST(RtlOps, RandAndRandnEveryAcceptedType) {
  int t = 0;
  const auto run = [&]<class Op>(std::type_identity<Op>) {
    return test::forEachRngTest<Op>([&](isa::DType type, const test::RandCase &c) {
      Twin twin(990, memoryFor(c.n >= 128 ? t++ : 0));
      const Op op =
          test::rngOf<Op>(type, c, [&](const std::vector<uint32_t> &w) { return twin.values(w); });
      twin.runAndCompare(validPacketOf(op), test::rngName(op));
    });
  };
  EXPECT_EQ(run(std::type_identity<isa::inst::Rand>{}), 2);
  EXPECT_EQ(run(std::type_identity<isa::inst::Randn>{}), 1);
}

// ARGMAX and ARGMIN of every type they accept over sequence_cases.h's
// shapes and rows (the same as IssOps'), under wait states every fourth
// run of several beats.
template <class Op> int rtlArgTests() {
  int t = 0;
  return test::forEachArgTest<Op>([&](isa::DType type, const test::ArgCase &c) {
    Twin twin(980, memoryFor(c.rows * c.cols >= 128 ? t++ : 0));
    const Op op =
        test::argOf<Op>(type, c, [&](const std::vector<uint32_t> &w) { return twin.values(w); });
    twin.runAndCompare(validPacketOf(op), test::argName(op, c));
  });
}

TEST(RtlOps, ArgmaxArgminEveryAcceptedType) {
  EXPECT_EQ(rtlArgTests<isa::inst::Argmax>(), 4);
  EXPECT_EQ(rtlArgTests<isa::inst::Argmin>(), 4);
}

// GATHER on the same cases as IssOps' (gather_cases.h), a bad index
// faulting alike after the same runs written, under wait states every
// fourth case of rows longer than a beat.
TEST(RtlOps, GatherEveryAcceptedType) {
  int t = 0;
  const int types = test::forEachGatherTest([&](isa::DType type, const test::GatherCase &c) {
    Twin twin(990, memoryFor(c.inner * test::typeBytes(type) > 32 ? t++ : 0));
    const isa::inst::Gather op = test::gatherOf(
        type, c, [&](const std::vector<uint32_t> &w) { return twin.values(w); }, twin.rng);
    const std::string what = test::gatherName(op, c);
    if (!c.faults) {
      twin.runAndCompare(validPacketOf(op), what);
      return;
    }
    const Outcome out = twin.run(validPacketOf(op), what);
    ASSERT_TRUE(out.fault) << what;
    EXPECT_EQ(out.fault->code, mem::FaultCode::IndexOutOfRange) << what;
    twin.compareMemories(what);
  });
  EXPECT_EQ(types, 6);
}

// COUNT, ANY and ALL on the same b8 rows as IssOps', under wait states
// every fourth run of several beats.
template <class Op> void maskReductionsAgree() {
  int t = 0;
  test::forEachCountTest([&](const test::ArgCase &c) {
    Twin twin(980, memoryFor(c.rows * c.cols >= 128 ? t++ : 0));
    const Op op = test::maskReductionOf<Op>(
        c, [&](const std::vector<uint32_t> &w) { return twin.values(w); });
    twin.runAndCompare(validPacketOf(op), test::maskReductionName(op, c));
  });
}

TEST(RtlOps, CountOfB8Rows) { maskReductionsAgree<isa::inst::Count>(); }
TEST(RtlOps, AnyOfB8Rows) { maskReductionsAgree<isa::inst::Any>(); }
TEST(RtlOps, AllOfB8Rows) { maskReductionsAgree<isa::inst::All>(); }

// SELECT, SELECTS and the bitwise instructions on the same cases as
// IssOps' (integer_cases.h), under wait states every fourth run.
TEST(RtlOps, SelectsOnEdgeValues) {
  int t = 0;
  const int tests = test::forEachSelectTest([&](const auto &make, const std::string &name) {
    Twin twin(980, memoryFor(t++));
    auto place = [&](const std::vector<uint32_t> &w) { return twin.values(w); };
    twin.runAndCompare(make(place), name);
  });
  EXPECT_EQ(tests, 5 * 4 * 2 * (1 + static_cast<int>(std::size(test::kRowShapes))) + 6 * 2 * 7);
}

TEST(RtlOps, BitwiseOnEdgeValues) {
  int t = 0;
  const int tests = test::forEachBitwiseTest([&](const auto &make, const std::string &name) {
    Twin twin(990, memoryFor(t++));
    auto place = [&](const std::vector<uint32_t> &w) { return twin.values(w); };
    twin.runAndCompare(make(place), name);
  });
  EXPECT_EQ(tests, (3 * 3 + 2 * 2) * 4 + 3 * static_cast<int>(std::size(test::kRowShapes)) * 4 +
                       3 * 3 * 9 + 4 * 2 * 9 + 3);
}

TEST(RtlOps, AdamW) {
  for (int t = 0; t < kTrials; ++t) {
    Twin twin(1000 + t, memoryFor(t));
    isa::inst::Adamw op;
    op.n = dim(twin.rng, 100);
    const int step = 1 + t;
    const float beta1 = 0.9f, beta2 = 0.999f;
    const float bc1 = 1.0f - std::pow(beta1, static_cast<float>(step));
    const float bc2 = 1.0f - std::pow(beta2, static_cast<float>(step));
    op.hyper = twin.values({bitsOf(1e-3f), bitsOf(beta1), bitsOf(beta2), bitsOf(1e-8f),
                            bitsOf(0.01f), bitsOf(bc1), bitsOf(std::sqrt(bc2)), 0});
    op.param = twin.floats(op.n, 5);
    op.grad = twin.floats(op.n, 5);
    op.exp_avg = twin.floats(op.n, 0);
    std::vector<uint32_t> v(op.n);
    for (uint32_t &x : v)
      x = bitsOf(std::abs(std::uniform_real_distribution<float>(0, 1)(twin.rng)));
    op.exp_avg_sq = twin.values(v);
    twin.runAndCompare(validPacketOf(op), "adamw");
  }
}

TEST(RtlOps, EmbeddingAndItsBackward) {
  for (int t = 0; t < kTrials; ++t) {
    Twin twin(1100 + t, memoryFor(t));
    auto &rng = twin.rng;
    const bool wide = rng() & 1;
    const uint32_t rows = dim(rng, 30), dimension = dim(rng, 70), count = dim(rng, 20);
    std::vector<uint32_t> indices;
    for (uint32_t i = 0; i < count; ++i) {
      indices.push_back(static_cast<uint32_t>(rng() % rows)); // repeats are likely
      if (wide)
        indices.push_back(0);
    }
    isa::inst::Embedding e;
    e.itype = wide ? isa::IndexType::i64 : isa::IndexType::i32;
    e.rows = rows;
    e.dim = dimension;
    e.count = count;
    e.table = twin.floats(uint64_t(rows) * dimension);
    e.indices = twin.values(indices);
    e.dst = twin.floats(uint64_t(count) * dimension);
    twin.runAndCompare(validPacketOf(e), "embedding");

    isa::inst::EmbeddingBwd b;
    b.itype = e.itype;
    b.rows = rows;
    b.dim = dimension;
    b.count = count;
    b.padding_idx = rng() % 2 ? -1 : static_cast<int32_t>(indices[0]);
    b.indices = e.indices;
    b.dy = twin.floats(uint64_t(count) * dimension, 5);
    b.dtable = twin.floats(uint64_t(rows) * dimension, 5);
    twin.runAndCompare(validPacketOf(b), "embedding_bwd");
  }
}

// Wait states on every channel, short and long latencies, memories
// narrower than the bus: the AXI handshakes under back-pressure. The
// harness's AxiMonitor checks every cycle that the master keeps the
// protocol (it throws otherwise); the counts show that every channel did
// wait.
TEST(RtlOps, MemoryWaitStatesAndBackPressure) {
  rtl::DeviceOptions slow;
  for (int t = 0; t < 6; ++t) {
    slow.memoryLatency = t % 2 ? 3 : 37;
    slow.memoryWidth = 32u >> (t % 4);
    slow.stallPercent = 20 + 10 * t;
    slow.stallSeed = 7 + t;
    const std::string what = "latency " + std::to_string(slow.memoryLatency) + ", width " +
                             std::to_string(slow.memoryWidth) + ", " +
                             std::to_string(slow.stallPercent) + "% wait states";
    Twin twin(1200 + t, slow);
    auto &rng = twin.rng;
    isa::inst::Copy copy;
    // Several read bursts (one per 512 bytes), so that AR meets a wait
    // state: the copy streams, one read request for all of it.
    copy.bytes = 4000 + static_cast<uint32_t>(rng() % 300);
    copy.src = twin.bytes(copy.bytes) + 3;
    copy.dst = twin.bytes(copy.bytes + 8) + 1;
    twin.runAndCompare(validPacketOf(copy), "copy, " + what);
    isa::inst::Matmul mm;
    mm.m = 11;
    mm.k = 40;
    mm.n = 9;
    mm.acc = true;
    mm.a = twin.floats(11 * 40);
    mm.b = twin.floats(40 * 9);
    mm.c = twin.floats(11 * 9);
    twin.runAndCompare(validPacketOf(mm), "matmul, " + what);
    isa::inst::Softmax sm;
    sm.rows = 3;
    sm.cols = 77;
    sm.src = twin.floats(3 * 77);
    sm.dst = twin.floats(3 * 77);
    twin.runAndCompare(validPacketOf(sm), "softmax, " + what);
    const rtl::AxiCounts &axi = twin.device.axiCounts();
    EXPECT_GT(axi.arWaits, 0u) << what;
    EXPECT_GT(axi.awWaits, 0u) << what;
    EXPECT_GT(axi.wWaits, 0u) << what;
    EXPECT_GT(axi.arHandshakes, 0u) << what;
    EXPECT_EQ(axi.bResponses, axi.awHandshakes) << what;
  }
}

// The memory's latency and data width change the cycles, never the results.
TEST(RtlOps, MemoryLatencyAndWidthCostCycles) {
  uint64_t previous = 0;
  for (const auto &[latency, width] : {std::pair{1u, 32u}, {20u, 32u}, {20u, 8u}, {20u, 2u}}) {
    rtl::DeviceOptions options;
    options.memoryLatency = latency;
    options.memoryWidth = width;
    Twin twin(77, options);
    isa::inst::Matmul mm;
    mm.m = 16;
    mm.k = 24;
    mm.n = 16;
    mm.a = twin.floats(16 * 24);
    mm.b = twin.floats(24 * 16);
    mm.c = twin.floats(16 * 16);
    twin.runAndCompare(validPacketOf(mm),
                       "latency " + std::to_string(latency) + ", width " + std::to_string(width));
    const uint64_t cycles = twin.device.stats().cycles;
    EXPECT_GT(cycles, previous) << "latency " << latency << ", width " << width;
    previous = cycles;
  }
}

// The memory port posts write bursts: a C tile's rows are written without
// waiting for each row's response, so a tile store costs one memory latency.
// With a response awaited per row, the stores of these eight 8 x 8 tiles
// alone would take 8 tiles x 8 rows x the latency.
TEST(RtlOps, WriteBurstsArePostedOneLatencyPerTileNotPerRow) {
  constexpr unsigned kLatency = 200, kTiles = 8, kRows = isa::hw::kMatrixTile;
  rtl::DeviceOptions options;
  options.memoryLatency = kLatency;
  Twin twin(78, options);
  isa::inst::Matmul mm;
  mm.m = kTiles * kRows;
  mm.k = 8;
  mm.n = kRows;
  mm.a = twin.floats(mm.m * mm.k);
  mm.b = twin.floats(mm.k * mm.n);
  mm.c = twin.floats(mm.m * mm.n);
  twin.runAndCompare(validPacketOf(mm), "posted C stores");
  EXPECT_LT(twin.device.stats().cycles, uint64_t(kTiles) * kRows * kLatency);
  const rtl::AxiCounts axi = twin.device.axiCounts();
  EXPECT_GE(axi.awHandshakes, uint64_t(kTiles) * kRows); // a burst per row at least
  EXPECT_EQ(axi.bResponses, axi.awHandshakes);
}

// The vector engine's chunks: 16 L elements (npu_vector.sv's G = 16).
constexpr uint32_t kVectorChunk = 16 * isa::hw::kVectorLanes;

// An ADD of one row of `elements` finite elements.
isa::Packet oneRowAdd(Twin &twin, uint32_t elements) {
  isa::inst::Add add;
  add.rows = 1;
  add.cols = elements;
  add.bcast = isa::Broadcast::none;
  add.a = twin.floats(elements, 0);
  add.b = twin.floats(elements, 0);
  add.dst = twin.floats(elements);
  return validPacketOf(add);
}

// The vector engine posts a chunk's write and reads the next chunks'
// inputs while it drains and while the chunk computes, with three requests
// open in the port (docs/rtl.md, "Vector engine throughput"), so at a long
// latency an ADD chunk costs about two thirds of a latency, its two reads
// among three in flight (0.82 measured). An engine that reads one chunk at
// a time pays at least one latency per chunk (the one before, two), one
// that also awaits each write's response three (the one before the posted
// writes, with chunks of half the size, six); this bound allows one.
TEST(RtlOps, VectorWritesArePostedUnderTheNextChunksReads) {
  constexpr unsigned kLatency = 200, kChunks = 32;
  constexpr uint32_t kElements = kChunks * kVectorChunk;
  rtl::DeviceOptions options;
  options.memoryLatency = kLatency;
  Twin twin(82, options);
  twin.runAndCompare(oneRowAdd(twin, kElements), "posted chunk writes");
  EXPECT_LT(twin.device.stats().cycles, uint64_t(kChunks) * kLatency);
  const rtl::AxiCounts axi = twin.device.axiCounts();
  EXPECT_EQ(axi.bResponses, axi.awHandshakes);
}

// A group's last step also ends the group: a NEG group takes its one ROM
// word's cycle, not a second one to end it. At latency 1 a chunk (one
// 16-beat read, its 16 groups, one write from the other output slot) costs
// its groups and 3 cycles (S_PASS, S_IN, the write's request): 19.2
// measured, against 35 with an end cycle per group; the bound allows 26.
TEST(RtlOps, VectorGroupsTakeOnlyTheirStepsCycles) {
  constexpr unsigned kChunks = 32;
  constexpr uint32_t kElements = kChunks * kVectorChunk;
  rtl::DeviceOptions options;
  options.memoryLatency = 1;
  Twin twin(84, options);
  isa::inst::Neg neg;
  neg.n = kElements;
  neg.src = twin.floats(kElements, 0);
  neg.dst = twin.floats(kElements);
  twin.runAndCompare(validPacketOf(neg), "one cycle per group");
  EXPECT_LT(twin.device.stats().cycles, uint64_t(kChunks) * 26);
}

// The reader keeps the bus busy: an ADD on the default memory runs at 80 %
// of the bus's bound (its 8 bytes read per element) or better: 94 % on
// these 8,192 elements, 99 % on 64K (bench/rtl_roofline.py), against 34 %
// with the reads of a chunk one after the other and the steps waiting for
// them.
TEST(RtlOps, VectorAddRunsAtFourFifthsOfTheBusBound) {
  constexpr uint32_t kElements = 64 * kVectorChunk;
  Twin twin(86);
  const isa::Packet packet = oneRowAdd(twin, kElements);
  twin.runAndCompare(packet, "add");
  const uint64_t bound = sim::roofline(packet).value().memoryCycles;
  EXPECT_LT(double(twin.device.stats().cycles), double(bound) / 0.8);
}

// EXP is compute-bound (15 ROM words per element on L lanes): with the
// next chunks read and the one before written during the steps it runs at
// 98 % of its compute roof (the ISS's roofline) on the default memory;
// with a latency per 16 L elements 86 %, and the engine
// before, reading each 8 L elements' chunk, computing, then awaiting the
// write, 63 %. The target is 80 %.
TEST(RtlOps, VectorExpRunsAtFourFifthsOfItsComputeRoof) {
  constexpr uint32_t kElements = 32 * kVectorChunk;
  Twin twin(85);
  isa::inst::Exp exp;
  exp.n = kElements;
  exp.src = twin.floats(kElements, 0);
  exp.dst = twin.floats(kElements);
  const isa::Packet packet = validPacketOf(exp);
  twin.runAndCompare(packet, "exp");
  const uint64_t roof = sim::roofline(packet).value().computeCycles;
  EXPECT_LT(double(twin.device.stats().cycles), double(roof) / 0.8);
}

// A column sum keeps its running sums in memory: each row reads back the
// chunk the row before wrote, whose write was posted (one chunk per row
// here); the sums come out as the ISS's at every latency, the read after
// the write's response or not.
TEST(RtlOps, VectorAccumulatorRowsReadWhatThePostedWritesStored) {
  for (const unsigned latency : {1u, 20u, 200u}) {
    rtl::DeviceOptions options;
    options.memoryLatency = latency;
    Twin twin(83, options);
    isa::inst::ColSum sum;
    sum.rows = 12;
    sum.cols = 40;
    sum.src = twin.floats(uint64_t(sum.rows) * sum.cols, 0);
    sum.dst = twin.floats(sum.cols);
    twin.runAndCompare(validPacketOf(sum), "column sum at latency " + std::to_string(latency));
  }
}

// The matrix engine reuses every panel word for HW_MATRIX_BLOCK_TILES tiles
// and loads the next panels while the current ones compute (docs/rtl.md,
// "Matrix engine throughput"). An 8 x 8 tile with fresh panels needs 64
// bytes per step from a bus of 32 bytes per cycle, so the engine without
// reuse cannot exceed 50 % of the array's peak (it reached 20 %); the
// bound formula predicts 93 % and 87 % for these shapes on the default
// memory, and the target is 75 %.
TEST(RtlOps, MatmulReusesPanelsAcrossTilesAtThreeQuartersOfPeak) {
  struct Shape {
    uint32_t m, k, n;
  };
  for (const Shape shape : {Shape{128, 128, 128}, Shape{256, 64, 256}}) {
    Twin twin(81);
    isa::inst::Matmul mm;
    mm.m = shape.m;
    mm.k = shape.k;
    mm.n = shape.n;
    mm.a = twin.floats(uint64_t(mm.m) * mm.k, 0);
    mm.b = twin.floats(uint64_t(mm.k) * mm.n, 0);
    mm.c = twin.floats(uint64_t(mm.m) * mm.n, 0);
    const std::string what =
        "matmul " + std::to_string(mm.m) + "x" + std::to_string(mm.k) + "x" + std::to_string(mm.n);
    twin.runAndCompare(validPacketOf(mm), what);
    const double peakCycles =
        double(mm.m) * mm.k * mm.n / (isa::hw::kMatrixTile * isa::hw::kMatrixTile);
    EXPECT_LT(double(twin.device.stats().cycles), peakCycles / 0.75) << what;
  }
}

// The DMA engine streams a copy: reads of up to 64 KiB per request land in
// its ring while the writes of the bytes already read drain it, so each
// direction pays the memory latency once per 64 KiB request and the two
// overlap. Filling a 512-byte buffer and then writing it, as before, paid a
// read and a write latency per 512 bytes: 256 x 2 x 200 cycles here.
TEST(RtlOps, CopyReadsAndWritesOverlapOneLatencyPerChunkNotPerBuffer) {
  constexpr unsigned kLatency = 200, kChunkBytes = 65536;
  constexpr uint32_t kBytes = 2 * kChunkBytes + 77;
  rtl::DeviceOptions options;
  options.memoryLatency = kLatency;
  Twin twin(79, options);
  isa::inst::Copy copy;
  copy.bytes = kBytes;
  copy.src = twin.bytes(kBytes + 8) + 5;
  copy.dst = twin.bytes(kBytes + 8) + 3;
  twin.runAndCompare(validPacketOf(copy), "streamed copy");
  const uint64_t beats = kBytes / isa::hw::kAxiDataBytes + 2;
  const uint64_t requests = kBytes / kChunkBytes + 1;
  // Per request one latency in each direction, plus the packet fetch.
  EXPECT_LT(twin.device.stats().cycles, beats + 2 * (requests + 1) * kLatency);
  const rtl::AxiCounts axi = twin.device.axiCounts();
  EXPECT_EQ(axi.bResponses, axi.awHandshakes);
}

// COPY_STRIDED with a non-unit innermost stride reads a row's elements as
// one pitched request: the port keeps HW_AXI_OUTSTANDING one-element bursts
// in flight, so the elements pay the latency per OUTSTANDING of them, not
// each (one request per element, as before: 1,024 x 200 cycles here).
TEST(RtlOps, StridedElementsArePipelinedNotOneLatencyEach) {
  constexpr unsigned kLatency = 200, kElements = 1024;
  rtl::DeviceOptions options;
  options.memoryLatency = kLatency;
  Twin twin(80, options);
  isa::inst::CopyStrided cs;
  cs.esize = isa::ElemSize::word;
  cs.size0 = cs.size1 = 1;
  cs.size2 = 2;
  cs.size3 = kElements / 2;
  cs.stride3 = -3;
  cs.stride2 = 1;
  const uint64_t base = twin.floats(3 * kElements / 2 + 2);
  cs.src = base + 4 * (3 * (kElements / 2 - 1)); // the rows run backwards
  cs.dst = twin.floats(kElements);
  twin.runAndCompare(validPacketOf(cs), "pitched element reads");
  EXPECT_LT(twin.device.stats().cycles,
            2 * uint64_t(kElements) * kLatency / isa::hw::kAxiOutstanding + 4 * kLatency);
}

// Elements less than a beat apart (here f32 at stride 2: four per beat) are
// packed: the DMA engine reads the range they span and gathers each beat's
// elements at once, so the row costs its span's beats (2 x 8 KiB), not a
// burst per element (2,048 bursts, 16 in flight per latency) nor a request
// per element as before.
TEST(RtlOps, StridedElementsWithinABeatAreGatheredPerBeat) {
  constexpr unsigned kElements = 2048;
  Twin twin(81);
  isa::inst::CopyStrided cs;
  cs.esize = isa::ElemSize::word;
  cs.size0 = cs.size1 = cs.size2 = 1;
  cs.size3 = kElements;
  cs.stride3 = 2;
  cs.src = twin.floats(2 * kElements);
  cs.dst = twin.floats(kElements);
  twin.runAndCompare(validPacketOf(cs), "packed element reads");
  const uint64_t spanBeats = 2 * kElements * 4 / isa::hw::kAxiDataBytes;
  EXPECT_LT(twin.device.stats().cycles, 2 * spanBeats);
}

// A write beat that waits for WREADY keeps its payload while the DMA
// engine's reads land in its ring under the beat's unstrobed bytes: a
// gather's write requests end where its reads had got to, mid-beat, and the
// next rows land right after. The AXI monitor checks every waiting beat.
TEST(RtlOps, WaitingWriteBeatsHoldTheirPayloadWhileTheRingFills) {
  for (unsigned seed = 1; seed <= 8; ++seed) {
    rtl::DeviceOptions stalls;
    stalls.memoryLatency = 5;
    stalls.stallPercent = 30;
    stalls.stallSeed = seed;
    Twin twin(1300 + seed, stalls);
    isa::inst::CopyStrided cs; // 64 rows of 13 bytes, 20 bytes apart
    cs.esize = isa::ElemSize::byte;
    cs.size0 = cs.size1 = 1;
    cs.size2 = 64;
    cs.size3 = 13;
    cs.stride2 = 20;
    cs.stride3 = 1;
    cs.src = twin.bytes(64 * 20) + seed % 4;
    cs.dst = twin.bytes(64 * 13 + 8) + seed % 7;
    twin.runAndCompare(validPacketOf(cs), "rows under wait states, seed " + std::to_string(seed));
    EXPECT_GT(twin.device.axiCounts().wWaits, 0u) << seed;
  }
}

// ---- the AXI monitor and the harness's options -------------------------------------------

TEST(AxiMonitor, AcceptsLegalTrafficAndNamesEachViolation) {
  const rtl::AxiAddress idle, burst{true, true, 0x1000, 15, 5, 1};
  rtl::AxiAddress waiting = burst;
  waiting.ready = false;
  const rtl::AxiWrite noW;
  auto beat = [](bool ready, bool last) { return rtl::AxiWrite{true, ready, last, ~0ull, 42}; };
  {
    rtl::AxiMonitor m; // AR waits two cycles, then a 2-beat write burst with a W wait
    m.cycle(0, waiting, idle, noW, false, false);
    m.cycle(1, waiting, idle, noW, false, false);
    m.cycle(2, burst, {true, true, 0x2fc0, 1, 5, 1}, noW, true, false);
    m.cycle(3, idle, idle, beat(false, false), true, false);
    m.cycle(4, idle, idle, beat(true, false), false, false);
    m.cycle(5, idle, idle, beat(true, true), false, true);
    EXPECT_EQ(m.counts().arHandshakes, 1u);
    EXPECT_EQ(m.counts().arWaits, 2u);
    EXPECT_EQ(m.counts().wHandshakes, 2u);
    EXPECT_EQ(m.counts().wWaits, 1u);
    EXPECT_EQ(m.counts().rBeats, 2u);
    EXPECT_EQ(m.counts().bResponses, 1u);
  }
  auto violates = [&](const std::string &rule, auto &&run) {
    rtl::AxiMonitor m;
    try {
      run(m);
      ADD_FAILURE() << "not detected: " << rule;
    } catch (const rtl::AxiProtocolError &e) {
      EXPECT_NE(std::string(e.what()).find(rule), std::string::npos) << e.what();
    }
  };
  violates("ARVALID dropped before ARREADY", [&](rtl::AxiMonitor &m) {
    m.cycle(0, waiting, idle, noW, false, false);
    m.cycle(1, idle, idle, noW, false, false);
  });
  violates("AW payload changed while waiting", [&](rtl::AxiMonitor &m) {
    rtl::AxiAddress moved = waiting;
    moved.addr += 32;
    m.cycle(0, idle, waiting, noW, false, false);
    m.cycle(1, idle, moved, noW, false, false);
  });
  violates("W payload changed", [&](rtl::AxiMonitor &m) {
    m.cycle(0, idle, burst, noW, false, false);
    m.cycle(1, idle, idle, beat(false, false), false, false);
    m.cycle(2, idle, idle, rtl::AxiWrite{true, true, false, 1, 42}, false, false);
  });
  violates("WLAST before the last beat", [&](rtl::AxiMonitor &m) {
    m.cycle(0, idle, burst, noW, false, false);
    m.cycle(1, idle, idle, beat(true, true), false, false);
  });
  violates("WLAST missing", [&](rtl::AxiMonitor &m) {
    m.cycle(0, idle, {true, true, 0x1000, 0, 5, 1}, noW, false, false);
    m.cycle(1, idle, idle, beat(true, false), false, false);
  });
  violates("W beat without a write burst",
           [&](rtl::AxiMonitor &m) { m.cycle(0, idle, idle, beat(true, true), false, false); });
  violates("crosses a 4 KiB boundary", [&](rtl::AxiMonitor &m) {
    m.cycle(0, {true, true, 0x1fe0, 1, 5, 1}, idle, noW, false, false);
  });
  violates("more than 16", [&](rtl::AxiMonitor &m) {
    m.cycle(0, {true, true, 0x1000, 16, 5, 1}, idle, noW, false, false);
  });
  violates("not INCR", [&](rtl::AxiMonitor &m) {
    m.cycle(0, {true, true, 0x1000, 0, 5, 2}, idle, noW, false, false);
  });
  violates("not a full beat", [&](rtl::AxiMonitor &m) {
    m.cycle(0, {true, true, 0x1000, 0, 2, 1}, idle, noW, false, false);
  });
  violates("not beat-aligned", [&](rtl::AxiMonitor &m) {
    m.cycle(0, {true, true, 0x1004, 0, 5, 1}, idle, noW, false, false);
  });
}

TEST(RtlDeviceOptions, BadValuesAreRejectedWithTheReason) {
  mem::PhysicalMemory memory;
  auto rejected = [&](rtl::DeviceOptions o, const std::string &reason) {
    try {
      rtl::Device device(memory, o);
      ADD_FAILURE() << "accepted: " << reason;
    } catch (const std::invalid_argument &e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  };
  rtl::DeviceOptions o;
  o.memoryWidth = 12;
  rejected(o, "memory data width of 12 bytes per cycle: must be a power of two from 1 to 32");
  o.memoryWidth = 64;
  rejected(o, "memory data width of 64 bytes");
  o = {};
  o.stallPercent = 100;
  rejected(o, "must be below 100");
  o = {};
  o.hangCycles = 0;
  rejected(o, "hang budget of 0 cycles");
  o = {};
  o.waveformStart = 10;
  o.waveformStop = 5;
  rejected(o, "start after stop");
  auto badEnvironment = [](const char *name, const char *value, const std::string &reason) {
    ::setenv(name, value, 1);
    try {
      rtl::DeviceOptions::fromEnvironment();
      ADD_FAILURE() << name << "=" << value << " accepted";
    } catch (const std::invalid_argument &e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
    ::unsetenv(name);
  };
  badEnvironment("NPU_RTL_MEM_WIDTH", "wide",
                 "NPU_RTL_MEM_WIDTH='wide' is not a non-negative integer");
  badEnvironment("NPU_RTL_LATENCY", "-5", "is not a non-negative integer");
  badEnvironment("NPU_RTL_LATENCY", "5000000000", "is out of range (at most 4294967295)");
  badEnvironment("NPU_RTL_HANG_CYCLES", "99999999999999999999", "is out of range");
  ::setenv("NPU_RTL_MEM_WIDTH", "8", 1);
  EXPECT_EQ(rtl::DeviceOptions::fromEnvironment().memoryWidth, 8u);
  ::unsetenv("NPU_RTL_MEM_WIDTH");
}

// ---- faults -----------------------------------------------------------------------------

// A raw packet with the given 32-bit words.
isa::Packet rawPacket(std::initializer_list<std::pair<unsigned, uint32_t>> words) {
  isa::Packet p{};
  for (const auto &[word, value] : words)
    std::memcpy(p.data() + 4 * word, &value, 4);
  return p;
}

TEST(RtlFaults, DecodeFaultsNameTheCodeAndPacket) {
  Twin twin(1);
  struct Case {
    const char *what;
    isa::Packet packet;
    mem::FaultCode code;
  };
  isa::inst::Copy copy;
  copy.bytes = 4;
  copy.src = 0x1000'0000;
  copy.dst = 0x1000'1000;
  isa::Packet reserved = validPacketOf(copy);
  reserved[60] = 1; // param7 is not a COPY operand
  isa::inst::Fill fill;
  fill.count = 4;
  fill.dst = 0x1000'0002;
  isa::Packet misaligned;
  fill.toPacket(misaligned.data());
  isa::inst::Exp exp;
  exp.n = 0;
  exp.src = 0x1000'0000;
  exp.dst = 0x1000'0000;
  isa::Packet zeroCount;
  exp.toPacket(zeroCount.data());
  isa::inst::Matmul mm;
  mm.m = mm.k = mm.n = 1;
  mm.a = 0x1000'0000;
  mm.b = 0x1000'0100;
  mm.c = 0x1000'0200;
  isa::Packet badDtype = validPacketOf(mm);
  badDtype[4] |= 3; // dtype 3 is not a DType
  const Case cases[] = {
      {"unknown opcode", rawPacket({{0, 0x7777}}), mem::FaultCode::UnknownOpcode},
      {"reserved bits", reserved, mem::FaultCode::ReservedBits},
      {"misaligned", misaligned, mem::FaultCode::Misaligned},
      {"count 0", zeroCount, mem::FaultCode::InvalidOperand},
      {"bad enum", badDtype, mem::FaultCode::InvalidOperand},
  };
  for (const Case &c : cases) {
    const Outcome out = twin.run(c.packet, c.what);
    ASSERT_TRUE(out.fault) << c.what;
    EXPECT_EQ(out.fault->code, c.code) << c.what;
    EXPECT_EQ(out.fault->packetIndex, 0) << c.what;
  }
}

TEST(RtlFaults, BadAddressesIndicesAndOverlaps) {
  Twin twin(2);
  const uint64_t buffer = twin.floats(64);
  isa::inst::Copy unmapped;
  unmapped.bytes = 64;
  unmapped.src = 0x4000'0000; // in no region
  unmapped.dst = buffer;
  Outcome out = twin.run(validPacketOf(unmapped), "copy from an unmapped address");
  ASSERT_TRUE(out.fault);
  EXPECT_EQ(out.fault->code, mem::FaultCode::Unmapped);
  EXPECT_EQ(out.fault->address, 0x4000'0000u);

  isa::inst::Exp csr;
  csr.n = 8;
  csr.src = buffer;
  csr.dst = 0x3000'0000; // the CSR window
  out = twin.run(validPacketOf(csr), "write into the CSR window");
  ASSERT_TRUE(out.fault);
  EXPECT_EQ(out.fault->code, mem::FaultCode::Permission);

  isa::inst::Copy overlap;
  overlap.bytes = 64;
  overlap.src = buffer;
  overlap.dst = buffer + 32;
  out = twin.run(validPacketOf(overlap), "overlapping copy");
  ASSERT_TRUE(out.fault);
  EXPECT_EQ(out.fault->code, mem::FaultCode::Overlap);
  EXPECT_EQ(out.fault->address, buffer + 32);

  isa::inst::Embedding e;
  e.rows = 4;
  e.dim = 3;
  e.count = 3;
  e.table = twin.floats(12);
  e.indices = twin.values({1, 4, 0}); // 4 is out of range
  e.dst = twin.floats(9);
  out = twin.run(validPacketOf(e), "embedding index out of range");
  ASSERT_TRUE(out.fault);
  EXPECT_EQ(out.fault->code, mem::FaultCode::IndexOutOfRange);
  EXPECT_EQ(out.fault->address, e.indices + 4);

  isa::inst::Matmul mm;
  mm.m = mm.k = mm.n = 4;
  mm.lda = 2; // below the row length
  mm.a = twin.floats(16);
  mm.b = twin.floats(16);
  mm.c = twin.floats(16);
  out = twin.run(validPacketOf(mm), "matmul pitch below the row");
  ASSERT_TRUE(out.fault);
  EXPECT_EQ(out.fault->code, mem::FaultCode::InvalidOperand);
}

// Operands drawn from a small window so that they often overlap: the RTL
// faults (Overlap, or InvalidOperand for bad pitches) exactly when the ISS
// does, with the same code.
TEST(RtlFaults, OverlapChecksAgreeWithTheIss) {
  Twin twin(5);
  auto &rng = twin.rng;
  const uint64_t window = twin.floats(1024);
  const auto at = [&] { return window + 4 * (rng() % 96); };
  const auto small = [&] { return 1 + static_cast<uint32_t>(rng() % 12); };
  int faults = 0;
  for (int t = 0; t < 140; ++t) {
    isa::Packet p;
    std::string what;
    switch (t % 14) {
    case 0: {
      isa::inst::Add op;
      op.rows = small();
      op.cols = small();
      op.bcast = static_cast<isa::Broadcast>(rng() % 4);
      op.a = at();
      op.b = at();
      op.dst = rng() % 3 ? at() : op.a;
      p = validPacketOf(op);
      what = "add";
      break;
    }
    case 1: {
      isa::inst::Exp op;
      op.n = small() * 4;
      op.src = at();
      op.dst = rng() % 3 ? at() : op.src;
      p = validPacketOf(op);
      what = "exp";
      break;
    }
    case 2: {
      isa::inst::RowSum op;
      op.rows = small();
      op.cols = small();
      op.src = at();
      op.dst = at();
      p = packetAs(op, rng() & 1 ? isa::Opcode::ROW_MAX : isa::Opcode::COL_SUM);
      what = "reduction";
      break;
    }
    case 3: {
      isa::inst::Softmax op;
      op.rows = small();
      op.cols = small();
      op.src = at();
      op.dst = rng() % 3 ? at() : op.src;
      p = validPacketOf(op);
      what = "softmax";
      break;
    }
    case 4: {
      isa::inst::Rmsnorm op;
      op.rows = small();
      op.cols = small();
      op.eps = 1e-5f;
      op.use_weight = rng() & 1;
      op.write_rstd = rng() & 1;
      op.src = at();
      op.dst = rng() % 3 ? at() : op.src;
      op.weight = at();
      op.rstd = at();
      p = validPacketOf(op);
      what = "rmsnorm";
      break;
    }
    case 12: {
      isa::inst::Layernorm op;
      op.rows = small();
      op.cols = small();
      op.eps = 1e-5f;
      op.use_weight = rng() & 1;
      op.use_bias = rng() & 1;
      op.write_stats = rng() & 1;
      op.src = at();
      op.dst = rng() % 3 ? at() : op.src;
      op.weight = at();
      op.bias = at();
      op.stats = at();
      p = validPacketOf(op);
      what = "layernorm";
      break;
    }
    case 13: {
      isa::inst::LayernormBwd op;
      op.rows = small();
      op.cols = small();
      op.use_weight = rng() & 1;
      op.write_dweight = rng() & 1;
      op.x = at();
      op.dy = at();
      op.weight = at();
      op.stats = at();
      op.dweight = at();
      op.dx = rng() % 3 ? at() : op.x;
      p = validPacketOf(op);
      what = "layernorm_bwd";
      break;
    }
    case 5: {
      isa::inst::SoftmaxBwd op;
      op.rows = small();
      op.cols = small();
      op.y = at();
      op.dy = at();
      op.dx = rng() % 3 ? at() : op.y;
      p = validPacketOf(op);
      what = "softmax_bwd";
      break;
    }
    case 6: {
      isa::inst::RmsnormBwd op;
      op.rows = small();
      op.cols = small();
      op.use_weight = rng() & 1;
      op.write_dweight = rng() & 1;
      op.x = at();
      op.dy = at();
      op.weight = at();
      op.rstd = at();
      op.dweight = at();
      op.dx = rng() % 3 ? at() : op.x;
      p = validPacketOf(op);
      what = "rmsnorm_bwd";
      break;
    }
    case 7: {
      isa::inst::Adamw op;
      op.n = small();
      op.param = at();
      op.grad = at();
      op.exp_avg = at();
      op.exp_avg_sq = at();
      op.hyper = (window + 4 * (rng() % 96)) & ~uint64_t(31);
      p = validPacketOf(op);
      what = "adamw";
      break;
    }
    case 8: {
      isa::inst::SiluBwd op;
      op.n = small() * 3;
      op.x = at();
      op.dy = at();
      op.dx = rng() % 3 ? at() : op.dy;
      p = packetAs(op, rng() & 1 ? isa::Opcode::SILU_BWD : isa::Opcode::GELU_BWD);
      what = "silu/gelu_bwd";
      break;
    }
    case 9: {
      isa::inst::Matmul op;
      op.m = small();
      op.k = small();
      op.n = small();
      op.lda = rng() % 4 ? 0 : static_cast<uint32_t>(rng() % 14);
      op.a = at();
      op.b = at();
      op.c = at();
      p = validPacketOf(op);
      what = "matmul";
      break;
    }
    case 10: {
      isa::inst::Adds op;
      op.n = small() * 5;
      op.a = at();
      op.dst = at();
      p = packetAs(op, isa::Opcode::RDIVS);
      what = "rdivs";
      break;
    }
    default: {
      isa::inst::Copy op;
      op.bytes = small() * 7;
      op.src = at() + rng() % 4;
      op.dst = at();
      p = validPacketOf(op);
      what = "copy";
      break;
    }
    }
    faults += twin.run(p, what + " #" + std::to_string(t)).fault.has_value();
  }
  EXPECT_GT(faults, 20); // the window makes overlaps common
}

// A fault mid-stream stops the ring at that packet; RESET clears it and the
// device runs again.
// Random packets of every instruction with their addresses at region
// edges (the end of one region and the start of the next, the command
// ring, the CSR window, unmapped space, the top of the address space),
// sizes small or beyond every region, random flags: the RTL stops with the
// ISS's line exactly when the ISS does, and the memory around the edges is
// the same on both afterwards.
TEST(RtlFaults, RegionChecksAgreeWithTheIss) {
  Twin twin(6);
  auto &rng = twin.rng;
  static const uint64_t edges[] = {
      0x0,           0x0fff'ffc0, 0x0fff'fff0,          0x1000'0000, 0x1000'0040,
      0x1fff'ffc0,   0x2000'0040, 0x200f'ffc0,          0x3000'0000, 0x4000'0000,
      0x1'0000'0000, 0xffff'fff0, 0xffff'ffff'ffff'ffc0};
  const auto fill = [&](uint64_t at, size_t bytes) {
    std::vector<uint8_t> data(bytes);
    for (uint8_t &b : data)
      b = static_cast<uint8_t>(rng() % 4); // small values: valid indices now and then
    twin.issMemory.write(at, data.data(), bytes);
    twin.rtlMemory.write(at, data.data(), bytes);
  };
  static const uint64_t pages[] = {0x0fff'f000, 0x1000'0000, 0x1fff'f000};
  for (uint64_t page : pages)
    fill(page, 0x1000);
  const std::span<const isa::InstrInfo> all = isa::instructions();
  int faults = 0;
  for (int t = 0; t < 300; ++t) {
    const isa::InstrInfo &info = all[rng() % all.size()];
    isa::Instruction inst = isa::makeInstruction(info.opcode);
    for (uint32_t i = 0; i < info.numOperands; ++i) {
      const isa::OperandInfo &op = info.operands[i];
      switch (op.kind) {
      case isa::OperandKind::Addr:
        inst.operands[i] =
            (edges[rng() % std::size(edges)] + 4 * (rng() % 8)) & ~uint64_t(op.align - 1);
        break;
      case isa::OperandKind::U32:
        inst.operands[i] = rng() % 16 == 0 ? 0xffff'ffff : (op.min > 0 ? 1 : 0) + rng() % 6;
        break;
      case isa::OperandKind::I32:
        inst.operands[i] = static_cast<uint32_t>(static_cast<int32_t>(rng() % 9) - 4);
        break;
      case isa::OperandKind::Flag: inst.operands[i] = rng() & 1; break;
      case isa::OperandKind::Enum: {
        const std::vector<uint32_t> values = isa::acceptedValues(op);
        inst.operands[i] = values[rng() % values.size()];
        break;
      }
      default: break;
      }
    }
    isa::Packet p;
    isa::encode(inst, p);
    faults += twin.run(p, std::string(info.mnemonic) + " #" + std::to_string(t)).fault.has_value();
    for (uint64_t at : pages) {
      std::vector<uint8_t> a(0x1000), b(0x1000);
      twin.issMemory.read(at, a.data(), a.size());
      twin.rtlMemory.read(at, b.data(), b.size());
      ASSERT_TRUE(a == b) << info.mnemonic << " #" << t << ": memories differ near 0x" << std::hex
                          << at;
    }
  }
  EXPECT_GT(faults, 150); // edges make faults common
  EXPECT_LT(faults, 300); // and some packets run
}

TEST(RtlFaults, FaultStopsTheRingAtItsPacketAndResetRecovers) {
  Twin twin(3);
  const uint64_t a = twin.floats(16), b = twin.floats(16);
  isa::inst::Copy good;
  good.bytes = 64;
  good.src = a;
  good.dst = b;
  const isa::Packet stream[] = {validPacketOf(good), validPacketOf(good), rawPacket({{0, 0x5555}}),
                                validPacketOf(good)};
  using namespace isa::csr;
  rtl::Device &d = twin.device;
  d.writeCsr(CONTROL, CONTROL_RESET);
  d.writeCsr(RING_BASE_LO, static_cast<uint32_t>(kRingBase));
  d.writeCsr(RING_ENTRIES, kRingEntries);
  for (size_t i = 0; i < std::size(stream); ++i)
    twin.rtlMemory.write(kRingBase + 64 * i, stream[i].data(), 64);
  d.writeCsr(RING_TAIL, std::size(stream));
  d.runUntilIdle();
  EXPECT_EQ(d.readCsr(STATUS) & (STATUS_FAULT | STATUS_BUSY), STATUS_FAULT);
  EXPECT_EQ(d.readCsr(ERROR_CODE), static_cast<uint32_t>(mem::FaultCode::UnknownOpcode));
  EXPECT_EQ(d.readCsr(FAULT_PACKET_LO), 2u);
  EXPECT_EQ(d.readCsr(RING_HEAD), 2u);
  EXPECT_EQ(d.readCsr(PACKETS_LO), 2u);
  d.writeCsr(CONTROL, CONTROL_RESET);
  EXPECT_EQ(d.readCsr(STATUS), 0u);
  EXPECT_EQ(d.readCsr(RING_HEAD), 0u);
  d.writeCsr(RING_TAIL, 2);
  d.runUntilIdle();
  EXPECT_EQ(d.readCsr(STATUS), 0u);
  EXPECT_EQ(d.readCsr(PACKETS_LO), 2u);
  const uint32_t cycles = d.readCsr(CYCLE_LO);
  EXPECT_GT(cycles, 0u);
}

// The command processor reads the next packet while an engine runs the
// current one. A packet that faults mid-run (its C store reaches an
// address the region table was told is mapped and the interconnect then
// refuses) stops the ring at itself: the prefetched packet after it never
// runs and RING_HEAD stays at the faulting packet. With two ring entries
// the prefetched slot is slot 0, the one RING_HEAD names after a RESET:
// the host's new packet there runs, not the one read before the RESET.
TEST(RtlFaults, PrefetchedPacketNeverRunsAfterAFaultOrReset) {
  Twin twin(6);
  using namespace isa::csr;
  rtl::Device &d = twin.device;
  constexpr uint64_t kRefused = 0x5000'0000; // in no region of the memory
  const uint32_t spare = isa::hw::kRegionEntries - 1;
  d.writeCsr(REGION_SELECT, spare);
  ASSERT_EQ(d.readCsr(REGION_SIZE_LO), 0u) << "the last region entry is in use";
  d.writeCsr(REGION_BASE_LO, static_cast<uint32_t>(kRefused));
  d.writeCsr(REGION_BASE_HI, 0);
  d.writeCsr(REGION_SIZE_LO, 0x10000);
  d.writeCsr(REGION_SIZE_HI, 0);
  d.writeCsr(REGION_ACCESS, REGION_ACCESS_READ | REGION_ACCESS_WRITE);

  isa::inst::Matmul faulting;
  faulting.m = faulting.k = faulting.n = 32;
  faulting.a = twin.floats(32 * 32);
  faulting.b = twin.floats(32 * 32);
  faulting.c = kRefused;
  const uint64_t marker = twin.values({0, 0});
  isa::inst::Fill stale;
  stale.count = 1;
  stale.value = 0x1111'1111;
  stale.dst = marker;
  isa::inst::Fill fresh = stale;
  fresh.value = 0x2222'2222;
  const isa::Packet nop = rawPacket({{0, static_cast<uint32_t>(isa::Opcode::NOP)}});
  auto slot = [&](uint64_t index, const isa::Packet &packet) {
    twin.rtlMemory.write(kRingBase + 64 * (index % 2), packet.data(), 64);
  };
  d.writeCsr(RING_BASE_LO, static_cast<uint32_t>(kRingBase));
  d.writeCsr(RING_BASE_HI, 0);
  d.writeCsr(RING_ENTRIES, 2);
  // Packet 1 faults, alone and then with packet 2 published: its read
  // bursts, and one more, the prefetch of packet 2 (slot 0).
  uint64_t reads[2];
  for (uint32_t published = 2; published <= 3; ++published) {
    d.writeCsr(CONTROL, CONTROL_RESET);
    slot(0, nop);
    d.writeCsr(RING_TAIL, 1);
    d.runUntilIdle();
    ASSERT_EQ(d.readCsr(RING_HEAD), 1u);
    slot(1, validPacketOf(faulting));
    slot(2, validPacketOf(stale));
    const uint64_t before = d.axiCounts().arHandshakes;
    d.writeCsr(RING_TAIL, published);
    d.runUntilIdle();
    reads[published - 2] = d.axiCounts().arHandshakes - before;
    EXPECT_EQ(d.readCsr(STATUS) & (STATUS_FAULT | STATUS_BUSY), STATUS_FAULT);
    EXPECT_EQ(d.readCsr(ERROR_CODE), static_cast<uint32_t>(mem::FaultCode::Unmapped));
    EXPECT_EQ(d.readCsr(FAULT_PACKET_LO), 1u);
    EXPECT_EQ(d.readCsr(RING_HEAD), 1u);
    EXPECT_EQ(d.readCsr(PACKETS_LO), 1u);
  }
  EXPECT_EQ(reads[1], reads[0] + 1) << "packet 2 was not prefetched";
  uint32_t value = 0;
  twin.rtlMemory.read(marker, &value, 4);
  EXPECT_EQ(value, 0u) << "the packet after the fault ran";

  d.writeCsr(CONTROL, CONTROL_RESET);
  slot(0, validPacketOf(fresh));
  d.writeCsr(RING_TAIL, 1);
  d.runUntilIdle();
  EXPECT_EQ(d.readCsr(STATUS), 0u);
  EXPECT_EQ(d.readCsr(RING_HEAD), 1u);
  EXPECT_EQ(d.readCsr(PACKETS_LO), 1u);
  twin.rtlMemory.read(marker, &value, 4);
  EXPECT_EQ(value, 0x2222'2222u) << "the packet prefetched before the RESET ran";
}

// While the vector engine computes a packet, the command processor reads
// the next one from the ring, so a packet after the first pays no fetch
// latency: a stream of N packets takes less than N times one packet minus
// a latency per packet. Without the prefetch every packet pays the fetch.
TEST(RtlCsr, NextPacketIsFetchedWhileTheEngineRuns) {
  constexpr unsigned kLatency = 100, kPackets = 6;
  rtl::DeviceOptions options;
  options.memoryLatency = kLatency;
  Twin twin(7, options);
  using namespace isa::csr;
  rtl::Device &d = twin.device;
  isa::inst::Exp exp;
  exp.n = 64;
  exp.src = twin.floats(exp.n);
  exp.dst = twin.floats(exp.n);
  d.writeCsr(RING_BASE_LO, static_cast<uint32_t>(kRingBase));
  d.writeCsr(RING_BASE_HI, 0);
  d.writeCsr(RING_ENTRIES, kRingEntries);
  for (uint32_t i = 0; i < kPackets; ++i)
    twin.rtlMemory.write(kRingBase + 64 * i, validPacketOf(exp).data(), 64);
  uint64_t cycles[2];
  for (const uint32_t packets : {1u, kPackets}) {
    d.writeCsr(CONTROL, CONTROL_RESET);
    d.writeCsr(RING_TAIL, packets);
    d.runUntilIdle();
    EXPECT_EQ(d.readCsr(STATUS), 0u);
    EXPECT_EQ(d.readCsr(RING_HEAD), packets);
    EXPECT_EQ(d.readCsr(PACKETS_LO), packets);
    cycles[packets == 1 ? 0 : 1] = d.readCsr(CYCLE_LO) | uint64_t(d.readCsr(CYCLE_HI)) << 32;
  }
  EXPECT_LT(cycles[1], kPackets * cycles[0] - (kPackets - 1) * kLatency);
}

// A stream published at once (the command processor prefetches each next
// packet while the matrix or vector engine runs): matrix, vector, DMA and
// control packets, each reading what an earlier one wrote, end with the
// memory the ISS computes packet by packet.
TEST(RtlCsr, PublishedStreamWithPrefetchesMatchesTheIss) {
  for (int t = 0; t < 4; ++t) {
    Twin twin(400 + t, memoryFor(t == 3 ? 3 : 0));
    auto &rng = twin.rng;
    std::vector<isa::Packet> stream;
    uint64_t previous = twin.floats(64);
    for (int i = 0; i < 12; ++i) {
      switch ((i + t) % 4) {
      case 0: {
        isa::inst::Matmul mm;
        mm.m = dim(rng, 64);
        mm.k = 64 / mm.m; // A is the previous packet's 64 elements
        mm.n = dim(rng, 40);
        mm.a = previous;
        mm.b = twin.floats(uint64_t(mm.k) * mm.n);
        mm.c = twin.floats(uint64_t(mm.m) * mm.n);
        stream.push_back(validPacketOf(mm));
        previous = twin.floats(64);
        isa::inst::Copy copy;
        copy.bytes = uint32_t(4 * std::min<uint64_t>(64, uint64_t(mm.m) * mm.n));
        copy.src = mm.c;
        copy.dst = previous;
        stream.push_back(validPacketOf(copy));
        break;
      }
      case 1: {
        isa::inst::Exp exp;
        exp.n = 64;
        exp.src = previous;
        exp.dst = previous = twin.floats(64);
        stream.push_back(validPacketOf(exp));
        break;
      }
      case 2: {
        isa::inst::Add add;
        add.rows = 1;
        add.cols = 64;
        add.a = previous;
        add.b = twin.floats(64);
        add.dst = previous = twin.floats(64);
        stream.push_back(validPacketOf(add));
        break;
      }
      default: stream.push_back(rawPacket({{0, static_cast<uint32_t>(isa::Opcode::NOP)}})); break;
      }
    }
    {
      sim::Iss iss(twin.issMemory, sim::Mode::Both);
      for (size_t i = 0; i < stream.size(); ++i)
        iss.step(stream[i], i);
    }
    using namespace isa::csr;
    rtl::Device &d = twin.device;
    d.writeCsr(CONTROL, CONTROL_RESET);
    d.writeCsr(RING_BASE_LO, static_cast<uint32_t>(kRingBase));
    d.writeCsr(RING_BASE_HI, 0);
    d.writeCsr(RING_ENTRIES, 32);
    for (size_t i = 0; i < stream.size(); ++i)
      twin.rtlMemory.write(kRingBase + 64 * i, stream[i].data(), 64);
    d.writeCsr(RING_TAIL, static_cast<uint32_t>(stream.size()));
    d.runUntilIdle();
    ASSERT_EQ(d.readCsr(STATUS), 0u) << "trial " << t;
    EXPECT_EQ(d.readCsr(RING_HEAD), stream.size());
    twin.compareMemories("published stream, trial " + std::to_string(t));
  }
}

// The register window: identification, read-only and write-only
// registers, HALT and RESUME.
TEST(RtlCsr, RegistersHaltAndResume) {
  Twin twin(4);
  using namespace isa::csr;
  rtl::Device &d = twin.device;
  EXPECT_EQ(d.readCsr(ID), 0x4e505530u);
  EXPECT_EQ(d.readCsr(VERSION), isa::kIsaVersionMajor << 16 | isa::kIsaVersionMinor);
  EXPECT_EQ(d.readCsr(HW_CONFIG),
            isa::hw::kMatrixTile | isa::hw::kVectorLanes << 8 | isa::hw::kAxiDataBytes << 16);
  d.writeCsr(RING_ENTRIES, 12); // not a power of two: disabled
  EXPECT_EQ(d.readCsr(RING_ENTRIES), 0u);
  d.writeCsr(RING_BASE_LO, static_cast<uint32_t>(kRingBase));
  d.writeCsr(RING_BASE_HI, 0);
  d.writeCsr(RING_ENTRIES, kRingEntries);
  EXPECT_EQ(d.readCsr(RING_BASE_LO), static_cast<uint32_t>(kRingBase));
  d.writeCsr(RING_HEAD, 5); // read-only
  EXPECT_EQ(d.readCsr(RING_HEAD), 0u);
  const isa::Packet nop = rawPacket({{0, static_cast<uint32_t>(isa::Opcode::NOP)}});
  const isa::Packet halt = rawPacket({{0, static_cast<uint32_t>(isa::Opcode::HALT)}});
  twin.rtlMemory.write(kRingBase, nop.data(), 64);
  twin.rtlMemory.write(kRingBase + 64, halt.data(), 64);
  twin.rtlMemory.write(kRingBase + 128, nop.data(), 64);
  d.writeCsr(RING_TAIL, 3);
  d.runUntilIdle();
  EXPECT_EQ(d.readCsr(STATUS), STATUS_HALTED);
  EXPECT_EQ(d.readCsr(RING_HEAD), 2u);
  d.writeCsr(CONTROL, CONTROL_RESUME);
  d.runUntilIdle();
  EXPECT_EQ(d.readCsr(STATUS), 0u);
  EXPECT_EQ(d.readCsr(RING_HEAD), 3u);
  EXPECT_EQ(d.readCsr(PACKETS_LO), 3u);
  EXPECT_EQ(d.readCsr(PACKETS_HI), 0u);
  EXPECT_EQ(d.readCsr(0xffc), 0u); // unassigned
}

} // namespace
