#include "npu/mem/address_map.h"

#include "npu/mem/fault.h"

#include "npu/mem/hex.h"
#include "npu/support/file_io.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <numeric>
#include <set>
#include <stdexcept>

namespace npu::mem {

namespace {

using nlohmann::json;

bool isDigit(char c, unsigned radix) {
  if (c >= '0' && c <= '9')
    return true;
  return radix == 16 && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'));
}

unsigned digitValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return c - 'A' + 10;
}

// Shift amount of a K/M/G suffix, 0 when there is none.
unsigned suffixShift(char c) {
  switch (c) {
  case 'K':
  case 'k': return 10;
  case 'M':
  case 'm': return 20;
  case 'G':
  case 'g': return 30;
  default: return 0;
  }
}

// A map is three levels deep; nesting is bounded before the JSON is
// parsed, because the library's printing of a value (for messages)
// recurses once per level.
constexpr unsigned kMaxJsonDepth = 64;
constexpr uint64_t kMaxJsonBytes = uint64_t(1) << 20;

void checkJsonDepth(std::string_view text, const std::string &sourceName) {
  unsigned depth = 0, line = 1;
  size_t lineStart = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '\n') {
      ++line;
      lineStart = i + 1;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw std::invalid_argument(
            sourceName + ":" + std::to_string(line) + ":" + std::to_string(i - lineStart + 1) +
            ": invalid JSON: nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

std::string regionLabel(const std::vector<Region> &regions, size_t index) {
  return "regions[" + std::to_string(index) + "] '" + regions[index].name + "'";
}

[[noreturn]] void fail(const std::string &source, const std::string &key, const std::string &why) {
  throw std::invalid_argument(source + ": " + key + ": " + why);
}

// A short rendering of an offending JSON value for error messages.
std::string shown(const json &value) {
  std::string text = value.dump();
  constexpr size_t kMaxShown = 40;
  if (text.size() > kMaxShown)
    text = text.substr(0, kMaxShown) + "...";
  return std::string(value.type_name()) + " " + text;
}

uint64_t jsonNumber(const json &value, const std::string &source, const std::string &key) {
  if (value.is_number_unsigned())
    return value.get<uint64_t>();
  if (value.is_string())
    return parseSize(value.get_ref<const std::string &>(), source + ": " + key);
  fail(source, key, "expected a non-negative integer or a number string, got " + shown(value));
}

void parseAccess(std::string_view text, Region &region, const std::string &context) {
  if (text == "rw") {
    region.readable = region.writable = true;
  } else if (text == "r") {
    region.readable = true;
    region.writable = false;
  } else if (text == "w") {
    region.readable = false;
    region.writable = true;
  } else {
    throw std::invalid_argument(context + ": access must be \"rw\", \"r\" or \"w\", got \"" +
                                std::string(text) + "\"");
  }
}

Region regionFromJson(const json &entry, const std::string &source, const std::string &key) {
  if (!entry.is_object())
    fail(source, key, "expected an object, got " + shown(entry));
  for (const auto &[name, value] : entry.items()) {
    if (name != "name" && name != "base" && name != "size" && name != "access" && name != "kind")
      fail(source, key + "." + name, "unknown key (expected name, base, size, access or kind)");
  }
  for (const char *required : {"name", "base", "size"}) {
    if (!entry.contains(required))
      fail(source, key + "." + required, "missing required key");
  }
  Region region;
  const json &name = entry.at("name");
  if (!name.is_string())
    fail(source, key + ".name", "expected a string, got " + shown(name));
  region.name = name.get<std::string>();
  region.base = jsonNumber(entry.at("base"), source, key + ".base");
  region.size = jsonNumber(entry.at("size"), source, key + ".size");
  if (auto access = entry.find("access"); access != entry.end()) {
    if (!access->is_string())
      fail(source, key + ".access", "expected a string, got " + shown(*access));
    parseAccess(access->get_ref<const std::string &>(), region, source + ": " + key);
  }
  if (auto kind = entry.find("kind"); kind != entry.end()) {
    if (*kind == "memory")
      region.kind = Region::Kind::Memory;
    else if (*kind == "csr")
      region.kind = Region::Kind::Csr;
    else
      fail(source, key + ".kind", "expected \"memory\" or \"csr\", got " + shown(*kind));
  }
  return region;
}

} // namespace

uint64_t parseSize(std::string_view text, std::string_view what) {
  auto malformed = [&]() -> std::invalid_argument {
    return std::invalid_argument(std::string(what) + ": '" + std::string(text) +
                                 "' is not a number (decimal or 0x hex, optional K/M/G suffix)");
  };
  std::string_view digits = text;
  unsigned shift = digits.empty() ? 0 : suffixShift(digits.back());
  if (shift != 0)
    digits.remove_suffix(1);
  unsigned radix = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    radix = 16;
    digits.remove_prefix(2);
  }
  if (digits.empty() || !isDigit(digits.front(), radix) || !isDigit(digits.back(), radix))
    throw malformed();
  auto tooLarge = [&]() -> std::invalid_argument {
    return std::invalid_argument(std::string(what) + ": '" + std::string(text) +
                                 "' does not fit in 64 bits");
  };
  uint64_t value = 0;
  for (size_t i = 0; i < digits.size(); ++i) {
    char c = digits[i];
    if (c == '_') {
      // Separators only between two digits (the ends are digits, see above).
      if (!isDigit(digits[i + 1], radix))
        throw malformed();
      continue;
    }
    if (!isDigit(c, radix))
      throw malformed();
    unsigned digit = digitValue(c);
    if (value > (UINT64_MAX - digit) / radix)
      throw tooLarge();
    value = value * radix + digit;
  }
  if (value > (UINT64_MAX >> shift))
    throw tooLarge();
  return value << shift;
}

AddressMap AddressMap::defaults() {
  constexpr uint64_t kMiB = uint64_t(1) << 20;
  AddressMap map;
  map.regions = {
      {.name = "weights", .base = 0x0000'0000, .size = 256 * kMiB},
      {.name = "activations", .base = 0x1000'0000, .size = 256 * kMiB},
      {.name = "ring", .base = 0x2000'0000, .size = 1 * kMiB},
      {.name = "csr", .base = 0x3000'0000, .size = 4096, .kind = Region::Kind::Csr},
      // Host data of captured traces is staged here and copied into place
      // by the trace's own COPY packets.
      {.name = "staging", .base = 0x1'0000'0000, .size = 1024 * kMiB},
  };
  return map;
}

AddressMap AddressMap::fromJson(std::string_view text, const std::string &sourceName) {
  checkJsonDepth(text, sourceName);
  json root;
  try {
    root = json::parse(text.begin(), text.end());
  } catch (const json::parse_error &error) {
    // Drop nlohmann's "[json.exception.parse_error.101] " tag; keep its
    // "parse error at line L, column C: ...".
    std::string_view message = error.what();
    if (size_t tagEnd = message.find("] "); tagEnd != std::string_view::npos)
      message.remove_prefix(tagEnd + 2);
    throw std::invalid_argument(sourceName + ": invalid JSON: " + std::string(message));
  }
  if (!root.is_object())
    throw std::invalid_argument(sourceName + ": expected an object with a \"regions\" array, got " +
                                shown(root));
  for (const auto &[key, value] : root.items()) {
    if (key != "regions")
      fail(sourceName, key, "unknown key (expected regions)");
  }
  auto regions = root.find("regions");
  if (regions == root.end())
    fail(sourceName, "regions", "missing required key");
  if (!regions->is_array())
    fail(sourceName, "regions", "expected an array, got " + shown(*regions));

  AddressMap map;
  for (size_t i = 0; i < regions->size(); ++i)
    map.regions.push_back(
        regionFromJson((*regions)[i], sourceName, "regions[" + std::to_string(i) + "]"));
  try {
    map.validate();
  } catch (const std::invalid_argument &error) {
    throw std::invalid_argument(sourceName + ": " + error.what());
  }
  return map;
}

AddressMap AddressMap::fromJsonFile(const std::string &path) {
  std::vector<uint8_t> text;
  try {
    text = io::readFile(path, kMaxJsonBytes, "the size limit of a memory configuration");
  } catch (const io::FileError &e) {
    throw std::invalid_argument(e.what());
  }
  return fromJson(std::string_view(reinterpret_cast<const char *>(text.data()), text.size()), path);
}

void AddressMap::applyOverride(std::string_view spec) {
  std::string context = "override '" + std::string(spec) + "'";
  auto malformed = [&]() -> std::invalid_argument {
    return std::invalid_argument(context + ": expected name=BASE:SIZE[:rw|r|w]");
  };
  size_t equals = spec.find('=');
  if (equals == std::string_view::npos || equals == 0)
    throw malformed();
  std::string_view name = spec.substr(0, equals);
  std::vector<std::string_view> fields;
  for (std::string_view rest = spec.substr(equals + 1);;) {
    size_t colon = rest.find(':');
    fields.push_back(rest.substr(0, colon));
    if (colon == std::string_view::npos)
      break;
    rest.remove_prefix(colon + 1);
  }
  if (fields.size() < 2 || fields.size() > 3)
    throw malformed();

  Region updated;
  updated.name = std::string(name);
  auto existing = std::find_if(regions.begin(), regions.end(),
                               [&](const Region &region) { return region.name == name; });
  if (existing != regions.end())
    updated = *existing;
  updated.base = parseSize(fields[0], context + " base");
  updated.size = parseSize(fields[1], context + " size");
  if (fields.size() == 3)
    parseAccess(fields[2], updated, context);
  if (existing != regions.end())
    *existing = std::move(updated);
  else
    regions.push_back(std::move(updated));
}

void AddressMap::validate() const {
  for (size_t i = 0; i < regions.size(); ++i) {
    const Region &region = regions[i];
    std::string label = regionLabel(regions, i);
    if (region.name.empty())
      throw std::invalid_argument(label + ": empty name");
    if (region.size == 0)
      throw std::invalid_argument(label + ": size is 0");
    if (region.base % kRegionAlignment != 0)
      throw std::invalid_argument(label + ": base " + fmt::hex(region.base) +
                                  " is not a multiple of 4 KiB");
    if (region.size % kRegionAlignment != 0)
      throw std::invalid_argument(label + ": size " + fmt::hex(region.size) +
                                  " is not a multiple of 4 KiB");
    if (region.size - 1 > UINT64_MAX - region.base)
      throw std::invalid_argument(label + ": base " + fmt::hex(region.base) + " + size " +
                                  fmt::hex(region.size) + " runs past 2^64");
  }

  std::set<std::string_view> names;
  for (size_t i = 0; i < regions.size(); ++i) {
    if (!names.insert(regions[i].name).second)
      throw std::invalid_argument(regionLabel(regions, i) + ": duplicate region name");
  }

  std::vector<size_t> byBase(regions.size());
  std::iota(byBase.begin(), byBase.end(), size_t{0});
  std::sort(byBase.begin(), byBase.end(),
            [&](size_t a, size_t b) { return regions[a].base < regions[b].base; });
  for (size_t k = 1; k < byBase.size(); ++k) {
    const Region &lower = regions[byBase[k - 1]];
    const Region &upper = regions[byBase[k]];
    if (lower.contains(upper.base))
      throw std::invalid_argument(regionLabel(regions, byBase[k]) + " " +
                                  fmt::rangeText(upper.base, upper.size) + " overlaps " +
                                  regionLabel(regions, byBase[k - 1]) + " " +
                                  fmt::rangeText(lower.base, lower.size));
  }
}

const Region *AddressMap::find(uint64_t address) const {
  for (const Region &region : regions) {
    if (region.contains(address))
      return &region;
  }
  return nullptr;
}

FaultCode AddressMap::checkEngineAccess(uint64_t address, uint64_t length, Access access) const {
  const Region *region = find(address);
  if (!region)
    return FaultCode::Unmapped;
  if ((includes(access, Access::Read) && !region->engineReadable()) ||
      (includes(access, Access::Write) && !region->engineWritable()))
    return FaultCode::Permission;
  // address is in the region, so the subtraction cannot wrap.
  if (length > region->size - (address - region->base))
    return FaultCode::OutOfRegion;
  return FaultCode::None;
}

std::string AddressMap::regionText(uint64_t address) const {
  const Region *region = find(address);
  if (!region)
    return "no region";
  std::string text = "region '" + region->name + "' " + fmt::hex(region->base) + "-" +
                     fmt::hex(region->base + (region->size - 1));
  if (region->kind == Region::Kind::Csr)
    text += ", the CSR window";
  else if (region->isCommandRing())
    text += ", the command ring";
  else if (!region->writable)
    text += ", read-only";
  else if (!region->readable)
    text += ", write-only";
  return text;
}

void AddressMap::annotate(Fault &fault) const {
  fault.region = regionText(fault.address);
  const Region *region = find(fault.address);
  if (fault.code == FaultCode::OutOfRegion && region) {
    const uint64_t room = region->size - (fault.address - region->base);
    fault.detail = "runs " + fmt::byteCount(fault.length - room) + " past its end";
  }
}

const Region *AddressMap::byName(std::string_view name) const {
  for (const Region &region : regions) {
    if (region.name == name)
      return &region;
  }
  return nullptr;
}

} // namespace npu::mem
