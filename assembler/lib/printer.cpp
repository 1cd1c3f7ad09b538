#include "npu/asm/disassembler.h"

#include "expression.h"
#include "lexer.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <map>

namespace npu::as {

namespace {

using isa::InstrInfo;
using isa::OperandInfo;
using isa::OperandKind;

std::string format(const char *fmt, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

std::string formatOperand(const OperandInfo &op, uint64_t raw) {
  switch (op.kind) {
  case OperandKind::Addr: return format("0x%" PRIx64, raw);
  case OperandKind::U32:
  case OperandKind::Flag: return std::to_string(raw);
  case OperandKind::I32: return std::to_string(isa::operandValue(op, raw));
  case OperandKind::F32: return formatF32(static_cast<uint32_t>(raw));
  case OperandKind::Bits32: return format("0x%08" PRIx64, raw);
  case OperandKind::Enum:
    if (const isa::EnumValueInfo *v = op.enumInfo->findValue(raw))
      return v->name;
    return std::to_string(raw);
  }
  return std::to_string(raw);
}

std::string packetDirective(std::span<const uint8_t, isa::kPacketBytes> packet) {
  std::string s = ".packet";
  for (unsigned w = 0; w < 16; ++w)
    s += format("%s0x%08x", w ? ", " : " ", isa::detail::load32(packet.data(), 4 * w));
  return s;
}

// A string literal that decodes back to `s`.
std::string quote(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += char(c);
    else if (c >= 0x20 && c < 0x7f)
      out += char(c);
    else
      out += format("\\x%02x", c);
  }
  return out + "\"";
}

bool isLabelName(const std::string &name) {
  if (name.empty() || !isIdentStart(name[0]) || name[0] == '.' || name == "inf" || name == "nan" ||
      name == "f32bits")
    return false;
  return std::all_of(name.begin(), name.end(), isIdentChar);
}

} // namespace

std::string formatF32(uint32_t bits) {
  const bool negative = bits >> 31;
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u)
    return format("f32bits(0x%08x)", bits);
  if (magnitude == 0x7f800000u)
    return negative ? "-inf" : "inf";
  if (bits == 0x80000000u)
    return "-0.0";
  // The shortest decimal that reads back as the same float.
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof buf, floatFromBits(bits));
  std::string s(buf, result.ptr);
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

std::string formatInstruction(const isa::Instruction &inst) {
  const InstrInfo *ins = isa::findOpcode(static_cast<uint32_t>(inst.opcode));
  if (!ins) {
    // Without an ISA entry no operand has a slot: only the opcode is known.
    std::array<uint8_t, isa::kPacketBytes> packet{};
    isa::detail::store64(packet.data(), 0, static_cast<uint32_t>(inst.opcode));
    return packetDirective(packet);
  }
  std::string s = ins->mnemonic;
  bool first = true;
  for (const isa::SyntaxItem &item : ins->syntaxList()) {
    if (item.operand >= 0) {
      if (first)
        s += ' ';
      s += formatOperand(ins->operands[item.operand], inst.operands[item.operand]);
    } else if (item.literal == ',') {
      s += ", ";
    } else {
      if (first)
        s += ' ';
      s += item.literal;
    }
    first = false;
  }
  for (uint32_t i = 0; i < ins->numOperands; ++i) {
    const OperandInfo &op = ins->operands[i];
    if (!op.optional || inst.operands[i] == op.defaultBits)
      continue;
    s += first ? " " : ", ";
    first = false;
    s += op.name;
    if (op.kind != OperandKind::Flag || inst.operands[i] != 1)
      s += "=" + formatOperand(op, inst.operands[i]);
  }
  return s;
}

std::string formatPacket(std::span<const uint8_t, isa::kPacketBytes> packet) {
  isa::Instruction inst;
  std::string why;
  if (isa::decode(packet, inst, &why))
    return formatInstruction(inst);
  return packetDirective(packet) + "  # does not decode: " + why;
}

std::string formatObject(const bin::Object &object, const DumpOptions &options) {
  std::string out;
  printObject(object, options, [&](std::string_view text) { out += text; });
  return out;
}

void printObject(const bin::Object &object, const DumpOptions &options,
                 const std::function<void(std::string_view)> &emit) {
  // Pieces go out as they are made: a large container is never held as
  // one string.
  struct Output {
    const std::function<void(std::string_view)> &emit;
    Output &operator+=(std::string_view text) {
      emit(text);
      return *this;
    }
  } out{emit};
  uint64_t dataBytes = 0, checkBytes = 0;
  for (const auto &d : object.data)
    dataBytes += d.bytes.size();
  for (const auto &c : object.checks)
    checkBytes += c.expected.size();
  if (options.header) {
    out += format("# ISA v%u.%u, hash 0x%016" PRIx64 "%s\n", object.isaVersionMajor,
                  object.isaVersionMinor, object.isaHash,
                  object.isaHash == isa::kIsaHash ? "" : " (differs from this toolchain's ISA!)");
    out += format("# text: %zu packets (%zu bytes)\n", object.text.size(),
                  object.text.size() * isa::kPacketBytes);
    out += format("# data: %zu segments (%" PRIu64 " bytes)\n", object.data.size(), dataBytes);
    out += format("# check: %zu regions (%" PRIu64 " bytes)\n", object.checks.size(), checkBytes);
    out += format("# symbols: %zu, metadata entries: %zu\n", object.symbols.size(),
                  object.metadata.size());
  }
  for (const auto &[key, value] : object.metadata) {
    if (options.fullContents)
      out += ".meta " + quote(key) + ", " + quote(value) + "\n";
    else
      out += "# meta " + quote(key) + " = " + quote(value) + "\n";
  }

  std::multimap<uint64_t, const std::string *> packetLabels, addressLabels;
  for (const bin::Symbol &sym : object.symbols) {
    if (!isLabelName(sym.name)) {
      out +=
          format("# symbol %s = %s%" PRIu64 " is not a valid label name\n", quote(sym.name).c_str(),
                 sym.kind == bin::Symbol::Kind::Packet ? "packet " : "0x", sym.value);
      continue;
    }
    (sym.kind == bin::Symbol::Kind::Packet ? packetLabels : addressLabels)
        .emplace(sym.value, &sym.name);
  }

  out += ".text\n";
  auto labelsAt = [&](std::multimap<uint64_t, const std::string *> &labels, uint64_t at) {
    auto range = labels.equal_range(at);
    for (auto it = range.first; it != range.second; ++it)
      out += *it->second + ":\n";
    labels.erase(range.first, range.second);
  };
  for (size_t i = 0; i < object.text.size(); ++i) {
    labelsAt(packetLabels, i);
    std::string line = "    " + formatPacket(object.text[i]);
    if (options.rawWords) {
      if (line.find('#') == std::string::npos) {
        line.resize(std::max<size_t>(line.size() + 2, 60), ' ');
        line += "#";
      } else {
        line += ";";
      }
      line += format(" [%zu]", i);
      for (unsigned w = 0; w < 16; ++w)
        line += format(" %08x", isa::detail::load32(object.text[i].data(), 4 * w));
    }
    out += line + "\n";
  }
  labelsAt(packetLabels, object.text.size());

  // Data and check sections in address order, with the address labels that
  // fall inside them (or just past their end).
  struct Section {
    uint64_t address;
    const std::vector<uint8_t> *bytes;
    const bin::CheckRegion *check;
  };
  std::vector<Section> sections;
  for (const auto &d : object.data)
    sections.push_back({d.address, &d.bytes, nullptr});
  for (const auto &c : object.checks)
    sections.push_back({c.address, &c.expected, &c});
  std::stable_sort(sections.begin(), sections.end(),
                   [](const Section &a, const Section &b) { return a.address < b.address; });
  for (const Section &sec : sections) {
    // Labels below this section that no earlier section took.
    while (!addressLabels.empty() && addressLabels.begin()->first < sec.address) {
      const uint64_t at = addressLabels.begin()->first;
      out += format(".data 0x%" PRIx64 "\n", at);
      labelsAt(addressLabels, at);
    }
    std::string directive = sec.check ? format(".check 0x%" PRIx64, sec.address)
                                      : format(".data 0x%" PRIx64, sec.address);
    if (sec.check && sec.check->kind == bin::CheckRegion::Kind::F32Ulp)
      directive += format(", ulp=%u", sec.check->ulpTolerance);
    const std::vector<uint8_t> &bytes = *sec.bytes;
    if (!options.fullContents) {
      out += "# " + directive + format("  # %zu bytes", bytes.size()) + "\n";
      continue;
    }
    out += directive + "\n";
    const uint64_t end = sec.address + bytes.size();
    size_t i = 0;
    while (i < bytes.size()) {
      labelsAt(addressLabels, sec.address + i);
      // Up to 16 bytes per line, stopping at the next label.
      size_t n = std::min<size_t>(16, bytes.size() - i);
      auto next = addressLabels.upper_bound(sec.address + i);
      if (next != addressLabels.end() && next->first < sec.address + i + n)
        n = size_t(next->first - (sec.address + i));
      std::string line = "    .byte";
      for (size_t k = 0; k < n; ++k)
        line += format("%s0x%02x", k ? ", " : " ", bytes[i + k]);
      out += line + "\n";
      i += n;
    }
    labelsAt(addressLabels, end);
  }
  while (!addressLabels.empty()) {
    const uint64_t at = addressLabels.begin()->first;
    out += format(".data 0x%" PRIx64 "\n", at);
    labelsAt(addressLabels, at);
  }
}

} // namespace npu::as
