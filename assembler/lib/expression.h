// Expressions: 64-bit integers (two's complement, wrapping) and f32 floats,
// C operators and precedence, symbols resolved through a SymbolResolver.
#pragma once

#include "lexer.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace npu::as {

struct Value {
  bool isFloat = false;
  // Depends on a symbol that is not defined yet: a placeholder.
  bool unresolved = false;
  uint64_t bits = 0; // integer value as two's complement bits
  float f = 0;
  // When unresolved: if set, the value is this symbol plus `bits` (like a
  // relocation), so it can be resolved later without parsing it again.
  const void *symbol = nullptr;

  static Value integer(uint64_t v) { return {false, false, v, 0, nullptr}; }
  static Value real(float v) { return {true, false, 0, v, nullptr}; }
  int64_t asSigned() const { return static_cast<int64_t>(bits); }
};

class SymbolResolver {
public:
  enum class Lookup {
    Found,      // out holds the value
    Unresolved, // may be defined later: the expression is deferred; out.symbol
                // may name the symbol's entry
    Undefined,  // an error
  };
  // `hash` is hashName(name).
  virtual Lookup lookup(std::string_view name, uint64_t hash, Value &out) = 0;

protected:
  ~SymbolResolver() = default;
};

// Parentheses and unary operators nest at most this deep: the parser
// recurses on them, and the input must not choose how deep.
inline constexpr unsigned kMaxExpressionDepth = 256;

// Parses and evaluates one expression from the lexer's current token,
// stopping before a token that cannot continue it (',', ']', ...).
class ExpressionEvaluator {
public:
  ExpressionEvaluator(Lexer &lexer, SymbolResolver &resolver) : lex_(lexer), resolver_(resolver) {}

  // False on a syntax or arithmetic error (see errorOffset/errorMessage).
  // When a symbol was Unresolved, out.unresolved is set and the value is a
  // placeholder (or `symbol + bits`); value-dependent errors then wait.
  bool evaluate(Value &out);
  uint32_t errorOffset() const { return errorOffset_; }
  const std::string &errorMessage() const { return errorMessage_; }

private:
  bool binary(int minLevel, Value &out);
  bool unary(Value &out);
  bool primary(Value &out);
  bool apply(const Token &op, Value &lhs, const Value &rhs);
  bool fail(uint32_t offset, std::string message);
  // Counts one level of nesting at `offset`; false (an error) beyond
  // kMaxExpressionDepth. leave() undoes it.
  bool enter(uint32_t offset);
  void leave() { --depth_; }

  Lexer &lex_;
  SymbolResolver &resolver_;
  unsigned depth_ = 0;
  uint32_t errorOffset_ = 0;
  std::string errorMessage_;
};

// The f32 with the given bit pattern and back.
float floatFromBits(uint32_t bits);
uint32_t bitsFromFloat(float f);

} // namespace npu::as
