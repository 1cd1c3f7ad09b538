// libnpu_verify: the generator's streams are reproducible, valid where
// meant to be and fault as meant where not (checked against the ISS);
// coverage bins are sampled as named; the minimiser reduces a failing
// stream to its culprit.
#include "npu/asm/disassembler.h"
#include "npu/verify/classes.h"
#include "npu/verify/coverage.h"
#include "npu/verify/footprint.h"
#include "npu/verify/generator.h"
#include "npu/verify/minimiser.h"
#include "npu/verify/runner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>

namespace {

using namespace npu;

verify::GeneratorOptions optionsFor(uint64_t seed, uint32_t packets = 40) {
  verify::GeneratorOptions options;
  options.seed = seed;
  options.packets = packets;
  return options;
}

// Streams whose every packet is meant to fault with `code`.
verify::GeneratorOptions faultingOptions(uint64_t seed, uint32_t packets, mem::FaultCode code) {
  verify::GeneratorOptions options = optionsFor(seed, packets);
  options.faultPercent = 100;
  options.faultClasses = {code};
  return options;
}

verify::RunOptions onIss() {
  verify::RunOptions run;
  run.backend = "iss";
  return run;
}

TEST(Generator, SameSeedSameStream) {
  verify::GeneratorOptions options = optionsFor(7);
  options.faultPercent = 20;
  const auto a = bin::write(verify::generate(options).object);
  const auto b = bin::write(verify::generate(options).object);
  EXPECT_EQ(a, b);
  options.seed = 8;
  EXPECT_NE(a, bin::write(verify::generate(options).object));
}

TEST(Generator, ValidPacketsDecodeAndReachEveryOpcodeFlagAndEnumValue) {
  std::set<uint32_t> opcodes;
  std::map<std::string, std::set<uint64_t>> modeValues;
  for (uint64_t seed = 0; seed < 160; ++seed) {
    const verify::Stream stream = verify::generate(optionsFor(seed));
    ASSERT_EQ(stream.intents.size(), stream.object.text.size());
    for (size_t i = 0; i < stream.object.text.size(); ++i) {
      isa::Instruction inst;
      std::string error;
      ASSERT_TRUE(isa::decode(stream.object.text[i], inst, &error))
          << "seed " << seed << " packet " << i << ": " << error;
      opcodes.insert(static_cast<uint32_t>(inst.opcode));
      const isa::InstrInfo &info = isa::info(inst.opcode);
      for (uint32_t o = 0; o < info.numOperands; ++o)
        if (info.operands[o].kind == isa::OperandKind::Flag ||
            info.operands[o].kind == isa::OperandKind::Enum)
          modeValues[std::string(info.mnemonic) + "." + info.operands[o].name].insert(
              inst.operands[o]);
    }
  }
  EXPECT_EQ(opcodes.size(), isa::instructions().size());
  for (const isa::InstrInfo &info : isa::instructions())
    for (const isa::OperandInfo &op : info.operandList()) {
      const std::string key = std::string(info.mnemonic) + "." + op.name;
      if (op.kind == isa::OperandKind::Flag) {
        EXPECT_EQ(modeValues[key].size(), 2u) << key;
      } else if (op.kind == isa::OperandKind::Enum) {
        EXPECT_EQ(modeValues[key].size(), isa::acceptedValues(op).size()) << key;
      }
    }
}

TEST(Generator, FootprintsStayWithinTheBudgetAndDataSegmentsAreDisjoint) {
  for (uint64_t seed = 0; seed < 60; ++seed) {
    verify::GeneratorOptions options = optionsFor(seed);
    options.largePercent = 30;
    const verify::Stream stream = verify::generate(options);
    EXPECT_NO_THROW(bin::write(stream.object)) << "seed " << seed; // rejects overlapping segments
    for (const isa::Packet &p : stream.object.text) {
      isa::Instruction inst;
      ASSERT_TRUE(isa::decode(p, inst));
      const verify::Footprint f = verify::footprintOf(inst);
      uint64_t bytes = 0;
      for (const verify::Buffer &b : f.buffers)
        bytes += b.bytes;
      EXPECT_LE(bytes, verify::kBlockingBudget.bytes) << as::formatPacket(p);
      EXPECT_LE(f.work, verify::kBlockingBudget.work) << as::formatPacket(p);
    }
  }
}

// A pair packet keeps a second size at the blocking edge beside the first:
// MATMUL then reaches a full 256-deep panel beside more than 2048 columns
// (the ISS GEMM's blocking), which no single large size can.
TEST(Generator, PairPacketsReachTwoBlockingEdgesAtOnce) {
  bool deepAndWide = false;
  for (uint64_t seed = 0; seed < 40 && !deepAndWide; ++seed) {
    verify::GeneratorOptions options = optionsFor(seed, 20);
    options.opcodes = {isa::Opcode::MATMUL};
    options.largePercent = 100;
    options.pairPercent = 100;
    for (const isa::Packet &p : verify::generate(options).object.text) {
      isa::Instruction inst;
      ASSERT_TRUE(isa::decode(p, inst));
      if (inst.opcode != isa::Opcode::MATMUL)
        continue;
      const auto m = isa::inst::Matmul::fromPacket(p.data());
      deepAndWide |= m.k >= 256 && m.n > 2048;
    }
  }
  EXPECT_TRUE(deepAndWide);
}

// The generator's idea of a valid stream is the ISS's: nothing faults.
TEST(Generator, ValidStreamsCompleteOnTheIss) {
  for (uint64_t seed = 0; seed < 150; ++seed) {
    const verify::Stream stream = verify::generate(optionsFor(seed));
    const verify::RunResult r = verify::runStream(stream.object, onIss(), &stream.intents);
    EXPECT_TRUE(r.unexpected.empty()) << "seed " << seed << ": " << r.unexpected.front();
    EXPECT_EQ(r.packetsExecuted, stream.object.text.size()) << "seed " << seed;
  }
}

// Each injected fault class is the fault the ISS raises.
TEST(Generator, EveryFaultClassFaultsAsIntendedOnTheIss) {
  for (mem::FaultCode code : verify::injectableFaults()) {
    std::map<mem::FaultCode, int> seen;
    for (uint64_t seed = 0; seed < 25; ++seed) {
      verify::GeneratorOptions options = faultingOptions(seed, 12, code);
      const verify::Stream stream = verify::generate(options);
      const verify::RunResult r = verify::runStream(stream.object, onIss(), &stream.intents);
      for (const std::string &u : r.unexpected)
        ADD_FAILURE() << mem::faultCodeName(code) << ", seed " << seed << ": " << u;
      for (mem::FaultCode outcome : r.outcomes)
        seen[outcome]++;
    }
    EXPECT_GT(seen[code], 0) << mem::faultCodeName(code) << " was never raised";
  }
}

// Out-of-region faults go mostly to matrix and strided views (extents
// computed from several operands) and often overshoot by one alignment
// step, where a bound check a step short fails; the RTL mutant that halved
// a strided view's upper extent survived 40 seeds of uniform injections.
TEST(Generator, OutOfRegionFaultsFavourComputedViewsAndSingleSteps) {
  int injected = 0, onViews = 0, singleSteps = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    verify::GeneratorOptions options = faultingOptions(seed, 12, mem::FaultCode::OutOfRegion);
    const verify::Stream stream = verify::generate(options);
    for (size_t i = 0; i < stream.intents.size(); ++i) {
      const verify::PacketIntent &intent = stream.intents[i];
      if (intent.injected != mem::FaultCode::OutOfRegion)
        continue;
      ++injected;
      isa::Instruction inst;
      ASSERT_TRUE(isa::decode(stream.object.text[i], inst));
      const verify::Footprint f = verify::footprintOf(inst);
      const std::string victim = intent.note.substr(0, intent.note.find(' '));
      const verify::Buffer *b = f.find(victim);
      ASSERT_NE(b, nullptr) << intent.note;
      onViews += b->computedExtent;
      const isa::InstrInfo &info = isa::info(inst.opcode);
      const uint64_t past = std::stoull(intent.note.substr(intent.note.find("runs ") + 5));
      singleSteps += past <= info.operands[info.operandIndex(b->operand)].align;
    }
  }
  ASSERT_GT(injected, 200);
  EXPECT_GT(onViews, injected * 2 / 5) << onViews << " of " << injected;
  EXPECT_GT(singleSteps, injected / 3) << singleSteps << " of " << injected;
}

// Most invalid-operand injections into a strided view make a negative
// stride reach below address 0, most of those with a magnitude past 2^30;
// the ISS faults on each as intended (a view's sign and magnitude are where
// an engine's extent check goes wrong: the RTL mutant that took a stride's
// sign from bit 30 survived every other stream).
TEST(Generator, StridedViewsAreMadeToReachBelowAddressZero) {
  int injected = 0, belowZero = 0, past30 = 0;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    verify::GeneratorOptions options = faultingOptions(seed, 10, mem::FaultCode::InvalidOperand);
    options.opcodes = {isa::Opcode::COPY_STRIDED};
    const verify::Stream stream = verify::generate(options);
    const verify::RunResult r = verify::runStream(stream.object, onIss(), &stream.intents);
    for (const std::string &u : r.unexpected)
      ADD_FAILURE() << "seed " << seed << ": " << u;
    for (const verify::PacketIntent &intent : stream.intents) {
      injected += intent.injected == mem::FaultCode::InvalidOperand;
      const size_t at = intent.note.find("reaches below address 0");
      if (at == std::string::npos)
        continue;
      ++belowZero;
      past30 += std::stoull(intent.note.substr(intent.note.find("= -") + 3)) > (1u << 30);
    }
  }
  ASSERT_GT(injected, 100);
  EXPECT_GT(belowZero, injected / 2) << belowZero << " of " << injected;
  EXPECT_GT(past30, belowZero / 2) << past30 << " of " << belowZero;
}

// Some invalid-operand injections make an extent too large for 64 bits, on
// products and matrices alike, each faulting on the ISS as intended (the RTL
// mutant that reported such a matrix fault with the wrong access survived
// every other stream).
TEST(Generator, ExtentsAreMadeTooLargeForSixtyFourBits) {
  std::set<std::string> mnemonics;
  int overflows = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    verify::GeneratorOptions options = faultingOptions(seed, 10, mem::FaultCode::InvalidOperand);
    const verify::Stream stream = verify::generate(options);
    const verify::RunResult r = verify::runStream(stream.object, onIss(), &stream.intents);
    for (const std::string &u : r.unexpected)
      ADD_FAILURE() << "seed " << seed << ": " << u;
    for (size_t i = 0; i < stream.intents.size(); ++i)
      if (stream.intents[i].note.find("does not fit in 64 bits") != std::string::npos) {
        ++overflows;
        mnemonics.insert(
            isa::findOpcode(isa::detail::load32(stream.object.text[i].data(), 0))->mnemonic);
      }
  }
  EXPECT_GT(overflows, 30);
  EXPECT_TRUE(mnemonics.count("matmul") || mnemonics.count("bmm")) << mnemonics.size();
  EXPECT_GT(mnemonics.size(), 10u);
}

// Half the out-of-region injections into a strided view also stretch one
// of its strides past 2^30 elements (positive: the view runs far past its
// region), each faulting on the ISS as intended; the RTL mutant that took a
// stride's sign from bit 30 reports a different range for exactly these.
TEST(Generator, OutOfRegionStridedViewsRunFarOnAStridePastTwoToThe30) {
  int injected = 0, stretched = 0;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    verify::GeneratorOptions options = faultingOptions(seed, 10, mem::FaultCode::OutOfRegion);
    options.opcodes = {isa::Opcode::COPY_STRIDED};
    const verify::Stream stream = verify::generate(options);
    const verify::RunResult r = verify::runStream(stream.object, onIss(), &stream.intents);
    for (const std::string &u : r.unexpected)
      ADD_FAILURE() << "seed " << seed << ": " << u;
    for (size_t i = 0; i < stream.intents.size(); ++i) {
      const verify::PacketIntent &intent = stream.intents[i];
      if (intent.injected != mem::FaultCode::OutOfRegion)
        continue;
      ++injected;
      const size_t at = intent.note.find("(stride");
      if (at == std::string::npos)
        continue;
      isa::Instruction inst;
      ASSERT_TRUE(isa::decode(stream.object.text[i], inst));
      const isa::InstrInfo &info = isa::info(inst.opcode);
      const std::string name = intent.note.substr(at + 1, intent.note.find(' ', at) - at - 1);
      const int index = info.operandIndex(name);
      ASSERT_GE(index, 0) << intent.note;
      const int64_t stride = isa::operandValue(info.operands[index], inst.operands[index]);
      EXPECT_GT(stride, int64_t(1) << 30) << intent.note;
      ++stretched;
    }
  }
  ASSERT_GT(injected, 100);
  EXPECT_GT(stretched, injected / 4) << stretched << " of " << injected;
}

// Some invalid-operand injections into a BMM grow only a batch and its
// stride past 64 bits together, with every matrix small, each faulting on
// the ISS as intended (the RTL mutant that reported this fault with a read
// access survived the streams that grew every size at once).
TEST(Generator, BatchesAloneAreMadeTooLargeForSixtyFourBits) {
  int batchOnly = 0;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    verify::GeneratorOptions options = faultingOptions(seed, 10, mem::FaultCode::InvalidOperand);
    options.opcodes = {isa::Opcode::BMM};
    const verify::Stream stream = verify::generate(options);
    const verify::RunResult r = verify::runStream(stream.object, onIss(), &stream.intents);
    for (const std::string &u : r.unexpected)
      ADD_FAILURE() << "seed " << seed << ": " << u;
    for (size_t i = 0; i < stream.intents.size(); ++i) {
      if (stream.intents[i].note.find("does not fit in 64 bits") == std::string::npos)
        continue;
      isa::Instruction inst;
      ASSERT_TRUE(isa::decode(stream.object.text[i], inst));
      const isa::InstrInfo &info = isa::info(inst.opcode);
      const auto value = [&](const char *name) { return inst.operands[info.operandIndex(name)]; };
      const uint64_t largest = std::max({value("m"), value("k"), value("n")});
      batchOnly += largest < (uint64_t(1) << 16) && value("batch") > (uint64_t(1) << 30);
    }
  }
  EXPECT_GT(batchOnly, 10);
}

// Some overlap injections into a BMM bring the matrices of its C closer
// than one matrix apart, each faulting on the ISS as intended (the RTL
// mutant that reported this fault with a read access survived the streams
// whose overlaps were all between two operands).
TEST(Generator, BatchedMatricesAreMadeToOverlapOneAnother) {
  int injected = 0, batches = 0;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    verify::GeneratorOptions options = faultingOptions(seed, 10, mem::FaultCode::Overlap);
    options.opcodes = {isa::Opcode::BMM};
    const verify::Stream stream = verify::generate(options);
    const verify::RunResult r = verify::runStream(stream.object, onIss(), &stream.intents);
    for (const std::string &u : r.unexpected)
      ADD_FAILURE() << "seed " << seed << ": " << u;
    for (const verify::PacketIntent &intent : stream.intents) {
      injected += intent.injected == mem::FaultCode::Overlap;
      batches += intent.note.find("'s matrices overlap") != std::string::npos;
    }
  }
  ASSERT_GT(injected, 100);
  EXPECT_GT(batches, injected / 5) << batches << " of " << injected;

  // In the whole mix, a third of the overlap faults go to BMM.
  int mixed = 0, onBmm = 0;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    const verify::Stream stream =
        verify::generate(faultingOptions(seed, 10, mem::FaultCode::Overlap));
    for (size_t i = 0; i < stream.intents.size(); ++i)
      if (stream.intents[i].injected == mem::FaultCode::Overlap) {
        ++mixed;
        onBmm += stream.intents[i].opcodeWord == static_cast<uint32_t>(isa::Opcode::BMM);
      }
  }
  ASSERT_GT(mixed, 100);
  EXPECT_GT(onBmm, mixed / 5) << onBmm << " of " << mixed;
}

// Scalar operands are small integers often enough to reach the paths that
// test integrality (POWS's integral exponents, negative ones among them).
TEST(Generator, FloatScalarsAreOftenSmallIntegers) {
  int scalars = 0, integral = 0, negative = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const verify::Stream stream = verify::generate(optionsFor(seed));
    for (const isa::Packet &p : stream.object.text) {
      isa::Instruction inst;
      ASSERT_TRUE(isa::decode(p, inst));
      const isa::InstrInfo &info = isa::info(inst.opcode);
      for (uint32_t i = 0; i < info.numOperands; ++i) {
        if (info.operands[i].kind != isa::OperandKind::F32)
          continue;
        float v;
        const uint32_t bits = static_cast<uint32_t>(inst.operands[i]);
        std::memcpy(&v, &bits, 4);
        ++scalars;
        if (v >= -4 && v <= 4 && v == std::trunc(v)) {
          ++integral;
          negative += v < 0;
        }
      }
    }
  }
  ASSERT_GT(scalars, 300);
  EXPECT_GT(integral, scalars / 8) << integral << " of " << scalars;
  EXPECT_GT(negative, scalars / 25) << negative << " of " << scalars;
}

// A regression test for the budget loop: halving a pitch below its row is
// undone by legalise(), which once made the generator loop forever.
TEST(Generator, ShrinkingTerminatesForEveryInstruction) {
  for (const isa::InstrInfo &info : isa::instructions()) {
    isa::Instruction inst = isa::makeInstruction(info.opcode);
    for (uint32_t i = 0; i < info.numOperands; ++i)
      if (info.operands[i].kind == isa::OperandKind::U32)
        inst.operands[i] = 0xfffffff0u;
    verify::legalise(inst);
    uint32_t steps = 0;
    while (verify::shrinkOperand(inst, steps % 3))
      ASSERT_LT(++steps, 64 * isa::kMaxOperands) << info.mnemonic;
    EXPECT_TRUE(isa::validate(inst)) << info.mnemonic;
  }
}

TEST(Generator, OptionsArgumentsNameEverySetting) {
  verify::GeneratorOptions options = optionsFor(5, 12);
  options.faultPercent = 7;
  options.faultClasses = {mem::FaultCode::Overlap, mem::FaultCode::Misaligned};
  options.opcodes = {isa::Opcode::MATMUL};
  options.aliasPercent = 50;
  EXPECT_EQ(verify::optionsArguments(options),
            "--seed 5 --packets 12 --fault-percent 7 --faults overlap,misaligned --opcodes matmul "
            "--alias-percent 50");
  EXPECT_EQ(verify::parseFaultClass("index-out-of-range"), mem::FaultCode::IndexOutOfRange);
  EXPECT_THROW(verify::parseFaultClass("timeout"), std::invalid_argument);
}

TEST(Classes, ShapeValueAndAlignmentClasses) {
  EXPECT_EQ(verify::shapeClass(1), verify::ShapeClass::One);
  EXPECT_EQ(verify::shapeClass(isa::hw::kMatrixTile + 1), verify::ShapeClass::TilePlus1);
  EXPECT_EQ(verify::shapeClass(13), verify::ShapeClass::Prime);
  EXPECT_EQ(verify::shapeClass(12), verify::ShapeClass::Other);
  EXPECT_EQ(verify::shapeClass(300), verify::ShapeClass::Large);
  EXPECT_EQ(verify::valueClass(0x80000000u), verify::ValueClass::NegZero);
  EXPECT_EQ(verify::valueClass(0x00000001u), verify::ValueClass::Subnormal);
  EXPECT_EQ(verify::valueClass(0xff800000u), verify::ValueClass::NegInf);
  EXPECT_EQ(verify::valueClass(0x7fc00000u), verify::ValueClass::NaN);
  EXPECT_EQ(verify::valueClass(0x7f000000u), verify::ValueClass::Huge);
  EXPECT_EQ(verify::valueClass(0x00800000u), verify::ValueClass::Tiny);
  EXPECT_EQ(verify::valueClass(0x3f800000u), verify::ValueClass::Normal);
  EXPECT_EQ(verify::alignClass(0x1000, 4), verify::AlignClass::Line);
  EXPECT_EQ(verify::alignClass(0x1020, 32), verify::AlignClass::Operand);
  EXPECT_EQ(verify::alignClass(0x1004, 4), verify::AlignClass::Word);
  EXPECT_EQ(verify::alignClass(0x1003, 1), verify::AlignClass::Byte);
}

TEST(Coverage, BinsAreUniqueAndEveryInstructionHasSome) {
  const auto &model = verify::CoverageModel::instance();
  std::set<std::string> names;
  std::set<std::string> groups;
  for (const verify::Bin &b : model.bins()) {
    EXPECT_TRUE(names.insert(b.name).second) << "duplicate bin " << b.name;
    groups.insert(b.group);
  }
  for (const isa::InstrInfo &info : isa::instructions())
    EXPECT_TRUE(groups.count(info.mnemonic)) << info.mnemonic;
  for (const char *name :
       // MATMUL's flags and two types make 72 combinations, more than are
       // crossed (kMaxModes): a bin per value; CAST's 36 type pairs are crossed.
       {"matmul/mode/transa=1", "matmul/mode/dtype=bf16", "matmul/mode/otype=f16",
        "cast/mode/dtype=bf16,stype=i64", "matmul/shape/k=tile+1", "add/alias/dst=b",
        "add/alias/a=b", "softmax/scalar/scale=nan", "rmsnorm/unused/rstd",
        "adamw/align/hyper=operand", "copy/align/src=byte", "embedding/fault/index-out-of-range",
        "copy/fault/misaligned"})
    EXPECT_EQ(model.find(name).has_value(), std::string(name) != "copy/fault/misaligned") << name;
}

TEST(Coverage, SamplesAnExecutedPacket) {
  isa::inst::Add add;
  add.dst = 0x1000'0000;
  add.a = 0x1000'0000;
  add.b = 0x1000'1004;
  add.rows = 1;
  add.cols = isa::hw::kMatrixTile - 1;
  add.bcast = isa::Broadcast::none;
  add.alpha = -0.0f;
  const isa::Packet packet = isa::packetOf(add);
  const std::vector<std::pair<uint64_t, uint64_t>> previous{{0x1000'1000, 64}};
  verify::Coverage coverage;
  coverage.sample(
      {packet, mem::FaultCode::None, 1u << static_cast<int>(verify::ValueClass::NaN), &previous});
  std::set<std::string> hit;
  const auto &bins = verify::CoverageModel::instance().bins();
  for (size_t i = 0; i < bins.size(); ++i)
    if (coverage.hits()[i])
      hit.insert(bins[i].name);
  const std::set<std::string> expected{"add/executed",
                                       "add/mode/bcast=none,dtype=f32",
                                       "add/shape/rows=1",
                                       "add/shape/cols=tile-1",
                                       "add/scalar/alpha=-0",
                                       "add/align/dst=64",
                                       "add/align/a=64",
                                       "add/align/b=word",
                                       "add/region/activations",
                                       "add/alias/dst=a",
                                       "add/chain",
                                       "add/value/nan"};
  EXPECT_EQ(hit, expected);
  verify::Coverage faulted;
  faulted.sample({packet, mem::FaultCode::Overlap, 0, nullptr});
  EXPECT_EQ(faulted.hits()[*verify::CoverageModel::instance().find("add/fault/overlap")], 1u);
}

TEST(Coverage, AnIssRegressionReachesMostBins) {
  verify::Coverage coverage;
  for (uint64_t seed = 0; seed < 120; ++seed) {
    verify::GeneratorOptions options = optionsFor(seed);
    options.faultPercent = 10;
    const verify::Stream stream = verify::generate(options);
    verify::runStream(stream.object, onIss(), &stream.intents, &coverage);
  }
  size_t hit = 0;
  for (uint64_t h : coverage.hits())
    hit += h != 0;
  EXPECT_GT(hit * 100, coverage.hits().size() * 75) << hit << " of " << coverage.hits().size();
}

TEST(Runner, DivergenceSignatureKeepsClassesAndDropsAddresses) {
  EXPECT_EQ(verify::divergenceSignature(
                "tanh", "cosim divergence at packet 0 (tanh 0x1, 0x2, 23): outcome "
                        "differs: ISS fault out-of-region at 0x1ffffff0, RTL completed"),
            "tanh: ISS fault out-of-region, RTL completed");
  EXPECT_EQ(verify::divergenceSignature(
                "silu", "cosim divergence at packet 3 (silu ...): memory differs at 0x10"),
            "silu: memory");
  EXPECT_EQ(verify::divergenceSignature(
                "sub", "cosim divergence at packet 0 (sub ...): the RTL read the beat at "
                       "0x10000040, which holds no byte the packet reads"),
            "sub: read outside the operands");
}

// A stand-in for a buggy model: a MUL of at least two rows whose `a`
// starts with a NaN "diverges". The minimiser must find exactly that.
verify::RunResult fakeBug(const bin::Object &object) {
  verify::RunResult r;
  for (size_t i = 0; i < object.text.size(); ++i) {
    isa::Instruction inst;
    if (!isa::decode(object.text[i], inst) || inst.opcode != isa::Opcode::MUL)
      continue;
    const auto mul = isa::inst::Mul::fromPacket(object.text[i].data());
    uint32_t first = 0;
    for (const bin::DataSegment &seg : object.data)
      if (mul.a >= seg.address && mul.a + 4 <= seg.address + seg.bytes.size())
        std::memcpy(&first, seg.bytes.data() + (mul.a - seg.address), 4);
    if (mul.rows >= 2 && verify::valueClass(first) == verify::ValueClass::NaN) {
      r.diverged = true;
      r.divergentPacket = i;
      r.signature = "mul: memory";
      return r;
    }
    r.packetsExecuted++;
  }
  return r;
}

TEST(Minimiser, ReducesAFailingStreamToItsCulprit) {
  for (uint64_t seed = 0; seed < 25; ++seed) {
    verify::GeneratorOptions options = optionsFor(seed, 60);
    options.specialPercent = 60;
    options.opcodes = {isa::Opcode::MUL, isa::Opcode::ADD, isa::Opcode::EXP, isa::Opcode::ROW_SUM,
                       isa::Opcode::COPY};
    const verify::Stream stream = verify::generate(options);
    const verify::RunResult failing = fakeBug(stream.object);
    if (!failing.diverged || failing.divergentPacket < 5)
      continue;
    const verify::MinimiseResult m = verify::minimise(stream.object, failing, fakeBug);
    ASSERT_EQ(m.object.text.size(), 1u) << "seed " << seed;
    const auto mul = isa::inst::Mul::fromPacket(m.object.text[0].data());
    EXPECT_EQ(mul.rows, 2u);
    EXPECT_EQ(mul.cols, 1u);
    EXPECT_EQ(mul.bcast, isa::Broadcast::none);
    ASSERT_EQ(m.object.data.size(), 1u);
    EXPECT_LE(m.dataBytes(), std::max<size_t>(4, m.dataBytesBefore / 64));
    EXPECT_TRUE(fakeBug(m.object).diverged);
    EXPECT_LT(m.runs, 400u);
    return;
  }
  FAIL() << "no seed produced the stand-in bug";
}

} // namespace
