// The assembler: one pass over the source that emits packets and data as it
// goes; expressions that name a symbol defined later are kept and resolved
// when the whole input has been read.
#include "npu/asm/assembler.h"

#include "expression.h"
#include "lexer.h"
#include "name_table.h"
#include "npu/support/file_io.h"
#include "source_file.h"

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

#include <sys/mman.h>

namespace npu::as {

namespace {

using isa::InstrInfo;
using isa::OperandInfo;
using isa::OperandKind;

constexpr unsigned kMaxNesting = 64; // macro expansions, includes, .rept and .if
constexpr size_t kMaxLineBytes = size_t(64) << 20;
// What a heap allocation costs beyond its contents (the allocator's
// header, the owning object), charged with each kept string or vector.
constexpr uint64_t kAllocationOverhead = 64;
constexpr std::string_view kReservedNames[] = {"inf", "nan", "f32bits"};

std::string format(const char *fmt, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

// Names in messages are cut to a readable length: an identifier may be as
// long as its line.
std::string inQuotes(std::string_view s) {
  constexpr size_t kShown = 256;
  if (s.size() > kShown)
    return "'" + std::string(s.substr(0, kShown)) + "...' (" + std::to_string(s.size()) +
           " characters)";
  return "'" + std::string(s) + "'";
}

// Index into Assembler::notes_ of a diagnostic context; 0 is none.
using Notes = uint32_t;

// A source position kept for later diagnostics. The text views source
// buffers that live until the assembly ends (an expansion in which a
// location was saved is retired, not freed).
struct SavedLocation {
  const std::string *file = nullptr;
  uint32_t line = 0;
  uint32_t column = 0;
  std::string_view text;
  Notes notes = 0;
};

// An expression whose value is needed only after the whole source is read.
// Kept small: a large source may have millions.
struct DeferredExpression {
  uint32_t line;    // index into Assembler::lines_
  uint32_t offset;  // where the expression starts in that line
  int32_t captures; // index into Assembler::captures_ of the values the
                    // .set symbols had at the use (they may change), or -1
  // When the expression is `symbol + addend`, resolved without parsing
  // it again (see Value::symbol); nullptr otherwise.
  struct SymbolEntry *symbol;
  uint64_t addend;
};

struct SymbolEntry {
  enum class Kind : uint8_t { Label, Equ, Set };
  // Forward: only referenced so far (a placeholder for the definition).
  enum class State : uint8_t { Resolved, Deferred, Resolving, Failed, Forward };
  Kind kind = Kind::Label;
  State state = State::Resolved;
  const std::string *name = nullptr; // the key in Assembler::symbols_
  bool isAddress = false;            // a label in a data or check section
  Value value;
  int deferred = -1; // index into Assembler::deferred_ while Deferred
  const std::string *file = nullptr;
  uint32_t line = 0, column = 0;
};

struct MacroDefinition {
  std::string name;
  std::vector<std::string> params;
  NameTable<uint32_t> paramIndex; // position of each name in params
  std::vector<std::optional<std::string>> defaults;
  std::string body;
  const std::string *file = nullptr;
  uint32_t firstLine = 0;
};

// A run of source lines: a file, a macro expansion or a .rept body.
struct Frame {
  enum class Kind : uint8_t { File, Macro, Rept };
  Kind kind = Kind::File;
  std::string_view text;
  std::unique_ptr<std::string> owned; // expansion text of Macro and Rept frames
  uint64_t charged = 0;               // memory charged for `owned`
  bool keep = false;                  // a SavedLocation views `owned`
  size_t pos = 0;
  const std::string *file = nullptr;
  const std::string *dir = nullptr; // File frames: for relative includes
  uint32_t firstLine = 1;
  uint32_t lineIndex = 0; // lines consumed in this iteration
  uint64_t iterationsLeft = 0;
  bool carriageReturns = false; // File frames: some lines may end in "\r"
  std::string canonical;        // File frames: the path, for include loops
  std::string note;             // Macro frames: "in expansion of macro ..."
  size_t conditionDepth = 0;
  std::optional<Notes> notes; // context of lines of this frame, built on first use

  // Whether `line` is a view into this frame's own text.
  bool holds(std::string_view line) const {
    const std::less_equal<const char *> notAfter;
    return owned && notAfter(owned->data(), line.data()) &&
           notAfter(line.data(), owned->data() + owned->size());
  }
};

struct Condition {
  bool active; // lines of the current branch are assembled
  bool parentActive;
  bool taken; // some branch was already active
  bool sawElse;
  SavedLocation location;
  size_t frameDepth;
};

// A body being collected for .macro or .rept.
struct Collection {
  enum class Kind : uint8_t { None, Macro, Rept };
  Kind kind = Kind::None;
  unsigned depth = 0;
  size_t frameDepth = 0;
  MacroDefinition macro;
  uint64_t count = 0;
  SavedLocation location;
  uint32_t firstBodyLine = 0;
  std::string body;
  bool discard = false; // the header was wrong: drop the body at its end
};

struct Segment {
  bool isCheck = false;
  uint64_t address = 0;
  std::vector<uint8_t> bytes;
  bin::CheckRegion::Kind kind = bin::CheckRegion::Kind::Exact;
  uint32_t ulp = 0;
  SavedLocation location;
};

// An instruction operand that names a later symbol; the packet is encoded
// without it and patched at the end.
struct PendingOperand {
  DeferredExpression expression;
  uint32_t packet;
  uint16_t instruction; // index into isa::instructions()
  uint8_t operand;
};

// Writes `bits` into the operand's bit range of a packet, as isa::encode
// does (the round-trip tests hold the two together). Addresses and
// parameter words, nearly all operands, are one little-endian store.
void patchOperand(bin::Packet &packet, const OperandInfo &op, uint64_t bits) {
  if (op.bitOffset % 8 == 0 && (op.bitWidth == 32 || op.bitWidth == 64)) {
    uint8_t *at = &packet[op.bitOffset / 8u];
    if (op.bitWidth == 64)
      isa::detail::store64(at, 0, bits);
    else
      isa::detail::store32(at, 0, static_cast<uint32_t>(bits));
    return;
  }
  for (unsigned i = 0; i < op.bitWidth;) {
    const unsigned bit = op.bitOffset + i, shift = bit % 8;
    const unsigned n = std::min(8 - shift, op.bitWidth - i);
    const unsigned mask = ((1u << n) - 1) << shift;
    uint8_t &byte = packet[bit / 8];
    byte = static_cast<uint8_t>((byte & ~mask) | ((unsigned(bits >> i) << shift) & mask));
    i += n;
  }
}

struct DataFixup {
  size_t segment;
  size_t offset;
  uint8_t size;
  bool isFloat;
  DeferredExpression expression;
};

struct ListingEntry {
  const std::string *file;
  uint32_t line;
  std::string text;
  enum class Kind : uint8_t { None, Packets, Bytes } kind = Kind::None;
  size_t first = 0, count = 0; // packets, or byte offset and length in segment
  size_t segment = 0;
};

enum class Directive {
  Equ,
  Set,
  Include,
  Macro,
  Endm,
  Rept,
  Endr,
  If,
  Ifdef,
  Ifndef,
  Elif,
  Else,
  Endif,
  Text,
  Data,
  Check,
  Align,
  Byte,
  Half,
  Word,
  Quad,
  Float,
  Fill,
  Incbin,
  Ascii,
  Asciz,
  Meta,
  Packet,
  Error,
  Warning,
};

constexpr std::pair<const char *, Directive> kDirectives[] = {
    {".equ", Directive::Equ},       {".set", Directive::Set},     {".include", Directive::Include},
    {".macro", Directive::Macro},   {".endm", Directive::Endm},   {".rept", Directive::Rept},
    {".endr", Directive::Endr},     {".if", Directive::If},       {".ifdef", Directive::Ifdef},
    {".ifndef", Directive::Ifndef}, {".elif", Directive::Elif},   {".else", Directive::Else},
    {".endif", Directive::Endif},   {".text", Directive::Text},   {".data", Directive::Data},
    {".check", Directive::Check},   {".align", Directive::Align}, {".byte", Directive::Byte},
    {".half", Directive::Half},     {".word", Directive::Word},   {".quad", Directive::Quad},
    {".float", Directive::Float},   {".fill", Directive::Fill},   {".incbin", Directive::Incbin},
    {".ascii", Directive::Ascii},   {".asciz", Directive::Asciz}, {".meta", Directive::Meta},
    {".packet", Directive::Packet}, {".error", Directive::Error}, {".warning", Directive::Warning},
};

const NameTable<Directive> &directives() {
  static const NameTable<Directive> map = [] {
    NameTable<Directive> table;
    for (const auto &[name, d] : kDirectives)
      table.emplace(name).first->second = d;
    return table;
  }();
  return map;
}

const NameTable<const InstrInfo *> &mnemonics() {
  static const NameTable<const InstrInfo *> map = [] {
    NameTable<const InstrInfo *> table;
    for (const InstrInfo &ins : isa::instructions())
      table.emplace(ins.mnemonic).first->second = &ins;
    return table;
  }();
  return map;
}

// InstrInfo::operandIndex without a strlen per operand: optional operands
// are looked up on every line that has one.
int operandIndex(const InstrInfo &ins, std::string_view name) {
  static const std::vector<std::vector<std::string_view>> names = [] {
    std::vector<std::vector<std::string_view>> all;
    for (const InstrInfo &i : isa::instructions()) {
      all.emplace_back();
      for (const OperandInfo &op : i.operandList())
        all.back().emplace_back(op.name);
    }
    return all;
  }();
  const auto &list = names[size_t(&ins - isa::instructions().data())];
  for (size_t i = 0; i < list.size(); ++i)
    if (list[i] == name)
      return static_cast<int>(i);
  return -1;
}

// "copy dst, src, bytes[, name=...]" for messages.
std::string syntaxOf(const InstrInfo &ins) {
  std::string s = ins.mnemonic;
  bool first = true;
  for (const isa::SyntaxItem &item : ins.syntaxList()) {
    if (item.operand >= 0)
      s += std::string(first ? " " : "") + ins.operands[item.operand].name;
    else
      s += item.literal == ',' ? std::string(", ") : std::string(first ? " " : "") + item.literal;
    first = false;
  }
  for (const OperandInfo &op : ins.operandList())
    if (op.optional)
      s += std::string("[, ") + op.name + (op.kind == OperandKind::Flag ? "]" : "=...]");
  return s;
}

uint64_t widthMask(unsigned width) {
  return width >= 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
}

bool isReserved(std::string_view name) {
  if (name.empty() || (name[0] != 'i' && name[0] != 'n' && name[0] != 'f'))
    return false;
  for (std::string_view r : kReservedNames)
    if (name == r)
      return true;
  return false;
}

// The line's text shown under a diagnostic: control characters become '?'
// (a NUL or an escape sequence must not reach the terminal), and a long
// line is cut to a window around `column` (0-based); `caret` is the
// column's 0-based position in the result.
std::string excerpt(std::string_view line, size_t column, size_t &caret) {
  constexpr size_t kBefore = 120, kAfter = 120;
  size_t from = 0, to = line.size();
  std::string out;
  if (column > kBefore + 3) {
    from = column - kBefore;
    out = "...";
  }
  if (to > column + kAfter + 3)
    to = column + kAfter;
  caret = column - from + out.size();
  for (size_t i = from; i < to && i < line.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    out += c == '\t' || (c >= 0x20 && c != 0x7f) ? char(c) : '?';
  }
  if (to < line.size())
    out += "...";
  return out;
}

// The absolute path with symbolic links and "." and ".." resolved as far as
// it exists: two names of one file compare equal.
std::string canonicalPath(const std::string &path) {
  std::error_code ec;
  return std::filesystem::weakly_canonical(path, ec).string();
}

// Asks the kernel to back a large buffer with transparent huge pages: the
// packet and forward-reference arrays of a large input otherwise cost a
// page fault per 4 KiB.
void adviseHugePages(const void *buffer, size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(buffer) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(buffer) + bytes) & ~(kHuge - 1);
  if (end > begin)
    madvise(reinterpret_cast<void *>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)buffer;
  (void)bytes;
#endif
}

class Assembler {
public:
  explicit Assembler(const Options &options) : options_(options) {}

  AssembleResult run(std::string_view rootName, std::optional<std::string_view> text);

private:
  friend class LiveResolver;
  friend class FinalResolver;

  // --- source lines and diagnostics
  void pushFile(const std::string *path, const std::string *dir, std::string_view text);
  void mainLoop();
  void finishFrame(Frame &frame);
  void processLine(std::string_view line);
  Notes notes();
  // The current line at `offset`, for a diagnostic reported now.
  SavedLocation here(uint32_t offset);
  // The same, kept for later: the line's text stays alive.
  SavedLocation saveLocation(uint32_t offset);
  void report(Diagnostic::Severity severity, const SavedLocation &loc, std::string message);
  void error(uint32_t offset, std::string message);
  void warning(uint32_t offset, std::string message);
  void errorAt(const SavedLocation &loc, uint32_t offset, std::string message);
  void reportAt(Diagnostic::Severity severity, const SavedLocation &loc, uint32_t offset,
                std::string message);

  // --- statements
  void statement(Lexer &lex);
  void collectLine(std::string_view line);
  void checkParameters(std::string_view line);
  void endCollection(Lexer &lex);
  // .if and its kin, which are read even in skipped lines; false for any
  // other directive.
  bool conditional(Lexer &lex, Directive d, const Token &name);
  bool conditionValue(Lexer &lex, Directive d, bool &out);
  // The innermost open .if was opened in the current file or expansion.
  bool innermostConditionHere() const;
  void parseDirectiveIf(Lexer &lex, Directive d, const Token &name);
  void parseDirectiveElif(Lexer &lex, const Token &name);
  void parseDirectiveElse(Lexer &lex, const Token &name);
  void parseDirectiveEndif(Lexer &lex, const Token &name);
  // Every other directive, one function each (LLVM's parseDirectiveX):
  // `name` is the directive's token, `lex` is after it.
  void directive(Lexer &lex, Directive d, const Token &name);
  void parseDirectiveSymbol(Lexer &lex, SymbolEntry::Kind kind);
  void parseDirectiveInclude(Lexer &lex, const Token &name);
  void parseDirectiveIncbin(Lexer &lex, const Token &name);
  void parseDirectiveCollection(Lexer &lex, Directive d, const Token &name);
  void parseDirectiveText(Lexer &lex);
  void parseDirectiveAlign(Lexer &lex, const Token &name);
  void parseDirectiveFill(Lexer &lex, const Token &name);
  void parseDirectiveAscii(Lexer &lex, const Token &name, bool zeroTerminated);
  void parseDirectiveMeta(Lexer &lex);
  void parseDirectivePacket(Lexer &lex, const Token &name);
  void parseDirectiveMessage(Lexer &lex, Directive d, const Token &name);
  // The quoted string operand of a directive, decoded.
  bool stringOperand(Lexer &lex, std::string &out);
  // Reads the file operand of .include or .incbin; `at` is its position.
  bool includedFile(Lexer &lex, const Token &name, bool incbin, uint32_t &at, std::string &path,
                    std::vector<uint8_t> &contents);
  void instruction(Lexer &lex, const InstrInfo &ins, const Token &mnemonic);
  bool operand(Lexer &lex, const InstrInfo &ins, unsigned index, isa::Instruction &inst);
  void expandMacro(Lexer &lex, const MacroDefinition &macro, const Token &name);
  bool macroHeader(Lexer &lex, MacroDefinition &macro);
  bool reptHeader(Lexer &lex, uint64_t &count);
  void defineLabel(const Token &t, std::string_view name);
  // The placeholder entry of a symbol named before its definition. Kept
  // out of line: the lookups it is called from run for every name.
  [[gnu::noinline]] SymbolEntry *forwardSymbol(std::string_view name);
  void defineSymbol(const Token &t, std::string_view name, SymbolEntry::Kind kind, Lexer &lex);
  bool endOfStatement(Lexer &lex);

  // --- expressions
  // Evaluates an expression whose symbols must all be known now.
  bool immediate(Lexer &lex, Value &out);
  bool immediateInteger(Lexer &lex, int64_t &out, const char *what);
  // Evaluates an expression that may name later symbols; *deferred is
  // filled instead when it does.
  bool deferrable(Lexer &lex, Value &out, std::optional<DeferredExpression> &deferred);
  // The value of a deferred expression. Pending: it names symbols that are
  // not resolved yet; they were added to *needs (when given).
  enum class Resolution { Done, Failed, Pending };
  Resolution resolveDeferred(const DeferredExpression &e, Value &out,
                             std::vector<SymbolEntry *> *needs);
  bool resolveSymbol(SymbolEntry &symbol);
  void reportCircular(SymbolEntry &symbol);
  bool operandBits(const InstrInfo &ins, const OperandInfo &op, const Value &v, uint64_t &out,
                   std::string &why) const;

  // --- sections
  bool inText() const { return current_ < 0; }
  Segment *segment() { return current_ < 0 ? nullptr : &segments_[size_t(current_)]; }
  uint64_t location() const;
  bool needData(const Token &name);
  bool reserveOutput(uint64_t bytes);
  // Counts memory the assembly is about to hold against maxMemoryBytes;
  // false (an error, and assembly stops) when it would exceed it.
  bool chargeMemory(uint64_t bytes) {
    if (bytes > memoryLeft())
      return chargeMemoryPastLimit(bytes);
    memoryBytes_ += bytes;
    return true;
  }
  bool chargeMemoryPastLimit(uint64_t bytes);
  uint64_t memoryLeft() const {
    return memoryBytes_ < options_.maxMemoryBytes ? options_.maxMemoryBytes - memoryBytes_ : 0;
  }
  void emitValue(uint32_t offset, Value v, uint8_t size, bool isFloat,
                 std::optional<DeferredExpression> deferred);
  void dataValues(Lexer &lex, uint8_t size, bool isFloat, const Token &name);
  void startSegment(Lexer &lex, bool isCheck, const Token &name);
  bool openInclude(std::string_view name, uint32_t offset, uint64_t maxBytes, const char *limit,
                   std::string &path, std::vector<uint8_t> &contents);

  // --- end of input
  void resolveAll();
  void buildObject();
  std::string renderListing() const;

  const Options &options_;
  AssembleResult result_;
  size_t errors_ = 0;
  bool stopped_ = false;
  uint64_t linesProcessed_ = 0;
  uint64_t bytesProcessed_ = 0;
  uint64_t outputBytes_ = 0;
  uint64_t memoryBytes_ = 0;
  bool reportingMemoryLimit_ = false;
  unsigned macroCounter_ = 0;

  std::deque<std::string> strings_; // file names and directories, stable addresses
  FileContents rootFile_;
  std::deque<std::vector<uint8_t>> sources_; // included files, stable addresses
  std::vector<Frame> frames_;
  std::vector<std::unique_ptr<std::string>> retired_; // expansion texts of finished frames
  std::vector<Condition> conditions_;
  Collection collecting_;

  // The line being assembled.
  const std::string *file_ = nullptr;
  uint32_t line_ = 0;
  std::string_view text_;

  NameTable<SymbolEntry> symbols_;
  NameTable<MacroDefinition> macros_;
  std::vector<DeferredExpression> deferred_;
  std::vector<PendingOperand> pendingOperands_;
  std::vector<std::vector<std::pair<std::string, Value>>> captures_;
  std::vector<SavedLocation> lines_;               // lines with deferred expressions
  std::vector<std::vector<std::string>> notes_{1}; // see Notes
  std::vector<DataFixup> dataFixups_;
  std::vector<Segment> segments_;
  int current_ = -1; // index into segments_, or -1 for the text section
  std::vector<bin::Packet> text_packets_;
  std::vector<std::pair<std::string, std::string>> metadata_;
  NameTable<bool> metadataKeys_;
  NameTable<bool> filesRead_; // each once in result_.filesRead
  std::vector<ListingEntry> listing_;
};

// Symbol lookup while reading the source.
class LiveResolver final : public SymbolResolver {
public:
  LiveResolver(Assembler &as, bool allowForward,
               std::vector<std::pair<std::string, Value>> *capture = nullptr)
      : as_(as), allowForward_(allowForward), capture_(capture) {}
  Lookup lookup(std::string_view name, uint64_t hash, Value &out) override {
    SymbolEntry *symbol = as_.symbols_.find(name, hash);
    if (!symbol || symbol->state != SymbolEntry::State::Resolved) {
      if (!allowForward_)
        return Lookup::Undefined;
      out.symbol = symbol ? symbol : as_.forwardSymbol(name);
      return Lookup::Unresolved;
    }
    out = symbol->value;
    if (symbol->kind == SymbolEntry::Kind::Set) {
      sawSet_ = true;
      if (capture_) {
        capture_->emplace_back(std::string(name), out);
        as_.chargeMemory(sizeof(capture_->back()) + name.size() + kAllocationOverhead);
      }
    }
    return Lookup::Found;
  }
  bool sawSet() const { return sawSet_; }

private:
  Assembler &as_;
  bool allowForward_;
  std::vector<std::pair<std::string, Value>> *capture_;
  bool sawSet_ = false;
};

// Symbol lookup after the whole source was read. A symbol that is still
// Deferred is added to `needs` (the caller resolves it and evaluates again)
// or, without `needs`, resolved here.
class FinalResolver final : public SymbolResolver {
public:
  FinalResolver(Assembler &as, const DeferredExpression &e, std::vector<SymbolEntry *> *needs)
      : as_(as), e_(e), needs_(needs) {}
  Lookup lookup(std::string_view name, uint64_t hash, Value &out) override {
    if (e_.captures >= 0) {
      const auto &list = as_.captures_[size_t(e_.captures)];
      const auto it = std::lower_bound(list.begin(), list.end(), name,
                                       [](const auto &entry, std::string_view key) {
                                         return std::string_view(entry.first) < key;
                                       });
      if (it != list.end() && it->first == name) {
        out = it->second;
        return Lookup::Found;
      }
    }
    SymbolEntry *symbol = as_.symbols_.find(name, hash);
    if (!symbol || symbol->state == SymbolEntry::State::Forward)
      return Lookup::Undefined;
    if (symbol->state == SymbolEntry::State::Deferred && needs_) {
      needs_->push_back(symbol);
      out.symbol = nullptr;
      return Lookup::Unresolved;
    }
    if (symbol->state == SymbolEntry::State::Resolving)
      as_.reportCircular(*symbol);
    if (!as_.resolveSymbol(*symbol)) {
      // Already reported where that symbol is defined.
      poisoned_ = true;
      out = Value::integer(0);
      return Lookup::Found;
    }
    out = symbol->value;
    return Lookup::Found;
  }
  bool poisoned() const { return poisoned_; }

private:
  Assembler &as_;
  const DeferredExpression &e_;
  std::vector<SymbolEntry *> *needs_;
  bool poisoned_ = false;
};

// ---------------------------------------------------------------- driver

AssembleResult Assembler::run(std::string_view rootName, std::optional<std::string_view> text) {
  const std::string *name = &strings_.emplace_back(rootName);
  const std::string *dir =
      &strings_.emplace_back(std::filesystem::path(*name).parent_path().string());
  auto unreadable = [&](uint32_t line, uint32_t column, std::string_view lineText,
                        std::string message) {
    Diagnostic d;
    d.file = *name;
    d.line = line;
    d.column = column;
    d.message = std::move(message);
    size_t caret = 0;
    d.sourceLine = excerpt(lineText, column ? column - 1 : 0, caret);
    d.sourceColumn = static_cast<uint32_t>(caret + 1);
    result_.diagnostics.push_back(std::move(d));
    result_.inputUnreadable = true;
    return std::move(result_);
  };
  if (!text) {
    try {
      rootFile_.load(*name, options_.maxMemoryBytes);
    } catch (const io::FileError &e) {
      std::string why = e.what();
      // The message names the path first; the diagnostic already does.
      if (why.starts_with(*name + ": "))
        why.erase(0, name->size() + 2);
      return unreadable(0, 0, {}, "cannot read the file: " + why);
    }
    text = rootFile_.view();
    chargeMemory(text->size());
  }
  size_t at;
  if (const char *why = notSource(*text, at)) {
    if (at == 0)
      return unreadable(0, 0, {}, why);
    uint32_t line = 1;
    size_t begin = 0, next = 0;
    const bool carriageReturns = std::memchr(text->data(), '\r', text->size()) != nullptr;
    for (;; begin = next, ++line) {
      const size_t length = lineLength(text->substr(begin), carriageReturns, next);
      next += begin;
      if (at < begin + length || next >= text->size())
        return unreadable(line, static_cast<uint32_t>(at - begin + 1), text->substr(begin, length),
                          why);
    }
  }
  pushFile(name, dir, *text);
  // Most lines of a large source are instructions: reserving one packet
  // per line saves the copies of a growing vector. Untouched pages of an
  // over-estimate cost no memory, but they do count against an address
  // space limit (ulimit -v): each reservation stays within a share of the
  // memory limit.
  const std::string_view root = *text;
  size_t lines = 1;
  for (const char *p = root.data(), *end = p + root.size();
       (p = static_cast<const char *>(std::memchr(p, '\n', size_t(end - p)))); ++p)
    ++lines;
  const uint64_t share = options_.maxMemoryBytes / 8;
  text_packets_.reserve(std::min<uint64_t>(
      {lines, options_.maxOutputBytes / isa::kPacketBytes, 2 * share / isa::kPacketBytes}));
  // Likewise for forward references (to data labels defined after the
  // code, typically): a few per line at most.
  lines_.reserve(std::min<uint64_t>({lines, size_t(1) << 24, share / 2 / sizeof(SavedLocation)}));
  pendingOperands_.reserve(
      std::min<uint64_t>({uint64_t(lines) * 4, size_t(1) << 26, share / sizeof(PendingOperand)}));
  adviseHugePages(text_packets_.data(), text_packets_.capacity() * sizeof(bin::Packet));
  adviseHugePages(lines_.data(), lines_.capacity() * sizeof(SavedLocation));
  adviseHugePages(pendingOperands_.data(), pendingOperands_.capacity() * sizeof(PendingOperand));
  try {
    mainLoop();
    if (!stopped_)
      resolveAll();
    if (options_.listing)
      result_.listing = renderListing();
    buildObject();
  } catch (const std::bad_alloc &) {
    // The limits keep an input within maxMemoryBytes; this host has less.
    stopped_ = false;
    error(0, "out of memory: the host cannot provide the memory this input needs (see the "
             "assembler's limits in docs/assembly.md)");
    stopped_ = true;
  }
  return std::move(result_);
}

void Assembler::pushFile(const std::string *path, const std::string *dir, std::string_view text) {
  Frame f;
  f.kind = Frame::Kind::File;
  f.text = text;
  f.file = path;
  f.dir = dir;
  f.carriageReturns = std::memchr(text.data(), '\r', text.size()) != nullptr;
  f.canonical = canonicalPath(*path);
  f.conditionDepth = conditions_.size();
  frames_.push_back(std::move(f));
}

void Assembler::mainLoop() {
  while (!frames_.empty() && !stopped_) {
    Frame &f = frames_.back();
    if (f.pos >= f.text.size()) {
      if (f.kind == Frame::Kind::Rept && f.iterationsLeft > 1) {
        finishFrame(f); // each repetition must close what it opens
        --f.iterationsLeft;
        f.pos = 0;
        f.lineIndex = 0;
        continue;
      }
      finishFrame(f);
      if (f.keep) {
        retired_.push_back(std::move(f.owned));
      } else {
        memoryBytes_ -= f.charged; // freed with the frame
        if (f.holds(text_))
          text_ = {}; // a diagnostic until the next line has no source line
      }
      frames_.pop_back();
      continue;
    }
    const char *begin = f.text.data() + f.pos;
    size_t next;
    const size_t length = lineLength(f.text.substr(f.pos), f.carriageReturns, next);
    f.pos += next;
    file_ = f.file;
    line_ = f.firstLine + f.lineIndex++;
    text_ = std::string_view(begin, length);
    if (++linesProcessed_ > options_.maxSourceLines) {
      error(0, format("more than %" PRIu64 " source lines processed (runaway .rept or macro?)",
                      options_.maxSourceLines));
      stopped_ = true;
      break;
    }
    bytesProcessed_ += length + 1;
    if (bytesProcessed_ > options_.maxSourceBytes) {
      error(0, "more than " + io::byteSize(options_.maxSourceBytes) +
                   " of source processed (runaway .rept or macro?)");
      stopped_ = true;
      break;
    }
    if (length > kMaxLineBytes) {
      // Token offsets are 32-bit; no real source comes near this.
      error(0, format("line of %zu bytes is longer than the limit of %zu", length, kMaxLineBytes));
      continue;
    }
    processLine(text_);
  }
}

// Reports constructs left open in a frame that ends.
void Assembler::finishFrame(Frame &frame) {
  if (collecting_.kind != Collection::Kind::None && collecting_.frameDepth == frames_.size()) {
    if (collecting_.kind == Collection::Kind::Macro)
      errorAt(collecting_.location, collecting_.location.column - 1,
              "unterminated .macro " + inQuotes(collecting_.macro.name) + " (missing .endm)");
    else
      errorAt(collecting_.location, collecting_.location.column - 1,
              "unterminated .rept (missing .endr)");
    collecting_ = Collection();
  }
  while (conditions_.size() > frame.conditionDepth) {
    const Condition &c = conditions_.back();
    errorAt(c.location, c.location.column - 1, "unterminated .if (missing .endif)");
    conditions_.pop_back();
  }
}

Notes Assembler::notes() {
  if (frames_.empty())
    return 0;
  if (frames_.back().notes)
    return *frames_.back().notes;
  std::vector<std::string> list;
  for (size_t i = frames_.size(); i-- > 0;) {
    const Frame &f = frames_[i];
    if (f.kind == Frame::Kind::Macro)
      list.push_back(f.note);
    else if (f.kind == Frame::Kind::File && i > 0) {
      const Frame &parent = frames_[i - 1];
      list.push_back("included from " + *parent.file + ":" +
                     std::to_string(parent.firstLine + parent.lineIndex - 1));
    }
  }
  // A runaway recursion would repeat one note per level.
  constexpr size_t kKept = 8;
  if (list.size() > 2 * kKept) {
    const size_t hidden = list.size() - 2 * kKept;
    list.erase(list.begin() + kKept, list.end() - kKept);
    list.insert(list.begin() + kKept, "(" + std::to_string(hidden) + " more levels)");
  }
  Notes index = 0;
  if (!list.empty()) {
    uint64_t bytes = sizeof(list) + kAllocationOverhead;
    for (const std::string &note : list)
      bytes += sizeof(note) + note.size() + kAllocationOverhead;
    chargeMemory(bytes);
    index = static_cast<Notes>(notes_.size());
    notes_.push_back(std::move(list));
  }
  frames_.back().notes = index;
  return index;
}

SavedLocation Assembler::here(uint32_t offset) {
  return SavedLocation{file_, line_, offset + 1, text_, notes()};
}

SavedLocation Assembler::saveLocation(uint32_t offset) {
  // The expansion the line is in must outlive its frame.
  for (size_t i = frames_.size(); i-- > 0;) {
    if (frames_[i].holds(text_)) {
      frames_[i].keep = true;
      break;
    }
  }
  return here(offset);
}

void Assembler::report(Diagnostic::Severity severity, const SavedLocation &loc,
                       std::string message) {
  if (stopped_)
    return;
  if (severity == Diagnostic::Severity::Warning && options_.warningsAsErrors) {
    severity = Diagnostic::Severity::Error;
    message += " [-Werror]";
  }
  Diagnostic d;
  d.severity = severity;
  d.file = loc.file ? *loc.file : std::string();
  d.line = loc.line;
  d.column = loc.column;
  d.message = std::move(message);
  size_t caret = 0;
  d.sourceLine = excerpt(loc.text, loc.column ? loc.column - 1 : 0, caret);
  d.sourceColumn = static_cast<uint32_t>(caret + 1);
  d.notes = notes_[loc.notes];
  if (severity == Diagnostic::Severity::Warning) {
    // Errors stop at maxErrors; warnings count against the memory limit.
    uint64_t bytes = sizeof(d) + d.file.size() + d.message.size() + d.sourceLine.size() +
                     4 * kAllocationOverhead;
    for (const std::string &note : d.notes)
      bytes += sizeof(note) + note.size() + kAllocationOverhead;
    if (!chargeMemory(bytes))
      return;
  }
  result_.diagnostics.push_back(std::move(d));
  if (severity == Diagnostic::Severity::Error && ++errors_ >= options_.maxErrors) {
    Diagnostic stop;
    stop.file = loc.file ? *loc.file : std::string();
    stop.message = format("too many errors (%u), stopping", options_.maxErrors);
    result_.diagnostics.push_back(std::move(stop));
    stopped_ = true;
  }
}

void Assembler::error(uint32_t offset, std::string message) {
  report(Diagnostic::Severity::Error, here(offset), std::move(message));
}

void Assembler::warning(uint32_t offset, std::string message) {
  report(Diagnostic::Severity::Warning, here(offset), std::move(message));
}

void Assembler::errorAt(const SavedLocation &loc, uint32_t offset, std::string message) {
  reportAt(Diagnostic::Severity::Error, loc, offset, std::move(message));
}

void Assembler::reportAt(Diagnostic::Severity severity, const SavedLocation &loc, uint32_t offset,
                         std::string message) {
  SavedLocation at = loc;
  at.column = offset + 1;
  report(severity, at, std::move(message));
}

// ---------------------------------------------------------------- lines

void Assembler::processLine(std::string_view line) {
  if (collecting_.kind != Collection::Kind::None) {
    collectLine(line);
    return;
  }
  Lexer lex(line);
  const Token first = lex.peek();
  if (first.kind == TokenKind::Ident && lex.text(first)[0] == '.') {
    const Directive *d = directives().find(lex.text(first), first.intValue);
    if (d && conditional(lex, *d, first))
      return;
  }
  if (!conditions_.empty() && !conditions_.back().active)
    return;
  if (!options_.listing) {
    statement(lex);
    return;
  }
  const size_t packetsBefore = text_packets_.size();
  const int segmentBefore = current_;
  const size_t bytesBefore = segment() ? segment()->bytes.size() : 0;
  const std::string *file = file_;
  const uint32_t lineNumber = line_;
  statement(lex);
  ListingEntry entry{file, lineNumber, std::string(line)};
  // The entry and, as an upper bound, the lines it will render to (a packet
  // is two lines of at most 160 bytes, data at most four lines of 80).
  uint64_t bytes = sizeof(entry) + kAllocationOverhead + 2 * line.size() + 32;
  if (text_packets_.size() > packetsBefore) {
    entry.kind = ListingEntry::Kind::Packets;
    entry.first = packetsBefore;
    entry.count = text_packets_.size() - packetsBefore;
    bytes += entry.count * 2 * 160;
  } else if (segment() && current_ == segmentBefore && segment()->bytes.size() > bytesBefore) {
    entry.kind = ListingEntry::Kind::Bytes;
    entry.segment = size_t(current_);
    entry.first = bytesBefore;
    entry.count = segment()->bytes.size() - bytesBefore;
    bytes += 5 * 80;
  }
  if (!chargeMemory(bytes))
    return;
  listing_.push_back(std::move(entry));
}

// Adds a line to the .macro or .rept body being collected, or ends the
// body at the matching .endm/.endr.
void Assembler::collectLine(std::string_view line) {
  Lexer lex(line);
  const Token &t = lex.peek();
  const bool isMacro = collecting_.kind == Collection::Kind::Macro;
  if (t.kind == TokenKind::Ident) {
    const std::string_view word = lex.text(t);
    if (word == (isMacro ? ".macro" : ".rept")) {
      ++collecting_.depth;
    } else if (word == (isMacro ? ".endm" : ".endr") && collecting_.depth > 0) {
      --collecting_.depth;
    } else if (word == (isMacro ? ".endm" : ".endr")) {
      endCollection(lex);
      return;
    }
  }
  if (isMacro && collecting_.depth == 0 && !collecting_.discard)
    checkParameters(line);
  if (!chargeMemory(line.size() + 1))
    return;
  collecting_.body.append(line);
  collecting_.body += '\n';
}

// Reports \name references to names that are not parameters of the macro
// being defined, where they are written.
void Assembler::checkParameters(std::string_view line) {
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"') {
      for (++i; i < line.size() && line[i] != '"'; ++i)
        i += line[i] == '\\';
      continue;
    }
    if (line[i] == '#' || line[i] == ';')
      break;
    if (line[i] != '\\' || i + 1 >= line.size() || !isIdentStart(line[i + 1]))
      continue;
    size_t e = i + 1;
    while (e < line.size() && isIdentChar(line[e]))
      ++e;
    const std::string_view param = line.substr(i + 1, e - i - 1);
    if (!collecting_.macro.paramIndex.find(param))
      error(uint32_t(i), "unknown macro parameter '\\" + std::string(param) + "' in macro " +
                             inQuotes(collecting_.macro.name));
    i = e - 1;
  }
}

// At .endm: defines the macro; at .endr: starts the repetitions.
void Assembler::endCollection(Lexer &lex) {
  Collection done = std::move(collecting_);
  collecting_ = Collection();
  lex.next();
  if (!endOfStatement(lex) || done.discard)
    return;
  if (done.kind == Collection::Kind::Macro) {
    done.macro.body = std::move(done.body);
    done.macro.file = done.location.file;
    done.macro.firstLine = done.firstBodyLine;
    macros_.emplace(done.macro.name).first->second = std::move(done.macro);
    return;
  }
  if (done.count == 0 || done.body.empty())
    return;
  size_t repts = 0;
  for (const Frame &frame : frames_)
    repts += frame.kind == Frame::Kind::Rept;
  if (repts >= kMaxNesting) {
    errorAt(done.location, done.location.column - 1,
            format(".rept nested more than %u deep", kMaxNesting));
    return;
  }
  Frame f;
  f.kind = Frame::Kind::Rept;
  f.charged = done.body.size(); // by collectLine
  f.owned = std::make_unique<std::string>(std::move(done.body));
  f.text = *f.owned;
  f.file = done.location.file;
  f.firstLine = done.firstBodyLine;
  f.iterationsLeft = done.count;
  f.conditionDepth = conditions_.size();
  frames_.push_back(std::move(f));
}

void Assembler::statement(Lexer &lex) {
  // Labels: identifiers directly followed by ':'.
  while (lex.peek().kind == TokenKind::Ident) {
    const Token t = lex.peek();
    if (t.end >= lex.line().size() || lex.line()[t.end] != ':')
      break;
    lex.next();
    lex.next(); // ':'
    defineLabel(t, lex.text(t));
  }
  const Token head = lex.next();
  if (head.kind == TokenKind::End)
    return;
  if (head.kind != TokenKind::Ident) {
    if (head.kind == TokenKind::Error)
      error(head.begin, head.error);
    else
      error(head.begin, "expected an instruction, directive or label");
    return;
  }
  const std::string_view word = lex.text(head);
  if (word[0] == '.') {
    const Directive *d = directives().find(word, head.intValue);
    if (!d) {
      error(head.begin, "unknown directive " + inQuotes(word));
      return;
    }
    directive(lex, *d, head);
    return;
  }
  if (!macros_.empty()) {
    if (const MacroDefinition *macro = macros_.find(word)) {
      expandMacro(lex, *macro, head);
      return;
    }
  }
  const InstrInfo *const *ins = mnemonics().find(word, head.intValue);
  if (!ins) {
    // Mnemonics are lower case; accept any case.
    char lower[32];
    if (word.size() < sizeof lower) {
      for (size_t i = 0; i < word.size(); ++i)
        lower[i] = static_cast<char>(word[i] >= 'A' && word[i] <= 'Z' ? word[i] + 32 : word[i]);
      ins = mnemonics().find(std::string_view(lower, word.size()));
    }
    if (!ins) {
      error(head.begin, "unknown instruction " + inQuotes(word));
      return;
    }
  }
  instruction(lex, **ins, head);
}

bool Assembler::endOfStatement(Lexer &lex) {
  const Token &t = lex.peek();
  if (t.kind == TokenKind::End)
    return true;
  if (t.kind == TokenKind::Error)
    error(t.begin, t.error);
  else
    error(t.begin, "unexpected " + inQuotes(lex.text(t)) + " at the end of the statement");
  return false;
}

// ---------------------------------------------------------------- symbols

void Assembler::defineLabel(const Token &t, std::string_view name) {
  if (isReserved(name)) {
    error(t.begin, inQuotes(name) + " is a reserved name");
    return;
  }
  if (name.size() > bin::kMaxSymbolNameBytes) {
    error(t.begin, format("label of %zu characters is longer than the limit of %zu", name.size(),
                          bin::kMaxSymbolNameBytes));
    return;
  }
  auto [entry, inserted] = symbols_.emplace(name);
  if (inserted)
    chargeMemory(sizeof(*entry) + name.size() + kAllocationOverhead);
  SymbolEntry &s = entry->second;
  s.name = &entry->first;
  if (!inserted && s.state != SymbolEntry::State::Forward) {
    error(t.begin, "symbol " + inQuotes(name) + " is already defined at " + *s.file + ":" +
                       std::to_string(s.line) + ":" + std::to_string(s.column));
    return;
  }
  s.kind = SymbolEntry::Kind::Label;
  s.state = SymbolEntry::State::Resolved;
  s.isAddress = !inText();
  s.value = Value::integer(inText() ? text_packets_.size() : location());
  s.file = file_;
  s.line = line_;
  s.column = t.begin + 1;
}

SymbolEntry *Assembler::forwardSymbol(std::string_view name) {
  auto *entry = symbols_.emplace(name).first;
  SymbolEntry &symbol = entry->second;
  symbol.name = &entry->first;
  symbol.state = SymbolEntry::State::Forward;
  chargeMemory(sizeof(*entry) + name.size() + kAllocationOverhead);
  return &symbol;
}

void Assembler::defineSymbol(const Token &t, std::string_view name, SymbolEntry::Kind kind,
                             Lexer &lex) {
  if (isReserved(name)) {
    error(t.begin, inQuotes(name) + " is a reserved name");
    return;
  }
  const SymbolEntry *found = symbols_.find(name);
  if (found && found->state != SymbolEntry::State::Forward &&
      !(kind == SymbolEntry::Kind::Set && found->kind == SymbolEntry::Kind::Set)) {
    const SymbolEntry &s = *found;
    error(t.begin, "symbol " + inQuotes(name) + " is already defined at " + *s.file + ":" +
                       std::to_string(s.line) + ":" + std::to_string(s.column));
    return;
  }
  Value v;
  std::optional<DeferredExpression> deferred;
  if (kind == SymbolEntry::Kind::Set) {
    if (!immediate(lex, v))
      return;
  } else if (!deferrable(lex, v, deferred)) {
    return;
  }
  if (!endOfStatement(lex))
    return;
  auto [entry, inserted] = symbols_.emplace(name);
  if (inserted)
    chargeMemory(sizeof(*entry) + name.size() + kAllocationOverhead);
  SymbolEntry &s = entry->second;
  s.name = &entry->first;
  s.kind = kind;
  s.value = v;
  s.file = file_;
  s.line = line_;
  s.column = t.begin + 1;
  if (deferred) {
    s.state = SymbolEntry::State::Deferred;
    s.deferred = static_cast<int>(deferred_.size());
    deferred_.push_back(std::move(*deferred));
  } else {
    s.state = SymbolEntry::State::Resolved;
  }
}

bool Assembler::immediate(Lexer &lex, Value &out) {
  LiveResolver resolver(*this, false);
  ExpressionEvaluator ev(lex, resolver);
  if (!ev.evaluate(out)) {
    error(ev.errorOffset(), ev.errorMessage());
    return false;
  }
  return true;
}

bool Assembler::immediateInteger(Lexer &lex, int64_t &out, const char *what) {
  const uint32_t at = lex.position();
  Value v;
  if (!immediate(lex, v))
    return false;
  if (v.isFloat) {
    error(at, std::string(what) + " must be an integer");
    return false;
  }
  out = v.asSigned();
  return true;
}

bool Assembler::deferrable(Lexer &lex, Value &out, std::optional<DeferredExpression> &deferred) {
  const uint32_t start = lex.position();
  LiveResolver resolver(*this, true);
  const Token &t = lex.peek();
  if (lex.currentIsWholeOperand() && (t.kind == TokenKind::Int || t.kind == TokenKind::Float ||
                                      (t.kind == TokenKind::Ident && !isReserved(lex.text(t))))) {
    // Most operands are one number or name: skip the expression parser.
    if (t.kind == TokenKind::Int)
      out = Value::integer(t.intValue);
    else if (t.kind == TokenKind::Float)
      out = Value::real(t.floatValue);
    else if (resolver.lookup(lex.text(t), t.intValue, out) == SymbolResolver::Lookup::Unresolved)
      out = Value{false, true, 0, 0, out.symbol};
    lex.next();
  } else {
    ExpressionEvaluator ev(lex, resolver);
    if (!ev.evaluate(out)) {
      error(ev.errorOffset(), ev.errorMessage());
      return false;
    }
  }
  if (!out.unresolved)
    return true;
  // Consecutive deferred operands of a line share its location.
  if (lines_.empty() || lines_.back().text.data() != text_.data() || lines_.back().line != line_ ||
      lines_.back().file != file_) {
    if (!chargeMemory(sizeof(SavedLocation)))
      return false;
    lines_.push_back(saveLocation(0));
  }
  DeferredExpression e{static_cast<uint32_t>(lines_.size() - 1), start, -1,
                       static_cast<SymbolEntry *>(const_cast<void *>(out.symbol)), out.bits};
  if (resolver.sawSet()) {
    // Evaluate once more to record the .set values in force here.
    Lexer again(lex.line(), start);
    e.captures = static_cast<int32_t>(captures_.size());
    if (!chargeMemory(sizeof(captures_.front()) + kAllocationOverhead))
      return false;
    LiveResolver capture(*this, true, &captures_.emplace_back());
    ExpressionEvaluator ev2(again, capture);
    Value ignored;
    ev2.evaluate(ignored);
    // Sorted by name, each once, for FinalResolver's binary search: an
    // expression may name thousands of .set symbols.
    auto &list = captures_.back();
    const auto byName = [](const auto &a, const auto &b) { return a.first < b.first; };
    std::stable_sort(list.begin(), list.end(), byName);
    list.erase(std::unique(list.begin(), list.end(),
                           [](const auto &a, const auto &b) { return a.first == b.first; }),
               list.end());
  }
  deferred = std::move(e);
  return true;
}

void Assembler::reportCircular(SymbolEntry &symbol) {
  const DeferredExpression &e = deferred_[size_t(symbol.deferred)];
  errorAt(lines_[e.line], symbol.column - 1,
          "circular definition of symbol " + inQuotes(*symbol.name));
  symbol.state = SymbolEntry::State::Failed;
}

// Resolves a symbol whose definition names later symbols, depth first with
// an explicit stack: a chain of forward references may be as long as the
// input, so the input must not choose how deep the assembler recurses. A
// symbol whose definition needs others that are still Deferred is marked
// Resolving and evaluated again once they are done; meeting a Resolving
// symbol as a dependency is a cycle (everything above it on the stack was
// pushed while it waited, so it depends on the symbol being evaluated).
bool Assembler::resolveSymbol(SymbolEntry &root) {
  if (root.state != SymbolEntry::State::Deferred)
    return root.state == SymbolEntry::State::Resolved;
  std::vector<SymbolEntry *> stack{&root}, needs;
  while (!stack.empty()) {
    SymbolEntry &symbol = *stack.back();
    if (symbol.state != SymbolEntry::State::Deferred &&
        symbol.state != SymbolEntry::State::Resolving) {
      stack.pop_back(); // resolved meanwhile (it was needed twice) or failed
      continue;
    }
    needs.clear();
    Value v;
    const Resolution r = resolveDeferred(deferred_[size_t(symbol.deferred)], v, &needs);
    if (symbol.state == SymbolEntry::State::Failed) {
      stack.pop_back();
      continue;
    }
    if (r == Resolution::Pending) {
      symbol.state = SymbolEntry::State::Resolving;
      stack.insert(stack.end(), needs.begin(), needs.end());
      continue;
    }
    symbol.state =
        r == Resolution::Done ? SymbolEntry::State::Resolved : SymbolEntry::State::Failed;
    symbol.value = v;
    stack.pop_back();
  }
  return root.state == SymbolEntry::State::Resolved;
}

Assembler::Resolution Assembler::resolveDeferred(const DeferredExpression &e, Value &out,
                                                 std::vector<SymbolEntry *> *needs) {
  if (e.symbol && e.captures < 0) {
    // `symbol + addend`: no need to parse again, unless it fails (then the
    // parse reports where).
    SymbolEntry &symbol = *e.symbol;
    if (symbol.state == SymbolEntry::State::Deferred && needs) {
      needs->push_back(&symbol);
      return Resolution::Pending;
    }
    if (symbol.state != SymbolEntry::State::Resolving && resolveSymbol(symbol) &&
        !symbol.value.isFloat) {
      out = Value::integer(symbol.value.bits + e.addend);
      return Resolution::Done;
    }
  }
  const SavedLocation &location = lines_[e.line];
  Lexer lex(location.text, e.offset);
  FinalResolver resolver(*this, e, needs);
  ExpressionEvaluator ev(lex, resolver);
  const bool ok = ev.evaluate(out);
  if (needs && !needs->empty())
    return Resolution::Pending; // evaluated on placeholders: errors wait
  if (!ok && !resolver.poisoned())
    errorAt(location, ev.errorOffset(), ev.errorMessage());
  return ok && !resolver.poisoned() ? Resolution::Done : Resolution::Failed;
}

// ---------------------------------------------------------------- instructions

bool Assembler::operandBits(const InstrInfo &ins, const OperandInfo &op, const Value &v,
                            uint64_t &out, std::string &why) const {
  // Built only for a message: this runs for every operand.
  auto name = [&] { return "operand " + inQuotes(op.name) + " of " + inQuotes(ins.mnemonic); };
  switch (op.kind) {
  case OperandKind::F32:
    out = bitsFromFloat(v.isFloat ? v.f : static_cast<float>(v.asSigned()));
    return true;
  case OperandKind::Bits32:
    if (v.isFloat) {
      out = bitsFromFloat(v.f);
      return true;
    }
    if (v.asSigned() < INT32_MIN || v.asSigned() > int64_t(UINT32_MAX)) {
      why = name() + " does not fit in 32 bits: " + std::to_string(v.asSigned());
      return false;
    }
    out = v.bits & 0xffffffffu;
    return true;
  case OperandKind::Enum: why = name() + " expects one of: " + isa::acceptedNames(op); return false;
  default: break;
  }
  if (v.isFloat) {
    why = name() + " must be an integer, not a float";
    return false;
  }
  const int64_t s = v.asSigned();
  switch (op.kind) {
  case OperandKind::Flag:
    if (v.bits > 1) {
      why = "flag " + inQuotes(op.name) + " of " + inQuotes(ins.mnemonic) +
            " must be 0 or 1, got " + std::to_string(s);
      return false;
    }
    out = v.bits;
    return true;
  case OperandKind::Addr:
    if (op.bitWidth < 64 && (v.bits & ~widthMask(op.bitWidth))) {
      why = format("address %s = 0x%" PRIx64 " does not fit in %u bits", name().c_str(), v.bits,
                   op.bitWidth);
      return false;
    }
    if (op.align > 1 && v.bits % op.align) {
      why = format("address %s must be aligned to %u bytes, got 0x%" PRIx64, name().c_str(),
                   op.align, v.bits);
      return false;
    }
    out = v.bits;
    return true;
  default: {
    int64_t lo, hi;
    if (op.hasRange) {
      lo = op.min;
      hi = op.max;
    } else if (op.kind == OperandKind::I32) {
      lo = -(int64_t(1) << (op.bitWidth - 1));
      hi = (int64_t(1) << (op.bitWidth - 1)) - 1;
    } else {
      lo = 0;
      hi = static_cast<int64_t>(widthMask(std::min<unsigned>(op.bitWidth, 63)));
    }
    if (s < lo || s > hi) {
      why = format("%s must be in [%" PRId64 ", %" PRId64 "], got %" PRId64, name().c_str(), lo, hi,
                   s);
      return false;
    }
    out = v.bits & widthMask(op.bitWidth);
    return true;
  }
  }
}

bool Assembler::operand(Lexer &lex, const InstrInfo &ins, unsigned index, isa::Instruction &inst) {
  const OperandInfo &op = ins.operands[index];
  const uint32_t at = lex.position();
  if (op.kind == OperandKind::Enum) {
    const Token t = lex.next();
    const isa::EnumValueInfo *value =
        t.kind == TokenKind::Ident ? op.enumInfo->findName(lex.text(t)) : nullptr;
    if (!value || !op.accepts(value->value)) {
      error(at, "operand " + inQuotes(op.name) + " of " + inQuotes(ins.mnemonic) +
                    " expects one of: " + isa::acceptedNames(op) +
                    (t.kind == TokenKind::End ? std::string() : "; got " + inQuotes(lex.text(t))));
      return false;
    }
    inst.operands[index] = value->value;
    return true;
  }
  Value v;
  std::optional<DeferredExpression> deferred;
  if (!deferrable(lex, v, deferred))
    return false;
  if (deferred) {
    if (!chargeMemory(sizeof(PendingOperand)))
      return false;
    pendingOperands_.push_back(PendingOperand{
        *deferred, static_cast<uint32_t>(text_packets_.size()),
        static_cast<uint16_t>(&ins - isa::instructions().data()), static_cast<uint8_t>(index)});
    return true;
  }
  std::string why;
  if (!operandBits(ins, op, v, inst.operands[index], why)) {
    error(at, std::move(why));
    return false;
  }
  return true;
}

void Assembler::instruction(Lexer &lex, const InstrInfo &ins, const Token &mnemonic) {
  if (!inText()) {
    error(mnemonic.begin, "instruction " + inQuotes(ins.mnemonic) +
                              " outside the text section (use .text before it)");
    return;
  }
  isa::Instruction inst;
  inst.opcode = ins.opcode;
  for (uint32_t i = 0; i < ins.numOperands; ++i)
    inst.operands[i] = ins.operands[i].defaultBits;
  // Operands that name later symbols; dropped again if the line fails.
  const size_t firstPending = pendingOperands_.size();
  struct DropOnError {
    std::vector<PendingOperand> &pending;
    size_t first;
    bool keep = false;
    ~DropOnError() {
      if (!keep)
        pending.resize(first);
    }
  } drop{pendingOperands_, firstPending};
  const auto syntax = ins.syntaxList();
  for (size_t k = 0; k < syntax.size(); ++k) {
    const isa::SyntaxItem &item = syntax[k];
    if (lex.peek().kind == TokenKind::End) {
      // Name the next operand the user left out.
      size_t next = k;
      while (next < syntax.size() && syntax[next].operand < 0)
        ++next;
      const std::string what =
          next < syntax.size()
              ? "missing operand " + inQuotes(ins.operands[syntax[next].operand].name)
              : "missing " + inQuotes(std::string(1, item.literal));
      error(lex.position(),
            what + " of " + inQuotes(ins.mnemonic) + " (syntax: " + syntaxOf(ins) + ")");
      return;
    }
    if (item.operand < 0) {
      if (!lex.accept(uint8_t(item.literal))) {
        const Token &t = lex.peek();
        if (t.kind == TokenKind::Error)
          error(t.begin, t.error);
        else
          error(t.begin, "expected " + inQuotes(std::string(1, item.literal)) + " before " +
                             inQuotes(lex.text(t)) + " (syntax: " + syntaxOf(ins) + ")");
        return;
      }
      continue;
    }
    if (!operand(lex, ins, unsigned(item.operand), inst))
      return;
  }
  // Optional operands: ", name=value" or ", flag" in any order.
  uint32_t given = 0;
  while (lex.peek().kind != TokenKind::End) {
    if (!lex.accept(',')) {
      const Token &t = lex.peek();
      if (syntax.empty() && t.kind != TokenKind::Error) {
        error(t.begin, "too many operands for " + inQuotes(ins.mnemonic) +
                           " (syntax: " + syntaxOf(ins) + ")");
        return;
      }
      error(t.begin, t.kind == TokenKind::Error ? std::string(t.error)
                                                : "expected ',' before " + inQuotes(lex.text(t)) +
                                                      " (syntax: " + syntaxOf(ins) + ")");
      return;
    }
    const Token name = lex.next();
    const int index = name.kind == TokenKind::Ident ? operandIndex(ins, lex.text(name)) : -1;
    if (index < 0 || !ins.operands[index].optional) {
      if (name.kind != TokenKind::Ident || (index >= 0 && !lex.peek().is('=')))
        error(name.begin, "too many operands for " + inQuotes(ins.mnemonic) +
                              " (syntax: " + syntaxOf(ins) + ")");
      else if (index >= 0)
        error(name.begin, "operand " + inQuotes(lex.text(name)) + " of " + inQuotes(ins.mnemonic) +
                              " is positional, not optional (syntax: " + syntaxOf(ins) + ")");
      else {
        std::string optional;
        for (const OperandInfo &op : ins.operandList())
          if (op.optional)
            optional += (optional.empty() ? "" : ", ") + std::string(op.name);
        error(name.begin, inQuotes(ins.mnemonic) + " has no operand " + inQuotes(lex.text(name)) +
                              (optional.empty() ? " (it has no optional operands)"
                                                : " (optional operands: " + optional + ")"));
      }
      return;
    }
    const OperandInfo &op = ins.operands[index];
    if (given & (1u << index)) {
      error(name.begin, "operand " + inQuotes(op.name) + " given twice");
      return;
    }
    given |= 1u << index;
    if (lex.accept('=')) {
      if (lex.peek().kind == TokenKind::End) {
        error(lex.position(), "expected a value for operand " + inQuotes(op.name));
        return;
      }
      if (!operand(lex, ins, unsigned(index), inst))
        return;
    } else if (op.kind == OperandKind::Flag) {
      inst.operands[index] = 1;
    } else {
      error(name.end, "operand " + inQuotes(op.name) + " of " + inQuotes(ins.mnemonic) +
                          " needs a value: " + op.name + "=...");
      return;
    }
  }
  if (!reserveOutput(isa::kPacketBytes))
    return;
  bin::Packet &packet = text_packets_.emplace_back();
  drop.keep = true;
  for (unsigned i = 0; i < 4; ++i)
    packet[i] = static_cast<uint8_t>(static_cast<uint32_t>(ins.opcode) >> (8 * i));
  // The packet starts zeroed: operands whose bits are zero (defaults,
  // flags not given) are already in place.
  for (uint32_t i = 0; i < ins.numOperands; ++i)
    if (inst.operands[i])
      patchOperand(packet, ins.operands[i], inst.operands[i]);
}

void Assembler::expandMacro(Lexer &lex, const MacroDefinition &macro, const Token &name) {
  size_t depth = 0;
  for (const Frame &f : frames_)
    depth += f.kind == Frame::Kind::Macro;
  if (depth >= kMaxNesting) {
    error(name.begin, format("macro expansion nested more than %u deep (recursive macro %s?)",
                             kMaxNesting, inQuotes(macro.name).c_str()));
    return;
  }
  // Split the arguments at top-level commas.
  std::vector<std::optional<std::string>> args(macro.params.size());
  size_t positional = 0;
  int nesting = 0;
  uint32_t argBegin = lex.position(), argEnd = argBegin;
  bool keyword = false;
  size_t keywordIndex = 0;
  bool any = lex.peek().kind != TokenKind::End;
  auto finishArg = [&](uint32_t at) -> bool {
    std::string_view text = lex.line().substr(argBegin, argEnd - argBegin);
    size_t slot = keyword ? keywordIndex : positional++;
    if (slot >= macro.params.size()) {
      error(at, format("too many arguments for macro %s (it takes %zu)",
                       inQuotes(macro.name).c_str(), macro.params.size()));
      return false;
    }
    if (keyword && args[slot]) {
      error(at, "macro argument " + inQuotes(macro.params[slot]) + " given twice");
      return false;
    }
    if (!text.empty())
      args[slot] = std::string(text);
    else if (!keyword)
      args[slot].reset();
    return true;
  };
  bool startOfArg = true;
  uint32_t argStartToken = argBegin;
  while (any) {
    const Token &t = lex.peek();
    if (startOfArg) {
      startOfArg = false;
      argStartToken = t.begin;
      keyword = false;
      if (t.kind == TokenKind::Ident) {
        const uint32_t *p = macro.paramIndex.find(lex.text(t), t.intValue);
        const uint32_t after = t.end;
        if (p && after < lex.line().size() && lex.line()[after] == '=' &&
            (after + 1 >= lex.line().size() || lex.line()[after + 1] != '=')) {
          keyword = true;
          keywordIndex = *p;
          lex.next();
          lex.next();
          argBegin = argEnd = lex.position();
          continue;
        }
      }
      argBegin = argEnd = t.begin;
    }
    if (t.kind == TokenKind::End) {
      if (!finishArg(argStartToken))
        return;
      break;
    }
    if (t.kind == TokenKind::Error) {
      error(t.begin, t.error);
      return;
    }
    if (nesting == 0 && t.is(',')) {
      if (!finishArg(argStartToken))
        return;
      lex.next();
      startOfArg = true;
      continue;
    }
    if (t.is('(') || t.is('['))
      ++nesting;
    else if ((t.is(')') || t.is(']')) && nesting > 0)
      --nesting;
    argEnd = t.end;
    lex.next();
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i])
      args[i] = macro.defaults[i];
    if (!args[i]) {
      error(name.begin,
            "missing argument " + inQuotes(macro.params[i]) + " of macro " + inQuotes(macro.name));
      return;
    }
  }
  // Substitute \param, \@ (expansion counter) and \() (separator). The
  // size of the expansion is measured before it is built: arguments that
  // double at each level of nesting must not allocate past the limit.
  const std::string counter = std::to_string(macroCounter_++);
  const std::string_view src = macro.body;
  auto substitute = [&](auto &&emit) {
    size_t copied = 0; // src[copied, i) is emitted as is
    for (size_t i = 0; i + 1 < src.size(); ++i) {
      if (src[i] != '\\')
        continue;
      std::string_view replacement;
      size_t skip = 0;
      if (src[i + 1] == '@') {
        replacement = counter;
        skip = 2;
      } else if (src[i + 1] == '(' && i + 2 < src.size() && src[i + 2] == ')') {
        skip = 3;
      } else {
        size_t e = i + 1;
        while (e < src.size() && isIdentChar(src[e]))
          ++e;
        const uint32_t *p =
            e > i + 1 ? macro.paramIndex.find(src.substr(i + 1, e - i - 1)) : nullptr;
        if (!p)
          continue;
        replacement = *args[*p];
        skip = e - i;
      }
      emit(src.substr(copied, i - copied));
      emit(replacement);
      copied = i + skip;
      i = copied - 1;
    }
    emit(src.substr(std::min(copied, src.size())));
  };
  uint64_t size = 0;
  substitute([&](std::string_view piece) { size += piece.size(); });
  if (size == 0 || !chargeMemory(size + kAllocationOverhead))
    return;
  auto body = std::make_unique<std::string>();
  body->reserve(size);
  substitute([&](std::string_view piece) { body->append(piece); });
  Frame f;
  f.kind = Frame::Kind::Macro;
  f.owned = std::move(body);
  f.charged = size + kAllocationOverhead;
  f.text = *f.owned;
  f.file = macro.file;
  f.firstLine = macro.firstLine;
  f.note = "in expansion of macro " + inQuotes(macro.name) + " at " + *file_ + ":" +
           std::to_string(line_) + ":" + std::to_string(name.begin + 1);
  f.conditionDepth = conditions_.size();
  frames_.push_back(std::move(f));
}

// ---------------------------------------------------------------- directives

// Handles .if/.ifdef/.ifndef/.elif/.else/.endif, which are seen even in
// skipped lines; false for any other directive.
bool Assembler::conditional(Lexer &lex, Directive d, const Token &name) {
  switch (d) {
  case Directive::If:
  case Directive::Ifdef:
  case Directive::Ifndef:
    lex.next();
    parseDirectiveIf(lex, d, name);
    return true;
  case Directive::Elif:
    lex.next();
    parseDirectiveElif(lex, name);
    return true;
  case Directive::Else:
    lex.next();
    parseDirectiveElse(lex, name);
    return true;
  case Directive::Endif:
    lex.next();
    parseDirectiveEndif(lex, name);
    return true;
  default: return false;
  }
}

bool Assembler::conditionValue(Lexer &lex, Directive d, bool &out) {
  if (d == Directive::If || d == Directive::Elif) {
    int64_t v;
    if (!immediateInteger(lex, v, "a .if condition"))
      return false;
    out = v != 0;
  } else {
    const Token sym = lex.next();
    if (sym.kind != TokenKind::Ident) {
      error(sym.begin, "expected a symbol name");
      return false;
    }
    const SymbolEntry *entry = symbols_.find(lex.text(sym));
    out = entry && entry->state != SymbolEntry::State::Forward;
    if (d == Directive::Ifndef)
      out = !out;
  }
  return endOfStatement(lex);
}

bool Assembler::innermostConditionHere() const {
  return !conditions_.empty() && conditions_.back().frameDepth == frames_.size();
}

void Assembler::parseDirectiveIf(Lexer &lex, Directive d, const Token &name) {
  const bool active = conditions_.empty() || conditions_.back().active;
  if (conditions_.size() >= kMaxNesting) {
    error(name.begin, format(".if nested more than %u deep", kMaxNesting));
    stopped_ = true;
    return;
  }
  bool value = false;
  if (active && !conditionValue(lex, d, value))
    value = false;
  conditions_.push_back(
      Condition{active && value, active, value, false, saveLocation(name.begin), frames_.size()});
}

void Assembler::parseDirectiveElif(Lexer &lex, const Token &name) {
  if (!innermostConditionHere()) {
    error(name.begin, ".elif without .if");
    return;
  }
  Condition &c = conditions_.back();
  if (c.sawElse) {
    error(name.begin, ".elif after .else");
    return;
  }
  bool value = false;
  if (c.parentActive && !c.taken && !conditionValue(lex, Directive::Elif, value))
    value = false;
  c.active = c.parentActive && !c.taken && value;
  c.taken |= value;
}

void Assembler::parseDirectiveElse(Lexer &lex, const Token &name) {
  if (!innermostConditionHere()) {
    error(name.begin, ".else without .if");
    return;
  }
  Condition &c = conditions_.back();
  if (c.sawElse) {
    error(name.begin, ".else after .else");
    return;
  }
  c.sawElse = true;
  c.active = c.parentActive && !c.taken;
  c.taken = true;
  if (c.parentActive)
    endOfStatement(lex);
}

void Assembler::parseDirectiveEndif(Lexer &lex, const Token &name) {
  if (!innermostConditionHere()) {
    error(name.begin, ".endif without .if");
    return;
  }
  if (conditions_.back().parentActive)
    endOfStatement(lex);
  conditions_.pop_back();
}

uint64_t Assembler::location() const {
  const Segment &s = segments_[size_t(current_)];
  return s.address + s.bytes.size();
}

bool Assembler::needData(const Token &name) {
  if (!inText())
    return true;
  error(name.begin, std::string(text_.substr(name.begin, name.end - name.begin)) +
                        " is only allowed in a .data or .check section");
  return false;
}

bool Assembler::reserveOutput(uint64_t bytes) {
  if (bytes > options_.maxOutputBytes - outputBytes_) {
    error(0, "output exceeds the limit of " + io::byteSize(options_.maxOutputBytes));
    stopped_ = true;
    return false;
  }
  outputBytes_ += bytes;
  return chargeMemory(bytes);
}

bool Assembler::chargeMemoryPastLimit(uint64_t bytes) {
  // The report itself needs a little memory (its notes), past the limit.
  if (reportingMemoryLimit_) {
    memoryBytes_ += bytes;
    return true;
  }
  if (!stopped_) {
    reportingMemoryLimit_ = true;
    error(0, "assembly needs more than the memory limit of " +
                 io::byteSize(options_.maxMemoryBytes) +
                 " (sources, output, macro expansions, symbols, forward references, listing)");
    reportingMemoryLimit_ = false;
  }
  stopped_ = true;
  return false;
}

// The little-endian bits of one data value; false with *error for a float in
// integer data, *warning when the value had to be truncated.
bool dataBits(const Value &v, uint8_t size, bool isFloat, uint64_t &bits, std::string &error,
              std::string &warning) {
  if (isFloat) {
    bits = bitsFromFloat(v.isFloat ? v.f : static_cast<float>(v.asSigned()));
    return true;
  }
  if (v.isFloat) {
    error = "expected an integer, not a float (use .float)";
    return false;
  }
  bits = v.bits;
  const int64_t s = v.asSigned();
  if (size < 8 && (s < -(int64_t(1) << (8 * size - 1)) || s > int64_t(widthMask(8 * size)))) {
    bits &= widthMask(8 * size);
    warning = format("value %" PRId64 " does not fit in %u byte%s; truncated to 0x%" PRIx64, s,
                     unsigned(size), size > 1 ? "s" : "", bits);
  }
  return true;
}

void storeBits(std::vector<uint8_t> &bytes, size_t at, uint64_t bits, uint8_t size) {
  for (unsigned i = 0; i < size; ++i)
    bytes[at + i] = static_cast<uint8_t>(bits >> (8 * i));
}

void Assembler::emitValue(uint32_t offset, Value v, uint8_t size, bool isFloat,
                          std::optional<DeferredExpression> deferred) {
  if (!reserveOutput(size))
    return;
  Segment &seg = *segment();
  const size_t at = seg.bytes.size();
  seg.bytes.resize(at + size);
  if (deferred) {
    if (chargeMemory(sizeof(DataFixup)))
      dataFixups_.push_back(DataFixup{size_t(current_), at, size, isFloat, std::move(*deferred)});
    return;
  }
  uint64_t bits;
  std::string why, warn;
  if (!dataBits(v, size, isFloat, bits, why, warn)) {
    error(offset, std::move(why));
    return;
  }
  if (!warn.empty())
    warning(offset, std::move(warn));
  storeBits(seg.bytes, at, bits, size);
}

void Assembler::dataValues(Lexer &lex, uint8_t size, bool isFloat, const Token &name) {
  if (!needData(name))
    return;
  if (size > 1 && location() % size)
    warning(name.begin,
            format("%.*s data at 0x%" PRIx64 " is not %u-byte aligned", int(name.end - name.begin),
                   text_.data() + name.begin, location(), unsigned(size)));
  do {
    const uint32_t at = lex.position();
    Value v;
    std::optional<DeferredExpression> deferred;
    if (!deferrable(lex, v, deferred))
      return;
    emitValue(at, v, size, isFloat, std::move(deferred));
    if (stopped_)
      return;
  } while (lex.accept(','));
  endOfStatement(lex);
}

void Assembler::startSegment(Lexer &lex, bool isCheck, const Token &name) {
  const char *directive = isCheck ? ".check" : ".data";
  if (lex.peek().kind == TokenKind::End) {
    error(lex.position(), std::string(directive) + " needs an address: " + directive + " ADDRESS");
    return;
  }
  int64_t address;
  if (!immediateInteger(lex, address, "the address"))
    return;
  Segment seg;
  seg.isCheck = isCheck;
  seg.address = static_cast<uint64_t>(address);
  if (isCheck && lex.accept(',')) {
    const Token key = lex.next();
    if (key.kind != TokenKind::Ident || lex.text(key) != "ulp" || !lex.accept('=')) {
      error(key.begin, "expected ulp=N after the .check address");
      return;
    }
    const uint32_t at = lex.position();
    int64_t ulp;
    if (!immediateInteger(lex, ulp, "the ulp tolerance"))
      return;
    if (ulp < 0 || ulp > int64_t(UINT32_MAX)) {
      error(at, format("ulp tolerance must be in [0, 4294967295], got %" PRId64, ulp));
      return;
    }
    seg.kind = bin::CheckRegion::Kind::F32Ulp;
    seg.ulp = static_cast<uint32_t>(ulp);
  }
  if (!endOfStatement(lex) || !chargeMemory(sizeof(Segment)))
    return;
  seg.location = saveLocation(name.begin);
  current_ = static_cast<int>(segments_.size());
  segments_.push_back(std::move(seg));
}

bool Assembler::openInclude(std::string_view name, uint32_t offset, uint64_t maxBytes,
                            const char *limit, std::string &path, std::vector<uint8_t> &contents) {
  namespace fs = std::filesystem;
  std::vector<std::string> candidates;
  const fs::path requested(name);
  if (requested.is_absolute()) {
    candidates.push_back(requested.string());
  } else {
    const std::string *dir = nullptr;
    for (size_t i = frames_.size(); i-- > 0 && !dir;)
      dir = frames_[i].dir;
    candidates.push_back(dir && !dir->empty() ? (fs::path(*dir) / requested).string()
                                              : requested.string());
    for (const std::string &inc : options_.includeDirs)
      candidates.push_back((fs::path(inc) / requested).string());
  }
  for (const std::string &candidate : candidates) {
    std::error_code ec;
    const fs::file_status status = fs::status(candidate, ec);
    if (!fs::exists(status))
      continue;
    if (fs::is_directory(status)) {
      error(offset, inQuotes(candidate) + " is a directory, not a file");
      return false;
    }
    // Read with a bound: a device such as /dev/zero never ends.
    try {
      contents = io::readFile(candidate, maxBytes, limit);
    } catch (const io::FileError &e) {
      error(offset, e.what());
      return false;
    }
    path = candidate;
    if (filesRead_.emplace(candidate).second) {
      chargeMemory(2 * (candidate.size() + kAllocationOverhead));
      result_.filesRead.push_back(candidate);
    }
    return true;
  }
  error(offset, "file " + inQuotes(name) + " not found" +
                    (options_.includeDirs.empty() ? "" : " (searched the -I directories too)"));
  return false;
}

// Parses "NAME [param[=default]][, ...]" after .macro.
bool Assembler::macroHeader(Lexer &lex, MacroDefinition &macro) {
  const Token macroName = lex.next();
  if (macroName.kind != TokenKind::Ident || lex.text(macroName)[0] == '.') {
    error(macroName.begin, "expected a macro name");
    return false;
  }
  const std::string_view nameText = lex.text(macroName);
  if (mnemonics().find(nameText)) {
    error(macroName.begin,
          "macro " + inQuotes(nameText) + " would hide the instruction of that name");
    return false;
  }
  if (macros_.find(nameText)) {
    error(macroName.begin, "macro " + inQuotes(nameText) + " is already defined");
    return false;
  }
  macro.name = std::string(nameText);
  while (lex.peek().kind != TokenKind::End) {
    if (!macro.params.empty())
      lex.accept(',');
    const Token param = lex.next();
    if (param.kind != TokenKind::Ident) {
      error(param.begin, "expected a parameter name");
      return false;
    }
    const std::string_view p = lex.text(param);
    if (macro.paramIndex.find(p)) {
      error(param.begin, "duplicate macro parameter " + inQuotes(p));
      return false;
    }
    std::optional<std::string> def;
    if (lex.accept('=')) {
      const uint32_t from = lex.position();
      uint32_t to = from;
      while (lex.peek().kind != TokenKind::End && !lex.peek().is(',')) {
        if (lex.peek().kind == TokenKind::Error) {
          error(lex.peek().begin, lex.peek().error);
          return false;
        }
        to = lex.next().end;
      }
      def = std::string(lex.line().substr(from, to - from));
    }
    macro.paramIndex.emplace(p).first->second = static_cast<uint32_t>(macro.params.size());
    macro.params.emplace_back(p);
    macro.defaults.push_back(std::move(def));
  }
  return true;
}

// Parses the count after .rept.
bool Assembler::reptHeader(Lexer &lex, uint64_t &count) {
  if (lex.peek().kind == TokenKind::End) {
    error(lex.position(), ".rept needs a count");
    return false;
  }
  const uint32_t at = lex.position();
  int64_t value;
  if (!immediateInteger(lex, value, "the .rept count") || !endOfStatement(lex))
    return false;
  if (value < 0) {
    error(at, format(".rept count must not be negative, got %" PRId64, value));
    return false;
  }
  count = static_cast<uint64_t>(value);
  return true;
}

bool Assembler::stringOperand(Lexer &lex, std::string &out) {
  const Token t = lex.next();
  if (t.kind == TokenKind::Error) {
    error(t.begin, t.error);
    return false;
  }
  if (t.kind != TokenKind::String) {
    error(t.begin, "expected a string in double quotes");
    return false;
  }
  const char *why = nullptr;
  if (!decodeString(lex.text(t), out, &why)) {
    error(t.begin, why);
    return false;
  }
  return true;
}

void Assembler::directive(Lexer &lex, Directive d, const Token &name) {
  switch (d) {
  case Directive::Equ: parseDirectiveSymbol(lex, SymbolEntry::Kind::Equ); return;
  case Directive::Set: parseDirectiveSymbol(lex, SymbolEntry::Kind::Set); return;
  case Directive::Include: parseDirectiveInclude(lex, name); return;
  case Directive::Incbin: parseDirectiveIncbin(lex, name); return;
  case Directive::Macro:
  case Directive::Rept: parseDirectiveCollection(lex, d, name); return;
  case Directive::Endm: error(name.begin, ".endm without .macro"); return;
  case Directive::Endr: error(name.begin, ".endr without .rept"); return;
  case Directive::Text: parseDirectiveText(lex); return;
  case Directive::Data: startSegment(lex, false, name); return;
  case Directive::Check: startSegment(lex, true, name); return;
  case Directive::Align: parseDirectiveAlign(lex, name); return;
  case Directive::Byte: dataValues(lex, 1, false, name); return;
  case Directive::Half: dataValues(lex, 2, false, name); return;
  case Directive::Word: dataValues(lex, 4, false, name); return;
  case Directive::Quad: dataValues(lex, 8, false, name); return;
  case Directive::Float: dataValues(lex, 4, true, name); return;
  case Directive::Fill: parseDirectiveFill(lex, name); return;
  case Directive::Ascii: parseDirectiveAscii(lex, name, false); return;
  case Directive::Asciz: parseDirectiveAscii(lex, name, true); return;
  case Directive::Meta: parseDirectiveMeta(lex); return;
  case Directive::Packet: parseDirectivePacket(lex, name); return;
  case Directive::Error:
  case Directive::Warning: parseDirectiveMessage(lex, d, name); return;
  case Directive::If:
  case Directive::Ifdef:
  case Directive::Ifndef:
  case Directive::Elif:
  case Directive::Else:
  case Directive::Endif:
    // conditional() handles these at the start of a line only.
    error(name.begin, std::string(lex.text(name)) + " must start its line (no label before it)");
    return;
  }
}

void Assembler::parseDirectiveSymbol(Lexer &lex, SymbolEntry::Kind kind) {
  const Token sym = lex.next();
  if (sym.kind != TokenKind::Ident) {
    error(sym.begin, "expected a symbol name");
    return;
  }
  if (!lex.accept(',')) {
    error(lex.position(), "expected ',' after the symbol name");
    return;
  }
  defineSymbol(sym, lex.text(sym), kind, lex);
}

bool Assembler::includedFile(Lexer &lex, const Token &name, bool incbin, uint32_t &at,
                             std::string &path, std::vector<uint8_t> &contents) {
  at = lex.position();
  std::string fileName;
  if (!stringOperand(lex, fileName) || !endOfStatement(lex))
    return false;
  if (!options_.allowFileAccess) {
    error(name.begin, std::string(lex.text(name)) + " is disabled here");
    return false;
  }
  if (incbin && !needData(name))
    return false;
  return openInclude(fileName, at,
                     incbin ? std::min(options_.maxOutputBytes - outputBytes_, memoryLeft())
                            : memoryLeft(),
                     incbin ? "what is left under the assembler's output and memory limits"
                            : "what is left under the assembler's memory limit",
                     path, contents);
}

void Assembler::parseDirectiveIncbin(Lexer &lex, const Token &name) {
  uint32_t at;
  std::string path;
  std::vector<uint8_t> contents;
  if (!includedFile(lex, name, true, at, path, contents) || !reserveOutput(contents.size()))
    return;
  std::vector<uint8_t> &bytes = segment()->bytes;
  if (bytes.empty())
    bytes = std::move(contents);
  else
    bytes.insert(bytes.end(), contents.begin(), contents.end());
}

void Assembler::parseDirectiveInclude(Lexer &lex, const Token &name) {
  uint32_t at;
  std::string path;
  std::vector<uint8_t> contents;
  if (!includedFile(lex, name, false, at, path, contents))
    return;
  const std::string_view source(reinterpret_cast<const char *>(contents.data()), contents.size());
  size_t bad;
  if (const char *why = notSource(source, bad)) {
    error(at, inQuotes(path) + " is " + why);
    return;
  }
  const std::string canonical = canonicalPath(path);
  size_t files = 0;
  for (const Frame &f : frames_) {
    if (f.kind != Frame::Kind::File)
      continue;
    ++files;
    if (f.canonical == canonical) {
      error(at, "include loop: " + inQuotes(path) + " is already being included");
      return;
    }
  }
  if (files >= kMaxNesting) {
    error(at, format("includes nested more than %u deep", kMaxNesting));
    return;
  }
  if (!chargeMemory(contents.size() + 2 * (path.size() + kAllocationOverhead) +
                    kAllocationOverhead))
    return;
  const std::string *pathName = &strings_.emplace_back(path);
  const std::string *dir =
      &strings_.emplace_back(std::filesystem::path(path).parent_path().string());
  const std::vector<uint8_t> &kept = sources_.emplace_back(std::move(contents));
  pushFile(pathName, dir,
           std::string_view(reinterpret_cast<const char *>(kept.data()), kept.size()));
}

void Assembler::parseDirectiveCollection(Lexer &lex, Directive d, const Token &name) {
  // The body is collected even after an error in this line, so that its
  // lines and its .endm/.endr do not cause errors of their own.
  Collection c;
  c.kind = d == Directive::Macro ? Collection::Kind::Macro : Collection::Kind::Rept;
  c.location = saveLocation(name.begin);
  c.firstBodyLine = line_ + 1;
  c.frameDepth = frames_.size();
  c.discard = d == Directive::Macro ? !macroHeader(lex, c.macro) : !reptHeader(lex, c.count);
  collecting_ = std::move(c);
}

void Assembler::parseDirectiveText(Lexer &lex) {
  if (endOfStatement(lex))
    current_ = -1;
}

void Assembler::parseDirectiveAlign(Lexer &lex, const Token &name) {
  if (!needData(name))
    return;
  const uint32_t at = lex.position();
  int64_t align;
  if (!immediateInteger(lex, align, "the alignment") || !endOfStatement(lex))
    return;
  if (align < 1 || align > (1 << 20) || (align & (align - 1))) {
    error(at, format("alignment must be a power of two in [1, 1048576], got %" PRId64, align));
    return;
  }
  const uint64_t pad = (uint64_t(align) - location() % uint64_t(align)) % uint64_t(align);
  if (!reserveOutput(pad))
    return;
  segment()->bytes.resize(segment()->bytes.size() + pad);
}

void Assembler::parseDirectiveFill(Lexer &lex, const Token &name) {
  if (!needData(name))
    return;
  int64_t count, size;
  const uint32_t countAt = lex.position();
  if (!immediateInteger(lex, count, "the .fill count"))
    return;
  if (!lex.accept(',')) {
    error(lex.position(), ".fill takes COUNT, SIZE, VALUE");
    return;
  }
  const uint32_t sizeAt = lex.position();
  if (!immediateInteger(lex, size, "the .fill size"))
    return;
  if (!lex.accept(',')) {
    error(lex.position(), ".fill takes COUNT, SIZE, VALUE");
    return;
  }
  const uint32_t valueAt = lex.position();
  Value value;
  if (!immediate(lex, value) || !endOfStatement(lex))
    return;
  if (count < 0) {
    error(countAt, format(".fill count must not be negative, got %" PRId64, count));
    return;
  }
  if (size != 1 && size != 2 && size != 4 && size != 8) {
    error(sizeAt, format(".fill size must be 1, 2, 4 or 8, got %" PRId64, size));
    return;
  }
  if (uint64_t(count) > options_.maxOutputBytes / uint64_t(size) ||
      !reserveOutput(uint64_t(count) * uint64_t(size))) {
    if (!stopped_)
      error(countAt, "output exceeds the limit of " + io::byteSize(options_.maxOutputBytes));
    stopped_ = true;
    return;
  }
  uint64_t bits;
  std::string why, warn;
  if (value.isFloat && size != 4) {
    error(valueAt, "a float .fill value needs SIZE 4");
    return;
  }
  if (!dataBits(value, uint8_t(size), value.isFloat, bits, why, warn)) {
    error(valueAt, std::move(why));
    return;
  }
  if (!warn.empty())
    warning(valueAt, std::move(warn));
  std::vector<uint8_t> &bytes = segment()->bytes;
  const size_t at = bytes.size();
  bytes.resize(at + size_t(count) * size_t(size));
  for (size_t i = 0; i < size_t(count); ++i)
    storeBits(bytes, at + i * size_t(size), bits, uint8_t(size));
}

void Assembler::parseDirectiveAscii(Lexer &lex, const Token &name, bool zeroTerminated) {
  if (!needData(name))
    return;
  std::string s;
  if (!stringOperand(lex, s) || !endOfStatement(lex))
    return;
  if (zeroTerminated)
    s += '\0';
  if (!reserveOutput(s.size()))
    return;
  segment()->bytes.insert(segment()->bytes.end(), s.begin(), s.end());
}

void Assembler::parseDirectiveMeta(Lexer &lex) {
  const Token key = lex.peek();
  std::string keyText, value;
  if (key.kind == TokenKind::Ident) {
    keyText = std::string(lex.text(key));
    lex.next();
  } else if (key.kind == TokenKind::String) {
    if (!stringOperand(lex, keyText))
      return;
  } else {
    error(key.begin, "expected a metadata key");
    return;
  }
  if (!lex.accept(',')) {
    error(lex.position(), ".meta takes KEY, \"VALUE\"");
    return;
  }
  if (!stringOperand(lex, value) || !endOfStatement(lex))
    return;
  if (keyText.empty()) {
    error(key.begin, "empty metadata key");
    return;
  }
  if (metadataKeys_.find(keyText)) {
    error(key.begin, "duplicate metadata key " + inQuotes(keyText));
    return;
  }
  if (chargeMemory(sizeof(metadata_.front()) + 2 * keyText.size() + value.size() +
                   3 * kAllocationOverhead)) {
    metadataKeys_.emplace(keyText);
    metadata_.emplace_back(std::move(keyText), std::move(value));
  }
}

void Assembler::parseDirectivePacket(Lexer &lex, const Token &name) {
  if (!inText()) {
    error(name.begin, ".packet is only allowed in the text section");
    return;
  }
  uint32_t words[16];
  unsigned count = 0;
  do {
    const uint32_t at = lex.position();
    int64_t w;
    if (!immediateInteger(lex, w, "a packet word"))
      return;
    if (w < INT32_MIN || w > int64_t(UINT32_MAX)) {
      error(at, format("packet word %" PRId64 " does not fit in 32 bits", w));
      return;
    }
    if (count == 16) {
      error(at, ".packet takes exactly 16 words, got more");
      return;
    }
    words[count++] = static_cast<uint32_t>(w);
  } while (lex.accept(','));
  if (!endOfStatement(lex))
    return;
  if (count != 16) {
    error(name.begin, format(".packet takes exactly 16 words, got %u", count));
    return;
  }
  if (!reserveOutput(isa::kPacketBytes))
    return;
  bin::Packet &p = text_packets_.emplace_back();
  for (unsigned i = 0; i < 16; ++i)
    for (unsigned b = 0; b < 4; ++b)
      p[4 * i + b] = static_cast<uint8_t>(words[i] >> (8 * b));
}

void Assembler::parseDirectiveMessage(Lexer &lex, Directive d, const Token &name) {
  std::string message;
  if (!stringOperand(lex, message) || !endOfStatement(lex))
    return;
  if (d == Directive::Error)
    error(name.begin, message);
  else
    warning(name.begin, message);
}

// ---------------------------------------------------------------- end of input

void Assembler::resolveAll() {
  for (auto &[name, symbol] : symbols_.entries())
    resolveSymbol(symbol);
  for (const PendingOperand &p : pendingOperands_) {
    Value v;
    if (resolveDeferred(p.expression, v, nullptr) != Resolution::Done)
      continue;
    const InstrInfo &ins = isa::instructions()[p.instruction];
    const OperandInfo &op = ins.operands[p.operand];
    uint64_t bits;
    std::string why;
    if (!operandBits(ins, op, v, bits, why))
      errorAt(lines_[p.expression.line], p.expression.offset, std::move(why));
    else
      patchOperand(text_packets_[p.packet], op, bits);
  }
  for (const DataFixup &fix : dataFixups_) {
    Value v;
    if (resolveDeferred(fix.expression, v, nullptr) != Resolution::Done)
      continue;
    uint64_t bits;
    std::string why, warn;
    const SavedLocation &loc = lines_[fix.expression.line];
    if (!dataBits(v, fix.size, fix.isFloat, bits, why, warn)) {
      errorAt(loc, fix.expression.offset, std::move(why));
      continue;
    }
    if (!warn.empty())
      reportAt(Diagnostic::Severity::Warning, loc, fix.expression.offset, std::move(warn));
    storeBits(segments_[fix.segment].bytes, fix.offset, bits, fix.size);
  }
}

void Assembler::buildObject() {
  bin::Object &obj = result_.object;
  obj.text = std::move(text_packets_);
  // Segments in address order; empty ones only carry labels.
  std::vector<size_t> order;
  for (size_t i = 0; i < segments_.size(); ++i)
    if (!segments_[i].bytes.empty())
      order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return segments_[a].address < segments_[b].address; });
  // The previous data and check section in address order: its range and
  // where it was started.
  struct Previous {
    uint64_t address = 0, end = 0;
    const SavedLocation *location = nullptr;
  } lastData, lastCheck;
  for (size_t i : order) {
    Segment &seg = segments_[i];
    const uint64_t end = seg.address + seg.bytes.size();
    if (end < seg.address) {
      errorAt(seg.location, seg.location.column - 1,
              format("section at 0x%" PRIx64 " with %zu bytes wraps past the end of the address "
                     "space",
                     seg.address, seg.bytes.size()));
      continue;
    }
    Previous &last = seg.isCheck ? lastCheck : lastData;
    if (last.location && seg.address < last.end) {
      errorAt(seg.location, seg.location.column - 1,
              format("%s [0x%" PRIx64 ", 0x%" PRIx64 ") overlaps [0x%" PRIx64 ", 0x%" PRIx64
                     ") from %s:%u",
                     seg.isCheck ? "check region" : "data", seg.address, end, last.address,
                     last.end, last.location->file->c_str(), last.location->line));
      continue;
    }
    last = Previous{seg.address, end, &seg.location};
    if (seg.isCheck) {
      if (seg.kind == bin::CheckRegion::Kind::F32Ulp && (seg.address % 4 || seg.bytes.size() % 4)) {
        errorAt(seg.location, seg.location.column - 1,
                format("an ulp check region must be 4-byte aligned and a multiple of 4 bytes "
                       "(0x%" PRIx64 ", %zu bytes)",
                       seg.address, seg.bytes.size()));
        continue;
      }
      obj.checks.push_back(bin::CheckRegion{seg.address, seg.kind, seg.ulp, std::move(seg.bytes)});
    } else {
      obj.data.push_back(bin::DataSegment{seg.address, std::move(seg.bytes)});
    }
  }
  // Symbols in a canonical order, so that re-assembling a disassembly
  // reproduces the same table.
  for (const auto &[name, s] : symbols_.entries())
    if (s.kind == SymbolEntry::Kind::Label && s.state != SymbolEntry::State::Forward)
      obj.symbols.push_back(
          bin::Symbol{name, s.isAddress ? bin::Symbol::Kind::Address : bin::Symbol::Kind::Packet,
                      s.value.bits});
  std::sort(obj.symbols.begin(), obj.symbols.end(), [](const bin::Symbol &a, const bin::Symbol &b) {
    return std::tie(a.kind, a.value, a.name) < std::tie(b.kind, b.value, b.name);
  });
  obj.metadata = std::move(metadata_);
}

// One line per source line: line number, packet index or address, the
// bytes it produced (packets as 16 words on a second line), the source.
std::string Assembler::renderListing() const {
  std::string out;
  for (const ListingEntry &e : listing_) {
    const std::string number = format("%6u  ", e.line);
    switch (e.kind) {
    case ListingEntry::Kind::None: out += number + std::string(20, ' ') + e.text + '\n'; break;
    case ListingEntry::Kind::Packets:
      for (size_t p = e.first; p < e.first + e.count; ++p) {
        out += number + format("[%8zu]          ", p) + (p == e.first ? e.text : "") + '\n';
        std::string words = std::string(8, ' ');
        for (unsigned w = 0; w < 16; ++w)
          words += format(" %08x", isa::detail::load32(text_packets_[p].data(), 4 * w));
        out += words + '\n';
      }
      break;
    case ListingEntry::Kind::Bytes: {
      const Segment &seg = segments_[e.segment];
      constexpr size_t kShown = 64;
      for (size_t i = 0; i < std::min(e.count, kShown); i += 16) {
        std::string hex;
        for (size_t k = i; k < std::min({i + 16, e.count, kShown}); ++k)
          hex += format("%02x", seg.bytes[e.first + k]);
        out += (i == 0 ? number : std::string(8, ' ')) +
               format("0x%016" PRIx64 "  ", seg.address + e.first + i) + hex +
               (i == 0 ? "  " + e.text : std::string()) + '\n';
      }
      if (e.count > kShown)
        out += format("        ... %zu more bytes\n", e.count - kShown);
      break;
    }
    }
  }
  return out;
}

} // namespace

AssembleResult assembleFile(const std::string &path, const Options &options) {
  return Assembler(options).run(path, std::nullopt);
}

AssembleResult assembleString(std::string_view text, std::string_view name,
                              const Options &options) {
  return Assembler(options).run(name, text);
}

std::vector<std::string> directiveNames() {
  std::vector<std::string> names;
  for (const auto &[name, directive] : kDirectives)
    names.emplace_back(name);
  return names;
}

} // namespace npu::as
