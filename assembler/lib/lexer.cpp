#include "lexer.h"

#include <charconv>

namespace npu::as {

namespace {

int digitValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return 99;
}

} // namespace

void Lexer::advance() {
  const char *s = line_.data();
  const uint32_t n = static_cast<uint32_t>(line_.size());
  uint32_t p = pos_;
  while (p < n && isSpace(s[p]))
    ++p;
  Token &t = current_;
  t.begin = p;
  const char c = p < n ? s[p] : '#';
  if (c == '#' || c == ';') {
    t.kind = TokenKind::End;
    t.end = pos_ = p;
    return;
  }
  if (isIdentStart(c)) {
    uint64_t h = hashStep(kHashSeed, c);
    uint32_t e = p + 1;
    while (e < n && isIdentChar(s[e]))
      h = hashStep(h, s[e++]);
    t.intValue = h;
    t.kind = TokenKind::Ident;
    t.end = pos_ = e;
  } else if (c >= '0' && c <= '9') {
    pos_ = p;
    lexNumber(t);
  } else if (c == '"') {
    uint32_t e = p + 1;
    while (e < n && s[e] != '"')
      e += s[e] == '\\' && e + 1 < n ? 2 : 1;
    if (e >= n) {
      t.kind = TokenKind::Error;
      t.error = "unterminated string";
      t.end = pos_ = n;
    } else {
      t.kind = TokenKind::String;
      t.end = pos_ = e + 1;
    }
  } else if (uint8_t(c) < 0x20 || c == 0x7f) {
    t.kind = TokenKind::Error;
    t.error = "control character in the source (only spaces and tabs separate tokens)";
    t.end = pos_ = p + 1;
  } else {
    t.kind = TokenKind::Punct;
    t.op = uint8_t(c);
    p += 1;
    if (isOperatorStart(c) && p < n) {
      switch (const uint16_t two = op2(c, s[p])) {
      case op2('<', '<'):
      case op2('>', '>'):
      case op2('<', '='):
      case op2('>', '='):
      case op2('=', '='):
      case op2('!', '='):
      case op2('&', '&'):
      case op2('|', '|'):
        t.op = two;
        p += 1;
        break;
      default: break;
      }
    }
    t.end = pos_ = p;
  }
}

// Integers: decimal, 0x hex, 0b binary (up to 2^64 - 1). Floats: decimal
// with a fraction and/or an exponent, converted once to the nearest f32.
void Lexer::lexNumber(Token &t) {
  const char *s = line_.data();
  const uint32_t n = static_cast<uint32_t>(line_.size());
  uint32_t e = pos_;
  unsigned base = 10;
  if (s[e] == '0' && e + 1 < n && (s[e + 1] == 'x' || s[e + 1] == 'X')) {
    base = 16;
    e += 2;
  } else if (s[e] == '0' && e + 1 < n && (s[e + 1] == 'b' || s[e + 1] == 'B') && e + 2 < n &&
             (s[e + 2] == '0' || s[e + 2] == '1')) {
    base = 2;
    e += 2;
  }
  const uint32_t digitsBegin = e;
  uint64_t value = 0;
  bool overflow = false;
  if (base == 10) {
    // Nineteen decimal digits cannot overflow: check only past them.
    while (e < n && unsigned(s[e] - '0') < 10 && e - digitsBegin < 19)
      value = value * 10 + unsigned(s[e++] - '0');
  }
  while (e < n && digitValue(s[e]) < int(base)) {
    const uint64_t d = uint64_t(digitValue(s[e]));
    if (value > (UINT64_MAX - d) / base)
      overflow = true;
    value = value * base + d;
    ++e;
  }
  bool isFloat = false;
  if (base == 10) {
    if (e < n && s[e] == '.') {
      isFloat = true;
      ++e;
      while (e < n && s[e] >= '0' && s[e] <= '9')
        ++e;
    }
    if (e < n && (s[e] == 'e' || s[e] == 'E')) {
      uint32_t x = e + 1;
      if (x < n && (s[x] == '+' || s[x] == '-'))
        ++x;
      if (x < n && s[x] >= '0' && s[x] <= '9') {
        isFloat = true;
        e = x;
        while (e < n && s[e] >= '0' && s[e] <= '9')
          ++e;
      }
    }
  }
  t.end = e;
  if (e < n && isIdentChar(s[e])) {
    // "12ab", "0x", "1.5f": a number glued to letters is one bad token.
    while (e < n && isIdentChar(s[e]))
      ++e;
    t.kind = TokenKind::Error;
    t.error = "invalid number";
    t.end = pos_ = e;
    return;
  }
  pos_ = e;
  if (e == digitsBegin) {
    t.kind = TokenKind::Error;
    t.error = "invalid number";
  } else if (isFloat) {
    float f = 0;
    auto result = std::from_chars(s + t.begin, s + e, f);
    if (result.ec != std::errc() || result.ptr != s + e) {
      t.kind = TokenKind::Error;
      t.error = "float literal out of the f32 range";
    } else {
      t.kind = TokenKind::Float;
      t.floatValue = f;
    }
  } else if (overflow) {
    t.kind = TokenKind::Error;
    t.error = "integer literal does not fit in 64 bits";
  } else {
    t.kind = TokenKind::Int;
    t.intValue = value;
  }
}

bool decodeString(std::string_view literal, std::string &out, const char **error) {
  out.clear();
  for (size_t i = 1; i + 1 < literal.size(); ++i) {
    char c = literal[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    c = literal[++i];
    switch (c) {
    case 'n': out += '\n'; break;
    case 't': out += '\t'; break;
    case 'r': out += '\r'; break;
    case '0': out += '\0'; break;
    case '\\': out += '\\'; break;
    case '"': out += '"'; break;
    case 'x': {
      int hi = i + 1 < literal.size() - 1 ? digitValue(literal[i + 1]) : 99;
      int lo = i + 2 < literal.size() - 1 ? digitValue(literal[i + 2]) : 99;
      if (hi > 15 || lo > 15) {
        *error = "\\x needs two hex digits";
        return false;
      }
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
      break;
    }
    default: *error = "unknown escape sequence in string"; return false;
    }
  }
  return true;
}

} // namespace npu::as
