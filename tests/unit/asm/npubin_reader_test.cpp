// The .npubin reader rejects every malformed container with a precise
// message and offset (docs/binary-format.md), and never crashes.
#include "npu/bin/object.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>

namespace {

using namespace npu;
using Bytes = std::vector<uint8_t>;

bin::Object sampleObject() {
  bin::Object o;
  bin::Packet p{};
  p[0] = 2; // halt
  o.text = {p, p};
  o.data = {{0x1000, {1, 2, 3}}, {0x2000, Bytes(16, 7)}};
  o.checks = {{0x3000, bin::CheckRegion::Kind::F32Ulp, 2, Bytes(8, 0)}};
  o.symbols = {{"start", bin::Symbol::Kind::Packet, 0},
               {"buf", bin::Symbol::Kind::Address, 0x1000}};
  o.metadata = {{"producer", "test"}};
  return o;
}

void put32(Bytes &b, size_t at, uint32_t v) {
  std::memcpy(&b[at], &v, 4);
}
void put64(Bytes &b, size_t at, uint64_t v) {
  std::memcpy(&b[at], &v, 8);
}
uint64_t get64(const Bytes &b, size_t at) {
  uint64_t v;
  std::memcpy(&v, &b[at], 8);
  return v;
}

// Section table entry i starts at 64 + 32 i: type, flags, offset, size, count.
constexpr size_t entry(size_t i) {
  return 64 + 32 * i;
}

struct Corruption {
  const char *name;
  std::function<void(Bytes &)> apply;
  uint64_t offset;
  const char *message;
};

TEST(NpubinReader, ValidObjectRoundTrips) {
  const bin::Object o = sampleObject();
  EXPECT_EQ(bin::read(bin::write(o)), o);
}

TEST(NpubinReader, MalformedContainersAreRejectedPrecisely) {
  const Bytes valid = bin::write(sampleObject());
  // Layout of the sample: header, 5 table entries, text at 224 (128 bytes),
  // data at 352: record 0 (16 + 3 + 5 padding), record 1 at 376 (16 + 16).
  ASSERT_EQ(get64(valid, entry(0) + 8), 224u);
  ASSERT_EQ(get64(valid, entry(1) + 8), 352u);
  const size_t data1 = 376, check0 = 408, symbols = get64(valid, entry(3) + 8);
  const std::vector<Corruption> cases = {
      {"bad magic", [](Bytes &b) { b[1] = 'X'; }, 0, "bad magic: not an .npubin file"},
      {"bad major", [](Bytes &b) { put32(b, 8, 2); }, 8,
       "format version 2.0 is not supported (this reader reads 1.x)"},
      {"bad ISA major", [](Bytes &b) { put32(b, 16, 9); }, 16,
       "file is for ISA v9.0, this toolchain implements v1.0"},
      {"wrong file size", [](Bytes &b) { put64(b, 40, b.size() + 8); }, 40,
       "header records 520 bytes but the file has 512 (truncated?)"},
      {"bad header size", [](Bytes &b) { put32(b, 48, 32); }, 48, "header size 32, expected 64"},
      {"reserved header byte", [](Bytes &b) { b[53] = 1; }, 53,
       "reserved header bytes must be zero"},
      {"bad table offset", [](Bytes &b) { put32(b, 36, 72); }, 36,
       "section table offset 72, expected 64"},
      {"too many sections", [](Bytes &b) { put32(b, 32, 1000000); }, 32,
       "1000000 sections; a file has at most one of each of the 5 types"},
      {"unknown section type", [](Bytes &b) { put32(b, entry(2), 9); }, entry(2),
       "section 2: unknown type 9"},
      {"duplicate section", [](Bytes &b) { put32(b, entry(1), 1); }, entry(1),
       "section 1: second text section"},
      {"section order",
       [](Bytes &b) {
         put32(b, entry(2), 2);
         put32(b, entry(1), 3);
       },
       entry(2),
       "section 2: data section after the check section (sections must be in increasing type "
       "order)"},
      {"section flags", [](Bytes &b) { put32(b, entry(0) + 4, 1); }, entry(0) + 4,
       "section 0: flags must be zero"},
      {"zero count", [](Bytes &b) { put64(b, entry(4) + 24, 0); }, entry(4) + 24,
       "metadata section: record count is zero (empty sections are left out)"},
      {"overlapping sections", [](Bytes &b) { put64(b, entry(1) + 8, 288); }, entry(1) + 8,
       "data section starts at offset 288, expected 352 (sections follow the table without gaps "
       "or overlaps)"},
      {"size past EOF", [](Bytes &b) { put64(b, entry(4) + 16, 1u << 20); }, entry(4) + 16,
       "metadata section: 1048576 bytes at offset 488 run past the end of the 512-byte file"},
      {"odd section size", [](Bytes &b) { put64(b, entry(0) + 16, 124); }, entry(0) + 16,
       "text section: size 124 is not a multiple of 8"},
      {"huge record count", [](Bytes &b) { put64(b, entry(0) + 24, ~0ull); }, 224,
       "text section claims 18446744073709551615 records but has room for at most 2"},
      {"fewer records than bytes", [](Bytes &b) { put64(b, entry(0) + 24, 1); }, 288,
       "text section has 64 bytes after its 1 records"},
      {"segment length past section", [&](Bytes &b) { put64(b, data1 + 8, 1u << 30); }, data1 + 16,
       "data: segment bytes needs 1073741824 bytes but only 16 remain"},
      {"non-zero padding", [](Bytes &b) { b[352 + 16 + 3] = 1; }, 371,
       "data: non-zero padding after segment bytes"},
      {"overlapping data segments", [&](Bytes &b) { put64(b, data1, 0x1001); }, data1,
       "data segment at 0x1001 (+16) overlaps the one at 0x1000 (+3)"},
      {"segment wraps", [&](Bytes &b) { put64(b, data1, ~0ull - 3); }, data1,
       "data segment at 0xfffffffffffffffc with 16 bytes wraps past the end of the address space"},
      {"unknown check kind", [&](Bytes &b) { put32(b, check0 + 8, 7); }, check0 + 8,
       "check region 0: unknown kind 7"},
      {"exact check with tolerance", [&](Bytes &b) { put32(b, check0 + 8, 0); }, check0,
       "exact check region at 0x3000 has a ulp tolerance"},
      {"misaligned ulp check", [&](Bytes &b) { put64(b, check0, 0x3002); }, check0,
       "f32 check region at 0x3002 must be 4-byte aligned and a multiple of 4 bytes"},
      {"unknown symbol kind", [&](Bytes &b) { put32(b, symbols, 5); }, symbols,
       "symbol 0: unknown kind 5"},
      {"symbol past the text", [&](Bytes &b) { put64(b, symbols + 8, 3); }, symbols,
       "symbol 'start' names packet 3 but the text has 2 packets"},
      {"duplicate symbol",
       [&](Bytes &b) {
         std::memcpy(&b[symbols + 16], "buf\0\0", 5);
         put32(b, symbols + 4, 3);
       },
       symbols + 24, "duplicate symbol 'buf'"},
      {"trailing bytes",
       [](Bytes &b) {
         b.resize(b.size() + 8);
         put64(b, 40, b.size());
       },
       512, "8 bytes after the last section"},
      {"newer minor version", [](Bytes &b) { put32(b, 12, 1); }, 12,
       "format version 1.1 is newer than this reader's 1.0"},
  };
  for (const Corruption &c : cases) {
    Bytes bad = valid;
    c.apply(bad);
    try {
      bin::read(bad);
      ADD_FAILURE() << c.name << ": accepted";
    } catch (const bin::FormatError &e) {
      EXPECT_EQ(e.message(), c.message) << c.name;
      EXPECT_EQ(e.offset(), c.offset) << c.name << ": " << e.message();
    }
  }
}

TEST(NpubinReader, EveryTruncationIsRejected) {
  const Bytes valid = bin::write(sampleObject());
  for (size_t n = 0; n < valid.size(); ++n) {
    Bytes cut(valid.begin(), valid.begin() + ptrdiff_t(n));
    EXPECT_THROW(bin::read(cut), bin::FormatError) << n;
    // Also with the header's size patched to match, so that the section
    // checks see the truncation.
    if (n >= 64) {
      put64(cut, 40, n);
      EXPECT_THROW(bin::read(cut), bin::FormatError) << n;
    }
  }
}

TEST(NpubinReader, RandomCorruptionNeverCrashes) {
  const Bytes valid = bin::write(sampleObject());
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 20000; ++trial) {
    Bytes bad = valid;
    for (int flips = 1 + int(rng() % 4); flips > 0; --flips)
      bad[rng() % bad.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    try {
      bin::Object o = bin::read(bad);
      EXPECT_EQ(bin::write(o), bad) << "an accepted file must be canonical";
    } catch (const bin::FormatError &) {
    }
  }
}

} // namespace
