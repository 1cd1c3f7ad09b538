// Every instruction family on the ISS against the reference model, bit for
// bit, on random shapes (1, odd sizes, K = 1, sizes that are not multiples
// of the lane or tile width, K past the GEMM blocking depth) and on data
// full of special values (±0, ±inf, NaNs with payloads, denormals, huge and
// tiny numbers).
#include "gather_cases.h"
#include "generated_cases.h"
#include "half_float_cases.h"
#include "integer_cases.h"
#include "matrix_cases.h"
#include "npu/sim/iss.h"
#include "npu/sim/reference.h"
#include "npu/verify/runner.h"
#include "pow_cases.h"
#include "random_cases.h"
#include "rng_cases.h"
#include "sequence_cases.h"
#include "type_pairs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using namespace npu;
using cases::bitsOf;
using cases::randomFloat;
using cases::withRandomF32Operands;

constexpr uint64_t kArenaBase = 0x1000'0000; // the activations region

// Two memories with the same contents: one for the ISS, one for the
// reference. Buffers are laid out one after another in the activations
// region, each 64-byte aligned.
class Twin {
public:
  explicit Twin(uint64_t seed) : rng(seed) {}

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

  // Runs the packet on both and compares every buffer.
  void runAndCompare(const isa::Packet &packet, const std::string &what) {
    sim::Iss iss(issMemory, sim::Mode::Both);
    ASSERT_NO_THROW(iss.step(packet, 0)) << what;
    sim::reference::execute(refMemory, packet);
    compareMemories(what);
  }

  // Runs a packet with an index out of range on both: the ISS faults with
  // IndexOutOfRange, the reference model throws, and what each wrote before
  // the bad index is the same.
  void runAndCompareIndexFault(const isa::Packet &packet, const std::string &what) {
    sim::Iss iss(issMemory, sim::Mode::Both);
    try {
      iss.step(packet, 0);
      ADD_FAILURE() << what << ": the ISS did not fault";
    } catch (const mem::DeviceFault &e) {
      EXPECT_EQ(e.fault().code, mem::FaultCode::IndexOutOfRange) << what;
    }
    EXPECT_THROW(sim::reference::execute(refMemory, packet), std::out_of_range) << what;
    compareMemories(what);
  }

  void compareMemories(const std::string &what) {
    std::vector<uint8_t> a(next - kArenaBase), b(next - kArenaBase);
    issMemory.read(kArenaBase, a.data(), a.size());
    refMemory.read(kArenaBase, b.data(), b.size());
    for (size_t i = 0; i < a.size(); i += 4) {
      uint32_t x = 0, y = 0;
      std::memcpy(&x, a.data() + i, std::min<size_t>(4, a.size() - i));
      std::memcpy(&y, b.data() + i, std::min<size_t>(4, b.size() - i));
      ASSERT_EQ(x, y) << what << ": first difference at 0x" << std::hex << kArenaBase + i
                      << " (ISS 0x" << x << ", reference 0x" << y << ")";
    }
  }

  std::mt19937_64 rng;
  mem::PhysicalMemory issMemory, refMemory;

private:
  uint64_t place(const void *data, uint64_t size) {
    const uint64_t address = next;
    issMemory.write(address, data, size);
    refMemory.write(address, data, size);
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

uint32_t dim(std::mt19937_64 &rng, uint32_t max) {
  // Favour the edges: 1, lane/tile multiples and their neighbours.
  static const uint32_t edges[] = {1, 2, 7, 8, 9, 15, 16, 17, 31, 33};
  if (rng() % 3 == 0) {
    uint32_t e = edges[rng() % std::size(edges)];
    return std::min(e, max);
  }
  return 1 + static_cast<uint32_t>(rng() % max);
}

constexpr int kTrials = 40;

TEST(IssOps, DataMovement) {
  for (int t = 0; t < kTrials; ++t) {
    Twin twin(100 + t);
    auto &rng = twin.rng;
    isa::inst::Copy copy;
    copy.bytes = dim(rng, 300);
    copy.src = twin.bytes(copy.bytes);
    copy.dst = twin.bytes(copy.bytes);
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
      strides[d] = static_cast<int32_t>(rng() % 61) - 30;
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

TEST(IssOps, Matmul) {
  for (int t = 0; t < kTrials; ++t) {
    Twin twin(200 + t);
    auto &rng = twin.rng;
    isa::inst::Matmul mm;
    mm.m = dim(rng, 40);
    mm.n = dim(rng, 40);
    mm.k = t % 5 == 0 ? 1 : (t % 7 == 0 ? 257 + static_cast<uint32_t>(rng() % 300) : dim(rng, 80));
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

TEST(IssOps, BatchedMatmul) {
  for (int t = 0; t < kTrials; ++t) {
    Twin twin(300 + t);
    auto &rng = twin.rng;
    isa::inst::Bmm bmm;
    bmm.m = dim(rng, 20);
    bmm.k = dim(rng, 20);
    bmm.n = dim(rng, 20);
    bmm.batch = dim(rng, 5);
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

TEST(IssOps, ElementwiseBinaryWithBroadcast) {
  const auto runCase = []<class Op>(std::type_identity<Op>, int t) {
    Twin twin(400 + t);
    auto &rng = twin.rng;
    Op op;
    op.rows = dim(rng, 12);
    op.cols = dim(rng, 40);
    op.bcast = static_cast<isa::Broadcast>(rng() % 4);
    const uint64_t n = uint64_t(op.rows) * op.cols;
    op.a = twin.floats(n, 20);
    op.b = twin.floats(cases::broadcastCount(op.bcast, op.rows, op.cols), 20);
    op.dst = rng() % 4 == 0 ? op.a : twin.floats(n); // sometimes in place
    twin.runAndCompare(withRandomF32Operands(op, rng), isa::info(Op::kOpcode).mnemonic);
  };
  for (int t = 0; t < kTrials; ++t) {
    NPU_FOR_EACH_BINARY_OP(NPU_RUN_CASE)
  }
}

TEST(IssOps, ElementwiseScalar) {
  const auto runCase = []<class Op>(std::type_identity<Op>, int t) {
    Twin twin(500 + t);
    Op op;
    op.n = dim(twin.rng, 70);
    op.a = twin.floats(op.n, 20);
    op.dst = twin.floats(op.n);
    twin.runAndCompare(withRandomF32Operands(op, twin.rng), isa::info(Op::kOpcode).mnemonic);
  };
  for (int t = 0; t < kTrials; ++t) {
    NPU_FOR_EACH_SCALAR_OP(NPU_RUN_CASE)
  }
}

TEST(IssOps, UnaryFunctions) {
  const auto runCase = []<class Op>(std::type_identity<Op>, int t) {
    Twin twin(600 + t);
    Op op;
    op.n = dim(twin.rng, 70);
    op.src = twin.floats(op.n, 25);
    op.dst = twin.rng() % 4 == 0 ? op.src : twin.floats(op.n);
    twin.runAndCompare(withRandomF32Operands(op, twin.rng), isa::info(Op::kOpcode).mnemonic);
  };
  for (int t = 0; t < kTrials; ++t) {
    NPU_FOR_EACH_UNARY_OP(NPU_RUN_CASE)
  }
}

// Packets large enough that the ISS splits them over its host threads
// (NPU_ISS_THREADS, by default every core; vector_ops.h): ranges of
// elements, whole rows of the row instructions, the recipe runner's steps.
// Each part computes its elements as one thread would, so the reference
// model's bits come out whatever the split. The lengths leave a tail past
// every vector width.
TEST(IssOps, LargePacketsSplitOverThreadsAgreeWithTheReferenceModel) {
  constexpr uint32_t kElements = 3 * (1u << 16) + 77, kRows = 301, kCols = 1001;
  {
    Twin twin(4100);
    isa::inst::Add add;
    add.rows = 3;
    add.cols = kElements / 3;
    add.a = twin.floats(uint64_t(add.rows) * add.cols);
    add.b = twin.floats(uint64_t(add.rows) * add.cols);
    add.dst = add.a;
    add.alpha = 0.75f;
    twin.runAndCompare(validPacketOf(add), "ADD in place, alpha 0.75");
  }
  for (isa::DType type : {isa::DType::f32, isa::DType::bf16}) {
    Twin twin(4101);
    isa::inst::Exp exp;
    exp.n = kElements;
    exp.dtype = type;
    exp.src = twin.floats(kElements, 25);
    exp.dst = twin.floats(kElements);
    twin.runAndCompare(validPacketOf(exp), "EXP");
    isa::inst::Silu silu;
    silu.n = kElements;
    silu.dtype = type;
    silu.src = exp.src;
    silu.dst = silu.src;
    twin.runAndCompare(validPacketOf(silu), "SILU in place");
  }
  for (isa::DType type : {isa::DType::f32, isa::DType::f16}) {
    Twin twin(4102);
    isa::inst::Softmax softmax;
    softmax.rows = kRows;
    softmax.cols = kCols;
    softmax.dtype = type;
    softmax.scale = 0.5f;
    softmax.causal = true;
    softmax.offset = 600;
    softmax.src = twin.floats(uint64_t(kRows) * kCols, 2);
    softmax.dst = twin.floats(uint64_t(kRows) * kCols);
    twin.runAndCompare(validPacketOf(softmax), "SOFTMAX causal");
    isa::inst::Rmsnorm rmsnorm;
    rmsnorm.rows = kRows;
    rmsnorm.cols = kCols;
    rmsnorm.dtype = type;
    rmsnorm.eps = 1e-6f;
    rmsnorm.use_weight = rmsnorm.write_rstd = true;
    rmsnorm.src = softmax.src;
    rmsnorm.weight = twin.floats(kCols, 2);
    rmsnorm.rstd = twin.floats(kRows);
    rmsnorm.dst = twin.floats(uint64_t(kRows) * kCols);
    twin.runAndCompare(validPacketOf(rmsnorm), "RMSNORM");
    isa::inst::Layernorm layernorm;
    layernorm.rows = kRows;
    layernorm.cols = kCols;
    layernorm.dtype = type;
    layernorm.eps = 1e-5f;
    layernorm.use_weight = layernorm.use_bias = layernorm.write_stats = true;
    layernorm.src = softmax.src;
    layernorm.weight = rmsnorm.weight;
    layernorm.bias = twin.floats(kCols, 2);
    layernorm.stats = twin.floats(2 * kRows);
    layernorm.dst = layernorm.src;
    twin.runAndCompare(validPacketOf(layernorm), "LAYERNORM in place");
  }
}

TEST(IssOps, Reductions) {
  const auto runCase = []<class Op>(std::type_identity<Op>, int t) {
    Twin twin(700 + t);
    Op op;
    op.rows = dim(twin.rng, 10);
    op.cols = dim(twin.rng, 70);
    op.src = twin.floats(uint64_t(op.rows) * op.cols, t % 2 ? 15 : 0);
    // One value per row or per column: room for either.
    op.dst = twin.floats(std::max(op.rows, op.cols));
    twin.runAndCompare(validPacketOf(op), isa::info(Op::kOpcode).mnemonic);
  };
  for (int t = 0; t < kTrials; ++t) {
    NPU_FOR_EACH_REDUCE_OP(NPU_RUN_CASE)
  }
}

TEST(IssOps, PointwiseBackward) {
  const auto runCase = []<class Op>(std::type_identity<Op>, int t) {
    Twin twin(900 + t);
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

// Every instruction on streams generated from its record (generated_cases.h):
// the ISS against the reference model, every written range compared after
// each packet (verify::runStream). A fused op's shapes, flags and aliasing
// come from its record's operands, Memory and Disjoints.
class IssRecordCases : public ::testing::TestWithParam<isa::Opcode> {};

TEST_P(IssRecordCases, AgreeWithTheReferenceModel) {
  const isa::Opcode opcode = GetParam();
  uint64_t completed = 0;
  for (uint32_t index = 0; index < 16; ++index) {
    const verify::GeneratorOptions options =
        cases::streamOptions(opcode, index, /*packets=*/12, /*largePercent=*/3);
    const verify::Stream stream = verify::generate(options);
    const verify::RunResult result =
        verify::runStream(stream.object, {.backend = "reference"}, &stream.intents);
    ASSERT_FALSE(result.diverged) << cases::reproducer(options) << ": " << result.diagnostic;
    for (const std::string &unexpected : result.unexpected)
      ADD_FAILURE() << cases::reproducer(options) << ": " << unexpected;
    for (size_t i = 0; i < result.outcomes.size(); ++i)
      completed += result.outcomes[i] == mem::FaultCode::None &&
                   cases::isOpcode(stream.object.text[i], opcode);
  }
  EXPECT_GT(completed, 0u) << "the generator made no completing packet of "
                           << isa::info(opcode).mnemonic;
}

INSTANTIATE_TEST_SUITE_P(EveryInstruction, IssRecordCases,
                         ::testing::ValuesIn(cases::everyOpcode()), cases::mnemonicOf);

// CAST on every pair of types it accepts, over the edge values of the
// source type and the same spread over three chunks from inside a beat
// (type_pairs.h's castCases, the same pairs and values as RtlOps'), out of
// place and, where the types have one size, in place.
TEST(IssOps, CastEveryAcceptedTypePair) {
  const int pairs = test::forEachCastTest(
      [&](isa::DType from, isa::DType to, const test::CastCase &c, bool inPlace) {
        Twin twin(950);
        const isa::inst::Cast op = test::castOf(
            from, to, c, inPlace, [&](const std::vector<uint32_t> &w) { return twin.values(w); });
        twin.runAndCompare(validPacketOf(op), test::castName(op, inPlace));
      });
  EXPECT_EQ(pairs, 36);
}

// MATMUL and BMM on every pair of the types they accept (matrix_cases.h:
// edge values times exact factors, with and without acc, and shapes over
// several blocks and panels with transposes, pitches and batch strides).
TEST(IssOps, MatrixTypesOnEdgeValues) {
  const int tests = test::forEachMatrixTest([&](const auto &make, const std::string &name) {
    Twin twin(980);
    auto place = [&](const std::vector<uint32_t> &w) { return twin.values(w); };
    twin.runAndCompare(make(place), name);
  });
  // dtype and otype each f32, bf16, f16: two edge tests and seven shapes.
  EXPECT_EQ(tests, 3 * 3 * (2 + 7));
}

// The bf16 and f16 forms of the binary, scalar and unary instructions
// (half_float_cases.h: edge and ordinary values over three chunks from
// inside a beat, the binary ones' pairs under each broadcast, the row
// reductions over rows of 1 to 421 elements).
TEST(IssOps, HalfFloatVectorFormsOnEdgeValues) {
  const int tests = test::forEachHalfFloatTest([&](const auto &make, const std::string &name) {
    Twin twin(990);
    auto place = [&](const std::vector<uint32_t> &w) { return twin.values(w); };
    twin.runAndCompare(make(place), name);
  });
  // Per type: ADD and SUB under 4 broadcasts x 2 alphas, MUL DIV MAX MIN
  // POW under 4; 8 scalar forms x 6 scalars; 18 unary instructions; ROW_SUM
  // ROW_MAX ROW_MEAN COL_SUM with and without specials over 6 shapes; 5
  // pointwise backwards.
  EXPECT_EQ(tests, 2 * (2 * 4 * 2 + 5 * 4 + 8 * 6 + 18 + 4 * 2 * 6 + 5));
}

// POW on every pair of edge base and exponent under each broadcast on f32,
// bf16 and f16, and on bf16 and f16 over the row shapes (pow_cases.h),
// against the reference model.
TEST(IssOps, PowOnEdgePairs) {
  const int tests = test::forEachPowTest([&](const auto &make, const std::string &name) {
    Twin twin(995);
    auto place = [&](const std::vector<uint32_t> &w) { return twin.values(w); };
    twin.runAndCompare(make(place), name);
  });
  EXPECT_EQ(tests, 3 * 4 + 2 * static_cast<int>(std::size(test::kRowShapes)) * 4);
}

// The row instructions on bf16 and f16 (half_float_cases.h: rows of 1 to
// 421 elements, edge and ordinary values, each flag variant).
TEST(IssOps, HalfFloatRowInstructions) {
  const int tests = test::forEachHalfFloatRowTest([&](const auto &make, const std::string &name) {
    Twin twin(991);
    auto place = [&](const std::vector<uint32_t> &w) { return twin.values(w); };
    twin.runAndCompare(make(place), name);
  });
  EXPECT_EQ(tests, test::kHalfFloatRowTests);
}

// The integer forms of the binary instructions and their scalar forms
// (integer_cases.h: every pair of edge values, each broadcast, alpha 1 and
// others, the scalar forms over three chunks from inside a beat).
TEST(IssOps, IntegerElementwiseOnEdgeValues) {
  const int tests =
      test::forEachIntegerElementwiseTest([&](const auto &make, const std::string &name) {
        Twin twin(960);
        auto place = [&](const std::vector<uint32_t> &w) { return twin.values(w); };
        twin.runAndCompare(make(place), name);
      });
  // ADD and SUB: 4 broadcasts x 4 alphas; MUL MAX MIN: 4 broadcasts; six
  // scalar forms with 9 immediates; NEG; each on i32 and i64.
  EXPECT_EQ(tests, 2 * (2 * 16 + 3 * 4 + 6 * 9 + 1));
}

// The compares on every pair of edge values of each type they accept
// (f32, bf16, f16, i32, i64; EQ, NE b8 too, also over the row shapes) under
// each broadcast, and their scalar forms (integer_cases.h).
TEST(IssOps, ComparesOnEdgeValues) {
  const int tests = test::forEachCompareTest([&](const auto &make, const std::string &name) {
    Twin twin(970);
    auto place = [&](const std::vector<uint32_t> &w) { return twin.values(w); };
    twin.runAndCompare(make(place), name);
  });
  // Six compares x five types and EQ, NE on b8 x four broadcasts, EQ and NE
  // on b8 over the row shapes x four broadcasts; the scalar forms likewise x
  // five immediates.
  EXPECT_EQ(tests, (6 * 5 + 2) * 4 + 2 * static_cast<int>(std::size(test::kRowShapes)) * 4 +
                       (6 * 5 + 2) * 5);
}

// IOTA of every type it accepts over sequence_cases.h's starts, steps and
// lengths (the same as RtlOps').
TEST(IssOps, IotaEveryAcceptedType) {
  const int types = test::forEachIotaTest([&](isa::DType type, const test::IotaCase &c) {
    Twin twin(960);
    const isa::inst::Iota op =
        test::iotaOf(type, c, [&](const std::vector<uint32_t> &w) { return twin.values(w); });
    twin.runAndCompare(validPacketOf(op), test::iotaName(op));
  });
  EXPECT_EQ(types, 3);
}

// TRI of every type it accepts over sequence_cases.h's shapes, diagonals
// and fills, lower and upper, in place and not (the same as RtlOps').
TEST(IssOps, TriEveryAcceptedType) {
  const int types = test::forEachTriTest([&](isa::DType type, const test::TriCase &c) {
    Twin twin(970);
    const isa::inst::Tri op =
        test::triOf(type, c, [&](const std::vector<uint32_t> &w) { return twin.values(w); });
    twin.runAndCompare(validPacketOf(op), test::triName(op, c.inPlace));
  });
  EXPECT_EQ(types, 6);
}

// CUMSUM of every type it accepts over sequence_cases.h's shapes, edge and
// random rows, in place and not (the same as RtlOps').
TEST(IssOps, CumsumEveryAcceptedType) {
  const int types = test::forEachCumsumTest([&](isa::DType type, const test::CumsumCase &c) {
    Twin twin(980);
    const isa::inst::Cumsum op =
        test::cumsumOf(type, c, [&](const std::vector<uint32_t> &w) { return twin.values(w); });
    twin.runAndCompare(validPacketOf(op), test::cumsumName(op, c));
  });
  EXPECT_EQ(types, 5);
}

// RAND and RANDN of every type they accept over rng_cases.h's seeds,
// offsets and lengths (the same as RtlOps').
TEST(IssOps, RandAndRandnEveryAcceptedType) {
  const auto run = [&]<class Op>(std::type_identity<Op>) {
    return test::forEachRngTest<Op>([&](isa::DType type, const test::RandCase &c) {
      Twin twin(990);
      const Op op =
          test::rngOf<Op>(type, c, [&](const std::vector<uint32_t> &w) { return twin.values(w); });
      twin.runAndCompare(validPacketOf(op), test::rngName(op));
    });
  };
  EXPECT_EQ(run(std::type_identity<isa::inst::Rand>{}), 2);
  EXPECT_EQ(run(std::type_identity<isa::inst::Randn>{}), 1);
}

// The words RAND (or RANDN) leaves at dst on the ISS.
template <class Op = isa::inst::Rand>
std::vector<uint32_t> issRand(isa::DType type, uint32_t n, uint64_t seed, uint32_t offset) {
  mem::PhysicalMemory memory;
  Op op;
  op.dtype = type;
  op.n = n;
  op.seed_lo = static_cast<uint32_t>(seed);
  op.seed_hi = static_cast<uint32_t>(seed >> 32);
  op.offset = offset;
  op.dst = kArenaBase;
  sim::Iss iss(memory, sim::Mode::Func);
  EXPECT_NO_THROW(iss.step(validPacketOf(op), 0));
  std::vector<uint32_t> words(n);
  memory.read(kArenaBase, words.data(), n * 4);
  return words;
}

// The streams' contract: the same (seed, offset) gives the same bits, and
// a packet at offset + n / 4 continues one of n elements.
template <class Op> void expectAStream(isa::DType type) {
  const uint64_t seed = 0x9e3779b97f4a7c15u;
  const std::vector<uint32_t> whole = issRand<Op>(type, 8, seed, 0xffffffffu);
  std::vector<uint32_t> parts = issRand<Op>(type, 4, seed, 0xffffffffu);
  const std::vector<uint32_t> second = issRand<Op>(type, 4, seed, 0);
  parts.insert(parts.end(), second.begin(), second.end());
  EXPECT_NE(whole, parts) << "the counter is 64 bits: offset 0xffffffff + 1 is not 0";
  const std::vector<uint32_t> again = issRand<Op>(type, 8, seed, 0xffffffffu);
  EXPECT_EQ(whole, again);
  const std::vector<uint32_t> longer = issRand<Op>(type, 4 * 37, seed, 11);
  for (uint32_t skip : {1u, 5u, 20u}) {
    const std::vector<uint32_t> tail = issRand<Op>(type, 4 * 37 - 4 * skip, seed, 11 + skip);
    EXPECT_TRUE(std::equal(tail.begin(), tail.end(), longer.begin() + 4 * skip)) << skip;
  }
}

// The recipe's rounds against Random123's known answer for counter 0 and
// key 0 (the block of seed 0, offset 0), and the streams' contract.
TEST(IssOps, RandIsPhiloxAndContinuesItsStream) {
  EXPECT_EQ(issRand(isa::DType::i32, 4, 0, 0),
            (std::vector<uint32_t>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  expectAStream<isa::inst::Rand>(isa::DType::i32);
  expectAStream<isa::inst::Rand>(isa::DType::f32);
  expectAStream<isa::inst::Randn>(isa::DType::f32);
}

// The f32 uniforms: in [0, 1), multiples of 2^-24, with the mean, variance
// and bin counts of a uniform distribution (a chi-square over 64 bins, which
// a generator with stuck or correlated bits fails).
TEST(IssOps, RandUniformsAreUniform) {
  constexpr uint32_t kN = 1u << 16;
  constexpr int kBins = 64;
  const std::vector<uint32_t> words = issRand(isa::DType::f32, kN, 0x5eed, 3);
  double sum = 0, sumSquares = 0;
  std::vector<int> bins(kBins);
  for (uint32_t w : words) {
    float u;
    std::memcpy(&u, &w, 4);
    ASSERT_TRUE(u >= 0.0f && u < 1.0f) << u;
    ASSERT_EQ(std::ldexp(u, 24), std::floor(std::ldexp(u, 24))) << u;
    sum += u;
    sumSquares += double(u) * u;
    ++bins[static_cast<int>(u * kBins)];
  }
  const double mean = sum / kN, variance = sumSquares / kN - mean * mean;
  // Standard errors: sqrt(1/12 / N) = 0.0011 for the mean, about 0.0003 for
  // the variance; the bounds are five of them.
  EXPECT_NEAR(mean, 0.5, 0.0057);
  EXPECT_NEAR(variance, 1.0 / 12, 0.0015);
  double chi2 = 0;
  const double expected = double(kN) / kBins;
  for (int b : bins)
    chi2 += (b - expected) * (b - expected) / expected;
  // 63 degrees of freedom: the 0.999 quantile is 103.4.
  EXPECT_LT(chi2, 103.4);
}

// The normals: finite, with the mean and variance of a standard normal and
// its distribution by a Kolmogorov-Smirnov test, which a generator whose
// radius or angle is wrong fails; the pair of one block's two words is
// uncorrelated (the cos and sin normals of a pair are independent).
TEST(IssOps, RandnNormalsAreNormal) {
  constexpr uint32_t kN = 1u << 16;
  const std::vector<uint32_t> words = issRand<isa::inst::Randn>(isa::DType::f32, kN, 0x5eed, 3);
  std::vector<double> z(kN);
  double sum = 0, sumSquares = 0, pairProducts = 0;
  for (uint32_t i = 0; i < kN; ++i) {
    float x;
    std::memcpy(&x, &words[i], 4);
    ASSERT_TRUE(std::isfinite(x)) << i;
    z[i] = x;
    sum += x;
    sumSquares += double(x) * x;
    if (i % 2 == 1)
      pairProducts += z[i] * z[i - 1];
  }
  const double mean = sum / kN, variance = sumSquares / kN - mean * mean;
  // Five standard errors: 1/sqrt(N) for the mean, sqrt(2/N) for the
  // variance, sqrt(2/N) for the mean product of N/2 pairs.
  EXPECT_NEAR(mean, 0.0, 5 / std::sqrt(double(kN)));
  EXPECT_NEAR(variance, 1.0, 5 * std::sqrt(2.0 / kN));
  EXPECT_NEAR(pairProducts / (kN / 2), 0.0, 5 * std::sqrt(2.0 / kN));
  std::sort(z.begin(), z.end());
  double d = 0;
  for (uint32_t i = 0; i < kN; ++i) {
    const double cdf = 0.5 * std::erfc(-z[i] / std::sqrt(2.0));
    d = std::max({d, std::abs(cdf - double(i) / kN), std::abs(cdf - double(i + 1) / kN)});
  }
  // The Kolmogorov-Smirnov statistic's 0.999 quantile: 1.95 / sqrt(N).
  EXPECT_LT(d, 1.95 / std::sqrt(double(kN)));
}

// ARGMAX and ARGMIN of every type they accept over sequence_cases.h's
// shapes and rows (the same as RtlOps').
template <class Op> int issArgTests() {
  return test::forEachArgTest<Op>([&](isa::DType type, const test::ArgCase &c) {
    Twin twin(980);
    const Op op =
        test::argOf<Op>(type, c, [&](const std::vector<uint32_t> &w) { return twin.values(w); });
    twin.runAndCompare(validPacketOf(op), test::argName(op, c));
  });
}

TEST(IssOps, ArgmaxArgminEveryAcceptedType) {
  EXPECT_EQ(issArgTests<isa::inst::Argmax>(), 4);
  EXPECT_EQ(issArgTests<isa::inst::Argmin>(), 4);
}

// GATHER of every type over gather_cases.h's shapes, both modes and index
// types, with and without wrap, and a bad index of each kind (the same as
// RtlOps').
TEST(IssOps, GatherEveryAcceptedType) {
  const int types = test::forEachGatherTest([&](isa::DType type, const test::GatherCase &c) {
    Twin twin(990);
    const isa::inst::Gather op = test::gatherOf(
        type, c, [&](const std::vector<uint32_t> &w) { return twin.values(w); }, twin.rng);
    if (c.faults)
      twin.runAndCompareIndexFault(validPacketOf(op), test::gatherName(op, c));
    else
      twin.runAndCompare(validPacketOf(op), test::gatherName(op, c));
  });
  EXPECT_EQ(types, 6);
}

// COUNT, ANY and ALL on ARGMAX's shapes over b8 rows (the same as RtlOps').
template <class Op> void maskReductionsAgree() {
  test::forEachCountTest([&](const test::ArgCase &c) {
    Twin twin(980);
    const Op op = test::maskReductionOf<Op>(
        c, [&](const std::vector<uint32_t> &w) { return twin.values(w); });
    twin.runAndCompare(validPacketOf(op), test::maskReductionName(op, c));
  });
}

TEST(IssOps, CountOfB8Rows) { maskReductionsAgree<isa::inst::Count>(); }
TEST(IssOps, AnyOfB8Rows) { maskReductionsAgree<isa::inst::Any>(); }
TEST(IssOps, AllOfB8Rows) { maskReductionsAgree<isa::inst::All>(); }

// SELECT on every pair of edge values of f32, bf16, f16, i32 and b8 under
// each broadcast of b and of the mask, and over the row shapes; SELECTS on
// the edge values of all six types under each mask broadcast against seven
// immediates (integer_cases.h).
TEST(IssOps, SelectsOnEdgeValues) {
  const int tests = test::forEachSelectTest([&](const auto &make, const std::string &name) {
    Twin twin(980);
    auto place = [&](const std::vector<uint32_t> &w) { return twin.values(w); };
    twin.runAndCompare(make(place), name);
  });
  EXPECT_EQ(tests, 5 * 4 * 2 * (1 + static_cast<int>(std::size(test::kRowShapes))) + 6 * 2 * 7);
}

// AND OR XOR SHL SHR on i32 and i64 under each broadcast, AND OR XOR on b8
// too (also over the row shapes); ANDS ORS XORS on
// i32, i64 and b8 and the four shift scalar forms on i32 and i64, each with
// nine immediates; NOT on i32, i64 and b8 (integer_cases.h).
TEST(IssOps, BitwiseOnEdgeValues) {
  const int tests = test::forEachBitwiseTest([&](const auto &make, const std::string &name) {
    Twin twin(990);
    auto place = [&](const std::vector<uint32_t> &w) { return twin.values(w); };
    twin.runAndCompare(make(place), name);
  });
  EXPECT_EQ(tests, (3 * 3 + 2 * 2) * 4 + 3 * static_cast<int>(std::size(test::kRowShapes)) * 4 +
                       3 * 3 * 9 + 4 * 2 * 9 + 3);
}

TEST(IssOps, AdamW) {
  for (int t = 0; t < kTrials; ++t) {
    Twin twin(1000 + t);
    isa::inst::Adamw op;
    op.n = dim(twin.rng, 70);
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

TEST(IssOps, EmbeddingAndItsBackward) {
  for (int t = 0; t < kTrials; ++t) {
    Twin twin(1100 + t);
    auto &rng = twin.rng;
    const bool wide = rng() & 1;
    const uint32_t rows = dim(rng, 30), dimension = dim(rng, 20), count = dim(rng, 40);
    std::vector<uint32_t> indices;
    for (uint32_t i = 0; i < count; ++i) {
      const uint32_t index = static_cast<uint32_t>(rng() % rows); // repeats are likely
      indices.push_back(index);
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

// An m x k x n MATMUL and a SOFTMAX over its product, in place.
std::vector<isa::Packet> matmulThenSoftmax(Twin &twin, uint32_t m, uint32_t k, uint32_t n) {
  isa::inst::Matmul mm;
  mm.m = m;
  mm.k = k;
  mm.n = n;
  mm.a = twin.floats(uint64_t(m) * k);
  mm.b = twin.floats(uint64_t(k) * n);
  mm.c = twin.floats(uint64_t(m) * n);
  isa::inst::Softmax sm;
  sm.rows = m;
  sm.cols = n;
  sm.src = mm.c;
  sm.dst = mm.c;
  return {validPacketOf(mm), validPacketOf(sm)};
}

TEST(IssModes, PerfAndBothChargeTheSameCyclesAndFuncNone) {
  Twin twin(1);
  const std::vector<isa::Packet> stream = matmulThenSoftmax(twin, 33, 70, 17);
  mem::PhysicalMemory a, b, c;
  sim::Iss perf(a, sim::Mode::Perf), both(b, sim::Mode::Both), func(c, sim::Mode::Func);
  perf.run(stream);
  both.run(stream);
  func.run(stream);
  EXPECT_GT(perf.cycle(), 0u);
  EXPECT_EQ(perf.cycle(), both.cycle());
  EXPECT_EQ(func.cycle(), 0u);
  for (size_t i = 0; i < isa::kNumOpcodes; ++i)
    EXPECT_EQ(perf.stats().ops[i].cycles, both.stats().ops[i].cycles);
}

// EMBEDDING's rows are timed where its indices point (the execution
// reports them to the cycle model): 12-byte rows from a beat-aligned table
// cross a beat boundary at row 2, not at row 0, so eight reads of row 2
// cost more beats than eight of row 0. Perf mode executes nothing and
// takes index t to select row t.
TEST(IssModes, EmbeddingIsTimedAtTheRowsItsIndicesSelect) {
  Twin twin(3);
  isa::inst::Embedding e;
  e.rows = 64;
  e.dim = 3;
  e.count = 8;
  e.table = twin.floats(uint64_t(e.rows) * e.dim);
  e.dst = twin.floats(uint64_t(e.count) * e.dim);
  const auto cycles = [&](const std::vector<uint32_t> &indices, sim::Mode mode) {
    e.indices = twin.values(indices);
    sim::Iss iss(twin.issMemory, mode);
    iss.step(validPacketOf(e), 0);
    return iss.cycle();
  };
  const std::vector<uint32_t> rowT = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_GT(cycles(std::vector<uint32_t>(8, 2), sim::Mode::Both),
            cycles(std::vector<uint32_t>(8, 0), sim::Mode::Both));
  EXPECT_EQ(cycles(rowT, sim::Mode::Perf), cycles(rowT, sim::Mode::Both));
}

// Iss::run knows the stream: it tells every packet but the last that the
// next one is queued (the command processor prefetches it), as the backends
// do from the ring's tail, so it charges what stepping with that knowledge
// charges, and not what stepping without it does.
TEST(IssModes, RunTellsEveryPacketButTheLastThatTheNextIsQueued) {
  Twin twin(2);
  std::vector<isa::Packet> stream = matmulThenSoftmax(twin, 20, 40, 24);
  stream.push_back(validPacketOf(isa::inst::Halt{}));
  mem::PhysicalMemory a, b, c;
  sim::Iss run(a, sim::Mode::Perf), told(b, sim::Mode::Perf), untold(c, sim::Mode::Perf);
  run.run(stream);
  for (size_t i = 0; i < stream.size(); ++i) {
    told.step(stream[i], i, i + 1 < stream.size());
    untold.step(stream[i], i, false);
  }
  EXPECT_EQ(run.cycle(), told.cycle());
  EXPECT_NE(run.cycle(), untold.cycle());
}

// Cycle and byte counters stop at 2^64-1 and say so, instead of wrapping to
// a small count: a packet's predicted cycles and the statistics saturate.
TEST(IssModes, CountersSaturateInsteadOfWrapping) {
  isa::inst::Matmul huge;
  huge.m = huge.k = huge.n = 0xffff'ffffu;
  EXPECT_EQ(sim::predictCycles(validPacketOf(huge)), UINT64_MAX);

  sim::Stats stats;
  const uint64_t big = uint64_t(3) << 62;
  sim::account(stats, {.index = 0,
                       .opcode = isa::Opcode::MATMUL,
                       .engine = isa::Engine::Matrix,
                       .startCycle = 0,
                       .endCycle = big,
                       .bytesRead = big,
                       .bytesWritten = big,
                       .bytesExact = true,
                       .predicted = std::nullopt});
  EXPECT_FALSE(stats.saturated);
  EXPECT_NE(sim::statsJson(stats, {}).find("\"saturated\": false"), std::string::npos);
  sim::account(stats, {.index = 1,
                       .opcode = isa::Opcode::MATMUL,
                       .engine = isa::Engine::Matrix,
                       .startCycle = big,
                       .endCycle = UINT64_MAX,
                       .bytesRead = big,
                       .bytesWritten = big,
                       .bytesExact = true,
                       .predicted = std::nullopt});
  EXPECT_TRUE(stats.saturated);
  EXPECT_EQ(stats.cycles, UINT64_MAX);
  EXPECT_EQ(stats.bytesRead, UINT64_MAX);
  EXPECT_EQ(stats.bytesWritten, UINT64_MAX);
  EXPECT_EQ(stats.engines[static_cast<size_t>(isa::Engine::Matrix)].busyCycles, UINT64_MAX);
  const size_t matmul =
      static_cast<size_t>(&isa::info(isa::Opcode::MATMUL) - isa::instructions().data());
  EXPECT_EQ(stats.ops[matmul].cycles, UINT64_MAX);
  EXPECT_EQ(stats.packets, 2u);
  EXPECT_NE(sim::statsJson(stats, {}).find("\"saturated\": true"), std::string::npos);
}

} // namespace
