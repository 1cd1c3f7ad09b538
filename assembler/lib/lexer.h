// Tokens of one .npuasm source line. The lexer works on a string_view of the
// line and never allocates; positions are byte offsets into that line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace npu::as {

enum class TokenKind : uint8_t { End, Ident, Int, Float, String, Punct, Error };

// Two-character operators are stored in Token::op as (first << 8 | second).
constexpr uint16_t op2(char a, char b) {
  return uint16_t(uint8_t(a)) << 8 | uint8_t(b);
}

struct Token {
  TokenKind kind = TokenKind::End;
  uint16_t op = 0; // Punct: the character, or op2() of a two-character operator
  uint32_t begin = 0;
  uint32_t end = 0;
  union {
    uint64_t intValue = 0; // Int; Ident: hashName() of the text
    float floatValue;      // Float
    const char *error;     // Error: what is wrong with the token
  };

  bool is(uint16_t punct) const { return kind == TokenKind::Punct && op == punct; }
};

namespace detail {
enum : uint8_t { kIdentStart = 1, kIdentChar = 2, kSpace = 4, kOperatorStart = 8 };
inline constexpr struct CharClasses {
  uint8_t table[256] = {};
  constexpr CharClasses() {
    for (int c = 0; c < 256; ++c) {
      const bool letter =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' || c == '$';
      table[c] = uint8_t(
          (letter ? kIdentStart | kIdentChar : 0) | (c >= '0' && c <= '9' ? kIdentChar : 0) |
          (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' ? kSpace : 0) |
          (c == '<' || c == '>' || c == '=' || c == '!' || c == '&' || c == '|' ? kOperatorStart
                                                                                : 0));
    }
  }
} kCharClasses;
} // namespace detail

inline bool isIdentStart(char c) {
  return detail::kCharClasses.table[uint8_t(c)] & detail::kIdentStart;
}
inline bool isIdentChar(char c) {
  return detail::kCharClasses.table[uint8_t(c)] & detail::kIdentChar;
}
// The first character of a two-character operator ("<<", "!=", ...).
inline bool isOperatorStart(char c) {
  return detail::kCharClasses.table[uint8_t(c)] & detail::kOperatorStart;
}
inline bool isSpace(char c) {
  return detail::kCharClasses.table[uint8_t(c)] & detail::kSpace;
}

// FNV-1a, the hash of names in symbol tables; the lexer computes it for
// each identifier while scanning it.
constexpr uint64_t kHashSeed = 0xcbf29ce484222325ull;
constexpr uint64_t hashStep(uint64_t h, char c) {
  return (h ^ uint8_t(c)) * 0x100000001b3ull;
}
inline uint64_t hashName(std::string_view s) {
  uint64_t h = kHashSeed;
  for (char c : s)
    h = hashStep(h, c);
  return h;
}

class Lexer {
public:
  explicit Lexer(std::string_view line, uint32_t pos = 0) : line_(line), pos_(pos) { advance(); }

  const Token &peek() const { return current_; }
  Token next() {
    Token t = current_;
    advance();
    return t;
  }
  // Consumes the next token if it is the punctuation `punct`.
  bool accept(uint16_t punct) {
    if (!current_.is(punct))
      return false;
    advance();
    return true;
  }
  // Tokens lie within the line: no bounds check (substr's is not inlined).
  std::string_view text(const Token &t) const {
    return std::string_view(line_.data() + t.begin, t.end - t.begin);
  }
  std::string_view line() const { return line_; }
  // True if the current token is followed by the end of an operand: ',',
  // ']', ')', a comment or the end of the line.
  bool currentIsWholeOperand() const {
    uint32_t i = current_.end;
    while (i < line_.size() && isSpace(line_[i]))
      ++i;
    if (i >= line_.size())
      return true;
    const char c = line_[i];
    return c == ',' || c == ']' || c == ')' || c == '#' || c == ';';
  }
  // Offset where the next token starts (after whitespace).
  uint32_t position() const { return current_.begin; }

private:
  void advance();
  void lexNumber(Token &t);

  std::string_view line_;
  uint32_t pos_;
  Token current_;
};

// The value of a string literal token (with its quotes); false and an
// explanation for a bad escape.
bool decodeString(std::string_view literal, std::string &out, const char **error);

} // namespace npu::as
