#include "npu/mem/address_map.h"
#include "npu/mem/fault.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include <unistd.h>

namespace npu::mem {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr uint64_t kMiB = uint64_t(1) << 20;
constexpr uint64_t kGiB = uint64_t(1) << 30;

// The message of the std::invalid_argument that action throws ("" if none).
std::string invalidArgument(const std::function<void()> &action) {
  try {
    action();
  } catch (const std::invalid_argument &error) {
    return error.what();
  }
  return "";
}

std::string jsonError(const std::string &text) {
  return invalidArgument([&] { AddressMap::fromJson(text, "board.json"); });
}

TEST(AddressMapTest, DefaultsMatchTheDesign) {
  AddressMap map = AddressMap::defaults();
  ASSERT_EQ(map.regions.size(), 5u);
  const Region *weights = map.byName("weights");
  ASSERT_NE(weights, nullptr);
  EXPECT_EQ(weights->base, 0u);
  EXPECT_EQ(weights->size, 256 * kMiB);
  EXPECT_EQ(weights->kind, Region::Kind::Memory);
  EXPECT_TRUE(weights->readable && weights->writable);
  EXPECT_EQ(map.byName("activations")->base, 0x1000'0000u);
  EXPECT_EQ(map.byName("activations")->size, 256 * kMiB);
  EXPECT_EQ(map.byName("ring")->base, 0x2000'0000u);
  EXPECT_EQ(map.byName("ring")->size, 1 * kMiB);
  EXPECT_EQ(map.byName("csr")->base, 0x3000'0000u);
  EXPECT_EQ(map.byName("csr")->size, 4096u);
  EXPECT_EQ(map.byName("csr")->kind, Region::Kind::Csr);
  EXPECT_EQ(map.byName("staging")->base, 0x1'0000'0000u);
  EXPECT_EQ(map.byName("staging")->size, 1024 * kMiB);
  EXPECT_EQ(map.byName("nothing"), nullptr);
  EXPECT_NO_THROW(map.validate());
}

TEST(AddressMapTest, FindUsesHalfOpenRanges) {
  AddressMap map = AddressMap::defaults();
  EXPECT_EQ(map.find(0)->name, "weights");
  EXPECT_EQ(map.find(0x0FFF'FFFF)->name, "weights");
  EXPECT_EQ(map.find(0x1000'0000)->name, "activations");
  EXPECT_EQ(map.find(0x2010'0000), nullptr);
  EXPECT_EQ(map.find(0x3000'0FFF)->name, "csr");
  EXPECT_EQ(map.find(0x3000'1000), nullptr);
  EXPECT_EQ(map.find(UINT64_MAX), nullptr);
}

TEST(AddressMapTest, ParseSizeAcceptsHexDecimalSeparatorsAndSuffixes) {
  EXPECT_EQ(parseSize("0", "n"), 0u);
  EXPECT_EQ(parseSize("4096", "n"), 4096u);
  EXPECT_EQ(parseSize("0x1000_0000", "n"), 0x1000'0000u);
  EXPECT_EQ(parseSize("0XfF", "n"), 255u);
  EXPECT_EQ(parseSize("4K", "n"), 4096u);
  EXPECT_EQ(parseSize("256m", "n"), 256 * kMiB);
  EXPECT_EQ(parseSize("16G", "n"), 16 * kGiB);
  EXPECT_EQ(parseSize("0x10M", "n"), 16 * kMiB);
  EXPECT_EQ(parseSize("0xffff_ffff_ffff_ffff", "n"), UINT64_MAX);
  EXPECT_EQ(parseSize("18446744073709551615", "n"), UINT64_MAX);
}

TEST(AddressMapTest, ParseSizeRejectsMalformedAndOverflowingText) {
  for (const char *text : {"", "K", "0x", "0xK", "12Q", "1__0", "_1", "1_", "0x_1", "-1", " 1",
                           "1.5", "0b101", "0xG"}) {
    std::string error = invalidArgument([&] { parseSize(text, "the size"); });
    EXPECT_THAT(error, AllOf(StartsWith("the size: '"), HasSubstr("is not a number"))) << text;
  }
  for (const char *text : {"18446744073709551616", "0x1_0000_0000_0000_0000", "17179869184G"}) {
    std::string error = invalidArgument([&] { parseSize(text, "the size"); });
    EXPECT_THAT(error, HasSubstr("does not fit in 64 bits")) << text;
  }
}

TEST(AddressMapTest, FromJsonReadsEveryField) {
  AddressMap map = AddressMap::fromJson(R"({"regions": [
      {"name": "weights", "base": 0, "size": "16G"},
      {"name": "rom", "base": "0x4_0000_0000", "size": 65536, "access": "r"},
      {"name": "sink", "base": "0x4_1000_0000", "size": "4K", "access": "w", "kind": "memory"},
      {"name": "csr", "base": "0x5_0000_0000", "size": "4K", "access": "rw", "kind": "csr"}]})",
                                        "board.json");
  ASSERT_EQ(map.regions.size(), 4u);
  EXPECT_EQ(map.regions[0].size, 16 * kGiB);
  const Region &rom = map.regions[1];
  EXPECT_EQ(rom.name, "rom");
  EXPECT_EQ(rom.base, 0x4'0000'0000u);
  EXPECT_EQ(rom.size, 65536u);
  EXPECT_TRUE(rom.readable);
  EXPECT_FALSE(rom.writable);
  EXPECT_FALSE(map.regions[2].readable);
  EXPECT_TRUE(map.regions[2].writable);
  EXPECT_EQ(map.regions[2].kind, Region::Kind::Memory);
  EXPECT_EQ(map.regions[3].kind, Region::Kind::Csr);
}

TEST(AddressMapTest, FromJsonAcceptsAnEmptyMap) {
  EXPECT_TRUE(AddressMap::fromJson(R"({"regions": []})", "empty.json").regions.empty());
}

TEST(AddressMapTest, FromJsonReportsSyntaxErrorsWithLineAndColumn) {
  std::string error = jsonError("{\"regions\": [\n  {\"name\": \"a\",}\n]}");
  EXPECT_THAT(error, StartsWith("board.json: invalid JSON: parse error at line 2, column"));
  EXPECT_THAT(error, Not(HasSubstr("[json.exception")));
  EXPECT_THAT(jsonError(""), StartsWith("board.json: invalid JSON:"));
}

TEST(AddressMapTest, FromJsonRejectsWrongStructure) {
  EXPECT_THAT(jsonError("[]"),
              HasSubstr("board.json: expected an object with a \"regions\" array"));
  EXPECT_EQ(jsonError("{}"), "board.json: regions: missing required key");
  EXPECT_THAT(jsonError(R"({"regions": {}})"),
              StartsWith("board.json: regions: expected an array, got object"));
  EXPECT_THAT(jsonError(R"({"regions": [], "region": []})"),
              StartsWith("board.json: region: unknown key"));
  EXPECT_THAT(jsonError(R"({"regions": [7]})"),
              StartsWith("board.json: regions[0]: expected an object, got number 7"));
}

TEST(AddressMapTest, FromJsonNamesTheMissingKey) {
  EXPECT_EQ(jsonError(R"({"regions": [{"name": "a", "base": 0, "size": 4096},
                                      {"name": "b", "size": 4096}]})"),
            "board.json: regions[1].base: missing required key");
  EXPECT_EQ(jsonError(R"({"regions": [{"base": 0, "size": 4096}]})"),
            "board.json: regions[0].name: missing required key");
  EXPECT_EQ(jsonError(R"({"regions": [{"name": "a", "base": 0}]})"),
            "board.json: regions[0].size: missing required key");
}

TEST(AddressMapTest, FromJsonRejectsWrongTypes) {
  EXPECT_EQ(jsonError(R"({"regions": [{"name": 3, "base": 0, "size": 4096}]})"),
            "board.json: regions[0].name: expected a string, got number 3");
  EXPECT_THAT(jsonError(R"({"regions": [{"name": "a", "base": true, "size": 4096}]})"),
              StartsWith("board.json: regions[0].base: expected a non-negative integer or a "
                         "number string, got boolean true"));
  EXPECT_THAT(jsonError(R"({"regions": [{"name": "a", "base": -4096, "size": 4096}]})"),
              HasSubstr("regions[0].base: expected a non-negative integer"));
  EXPECT_THAT(jsonError(R"({"regions": [{"name": "a", "base": 0, "size": 4096.0}]})"),
              HasSubstr("regions[0].size: expected a non-negative integer"));
  EXPECT_THAT(jsonError(R"({"regions": [{"name": "a", "base": 0, "size": "4 KiB"}]})"),
              StartsWith("board.json: regions[0].size: '4 KiB' is not a number"));
  EXPECT_EQ(jsonError(R"({"regions": [{"name": "a", "base": 0, "size": 4096, "access": 1}]})"),
            "board.json: regions[0].access: expected a string, got number 1");
  EXPECT_EQ(jsonError(R"({"regions": [{"name": "a", "base": 0, "size": 4096, "access": "x"}]})"),
            "board.json: regions[0]: access must be \"rw\", \"r\" or \"w\", got \"x\"");
  EXPECT_THAT(jsonError(R"({"regions": [{"name": "a", "base": 0, "size": 4096, "kind": "rom"}]})"),
              StartsWith("board.json: regions[0].kind: expected \"memory\" or \"csr\""));
  EXPECT_THAT(jsonError(R"({"regions": [{"name": "a", "base": 0, "size": 4096, "sise": 1}]})"),
              StartsWith("board.json: regions[0].sise: unknown key"));
}

TEST(AddressMapTest, FromJsonValidates) {
  EXPECT_THAT(jsonError(R"({"regions": [{"name": "a", "base": 0, "size": "8K"},
                                        {"name": "b", "base": "4K", "size": "4K"}]})"),
              AllOf(StartsWith("board.json: regions[1] 'b' [0x1000, 0x2000) overlaps"),
                    HasSubstr("regions[0] 'a' [0x0, 0x2000)")));
  EXPECT_EQ(jsonError(R"({"regions": [{"name": "a", "base": 100, "size": "4K"}]})"),
            "board.json: regions[0] 'a': base 0x64 is not a multiple of 4 KiB");
  EXPECT_EQ(jsonError(R"({"regions": [{"name": "a", "base": 0, "size": 100}]})"),
            "board.json: regions[0] 'a': size 0x64 is not a multiple of 4 KiB");
  EXPECT_EQ(jsonError(R"({"regions": [{"name": "a", "base": 0, "size": "4K"},
                                      {"name": "a", "base": "4K", "size": "4K"}]})"),
            "board.json: regions[1] 'a': duplicate region name");
  EXPECT_EQ(jsonError(R"({"regions": [{"name": "", "base": 0, "size": "4K"}]})"),
            "board.json: regions[0] '': empty name");
  EXPECT_EQ(jsonError(R"({"regions": [{"name": "a", "base": 0, "size": 0}]})"),
            "board.json: regions[0] 'a': size is 0");
  EXPECT_THAT(jsonError(R"({"regions": [{"name": "a", "base": "0xffff_ffff_ffff_f000",
                                        "size": "8K"}]})"),
              HasSubstr("runs past 2^64"));
}

TEST(AddressMapTest, ValidateAcceptsARegionEndingAt2To64) {
  AddressMap map;
  map.regions.push_back({.name = "top", .base = 0xFFFF'FFFF'FFFF'F000, .size = 4096});
  EXPECT_NO_THROW(map.validate());
  EXPECT_EQ(map.find(UINT64_MAX)->name, "top");
  EXPECT_EQ(map.find(0xFFFF'FFFF'FFFF'EFFF), nullptr);
}

TEST(AddressMapTest, ValidateFindsOverlapRegardlessOfOrder) {
  AddressMap map;
  map.regions.push_back({.name = "high", .base = 0x10000, .size = 0x1000});
  map.regions.push_back({.name = "inner", .base = 0x2000, .size = 0x1000});
  map.regions.push_back({.name = "outer", .base = 0x1000, .size = 0x4000});
  EXPECT_THAT(invalidArgument([&] { map.validate(); }),
              AllOf(HasSubstr("'inner'"), HasSubstr("overlaps"), HasSubstr("'outer'")));
}

TEST(AddressMapTest, FromJsonFileNamesThePath) {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("npu_mem_map_" + std::to_string(getpid()) + ".json");
  {
    std::ofstream file(path);
    file << R"({"regions": [{"name": "big", "base": 0, "size": "1G"}]})";
  }
  EXPECT_EQ(AddressMap::fromJsonFile(path.string()).regions.at(0).size, kGiB);
  {
    std::ofstream file(path);
    file << R"({"regions": [{"name": "big", "base": 0}]})";
  }
  EXPECT_EQ(invalidArgument([&] { AddressMap::fromJsonFile(path.string()); }),
            path.string() + ": regions[0].size: missing required key");
  std::filesystem::remove(path);
  EXPECT_THAT(invalidArgument([&] { AddressMap::fromJsonFile(path.string()); }),
              StartsWith(path.string() + ": cannot open: "));
}

TEST(AddressMapTest, OverrideMovesAnExistingRegionAndKeepsItsAttributes) {
  AddressMap map = AddressMap::defaults();
  map.applyOverride("csr=0xA000_0000:8K");
  const Region *csr = map.byName("csr");
  EXPECT_EQ(csr->base, 0xA000'0000u);
  EXPECT_EQ(csr->size, 8192u);
  EXPECT_EQ(csr->kind, Region::Kind::Csr);
  EXPECT_EQ(map.regions.size(), 5u);

  map.applyOverride("weights=0:2G:r");
  EXPECT_EQ(map.byName("weights")->size, 2 * kGiB);
  EXPECT_FALSE(map.byName("weights")->writable);
  // Now overlapping activations: overrides do not validate, validate() does.
  EXPECT_THAT(invalidArgument([&] { map.validate(); }), HasSubstr("overlaps"));
  map.applyOverride("activations=0x8000_0000:256M");
  map.applyOverride("ring=0x9000_0000:1M");
  EXPECT_NO_THROW(map.validate());
  map.applyOverride("weights=0:2G");
  EXPECT_FALSE(map.byName("weights")->writable) << "permissions are kept when not given";
}

TEST(AddressMapTest, OverrideAddsANewRegion) {
  AddressMap map = AddressMap::defaults();
  map.applyOverride("scratch=2147483648:64K:w");
  ASSERT_EQ(map.regions.size(), 6u);
  const Region &scratch = map.regions.back();
  EXPECT_EQ(scratch.name, "scratch");
  EXPECT_EQ(scratch.base, 2 * kGiB);
  EXPECT_EQ(scratch.size, 65536u);
  EXPECT_FALSE(scratch.readable);
  EXPECT_TRUE(scratch.writable);
  EXPECT_EQ(scratch.kind, Region::Kind::Memory);
  EXPECT_NO_THROW(map.validate());
}

TEST(AddressMapTest, OverrideRejectsMalformedSpecs) {
  AddressMap map = AddressMap::defaults();
  for (const char *spec : {"weights", "=0:4K", "weights=0", "weights=0:4K:rw:x", "weights=:4K"}) {
    std::string error = invalidArgument([&] { map.applyOverride(spec); });
    EXPECT_THAT(error, StartsWith("override '" + std::string(spec) + "'")) << spec;
  }
  EXPECT_EQ(invalidArgument([&] { map.applyOverride("weights=0:4K:x"); }),
            "override 'weights=0:4K:x': access must be \"rw\", \"r\" or \"w\", got \"x\"");
  EXPECT_THAT(invalidArgument([&] { map.applyOverride("weights=zero:4K"); }),
              StartsWith("override 'weights=zero:4K' base: 'zero' is not a number"));
  EXPECT_EQ(map.regions.size(), 5u);
  EXPECT_EQ(map.byName("weights")->size, 256 * kMiB) << "a failed override changes nothing";
}

// What the engines may touch (the region check of every device): the
// region's permissions, nothing in the CSR window or the command ring, and
// never past the region's end or 2^64.
TEST(AddressMapTest, EngineAccessFollowsTheRegionTableRules) {
  AddressMap map = AddressMap::defaults();
  map.regions.push_back({.name = "rom", .base = 0x5000'0000, .size = 4096, .writable = false});
  map.regions.push_back({.name = "top", .base = 0xffff'ffff'ffff'f000, .size = 4096});
  EXPECT_EQ(map.checkEngineAccess(0x1000'0000, 64, Access::Read | Access::Write), FaultCode::None);
  EXPECT_EQ(map.checkEngineAccess(0x4000'0000, 1, Access::Read), FaultCode::Unmapped);
  EXPECT_EQ(map.checkEngineAccess(0x0fff'fff0, 32, Access::Read), FaultCode::OutOfRegion);
  EXPECT_EQ(map.checkEngineAccess(0x5000'0000, 4, Access::Read), FaultCode::None);
  EXPECT_EQ(map.checkEngineAccess(0x5000'0000, 4, Access::Write), FaultCode::Permission);
  EXPECT_EQ(map.checkEngineAccess(0x3000'0000, 4, Access::Read), FaultCode::Permission);
  EXPECT_EQ(map.checkEngineAccess(0x2000'0000, 64, Access::Read), FaultCode::Permission);
  EXPECT_EQ(map.checkEngineAccess(0x2000'0000, 64, Access::Write), FaultCode::Permission);
  EXPECT_EQ(map.checkEngineAccess(0xffff'ffff'ffff'f000, 4096, Access::Write), FaultCode::None);
  EXPECT_EQ(map.checkEngineAccess(0xffff'ffff'ffff'fff0, 32, Access::Read), FaultCode::OutOfRegion);
  EXPECT_TRUE(map.byName("ring")->isCommandRing());
  EXPECT_FALSE(map.byName("ring")->engineReadable());
  EXPECT_TRUE(map.byName("ring")->readable) << "the host still writes packets there";

  EXPECT_EQ(map.regionText(0x1000'0040), "region 'activations' 0x10000000-0x1fffffff");
  EXPECT_EQ(map.regionText(0x5000'0000), "region 'rom' 0x50000000-0x50000fff, read-only");
  EXPECT_EQ(map.regionText(0x3000'0000), "region 'csr' 0x30000000-0x30000fff, the CSR window");
  EXPECT_EQ(map.regionText(0x2000'0000), "region 'ring' 0x20000000-0x200fffff, the command ring");
  EXPECT_EQ(map.regionText(0xffff'ffff'ffff'ffff),
            "region 'top' 0xfffffffffffff000-0xffffffffffffffff");
  EXPECT_EQ(map.regionText(0x4000'0000), "no region");

  Fault fault;
  fault.code = FaultCode::OutOfRegion;
  fault.address = 0xffff'ffff'ffff'fff0;
  fault.length = 32;
  map.annotate(fault);
  EXPECT_EQ(fault.detail, "runs 16 bytes past its end");
  EXPECT_EQ(fault.region, "region 'top' 0xfffffffffffff000-0xffffffffffffffff");
}

} // namespace
} // namespace npu::mem
