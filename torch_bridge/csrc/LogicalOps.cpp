// Bitwise and/or/xor/not of bool tensors, composed of integer instructions
// until the ISA has bitwise ones for b8: the masks as 0/1 int32 (CAST), and
// a & b = min, a | b = max, a ^ b = (a != b), ~a = (a == 0), back to bool
// (CAST, or straight from the compare's b8). `and` of an integer tensor and
// a bool is composed too; other integer bitwise ops fall back.
#include "Device.h"
#include "Layout.h"
#include "Ops.h"
#include "Types.h"

#include <ATen/ExpandUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/bitwise_and_ops.h>
#include <ATen/ops/bitwise_not_ops.h>
#include <ATen/ops/bitwise_or_ops.h>
#include <ATen/ops/bitwise_xor_ops.h>
#include <torch/library.h>

#include <limits>
#include <optional>

namespace npu::bridge {

namespace {

bool isBoolOperand(const at::Tensor &t) {
  return t.scalar_type() == at::kBool && (isNpu(t) || isCpuScalar(t));
}

bool boolLowerable(const at::Tensor &a, const at::Tensor &b) {
  return isBoolOperand(a) && isBoolOperand(b) && (isNpu(a) || isNpu(b));
}

at::Tensor asInt32(const at::Tensor &t) {
  return binaryOperand(t, at::kInt);
}

enum class Logic { And, Or, Xor };

// dst (contiguous bool of the broadcast shape) = a op b.
void emitLogic(const at::Tensor &dst, const at::Tensor &a, const at::Tensor &b, Logic op) {
  if (dst.numel() == 0)
    return;
  const at::Tensor x = asInt32(a), y = asInt32(b);
  if (op == Logic::Xor) {
    emitBinaryWith(&emitBinaryPacket<isa::inst::Ne>, true, dst, x, y, 1.0f);
    return;
  }
  const at::Tensor combined = emptyNpu(dst.sizes(), at::kInt);
  if (op == Logic::And)
    emitBinary<isa::inst::Min>(combined, x, y);
  else
    emitBinary<isa::inst::Max>(combined, x, y);
  copyInto(dst, combined);
}

// An integer tensor and a bool, as generate's `unfinished & ~done`: the
// bool promotes to 0 or 1, so `x & flag` is flag and x's lowest bit. That
// bit is the sign of x * 2^(w-1) (integer MUL wraps: every other bit
// shifts out), read by LT 0.
std::optional<c10::ScalarType> integerAndBoolType(const at::Tensor &a, const at::Tensor &b) {
  const bool aBool = isBoolOperand(a), bBool = isBoolOperand(b);
  if (aBool == bBool)
    return std::nullopt;
  const at::Tensor &x = aBool ? b : a;
  const c10::ScalarType type = x.scalar_type();
  if (!isNpu(x) || (type != at::kInt && type != at::kLong) || !accepts<isa::inst::Mul>(type) ||
      !accepts<isa::inst::Lt>(type))
    return std::nullopt;
  return type;
}

// dst (contiguous, x's type, the broadcast shape) = x & flag.
void emitIntegerAndBool(const at::Tensor &dst, const at::Tensor &a, const at::Tensor &b) {
  if (dst.numel() == 0)
    return;
  const bool aBool = isBoolOperand(a);
  const at::Tensor &x = aBool ? b : a, &flag = aBool ? a : b;
  const c10::ScalarType type = x.scalar_type();
  const int64_t signBit =
      type == at::kLong ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int32_t>::min();
  const at::Tensor shifted = emptyNpu(x.sizes(), type);
  emitBinary<isa::inst::Mul>(shifted, x, deviceScalar(signBit, type));
  const at::Tensor lowBit = emptyNpu(x.sizes(), at::kBool);
  emitBinaryWith(&emitBinaryPacket<isa::inst::Lt>, false, lowBit, shifted, deviceScalar(0, type),
                 1.0f);
  const at::Tensor both = emptyNpu(dst.sizes(), at::kBool);
  emitLogic(both, lowBit, flag, Logic::And);
  copyInto(dst, both);
}

template <Logic kOp, class FunctionalOp, class InplaceOp, class OutOp> struct LogicKernels {
  static void store(OpCounter &counter, const at::Tensor &out, const at::Tensor &a,
                    const at::Tensor &b) {
    OpScope scope(counter);
    if (logOps())
      scope.describe((isNpu(a) ? shapeString(a) : "scalar") + ", " +
                     (isNpu(b) ? shapeString(b) : "scalar"));
    storeResult(out, [&](const at::Tensor &dst) { emitLogic(dst, a, b, kOp); });
  }
  static at::Tensor functional(const at::Tensor &a, const at::Tensor &b) {
    static OpCounter counter(baseName<FunctionalOp>());
    if (const std::optional<c10::ScalarType> type = integerAndBoolType(a, b);
        kOp == Logic::And && type) {
      OpScope scope(counter);
      at::Tensor out = emptyNpu(at::infer_size(a.sizes(), b.sizes()), *type);
      emitIntegerAndBool(out, a, b);
      return out;
    }
    if (!boolLowerable(a, b))
      return fallbackTo<FunctionalOp>(a, b);
    at::Tensor out = emptyNpu(at::infer_size(a.sizes(), b.sizes()), at::kBool);
    store(counter, out, a, b);
    return out;
  }
  static at::Tensor &inplace(at::Tensor &self, const at::Tensor &b) {
    static OpCounter counter(baseName<InplaceOp>());
    if (!isNpu(self) || !boolLowerable(self, b) ||
        at::infer_size(self.sizes(), b.sizes()) != self.sizes())
      return fallbackTo<InplaceOp>(self, b);
    checkPointwiseWrite(self, {b});
    store(counter, self, self, b);
    return self;
  }
  static at::Tensor &outForm(const at::Tensor &a, const at::Tensor &b, at::Tensor &out) {
    static OpCounter counter(operatorName<OutOp>());
    if (!boolLowerable(a, b) || !isNpu(out) || out.scalar_type() != at::kBool)
      return fallbackTo<OutOp>(a, b, out);
    at::native::resize_output(out, at::infer_size(a.sizes(), b.sizes()));
    checkPointwiseWrite(out, {a, b});
    store(counter, out, a, b);
    return out;
  }
  static void registerIn(torch::Library &m) {
    m.impl(operatorName<FunctionalOp>(), functional);
    m.impl(operatorName<InplaceOp>(), inplace);
    m.impl(operatorName<OutOp>(), outForm);
  }
};

// ~a of a bool tensor: a == 0 on its 0/1 int32 values.
void emitNot(const at::Tensor &dst, const at::Tensor &self) {
  if (dst.numel() == 0)
    return;
  emitBinaryWith(&emitBinaryPacket<isa::inst::Eq>, true, dst, asInt32(self),
                 deviceScalar(0, at::kInt), 1.0f);
}

at::Tensor bitwiseNot(const at::Tensor &self) {
  static OpCounter counter("bitwise_not");
  if (!isNpu(self) || self.scalar_type() != at::kBool)
    return fallbackTo<NPU_ATEN_OP(bitwise_not)>(self);
  OpScope scope(counter);
  at::Tensor out = emptyNpuLike(self);
  emitNot(out, self);
  return out;
}

at::Tensor &bitwiseNotInplace(at::Tensor &self) {
  static OpCounter counter("bitwise_not_");
  if (!isNpu(self) || self.scalar_type() != at::kBool)
    return fallbackTo<NPU_ATEN_OP(bitwise_not_)>(self);
  checkInternalOverlap(self);
  OpScope scope(counter);
  storeResult(self, [&](const at::Tensor &dst) { emitNot(dst, self); });
  return self;
}

at::Tensor &bitwiseNotOut(const at::Tensor &self, at::Tensor &out) {
  static OpCounter counter("bitwise_not.out");
  if (!isNpu(self) || self.scalar_type() != at::kBool || !isNpu(out) ||
      out.scalar_type() != at::kBool)
    return fallbackTo<NPU_ATEN_OP2(bitwise_not, out)>(self, out);
  at::native::resize_output(out, self.sizes());
  checkPointwiseWrite(out, {self});
  OpScope scope(counter);
  storeResult(out, [&](const at::Tensor &dst) { emitNot(dst, self); });
  return out;
}

} // namespace

#define NPU_LOGIC(name, op)                                                                        \
  LogicKernels<op, NPU_ATEN_OP2(name, Tensor), NPU_ATEN_OP2(name##_, Tensor),                      \
               NPU_ATEN_OP2(name, Tensor_out)>::registerIn(m)

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  NPU_LOGIC(bitwise_and, Logic::And);
  NPU_LOGIC(bitwise_or, Logic::Or);
  NPU_LOGIC(bitwise_xor, Logic::Xor);
  m.impl("bitwise_not", bitwiseNot);
  m.impl("bitwise_not_", bitwiseNotInplace);
  m.impl("bitwise_not.out", bitwiseNotOut);
}

} // namespace npu::bridge
