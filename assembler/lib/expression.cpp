#include "expression.h"

#include <bit>
#include <cstring>

namespace npu::as {

float floatFromBits(uint32_t bits) {
  return std::bit_cast<float>(bits);
}
uint32_t bitsFromFloat(float f) {
  return std::bit_cast<uint32_t>(f);
}

namespace {

// Binary operators by precedence level, lowest first; -1 for other tokens.
int levelOf(const Token &t) {
  if (t.kind != TokenKind::Punct)
    return -1;
  switch (t.op) {
  case op2('|', '|'): return 0;
  case op2('&', '&'): return 1;
  case '|': return 2;
  case '^': return 3;
  case '&': return 4;
  case op2('=', '='):
  case op2('!', '='): return 5;
  case '<':
  case '>':
  case op2('<', '='):
  case op2('>', '='): return 6;
  case op2('<', '<'):
  case op2('>', '>'): return 7;
  case '+':
  case '-': return 8;
  case '*':
  case '/':
  case '%': return 9;
  }
  return -1;
}

std::string opName(uint16_t op) {
  std::string s;
  if (op > 0xff)
    s += static_cast<char>(op >> 8);
  s += static_cast<char>(op & 0xff);
  return s;
}

float toFloat(const Value &v) {
  return v.isFloat ? v.f : static_cast<float>(v.asSigned());
}

} // namespace

bool ExpressionEvaluator::fail(uint32_t offset, std::string message) {
  errorOffset_ = offset;
  errorMessage_ = std::move(message);
  return false;
}

bool ExpressionEvaluator::enter(uint32_t offset) {
  if (++depth_ <= kMaxExpressionDepth)
    return true;
  --depth_;
  return fail(offset, "expression nested more than " + std::to_string(kMaxExpressionDepth) +
                          " deep (parentheses and unary operators)");
}

bool ExpressionEvaluator::evaluate(Value &out) {
  return binary(0, out);
}

// Precedence climbing: operators of a level bind left to right.
bool ExpressionEvaluator::binary(int minLevel, Value &lhs) {
  if (!unary(lhs))
    return false;
  for (;;) {
    const int level = levelOf(lex_.peek());
    if (level < minLevel)
      return true;
    const Token op = lex_.next();
    Value rhs;
    if (!binary(level + 1, rhs) || !apply(op, lhs, rhs))
      return false;
  }
}

// Applies a binary operator. Value-dependent errors wait while an operand
// is a placeholder for a symbol resolved later.
bool ExpressionEvaluator::apply(const Token &op, Value &lhs, const Value &rhs) {
  if (lhs.unresolved || rhs.unresolved) {
    // Only symbol + integer and symbol - integer keep the symbolic form;
    // anything else is evaluated again at the end (which reports errors).
    const bool lhsConst = !lhs.unresolved && !lhs.isFloat;
    const bool rhsConst = !rhs.unresolved && !rhs.isFloat;
    if (lhs.symbol && rhsConst && (op.op == '+' || op.op == '-'))
      lhs.bits = op.op == '+' ? lhs.bits + rhs.bits : lhs.bits - rhs.bits;
    else if (rhs.symbol && lhsConst && op.op == '+')
      lhs = Value{false, true, lhs.bits + rhs.bits, 0, rhs.symbol};
    else
      lhs = Value{false, true, 0, 0, nullptr};
    return true;
  }
  if (lhs.isFloat || rhs.isFloat) {
    const float a = toFloat(lhs), b = toFloat(rhs);
    switch (op.op) {
    case '+': lhs = Value::real(a + b); break;
    case '-': lhs = Value::real(a - b); break;
    case '*': lhs = Value::real(a * b); break;
    case '/': lhs = Value::real(a / b); break;
    case '<': lhs = Value::integer(a < b); break;
    case '>': lhs = Value::integer(a > b); break;
    case op2('<', '='): lhs = Value::integer(a <= b); break;
    case op2('>', '='): lhs = Value::integer(a >= b); break;
    case op2('=', '='): lhs = Value::integer(a == b); break;
    case op2('!', '='): lhs = Value::integer(a != b); break;
    default: return fail(op.begin, "operator '" + opName(op.op) + "' needs integer operands");
    }
    return true;
  }
  const uint64_t a = lhs.bits, b = rhs.bits;
  const int64_t sa = lhs.asSigned(), sb = rhs.asSigned();
  uint64_t r = 0;
  switch (op.op) {
  case '+': r = a + b; break;
  case '-': r = a - b; break;
  case '*': r = a * b; break;
  case '/':
  case '%':
    if (b == 0)
      return fail(op.begin, "division by zero");
    if (sa == INT64_MIN && sb == -1)
      r = op.op == '/' ? a : 0; // wraps like the other operators
    else
      r = static_cast<uint64_t>(op.op == '/' ? sa / sb : sa % sb);
    break;
  case op2('<', '<'):
  case op2('>', '>'):
    if (b > 63)
      return fail(op.begin, "shift count " + std::to_string(sb) + " is outside [0, 63]");
    r = op.op == op2('<', '<') ? a << b : static_cast<uint64_t>(sa >> b);
    break;
  case '&': r = a & b; break;
  case '|': r = a | b; break;
  case '^': r = a ^ b; break;
  case '<': r = sa < sb; break;
  case '>': r = sa > sb; break;
  case op2('<', '='): r = sa <= sb; break;
  case op2('>', '='): r = sa >= sb; break;
  case op2('=', '='): r = a == b; break;
  case op2('!', '='): r = a != b; break;
  case op2('&', '&'): r = a && b; break;
  case op2('|', '|'): r = a || b; break;
  }
  lhs = Value::integer(r);
  return true;
}

bool ExpressionEvaluator::unary(Value &out) {
  const Token &t = lex_.peek();
  if (t.is('-') || t.is('+') || t.is('~') || t.is('!')) {
    const Token op = lex_.next();
    if (!enter(op.begin))
      return false;
    const bool ok = unary(out);
    leave();
    if (!ok)
      return false;
    if (op.op == '+')
      return true;
    if (out.unresolved) {
      out.symbol = nullptr; // no longer symbol + constant
      return true;
    }
    if (out.isFloat) {
      if (op.op != '-')
        return fail(op.begin, "operator '" + opName(op.op) + "' needs an integer operand");
      // Flip the sign bit: -0.0 and NaN payloads stay exact.
      out.f = floatFromBits(bitsFromFloat(out.f) ^ 0x80000000u);
      return true;
    }
    out.bits = op.op == '-' ? 0 - out.bits : op.op == '~' ? ~out.bits : uint64_t(out.bits == 0);
    return true;
  }
  return primary(out);
}

bool ExpressionEvaluator::primary(Value &out) {
  const Token t = lex_.next();
  switch (t.kind) {
  case TokenKind::Int: out = Value::integer(t.intValue); return true;
  case TokenKind::Float: out = Value::real(t.floatValue); return true;
  case TokenKind::Error: return fail(t.begin, t.error);
  case TokenKind::Ident: {
    const std::string_view name = lex_.text(t);
    if (name == "inf") {
      out = Value::real(floatFromBits(0x7f800000u));
      return true;
    }
    if (name == "nan") {
      out = Value::real(floatFromBits(0x7fc00000u));
      return true;
    }
    if (name == "f32bits" && lex_.peek().is('(')) {
      if (!enter(lex_.next().begin))
        return false;
      const uint32_t argAt = lex_.position();
      Value arg;
      const bool ok = binary(0, arg);
      leave();
      if (!ok)
        return false;
      if (!lex_.peek().is(')'))
        return fail(lex_.position(), "expected ')' to close f32bits(");
      lex_.next();
      if (arg.isFloat)
        return fail(argAt, "f32bits() takes an integer bit pattern");
      if (!arg.unresolved && (arg.asSigned() < INT32_MIN || arg.asSigned() > int64_t(UINT32_MAX)))
        return fail(argAt, "f32bits() argument " + std::to_string(arg.asSigned()) +
                               " does not fit in 32 bits");
      out = Value::real(floatFromBits(static_cast<uint32_t>(arg.bits)));
      out.unresolved = arg.unresolved;
      return true;
    }
    switch (resolver_.lookup(name, t.intValue, out)) {
    case SymbolResolver::Lookup::Found: return true;
    case SymbolResolver::Lookup::Unresolved: {
      // Keep the symbol the resolver named: `symbol + constant` is then
      // resolved at the end without parsing the expression again.
      const void *symbol = out.symbol;
      out = Value::integer(0);
      out.unresolved = true;
      out.symbol = symbol;
      return true;
    }
    case SymbolResolver::Lookup::Undefined:
      return fail(t.begin, "undefined symbol '" + std::string(name) + "'");
    }
    return true;
  }
  case TokenKind::Punct:
    if (t.op == '(') {
      if (!enter(t.begin))
        return false;
      const bool ok = binary(0, out);
      leave();
      if (!ok)
        return false;
      if (!lex_.peek().is(')'))
        return fail(lex_.position(), "expected ')'");
      lex_.next();
      return true;
    }
    return fail(t.begin, "expected an expression, found '" + opName(t.op) + "'");
  case TokenKind::String: return fail(t.begin, "expected an expression, found a string");
  case TokenKind::End: return fail(t.begin, "expected an expression");
  }
  return fail(t.begin, "expected an expression");
}

} // namespace npu::as
