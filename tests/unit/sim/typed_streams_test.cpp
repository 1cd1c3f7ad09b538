// The ISS's typed streams (simulator/lib/typed_streams.h, docs/types.md §2):
// every storage type reads into its lane form and writes back from it with
// the element size of the .td's DType, little-endian, at 4-byte aligned
// addresses (int64s need not be 8-byte aligned), within the ranges the
// packet's checks admitted; the conversions are npu/arith/convert.h's,
// checked here on every 16-bit and 8-bit pattern and on hand-computed
// values.
#include "typed_streams.h"

#include "npu/arith/convert.h"
#include "npu/mem/physical_memory.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

namespace npu::sim {
namespace {

using isa::DType;

constexpr uint64_t kBase = 0x10000004; // 4-byte aligned, not 8-byte aligned

// An execution context admitting `bytes` bytes at kBase for reading and
// writing, as a packet's checks would.
class TypedStreamsTest : public ::testing::Test {
protected:
  ExecContext context(uint64_t bytes) {
    ranges_[0] = {.accessed = true,
                  .address = kBase,
                  .bytes = bytes,
                  .access = mem::Access::Read | mem::Access::Write};
    return ExecContext(memory_, 0, isa::info(isa::Opcode::NOP), PacketBytes(packet_), ranges_);
  }
  template <class T> void put(const std::vector<T> &values) {
    memory_.write(kBase, values.data(), values.size() * sizeof(T));
  }
  template <class T> std::vector<T> get(uint64_t n) {
    std::vector<T> out(n);
    memory_.read(kBase, out.data(), n * sizeof(T));
    return out;
  }

  mem::PhysicalMemory memory_;
  std::array<uint8_t, isa::kPacketBytes> packet_ = {};
  OperandRanges ranges_ = {};
};

TEST_F(TypedStreamsTest, ElementSizesAreTheTdsBytes) {
  EXPECT_EQ(storageBytes(DType::f32), 4u);
  EXPECT_EQ(storageBytes(DType::bf16), 2u);
  EXPECT_EQ(storageBytes(DType::f16), 2u);
  EXPECT_EQ(storageBytes(DType::i32), 4u);
  EXPECT_EQ(storageBytes(DType::i64), 8u);
  EXPECT_EQ(storageBytes(DType::b8), 1u);
  EXPECT_THROW(storageBytes(static_cast<DType>(6)), std::logic_error);
}

TEST_F(TypedStreamsTest, EveryHalfWidensExactly) {
  std::vector<uint16_t> halves(65536);
  for (uint32_t h = 0; h < 65536; ++h)
    halves[h] = static_cast<uint16_t>(h);
  put(halves);
  ExecContext ctx = context(2 * 65536);
  const LaneColumns bf16 = loadLanes(ctx, kBase, 65536, DType::bf16);
  const LaneColumns f16 = loadLanes(ctx, kBase, 65536, DType::f16);
  ASSERT_EQ(bf16.words.size(), 65536u);
  EXPECT_TRUE(bf16.high.empty());
  for (uint32_t h = 0; h < 65536; ++h) {
    ASSERT_EQ(bf16.words[h], arith::widenBf16(static_cast<uint16_t>(h))) << h;
    ASSERT_EQ(f16.words[h], arith::widenF16(static_cast<uint16_t>(h))) << h;
  }
  EXPECT_EQ(bf16.words[0x3f80], 0x3f800000u);
  EXPECT_EQ(f16.words[0x0001], 0x33800000u); // 2^-24: an f16 subnormal is a normal binary32
  EXPECT_EQ(f16.words[0x3c00], 0x3f800000u);
  EXPECT_EQ(f16.words[0x7c01], arith::kLaneNaN);
  EXPECT_EQ(f16.words[0xfc00], 0xff800000u);
}

TEST_F(TypedStreamsTest, NarrowStoresRoundToNearestEven) {
  std::vector<uint32_t> lanes = {0x3f800000, 0x3f808000, 0x3f818000, 0x477ff000, 0x477fefff,
                                 0x33000001, 0x33000000, 0x7fc00000, 0xff800000, 0x80000000};
  std::mt19937 rng(3);
  for (int i = 0; i < 100000; ++i)
    lanes.push_back(rng());
  ExecContext ctx = context(2 * lanes.size());
  storeLanes(ctx, kBase, DType::bf16, {lanes, {}});
  std::vector<uint16_t> stored = get<uint16_t>(lanes.size());
  for (size_t i = 0; i < lanes.size(); ++i)
    ASSERT_EQ(stored[i], arith::narrowBf16(lanes[i])) << i;
  EXPECT_EQ(stored[1], 0x3f80u); // a tie goes to the even neighbour
  EXPECT_EQ(stored[2], 0x3f82u);
  EXPECT_EQ(stored[7], arith::kBf16NaN);
  storeLanes(ctx, kBase, DType::f16, {lanes, {}});
  stored = get<uint16_t>(lanes.size());
  for (size_t i = 0; i < lanes.size(); ++i)
    ASSERT_EQ(stored[i], arith::narrowF16(lanes[i])) << i;
  EXPECT_EQ(stored[0], 0x3c00u);
  EXPECT_EQ(stored[3], 0x7c00u); // 65520 overflows
  EXPECT_EQ(stored[4], 0x7bffu);
  EXPECT_EQ(stored[5], 0x0001u); // just above 2^-25: the least subnormal
  EXPECT_EQ(stored[6], 0x0000u); // 2^-25: a tie, to even (zero)
  EXPECT_EQ(stored[7], arith::kF16NaN);
  EXPECT_EQ(stored[9], 0x8000u);
}

TEST_F(TypedStreamsTest, WordsMoveAsTheyAre) {
  // No canonicalisation in the stream: the lane's program load does that
  // for float inputs, integer inputs stay bits.
  const std::vector<uint32_t> words = {0x00000001, 0xffffffff, 0x7f800001, 0x80000000, 0x12345678};
  put(words);
  ExecContext ctx = context(4 * words.size());
  for (DType type : {DType::f32, DType::i32}) {
    const LaneColumns lanes = loadLanes(ctx, kBase, words.size(), type);
    EXPECT_EQ(lanes.words, words);
    EXPECT_TRUE(lanes.high.empty());
    storeLanes(ctx, kBase, type, lanes);
    EXPECT_EQ(get<uint32_t>(words.size()), words);
  }
}

TEST_F(TypedStreamsTest, Int64sTakeTwoColumns) {
  const std::vector<uint64_t> values = {0,
                                        1,
                                        ~uint64_t(0),
                                        uint64_t(1) << 32,
                                        0x7fffffffffffffffu,
                                        0x8000000000000000u,
                                        0xfffffffe00000001u};
  put(values);
  ExecContext ctx = context(8 * values.size());
  const LaneColumns lanes = loadLanes(ctx, kBase, values.size(), DType::i64);
  ASSERT_EQ(lanes.high.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(lanes.words[i], static_cast<uint32_t>(values[i])) << i;
    EXPECT_EQ(lanes.high[i], static_cast<uint32_t>(values[i] >> 32)) << i;
  }
  EXPECT_EQ(lanes.words[6], 1u);
  EXPECT_EQ(lanes.high[6], 0xfffffffeu);
  memory_.fill(kBase, 0xaa, 8 * values.size());
  storeLanes(ctx, kBase, DType::i64, lanes);
  EXPECT_EQ(get<uint64_t>(values.size()), values);
  // The high words must come with exactly the i64 stores.
  EXPECT_THROW(storeLanes(ctx, kBase, DType::i64, {lanes.words, {}}), std::logic_error);
  EXPECT_THROW(storeLanes(ctx, kBase, DType::i32, lanes), std::logic_error);
}

TEST_F(TypedStreamsTest, BytesAreMasks) {
  std::vector<uint8_t> bytes(256);
  for (unsigned b = 0; b < 256; ++b)
    bytes[b] = static_cast<uint8_t>(b);
  put(bytes);
  ExecContext ctx = context(256);
  const LaneColumns lanes = loadLanes(ctx, kBase, 256, DType::b8);
  EXPECT_EQ(lanes.words[0], 0u);
  for (unsigned b = 1; b < 256; ++b)
    ASSERT_EQ(lanes.words[b], 0xffffffffu) << b; // any nonzero byte is true
  // A store of 7 elements writes 7 bytes: the 8th keeps its value.
  const std::vector<uint32_t> masks = {0, ~0u, ~0u, 0, ~0u, 0, 0};
  storeLanes(ctx, kBase, DType::b8, {masks, {}});
  EXPECT_EQ(get<uint8_t>(8), (std::vector<uint8_t>{0, 1, 1, 0, 1, 0, 0, 7}));
}

TEST_F(TypedStreamsTest, StreamsStayInsideTheAdmittedRange) {
  ExecContext ctx = context(15);
  EXPECT_NO_THROW(loadLanes(ctx, kBase, 15, DType::b8));
  EXPECT_THROW(loadLanes(ctx, kBase, 16, DType::b8), std::logic_error);
  EXPECT_NO_THROW(loadLanes(ctx, kBase, 7, DType::f16));
  EXPECT_THROW(loadLanes(ctx, kBase, 8, DType::f16), std::logic_error);
  EXPECT_THROW(loadLanes(ctx, kBase, 2, DType::i64), std::logic_error);
  EXPECT_THROW(storeLanes(ctx, kBase, DType::f32, {std::vector<uint32_t>(4), {}}),
               std::logic_error);
}

} // namespace
} // namespace npu::sim
