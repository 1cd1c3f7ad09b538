#include "npu/bin/object.h"

#include "npu/support/file_io.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <new>
#include <set>
#include <tuple>

namespace npu::bin {

namespace {

constexpr uint8_t kMagic[8] = {0x89, 'N', 'P', 'U', 'B', 'I', 'N', '\n'};
constexpr uint32_t kFormatMajor = 1;
constexpr uint32_t kFormatMinor = 0;
constexpr uint32_t kHeaderBytes = 64;
constexpr uint32_t kSectionEntryBytes = 32;

enum SectionType : uint32_t { kText = 1, kData = 2, kCheck = 3, kSymbols = 4, kMetadata = 5 };

const char *sectionName(uint32_t type) {
  switch (type) {
  case kText: return "text";
  case kData: return "data";
  case kCheck: return "check";
  case kSymbols: return "symbols";
  case kMetadata: return "metadata";
  }
  return "unknown";
}

std::string format(const char *fmt, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

uint64_t padTo8(uint64_t n) {
  return (n + 7) & ~uint64_t(7);
}

// Serialises to a sink with `void put(const void *, size_t)`. Section
// sizes are computed first so that the header and the table are written
// before the sections: the output streams, with no second copy of the text.
template <typename Sink> class Writer {
public:
  explicit Writer(Sink &sink) : sink_(sink) {}
  void u32(uint32_t v) {
    uint8_t b[4];
    for (int i = 0; i < 4; ++i)
      b[i] = static_cast<uint8_t>(v >> (8 * i));
    put(b, 4);
  }
  void u64(uint64_t v) {
    u32(static_cast<uint32_t>(v));
    u32(static_cast<uint32_t>(v >> 32));
  }
  void put(const void *p, size_t n) {
    sink_.put(p, n);
    written_ += n;
  }
  void pad() {
    static constexpr uint8_t kZeros[8] = {};
    put(kZeros, padTo8(written_) - written_);
  }
  uint64_t written() const { return written_; }

private:
  Sink &sink_;
  uint64_t written_ = 0;
};

// Bounds-checked little-endian reads; `base` is the file offset of data[0]
// so that errors name absolute offsets.
class Reader {
public:
  Reader(std::span<const uint8_t> data, uint64_t base, const char *what)
      : data_(data), base_(base), what_(what) {}
  uint64_t offset() const { return base_ + pos_; }
  uint64_t remaining() const { return data_.size() - pos_; }
  void need(uint64_t n, const char *field) {
    if (n > remaining())
      throw FormatError(offset(),
                        format("%s: %s needs %" PRIu64 " bytes but only %" PRIu64 " remain", what_,
                               field, n, remaining()));
  }
  uint32_t u32(const char *field) {
    need(4, field);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
      v |= uint32_t(data_[pos_ + i]) << (8 * i);
    pos_ += 4;
    return v;
  }
  uint64_t u64(const char *field) {
    uint64_t lo = u32(field);
    return lo | uint64_t(u32(field)) << 32;
  }
  std::span<const uint8_t> bytes(uint64_t n, const char *field) {
    need(n, field);
    auto s = data_.subspan(pos_, n);
    pos_ += n;
    return s;
  }
  void padding(const char *field) {
    uint64_t n = padTo8(pos_) - pos_;
    for (uint8_t b : bytes(n, field))
      if (b)
        throw FormatError(offset() - n, format("%s: non-zero padding after %s", what_, field));
  }

private:
  std::span<const uint8_t> data_;
  uint64_t base_;
  size_t pos_ = 0;
  const char *what_;
};

struct SectionEntry {
  uint32_t type;
  uint64_t offset;
  uint64_t size;
  uint64_t count;
};

void checkRange(uint64_t address, uint64_t length, const char *what, uint64_t errorOffset) {
  if (length == 0)
    throw FormatError(errorOffset, format("%s at 0x%" PRIx64 " is empty", what, address));
  if (address + length < address)
    throw FormatError(errorOffset, format("%s at 0x%" PRIx64 " with %" PRIu64
                                          " bytes wraps past the end of the address space",
                                          what, address, length));
}

// File offsets of each record, so that a semantic error names the record;
// empty when validating an object about to be written (offset 0).
struct RecordOffsets {
  std::vector<uint64_t> data, checks, symbols, metadata;
  static uint64_t at(const std::vector<uint64_t> &v, size_t i) { return i < v.size() ? v[i] : 0; }
};

// Overlap errors name the record that starts inside an earlier one.
void checkNoOverlap(std::vector<std::tuple<uint64_t, uint64_t, uint64_t>> ranges,
                    const char *what) {
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    auto [address, length, offset] = ranges[i];
    auto [prevAddress, prevLength, prevOffset] = ranges[i - 1];
    if (address < prevAddress + prevLength)
      throw FormatError(offset, format("%s at 0x%" PRIx64 " (+%" PRIu64
                                       ") overlaps the one at 0x%" PRIx64 " (+%" PRIu64 ")",
                                       what, address, length, prevAddress, prevLength));
  }
}

void validateObject(const Object &object, const RecordOffsets &offsets) {
  std::vector<std::tuple<uint64_t, uint64_t, uint64_t>> ranges;
  for (size_t i = 0; i < object.data.size(); ++i) {
    const DataSegment &seg = object.data[i];
    const uint64_t errorOffset = RecordOffsets::at(offsets.data, i);
    checkRange(seg.address, seg.bytes.size(), "data segment", errorOffset);
    ranges.emplace_back(seg.address, seg.bytes.size(), errorOffset);
  }
  checkNoOverlap(ranges, "data segment");
  ranges.clear();
  for (size_t i = 0; i < object.checks.size(); ++i) {
    const CheckRegion &check = object.checks[i];
    const uint64_t errorOffset = RecordOffsets::at(offsets.checks, i);
    checkRange(check.address, check.expected.size(), "check region", errorOffset);
    if (check.kind == CheckRegion::Kind::F32Ulp && (check.expected.size() % 4 || check.address % 4))
      throw FormatError(errorOffset, format("f32 check region at 0x%" PRIx64
                                            " must be 4-byte aligned and a multiple of 4 bytes",
                                            check.address));
    if (check.kind == CheckRegion::Kind::Exact && check.ulpTolerance)
      throw FormatError(
          errorOffset,
          format("exact check region at 0x%" PRIx64 " has a ulp tolerance", check.address));
    ranges.emplace_back(check.address, check.expected.size(), errorOffset);
  }
  checkNoOverlap(ranges, "check region");
  std::set<std::string> names;
  for (size_t i = 0; i < object.symbols.size(); ++i) {
    const Symbol &sym = object.symbols[i];
    const uint64_t errorOffset = RecordOffsets::at(offsets.symbols, i);
    if (sym.name.empty() || sym.name.size() > kMaxSymbolNameBytes)
      throw FormatError(errorOffset,
                        format("symbol name must have 1 to %zu characters", kMaxSymbolNameBytes));
    for (unsigned char c : sym.name)
      if (c < 0x21 || c > 0x7e)
        throw FormatError(errorOffset, format("symbol name '%s' contains a non-printable character",
                                              sym.name.c_str()));
    if (!names.insert(sym.name).second)
      throw FormatError(errorOffset, format("duplicate symbol '%s'", sym.name.c_str()));
    if (sym.kind == Symbol::Kind::Packet && sym.value > object.text.size())
      throw FormatError(errorOffset,
                        format("symbol '%s' names packet %" PRIu64 " but the text has %zu packets",
                               sym.name.c_str(), sym.value, object.text.size()));
  }
  std::set<std::string> keys;
  for (size_t i = 0; i < object.metadata.size(); ++i) {
    const std::string &key = object.metadata[i].first;
    const uint64_t errorOffset = RecordOffsets::at(offsets.metadata, i);
    if (key.empty())
      throw FormatError(errorOffset, "empty metadata key");
    if (!keys.insert(key).second)
      throw FormatError(errorOffset, format("duplicate metadata key '%s'", key.c_str()));
  }
}

std::string string(std::span<const uint8_t> b) {
  return std::string(b.begin(), b.end());
}

} // namespace

FormatError::FormatError(uint64_t offset, const std::string &message, const std::string &path)
    : std::runtime_error((path.empty() ? "" : path + ": ") +
                         format("offset %" PRIu64 ": ", offset) + message),
      offset_(offset), message_(message) {}

bool hasMagic(std::span<const uint8_t> bytes) {
  return bytes.size() >= sizeof kMagic &&
         std::equal(std::begin(kMagic), std::end(kMagic), bytes.begin());
}

namespace {

struct SectionLayout {
  uint32_t type;
  uint64_t count;
  uint64_t size;
};

std::vector<SectionLayout> layoutOf(const Object &object) {
  std::vector<SectionLayout> sections;
  auto add = [&](uint32_t type, uint64_t count, uint64_t size) {
    if (count)
      sections.push_back({type, count, size});
  };
  add(kText, object.text.size(), object.text.size() * isa::kPacketBytes);
  uint64_t size = 0;
  for (const DataSegment &seg : object.data)
    size += 16 + padTo8(seg.bytes.size());
  add(kData, object.data.size(), size);
  size = 0;
  for (const CheckRegion &c : object.checks)
    size += 24 + padTo8(c.expected.size());
  add(kCheck, object.checks.size(), size);
  size = 0;
  for (const Symbol &sym : object.symbols)
    size += 16 + padTo8(sym.name.size());
  add(kSymbols, object.symbols.size(), size);
  size = 0;
  for (const auto &[key, value] : object.metadata)
    size += 8 + padTo8(key.size() + value.size());
  add(kMetadata, object.metadata.size(), size);
  return sections;
}

template <typename Sink> void serialize(const Object &object, Sink &sink) {
  validateObject(object, RecordOffsets{});
  const std::vector<SectionLayout> sections = layoutOf(object);
  uint64_t fileSize = kHeaderBytes + sections.size() * kSectionEntryBytes;
  for (const SectionLayout &s : sections)
    fileSize += s.size;

  Writer<Sink> w(sink);
  w.put(kMagic, sizeof kMagic);
  w.u32(kFormatMajor);
  w.u32(kFormatMinor);
  w.u32(object.isaVersionMajor);
  w.u32(object.isaVersionMinor);
  w.u64(object.isaHash);
  w.u32(static_cast<uint32_t>(sections.size()));
  w.u32(kHeaderBytes);
  w.u64(fileSize);
  w.u32(kHeaderBytes);
  static constexpr uint8_t kReserved[kHeaderBytes - 52] = {};
  w.put(kReserved, sizeof kReserved);

  uint64_t offset = kHeaderBytes + sections.size() * kSectionEntryBytes;
  for (const SectionLayout &s : sections) {
    w.u32(s.type);
    w.u32(0);
    w.u64(offset);
    w.u64(s.size);
    w.u64(s.count);
    offset += s.size;
  }
  for (const SectionLayout &s : sections) {
    switch (s.type) {
    case kText:
      // Packets are contiguous arrays of bytes: one write for the section.
      w.put(object.text.data(), object.text.size() * isa::kPacketBytes);
      break;
    case kData:
      for (const DataSegment &seg : object.data) {
        w.u64(seg.address);
        w.u64(seg.bytes.size());
        w.put(seg.bytes.data(), seg.bytes.size());
        w.pad();
      }
      break;
    case kCheck:
      for (const CheckRegion &c : object.checks) {
        w.u64(c.address);
        w.u32(static_cast<uint32_t>(c.kind));
        w.u32(c.ulpTolerance);
        w.u64(c.expected.size());
        w.put(c.expected.data(), c.expected.size());
        w.pad();
      }
      break;
    case kSymbols:
      for (const Symbol &sym : object.symbols) {
        w.u32(static_cast<uint32_t>(sym.kind));
        w.u32(static_cast<uint32_t>(sym.name.size()));
        w.u64(sym.value);
        w.put(sym.name.data(), sym.name.size());
        w.pad();
      }
      break;
    case kMetadata:
      for (const auto &[key, value] : object.metadata) {
        w.u32(static_cast<uint32_t>(key.size()));
        w.u32(static_cast<uint32_t>(value.size()));
        w.put(key.data(), key.size());
        w.put(value.data(), value.size());
        w.pad();
      }
      break;
    }
  }
}

struct VectorSink {
  std::vector<uint8_t> out;
  void put(const void *p, size_t n) {
    const uint8_t *b = static_cast<const uint8_t *>(p);
    out.insert(out.end(), b, b + n);
  }
};

// Small writes are gathered; large ones (the text) go straight to the file.
struct FileSink {
  io::OutputFile &file;
  std::vector<uint8_t> buffer;
  void put(const void *p, size_t n) {
    if (buffer.size() + n > (1u << 16))
      flush();
    if (n > (1u << 16)) {
      file.write(p, n);
      return;
    }
    const uint8_t *b = static_cast<const uint8_t *>(p);
    buffer.insert(buffer.end(), b, b + n);
  }
  void flush() {
    file.write(buffer.data(), buffer.size());
    buffer.clear();
  }
};

} // namespace

std::vector<uint8_t> write(const Object &object) {
  VectorSink sink;
  serialize(object, sink);
  return std::move(sink.out);
}

namespace {

Object parse(std::span<const uint8_t> bytes) {
  // The magic first: a file that is something else entirely should say so,
  // whatever its size.
  if (bytes.empty())
    throw FormatError(0, "empty file: not an .npubin file");
  if (!std::equal(bytes.begin(), bytes.begin() + std::min(bytes.size(), sizeof kMagic), kMagic))
    throw FormatError(0, "bad magic: not an .npubin file");
  if (bytes.size() < kHeaderBytes)
    throw FormatError(
        0, format("file has %zu bytes, less than the %u-byte header", bytes.size(), kHeaderBytes));
  Reader h(bytes.first(kHeaderBytes), 0, "header");
  h.bytes(sizeof kMagic, "magic");
  uint32_t major = h.u32("format version");
  uint32_t minor = h.u32("format version");
  if (major != kFormatMajor)
    throw FormatError(8, format("format version %u.%u is not supported (this reader reads %u.x)",
                                major, minor, kFormatMajor));
  // A newer minor version may add fields this reader would not check.
  if (minor > kFormatMinor)
    throw FormatError(12, format("format version %u.%u is newer than this reader's %u.%u", major,
                                 minor, kFormatMajor, kFormatMinor));
  Object object;
  object.isaVersionMajor = h.u32("ISA version");
  object.isaVersionMinor = h.u32("ISA version");
  object.isaHash = h.u64("ISA hash");
  // Field offsets: see docs/binary-format.md.
  const uint32_t sectionCount = h.u32("section count");       // 32
  const uint32_t tableOffset = h.u32("section table offset"); // 36
  const uint64_t fileSize = h.u64("file size");               // 40
  const uint32_t headerSize = h.u32("header size");           // 48
  const uint64_t reservedAt = h.offset();
  const auto reserved = h.bytes(h.remaining(), "reserved");
  for (size_t i = 0; i < reserved.size(); ++i)
    if (reserved[i])
      throw FormatError(reservedAt + i, "reserved header bytes must be zero");
  if (headerSize != kHeaderBytes)
    throw FormatError(48, format("header size %u, expected %u", headerSize, kHeaderBytes));
  if (fileSize != bytes.size())
    throw FormatError(40,
                      format("header records %" PRIu64 " bytes but the file has %zu%s", fileSize,
                             bytes.size(), fileSize > bytes.size() ? " (truncated?)" : ""));
  if (tableOffset != kHeaderBytes)
    throw FormatError(36,
                      format("section table offset %u, expected %u", tableOffset, kHeaderBytes));
  if (sectionCount > 5)
    throw FormatError(
        32, format("%u sections; a file has at most one of each of the 5 types", sectionCount));
  const uint64_t tableEnd = kHeaderBytes + uint64_t(sectionCount) * kSectionEntryBytes;
  if (tableEnd > bytes.size())
    throw FormatError(kHeaderBytes, "section table runs past the end of the file");
  if (object.isaVersionMajor != isa::kIsaVersionMajor)
    throw FormatError(16, format("file is for ISA v%u.%u, this toolchain implements v%u.%u",
                                 object.isaVersionMajor, object.isaVersionMinor,
                                 isa::kIsaVersionMajor, isa::kIsaVersionMinor));

  Reader t(bytes.subspan(kHeaderBytes, tableEnd - kHeaderBytes), kHeaderBytes, "section table");
  std::vector<SectionEntry> entries;
  // Sections follow the table back to back, in increasing type order, each
  // type at most once: the writer's layout is the only valid one, so no
  // byte of a file escapes validation.
  uint64_t expectedOffset = tableEnd;
  for (uint32_t i = 0; i < sectionCount; ++i) {
    const uint64_t at = t.offset();
    SectionEntry e;
    e.type = t.u32("section type");
    if (t.u32("section flags"))
      throw FormatError(at + 4, format("section %u: flags must be zero", i));
    e.offset = t.u64("section offset");
    e.size = t.u64("section size");
    e.count = t.u64("section record count");
    if (e.type < kText || e.type > kMetadata)
      throw FormatError(at, format("section %u: unknown type %u", i, e.type));
    if (!entries.empty() && e.type == entries.back().type)
      throw FormatError(at, format("section %u: second %s section", i, sectionName(e.type)));
    if (!entries.empty() && e.type < entries.back().type)
      throw FormatError(at, format("section %u: %s section after the %s section (sections must be "
                                   "in increasing type order)",
                                   i, sectionName(e.type), sectionName(entries.back().type)));
    if (e.count == 0)
      throw FormatError(at + 24, format("%s section: record count is zero (empty sections are "
                                        "left out)",
                                        sectionName(e.type)));
    if (e.offset != expectedOffset)
      throw FormatError(at + 8, format("%s section starts at offset %" PRIu64 ", expected %" PRIu64
                                       " (sections follow the table without gaps or overlaps)",
                                       sectionName(e.type), e.offset, expectedOffset));
    if (e.size > bytes.size() - e.offset)
      throw FormatError(at + 16, format("%s section: %" PRIu64 " bytes at offset %" PRIu64
                                        " run past the end of the %zu-byte file",
                                        sectionName(e.type), e.size, e.offset, bytes.size()));
    if (e.size % 8)
      throw FormatError(at + 16, format("%s section: size %" PRIu64 " is not a multiple of 8",
                                        sectionName(e.type), e.size));
    expectedOffset = e.offset + e.size;
    entries.push_back(e);
  }
  if (expectedOffset != bytes.size())
    throw FormatError(expectedOffset, format("%" PRIu64 " bytes after the last section",
                                             bytes.size() - expectedOffset));

  RecordOffsets offsets;
  for (const SectionEntry &e : entries) {
    const char *name = sectionName(e.type);
    Reader r(bytes.subspan(e.offset, e.size), e.offset, name);
    // Every record has a fixed part of at least 8 bytes: reject absurd
    // counts before allocating anything.
    const uint64_t minRecord = e.type == kText       ? isa::kPacketBytes
                               : e.type == kCheck    ? 24
                               : e.type == kMetadata ? 8
                                                     : 16;
    if (e.count > e.size / minRecord)
      throw FormatError(e.offset, format("%s section claims %" PRIu64
                                         " records but has room for at most %" PRIu64,
                                         name, e.count, e.size / minRecord));
    if (e.type == kText)
      object.text.reserve(e.count);
    for (uint64_t i = 0; i < e.count; ++i) {
      switch (e.type) {
      case kText: {
        Packet p;
        auto b = r.bytes(isa::kPacketBytes, "packet");
        std::copy(b.begin(), b.end(), p.begin());
        object.text.push_back(p);
        break;
      }
      case kData: {
        offsets.data.push_back(r.offset());
        DataSegment seg;
        seg.address = r.u64("segment address");
        uint64_t length = r.u64("segment length");
        auto b = r.bytes(length, "segment bytes");
        seg.bytes.assign(b.begin(), b.end());
        r.padding("segment bytes");
        object.data.push_back(std::move(seg));
        break;
      }
      case kCheck: {
        CheckRegion c;
        const uint64_t at = r.offset();
        offsets.checks.push_back(at);
        c.address = r.u64("check address");
        uint32_t kind = r.u32("check kind");
        if (kind > 1)
          throw FormatError(at + 8, format("check region %" PRIu64 ": unknown kind %u", i, kind));
        c.kind = static_cast<CheckRegion::Kind>(kind);
        c.ulpTolerance = r.u32("ulp tolerance");
        uint64_t length = r.u64("check length");
        auto b = r.bytes(length, "check bytes");
        c.expected.assign(b.begin(), b.end());
        r.padding("check bytes");
        object.checks.push_back(std::move(c));
        break;
      }
      case kSymbols: {
        Symbol sym;
        const uint64_t at = r.offset();
        offsets.symbols.push_back(at);
        uint32_t kind = r.u32("symbol kind");
        if (kind > 1)
          throw FormatError(at, format("symbol %" PRIu64 ": unknown kind %u", i, kind));
        sym.kind = static_cast<Symbol::Kind>(kind);
        uint32_t length = r.u32("symbol name length");
        sym.value = r.u64("symbol value");
        sym.name = string(r.bytes(length, "symbol name"));
        r.padding("symbol name");
        object.symbols.push_back(std::move(sym));
        break;
      }
      case kMetadata: {
        offsets.metadata.push_back(r.offset());
        uint32_t keyLength = r.u32("metadata key length");
        uint32_t valueLength = r.u32("metadata value length");
        std::string key = string(r.bytes(keyLength, "metadata key"));
        std::string value = string(r.bytes(valueLength, "metadata value"));
        r.padding("metadata value");
        object.metadata.emplace_back(std::move(key), std::move(value));
        break;
      }
      }
    }
    if (r.remaining())
      throw FormatError(r.offset(),
                        format("%s section has %" PRIu64 " bytes after its %" PRIu64 " records",
                               name, r.remaining(), e.count));
  }
  validateObject(object, offsets);
  return object;
}

} // namespace

Object read(std::span<const uint8_t> bytes) {
  // Allocations are bounded by the file's size, but a file of many small
  // records takes a few times its size in memory.
  try {
    return parse(bytes);
  } catch (const std::bad_alloc &) {
    throw FormatError(
        0, format("the records of this %zu-byte container do not fit in memory", bytes.size()));
  }
}

Object readFile(const std::string &path) {
  const std::vector<uint8_t> bytes =
      io::readFile(path, kMaxFileBytes, "the size limit of an .npubin container");
  try {
    return read(bytes);
  } catch (const FormatError &e) {
    throw FormatError(e.offset(), e.message(), path);
  }
}

void writeFile(const std::string &path, const Object &object) {
  io::OutputFile file(path);
  FileSink sink{file, {}};
  serialize(object, sink);
  sink.flush();
  file.commit();
}

} // namespace npu::bin
