// The ISS's recipe runner (simulator/lib/recipe_runner.h) against the ISS's
// own f32 fast paths, which are written apart from the records: every
// binary, scalar, unary, pointwise-backward and row instruction's f32
// recipes run by the runner give the bits the fast path gives, on random
// shapes and special values. These recipes use every feature the runner has
// (rows x cols with per-row streams, the row broadcast's stream that stays
// on its row, the scalar broadcast's pre-load and the column broadcast's row
// load into K1, packet scalars such as alpha or an immediate in K0, a
// temporary, reductions, Mask steps, scalar steps after a pass, row stores,
// accumulators in memory), so the typed variants that run only through it
// rest on tested ground.
#include "recipe_runner.h"

#include "npu/arith/float_env.h"
#include "npu/mem/physical_memory.h"
#include "npu/sim/checks.h"
#include "npu/sim/iss.h"
#include "random_cases.h"
#include "sequence_cases.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using namespace npu;
using cases::randomFloat;
using cases::withRandomF32Operands;

constexpr uint64_t kArenaBase = 0x1000'0000;

// The same buffers in two memories: the ISS's fast path runs on one, the
// recipe runner on the other.
class Twin {
public:
  explicit Twin(uint64_t seed) : rng(seed) {}

  uint64_t floats(uint64_t count) {
    std::vector<uint32_t> bits(count);
    for (uint32_t &b : bits)
      b = randomFloat(rng, 20);
    return values(bits);
  }
  uint64_t values(const std::vector<uint32_t> &bits) {
    const uint64_t count = bits.size();
    const uint64_t address = next_;
    fast_.write(address, bits.data(), count * 4);
    runner_.write(address, bits.data(), count * 4);
    next_ = (address + count * 4 + 64 + 63) & ~uint64_t(63);
    return address;
  }

  void runAndCompare(const isa::Packet &packet, const std::string &what) {
    sim::Iss iss(fast_, sim::Mode::Func);
    ASSERT_NO_THROW(iss.step(packet, 0)) << what;
    sim::OperandRanges ranges;
    ASSERT_EQ(sim::checkPacket(packet, runner_.map(), ranges).code, mem::FaultCode::None) << what;
    isa::Instruction decoded;
    ASSERT_TRUE(isa::decode(packet, decoded)) << what;
    sim::ExecContext ctx(runner_, 0, isa::info(decoded.opcode), packet, ranges);
    arith::FloatEnvGuard floatEnv;
    ASSERT_NO_THROW(sim::runRecipe(ctx, decoded)) << what;
    std::vector<uint8_t> a(next_ - kArenaBase), b(next_ - kArenaBase);
    fast_.read(kArenaBase, a.data(), a.size());
    runner_.read(kArenaBase, b.data(), b.size());
    for (size_t i = 0; i < a.size(); i += 4) {
      uint32_t x = 0, y = 0;
      std::memcpy(&x, a.data() + i, 4);
      std::memcpy(&y, b.data() + i, 4);
      ASSERT_EQ(x, y) << what << ": first difference at 0x" << std::hex << kArenaBase + i
                      << " (fast path 0x" << x << ", recipe 0x" << y << ")";
    }
  }

  std::mt19937_64 rng;

private:
  mem::PhysicalMemory fast_, runner_;
  uint64_t next_ = kArenaBase;
};

uint32_t dim(std::mt19937_64 &rng, uint32_t max) {
  static const uint32_t edges[] = {1, 2, 7, 8, 9, 15, 16, 17, 33};
  return rng() % 3 == 0 ? std::min(edges[rng() % std::size(edges)], max)
                        : 1 + static_cast<uint32_t>(rng() % max);
}

constexpr int kTrials = 30;

#define NPU_RUN_CASE(NAME, Type, family) runCase(std::type_identity<isa::inst::Type>{}, t);

TEST(RecipeRunner, BinaryOpsWithEveryBroadcastAndAlphaMatchTheFastPath) {
  const auto runCase = []<class Op>(std::type_identity<Op>, int t) {
    Twin twin(7100 + t);
    auto &rng = twin.rng;
    Op op;
    op.rows = dim(rng, 12);
    op.cols = dim(rng, 40);
    op.bcast = static_cast<isa::Broadcast>(t % 4);
    const uint64_t n = uint64_t(op.rows) * op.cols;
    op.a = twin.floats(n);
    op.b = twin.floats(cases::broadcastCount(op.bcast, op.rows, op.cols));
    op.dst = rng() % 4 == 0 ? op.a : twin.floats(n);
    twin.runAndCompare(withRandomF32Operands(op, rng),
                       std::string(isa::info(Op::kOpcode).mnemonic) + " bcast " +
                           std::to_string(t % 4));
  };
  for (int t = 0; t < kTrials; ++t) {
    NPU_FOR_EACH_BINARY_OP(NPU_RUN_CASE)
  }
}

TEST(RecipeRunner, ScalarOpsMatchTheFastPath) {
  const auto runCase = []<class Op>(std::type_identity<Op>, int t) {
    Twin twin(7200 + t);
    Op op;
    op.n = dim(twin.rng, 70);
    op.a = twin.floats(op.n);
    op.dst = twin.floats(op.n);
    twin.runAndCompare(withRandomF32Operands(op, twin.rng), isa::info(Op::kOpcode).mnemonic);
  };
  for (int t = 0; t < kTrials; ++t) {
    NPU_FOR_EACH_SCALAR_OP(NPU_RUN_CASE)
  }
}

TEST(RecipeRunner, UnaryAndPointwiseBackwardOpsMatchTheFastPath) {
  const auto unary = []<class Op>(std::type_identity<Op>, int t) {
    Twin twin(7300 + t);
    Op op;
    op.n = dim(twin.rng, 70);
    op.src = twin.floats(op.n);
    op.dst = twin.rng() % 4 == 0 ? op.src : twin.floats(op.n);
    twin.runAndCompare(withRandomF32Operands(op, twin.rng), isa::info(Op::kOpcode).mnemonic);
  };
  const auto backward = []<class Op>(std::type_identity<Op>, int t) {
    Twin twin(7400 + t);
    Op op;
    op.n = dim(twin.rng, 70);
    op.x = twin.floats(op.n);
    op.dy = twin.floats(op.n);
    op.dx = twin.rng() % 4 == 0 ? op.dy : twin.floats(op.n);
    twin.runAndCompare(withRandomF32Operands(op, twin.rng), isa::info(Op::kOpcode).mnemonic);
  };
  for (int t = 0; t < kTrials; ++t) {
    {
      const auto &runCase = unary;
      NPU_FOR_EACH_UNARY_OP(NPU_RUN_CASE)
    }
    {
      const auto &runCase = backward;
      NPU_FOR_EACH_POINTWISE_BWD(NPU_RUN_CASE)
    }
  }
}

// The row instructions' f32 recipes: reductions (sum and max in the lanes'
// order) into per-row K registers, scalar steps after a pass, Mask steps
// (causal with offsets on both sides of the diagonal), row loads and row
// stores of one and two words, weight and bias streams that stay on their
// row, and the dweight and COL_SUM accumulators kept in memory across rows.
TEST(RecipeRunner, RowInstructionsMatchTheFastPath) {
  int cases = 0;
  for (int t = 0; t < kTrials; ++t) {
    Twin twin(7700 + t);
    auto &rng = twin.rng;
    const uint32_t rows = dim(rng, 12), cols = dim(rng, 40);
    const uint64_t n = uint64_t(rows) * cols;
    const auto run = [&](auto op) {
      twin.runAndCompare(withRandomF32Operands(op, rng),
                         std::string(isa::info(op.kOpcode).mnemonic) + " trial " +
                             std::to_string(t));
      ++cases;
    };
    {
      isa::inst::Softmax op;
      op.rows = rows;
      op.cols = cols;
      op.causal = rng() % 2;
      op.log = rng() % 2;
      op.offset = static_cast<int32_t>(rng() % 9) - 4;
      op.src = twin.floats(n);
      op.dst = twin.floats(n);
      run(op);
    }
    {
      isa::inst::Rmsnorm op;
      op.rows = rows;
      op.cols = cols;
      op.use_weight = rng() % 2;
      op.write_rstd = rng() % 2;
      op.src = twin.floats(n);
      op.weight = twin.floats(cols);
      op.rstd = twin.floats(rows);
      op.dst = twin.floats(n);
      run(op);
    }
    {
      isa::inst::Layernorm op;
      op.rows = rows;
      op.cols = cols;
      op.use_weight = rng() % 2;
      op.use_bias = rng() % 2;
      op.write_stats = rng() % 2;
      op.src = twin.floats(n);
      op.weight = twin.floats(cols);
      op.bias = twin.floats(cols);
      op.stats = twin.floats(2 * uint64_t(rows));
      op.dst = twin.floats(n);
      run(op);
    }
    {
      isa::inst::SoftmaxBwd op;
      op.rows = rows;
      op.cols = cols;
      op.log = rng() % 2;
      op.y = twin.floats(n);
      op.dy = twin.floats(n);
      op.dx = twin.floats(n);
      run(op);
    }
    const auto normBackward = [&](auto op, uint64_t statsWords) {
      op.rows = rows;
      op.cols = cols;
      op.use_weight = rng() % 2;
      op.write_dweight = rng() % 2;
      op.x = twin.floats(n);
      op.dy = twin.floats(n);
      op.weight = twin.floats(cols);
      op.dweight = twin.floats(cols);
      op.dx = twin.floats(n);
      if constexpr (requires { op.rstd; })
        op.rstd = twin.floats(statsWords);
      else
        op.stats = twin.floats(statsWords);
      run(op);
    };
    normBackward(isa::inst::RmsnormBwd{}, rows);
    normBackward(isa::inst::LayernormBwd{}, 2 * uint64_t(rows));
    const auto reduce = [&]<class Op>(std::type_identity<Op>, int) {
      Op op;
      op.rows = rows;
      op.cols = cols;
      op.src = twin.floats(n);
      op.dst = twin.floats(std::max(rows, cols));
      run(op);
    };
    {
      const auto &runCase = reduce;
      NPU_FOR_EACH_REDUCE_OP(NPU_RUN_CASE)
    }
  }
  EXPECT_EQ(cases, kTrials * 10);
}

// The index sources COL and ROW: IOTA's and TRI's recipes, which compute
// from them, give through the runner the bits of the ISS's own IOTA and
// TRI, which compute from the indices in C++ (sequence_cases.h's cases).
TEST(RecipeRunner, IndexSourcesMatchTheIssSequences) {
  const int iotaTypes = test::forEachIotaTest([&](isa::DType type, const test::IotaCase &c) {
    Twin twin(7500);
    const isa::inst::Iota op =
        test::iotaOf(type, c, [&](const std::vector<uint32_t> &w) { return twin.values(w); });
    twin.runAndCompare(isa::packetOf(op), test::iotaName(op));
  });
  const int triTypes = test::forEachTriTest([&](isa::DType type, const test::TriCase &c) {
    Twin twin(7600);
    const isa::inst::Tri op =
        test::triOf(type, c, [&](const std::vector<uint32_t> &w) { return twin.values(w); });
    twin.runAndCompare(isa::packetOf(op), test::triName(op, c.inPlace));
  });
  EXPECT_EQ(iotaTypes, 3);
  EXPECT_EQ(triTypes, 6);
}

// What the runner does not take is a logic error, not a wrong result: an
// index row load's recipe.
TEST(RecipeRunner, RefusesARecipeWithAnIndexRowLoad) {
  mem::PhysicalMemory memory;
  isa::inst::EmbeddingBwd op;
  op.count = 1;
  op.dim = 4;
  op.rows = 1;
  op.dtable = kArenaBase;
  op.dy = kArenaBase + 64;
  op.indices = kArenaBase + 128;
  const isa::Packet packet = isa::packetOf(op);
  sim::OperandRanges ranges;
  ASSERT_EQ(sim::checkPacket(packet, memory.map(), ranges).code, mem::FaultCode::None);
  sim::ExecContext ctx(memory, 0, isa::info(op.kOpcode), packet, ranges);
  EXPECT_THROW(sim::runRecipe(ctx, op.toInstruction()), std::logic_error);
}

} // namespace
