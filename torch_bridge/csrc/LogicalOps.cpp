// Bitwise and/or/xor/not and the shifts: AND OR XOR NOT SHL SHR in
// PyTorch's result type — integers (and an integer with a bool, which
// promotes to 0 or 1), and two bools on the b8 masks (SHR arithmetic,
// amounts outside the width as on the CPU: docs/types.md §3).
// logical_and/or/xor/not take each operand's truth (a bool, or != 0) into
// the bool forms.
#include "Device.h"
#include "Layout.h"
#include "Ops.h"
#include "Types.h"

#include <ATen/ExpandUtils.h>
#include <ATen/ScalarOps.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/bitwise_and_ops.h>
#include <ATen/ops/bitwise_left_shift.h>
#include <ATen/ops/bitwise_not_ops.h>
#include <ATen/ops/bitwise_or_ops.h>
#include <ATen/ops/bitwise_right_shift.h>
#include <ATen/ops/bitwise_xor_ops.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/logical_and_ops.h>
#include <ATen/ops/logical_not_ops.h>
#include <ATen/ops/logical_or_ops.h>
#include <ATen/ops/logical_xor_ops.h>
#include <ATen/ops/ne.h>
#include <torch/library.h>

#include <optional>

namespace npu::bridge {

namespace {

// Which ops are commutative (None: the shifts).
enum class Logic { And, Or, Xor, None };

// dst (contiguous, of the computing type, the broadcast shape) = a op b;
// a commutative op may swap its operands to read the full one as a.
template <class Inst>
void emitInteger(const at::Tensor &dst, const at::Tensor &a, const at::Tensor &b,
                 bool commutative) {
  if (dst.numel() == 0)
    return;
  emitBinaryWith(&emitBinaryPacket<Inst>, commutative, dst, binaryOperand(a, dst.scalar_type()),
                 binaryOperand(b, dst.scalar_type()), 1.0f);
}

// logical_and/or/xor/not: each operand's truth (a bool as it is, any other
// type != 0 by NE: NaN is true, -0 false, as on the CPU) combined as bool
// masks into a bool result; a result of another type falls back.
at::Tensor truthOf(const at::Tensor &t) {
  return t.scalar_type() == at::kBool ? t : at::ne(t, 0);
}

bool hasTruth(const at::Tensor &t) {
  return t.scalar_type() == at::kBool || !isNpu(t) || accepts<isa::inst::Ne>(t.scalar_type());
}

bool logicalLowerable(const at::Tensor &a, const at::Tensor &b) {
  return deviceOperands(a, b) && hasTruth(a) && hasTruth(b);
}

// The kernels of a binary bitwise op; with kTruth the logical op of the
// same name (logical_and, ...): the operands' truth combined into bool.
template <Logic kOp, class Inst, class FunctionalOp, class InplaceOp, class OutOp,
          bool kTruth = false>
struct LogicKernels {
  static std::string describe(const at::Tensor &a, const at::Tensor &b) {
    return (isNpu(a) ? shapeString(a) : "scalar") + ", " + (isNpu(b) ? shapeString(b) : "scalar");
  }
  // out = a op b, of two bools or in an integer type.
  static void store(OpCounter &counter, const at::Tensor &out, const at::Tensor &a,
                    const at::Tensor &b) {
    OpScope scope(counter);
    if (logOps())
      scope.describe(describe(a, b));
    const at::Tensor x = kTruth ? truthOf(a) : a, y = kTruth ? truthOf(b) : b;
    storeResult(out, [&](const at::Tensor &dst) {
      emitInteger<Inst>(dst, x, y, /*commutative=*/kOp != Logic::None);
    });
  }
  // The type a op b computes in on the device, if it does.
  static std::optional<c10::ScalarType> type(const at::Tensor &a, const at::Tensor &b) {
    if constexpr (kTruth)
      return logicalLowerable(a, b) ? std::optional(at::kBool) : std::nullopt;
    return binaryType<Inst>(a, b); // AND OR XOR: i32, i64, b8; SHL SHR: i32, i64
  }
  static at::Tensor functional(const at::Tensor &a, const at::Tensor &b) {
    static OpCounter counter(baseName<FunctionalOp>());
    const std::optional<c10::ScalarType> computed = type(a, b);
    if (!computed)
      return fallbackTo<FunctionalOp>(a, b);
    at::Tensor out = emptyNpu(at::infer_size(a.sizes(), b.sizes()), *computed);
    store(counter, out, a, b);
    return out;
  }
  static at::Tensor &inplace(at::Tensor &self, const at::Tensor &b) {
    static OpCounter counter(baseName<InplaceOp>());
    if (!isNpu(self) || type(self, b) != self.scalar_type() ||
        at::infer_size(self.sizes(), b.sizes()) != self.sizes())
      return fallbackTo<InplaceOp>(self, b);
    checkPointwiseWrite(self, {b});
    store(counter, self, self, b);
    return self;
  }
  static at::Tensor &outForm(const at::Tensor &a, const at::Tensor &b, at::Tensor &out) {
    static OpCounter counter(operatorName<OutOp>());
    if (!isNpu(out) || type(a, b) != out.scalar_type())
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

// ~a: NOT, of a bool (logical not of the b8 mask) or an integer tensor.
bool notLowerable(const at::Tensor &self) {
  return isNpu(self) && accepts<isa::inst::Not>(self.scalar_type());
}

at::Tensor bitwiseNot(const at::Tensor &self) {
  static OpCounter counter("bitwise_not");
  if (!notLowerable(self))
    return fallbackTo<NPU_ATEN_OP(bitwise_not)>(self);
  OpScope scope(counter);
  at::Tensor out = emptyNpu(self.sizes(), self.scalar_type());
  emitNot(out, self);
  return out;
}

at::Tensor &bitwiseNotInplace(at::Tensor &self) {
  static OpCounter counter("bitwise_not_");
  if (!notLowerable(self))
    return fallbackTo<NPU_ATEN_OP(bitwise_not_)>(self);
  checkInternalOverlap(self);
  OpScope scope(counter);
  storeResult(self, [&](const at::Tensor &dst) { emitNot(dst, self); });
  return self;
}

at::Tensor &bitwiseNotOut(const at::Tensor &self, at::Tensor &out) {
  static OpCounter counter("bitwise_not.out");
  if (!notLowerable(self) || !isNpu(out) || out.scalar_type() != self.scalar_type())
    return fallbackTo<NPU_ATEN_OP2(bitwise_not, out)>(self, out);
  at::native::resize_output(out, self.sizes());
  checkPointwiseWrite(out, {self});
  OpScope scope(counter);
  storeResult(out, [&](const at::Tensor &dst) { emitNot(dst, self); });
  return out;
}

// not x: NOT of a bool mask, x == 0 (EQ) of any other type.
bool logicalNotLowerable(const at::Tensor &self) {
  return isNpu(self) &&
         (self.scalar_type() == at::kBool || accepts<isa::inst::Eq>(self.scalar_type()));
}

void emitLogicalNot(const at::Tensor &dst, const at::Tensor &self) {
  if (self.scalar_type() == at::kBool)
    emitNot(dst, self);
  else
    copyInto(dst, at::eq(self, 0));
}

at::Tensor logicalNot(const at::Tensor &self) {
  static OpCounter counter("logical_not");
  if (!logicalNotLowerable(self))
    return fallbackTo<NPU_ATEN_OP(logical_not)>(self);
  OpScope scope(counter);
  at::Tensor out = emptyNpu(self.sizes(), at::kBool);
  emitLogicalNot(out, self);
  return out;
}

at::Tensor &logicalNotInplace(at::Tensor &self) {
  static OpCounter counter("logical_not_");
  if (!isNpu(self) || self.scalar_type() != at::kBool)
    return fallbackTo<NPU_ATEN_OP(logical_not_)>(self);
  checkInternalOverlap(self);
  OpScope scope(counter);
  storeResult(self, [&](const at::Tensor &dst) { emitNot(dst, self); });
  return self;
}

at::Tensor &logicalNotOut(const at::Tensor &self, at::Tensor &out) {
  static OpCounter counter("logical_not.out");
  if (!logicalNotLowerable(self) || !isNpu(out) || out.scalar_type() != at::kBool)
    return fallbackTo<NPU_ATEN_OP2(logical_not, out)>(self, out);
  at::native::resize_output(out, self.sizes());
  checkPointwiseWrite(out, {self});
  OpScope scope(counter);
  storeResult(out, [&](const at::Tensor &dst) { emitLogicalNot(dst, self); });
  return out;
}

} // namespace

void emitNot(const at::Tensor &dst, const at::Tensor &self) {
  if (dst.numel() == 0)
    return;
  if (!wordAligned(dst)) {
    emitAligned(dst, [&](const at::Tensor &target) { emitNot(target, self); });
    return;
  }
  at::Tensor src = self;
  if (!src.is_contiguous() || !wordAligned(src) ||
      (mayOverlap(src, dst) && addressOf(src) != addressOf(dst))) {
    src = emptyNpuLike(self);
    emitGather(addressOf(src), self);
  }
  isa::inst::Not inst;
  inst.dst = addressOf(dst);
  inst.src = addressOf(src);
  inst.n = u32(dst.numel(), "elements");
  inst.dtype = *isaType(dst.scalar_type());
  emit(inst);
}

// x << s, x >> s and their in-place forms (the Python operators) are the
// bitwise shifts of PyTorch's CPU: the same kernels, a scalar wrapped as
// a Python number is.

template <class ShiftOp, class ShiftInplaceOp> struct ShiftOperators {
  static at::Tensor tensor(const at::Tensor &self, const at::Tensor &other) {
    return ShiftOp::call(self, other);
  }
  static at::Tensor scalar(const at::Tensor &self, const at::Scalar &other) {
    return ShiftOp::call(self, at::native::wrapped_scalar_tensor(other));
  }
  static at::Tensor &inplaceTensor(at::Tensor &self, const at::Tensor &other) {
    return ShiftInplaceOp::call(self, other);
  }
  static at::Tensor &inplaceScalar(at::Tensor &self, const at::Scalar &other) {
    return ShiftInplaceOp::call(self, at::native::wrapped_scalar_tensor(other));
  }
  static void registerIn(torch::Library &m, const std::string &name) {
    m.impl(("__" + name + "__.Tensor").c_str(), tensor);
    m.impl(("__" + name + "__.Scalar").c_str(), scalar);
    m.impl(("__i" + name + "__.Tensor").c_str(), inplaceTensor);
    m.impl(("__i" + name + "__.Scalar").c_str(), inplaceScalar);
  }
};

#define NPU_LOGIC(name, op, Inst)                                                                  \
  LogicKernels<op, Inst, NPU_ATEN_OP2(name, Tensor), NPU_ATEN_OP2(name##_, Tensor),                \
               NPU_ATEN_OP2(name, Tensor_out)>::registerIn(m)

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  NPU_LOGIC(bitwise_and, Logic::And, isa::inst::And);
  NPU_LOGIC(bitwise_or, Logic::Or, isa::inst::Or);
  NPU_LOGIC(bitwise_xor, Logic::Xor, isa::inst::Xor);
  NPU_LOGIC(bitwise_left_shift, Logic::None, isa::inst::Shl);
  NPU_LOGIC(bitwise_right_shift, Logic::None, isa::inst::Shr);
  ShiftOperators<NPU_ATEN_OP2(bitwise_left_shift, Tensor),
                 NPU_ATEN_OP2(bitwise_left_shift_, Tensor)>::registerIn(m, "lshift");
  ShiftOperators<NPU_ATEN_OP2(bitwise_right_shift, Tensor),
                 NPU_ATEN_OP2(bitwise_right_shift_, Tensor)>::registerIn(m, "rshift");
  LogicKernels<Logic::And, isa::inst::And, NPU_ATEN_OP(logical_and), NPU_ATEN_OP(logical_and_),
               NPU_ATEN_OP2(logical_and, out), true>::registerIn(m);
  LogicKernels<Logic::Or, isa::inst::Or, NPU_ATEN_OP(logical_or), NPU_ATEN_OP(logical_or_),
               NPU_ATEN_OP2(logical_or, out), true>::registerIn(m);
  LogicKernels<Logic::Xor, isa::inst::Xor, NPU_ATEN_OP(logical_xor), NPU_ATEN_OP(logical_xor_),
               NPU_ATEN_OP2(logical_xor, out), true>::registerIn(m);
  m.impl("logical_not", logicalNot);
  m.impl("logical_not_", logicalNotInplace);
  m.impl("logical_not.out", logicalNotOut);
  m.impl("bitwise_not", bitwiseNot);
  m.impl("bitwise_not_", bitwiseNotInplace);
  m.impl("bitwise_not.out", bitwiseNotOut);
}

} // namespace npu::bridge
