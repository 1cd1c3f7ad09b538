// Comparisons into bool masks (EQ NE LT LE GT GE): both sides converted to
// PyTorch's result type on the device, a Python scalar staged as a device
// scalar the packet broadcasts, b broadcast as the binary ops broadcast it.
#include "Device.h"
#include "Layout.h"
#include "Ops.h"
#include "Types.h"

#include <ATen/ExpandUtils.h>
#include <ATen/ScalarOps.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/any.h>
#include <ATen/ops/bitwise_not.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/eq_ops.h>
#include <ATen/ops/full.h>
#include <ATen/ops/ge_ops.h>
#include <ATen/ops/gt_ops.h>
#include <ATen/ops/isin_ops.h>
#include <ATen/ops/le_ops.h>
#include <ATen/ops/lt_ops.h>
#include <ATen/ops/ne_ops.h>
#include <torch/library.h>

#include <type_traits>

namespace npu::bridge {

namespace {

// A Python number as the 0-dim CPU tensor PyTorch's type promotion treats
// as a scalar.
at::Tensor wrapped(const at::Scalar &value) {
  at::Tensor t = c10::scalar_to_tensor(value);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

// The type Inst compares a and b in (PyTorch's result type), if Inst takes
// it and both sides convert to it on the device.
template <class Inst>
std::optional<c10::ScalarType> compareType(const at::Tensor &a, const at::Tensor &b) {
  if (!deviceOperands(a, b))
    return std::nullopt;
  const c10::ScalarType type = at::result_type(a, b);
  if (!accepts<Inst>(type) || !convertibleTo(type, a, b))
    return std::nullopt;
  return type;
}

// dst (contiguous bool, the broadcast shape) = a op b compared in `type`.
template <class Inst>
void compareInto(const at::Tensor &dst, const at::Tensor &a, const at::Tensor &b,
                 c10::ScalarType type) {
  auto operand = [&](const at::Tensor &t) {
    return isCpuScalar(t) ? deviceScalar(t.item(), type) : binaryOperand(t, type);
  };
  constexpr bool kSymmetric =
      std::is_same_v<Inst, isa::inst::Eq> || std::is_same_v<Inst, isa::inst::Ne>;
  emitBinaryWith(&emitBinaryPacket<Inst>, kSymmetric, dst, operand(a), operand(b), 1.0f);
}

template <class Inst>
void compareStore(OpCounter &counter, const at::Tensor &out, const at::Tensor &a,
                  const at::Tensor &b, c10::ScalarType type) {
  OpScope scope(counter);
  if (logOps())
    scope.describe((isNpu(a) ? shapeString(a) : "scalar") + ", " +
                   (isNpu(b) ? shapeString(b) : "scalar"));
  if (out.numel() == 0)
    return;
  storeResult(out, [&](const at::Tensor &dst) { compareInto<Inst>(dst, a, b, type); });
}

// The kernels of a compare `name`: name.Tensor, name.Scalar, their out=
// forms and in-place forms (which store 0 or 1 in self's type).
template <class Inst, class TensorOp, class ScalarOp, class TensorOutOp, class ScalarOutOp,
          class TensorInplaceOp, class ScalarInplaceOp>
struct CompareKernels {
  static at::Tensor compute(OpCounter &counter, const at::Tensor &a, const at::Tensor &b,
                            c10::ScalarType type) {
    at::Tensor out = emptyNpu(at::infer_size(a.sizes(), b.sizes()), at::kBool);
    compareStore<Inst>(counter, out, a, b, type);
    return out;
  }
  static at::Tensor tensor(const at::Tensor &a, const at::Tensor &b) {
    static OpCounter counter(baseName<TensorOp>());
    const std::optional<c10::ScalarType> type = compareType<Inst>(a, b);
    if (!type)
      return fallbackTo<TensorOp>(a, b);
    return compute(counter, a, b, *type);
  }
  static at::Tensor scalar(const at::Tensor &a, const at::Scalar &b) {
    static OpCounter counter(baseName<ScalarOp>());
    const std::optional<c10::ScalarType> type = compareType<Inst>(a, wrapped(b));
    if (!type)
      return fallbackTo<ScalarOp>(a, b);
    return compute(counter, a, wrapped(b), *type);
  }
  static at::Tensor &out(OpCounter &counter, const at::Tensor &a, const at::Tensor &b,
                         c10::ScalarType type, at::Tensor &result) {
    at::native::resize_output(result, at::infer_size(a.sizes(), b.sizes()));
    checkPointwiseWrite(result, {a, b});
    compareStore<Inst>(counter, result, a, b, type);
    return result;
  }
  static at::Tensor &tensorOut(const at::Tensor &a, const at::Tensor &b, at::Tensor &result) {
    static OpCounter counter(operatorName<TensorOutOp>());
    const std::optional<c10::ScalarType> type = compareType<Inst>(a, b);
    if (!type || !isNpu(result) || result.scalar_type() != at::kBool)
      return fallbackTo<TensorOutOp>(a, b, result);
    return out(counter, a, b, *type, result);
  }
  static at::Tensor &scalarOut(const at::Tensor &a, const at::Scalar &b, at::Tensor &result) {
    static OpCounter counter(operatorName<ScalarOutOp>());
    const std::optional<c10::ScalarType> type = compareType<Inst>(a, wrapped(b));
    if (!type || !isNpu(result) || result.scalar_type() != at::kBool)
      return fallbackTo<ScalarOutOp>(a, b, result);
    return out(counter, a, wrapped(b), *type, result);
  }
  static at::Tensor &inplace(OpCounter &counter, at::Tensor &self, const at::Tensor &b,
                             c10::ScalarType type) {
    checkPointwiseWrite(self, {b});
    const at::Tensor mask = compute(counter, self, b, type);
    copyResult(self, mask);
    return self;
  }
  static at::Tensor &tensorInplace(at::Tensor &self, const at::Tensor &b) {
    static OpCounter counter(baseName<TensorInplaceOp>());
    const std::optional<c10::ScalarType> type = compareType<Inst>(self, b);
    if (!type || !isNpu(self) || !isaType(self.scalar_type()) ||
        at::infer_size(self.sizes(), b.sizes()) != self.sizes())
      return fallbackTo<TensorInplaceOp>(self, b);
    return inplace(counter, self, b, *type);
  }
  static at::Tensor &scalarInplace(at::Tensor &self, const at::Scalar &b) {
    static OpCounter counter(baseName<ScalarInplaceOp>());
    const std::optional<c10::ScalarType> type = compareType<Inst>(self, wrapped(b));
    if (!type || !isNpu(self) || !isaType(self.scalar_type()))
      return fallbackTo<ScalarInplaceOp>(self, b);
    return inplace(counter, self, wrapped(b), *type);
  }
  static void registerIn(torch::Library &m) {
    m.impl(operatorName<TensorOp>(), tensor);
    m.impl(operatorName<ScalarOp>(), scalar);
    m.impl(operatorName<TensorOutOp>(), tensorOut);
    m.impl(operatorName<ScalarOutOp>(), scalarOut);
    m.impl(operatorName<TensorInplaceOp>(), tensorInplace);
    m.impl(operatorName<ScalarInplaceOp>(), scalarInplace);
    recordInstructionOps<Inst, TensorOp, ScalarOp, TensorOutOp, ScalarOutOp, TensorInplaceOp,
                         ScalarInplaceOp>();
  }
};

// isin: each element compared with every test element (EQ broadcast over a
// trailing dim of the test elements), any() over that dim, negated for
// invert. Up to kMaxTestElements test elements (generate's stop tokens);
// more fall back (the CPU sorts them instead).
constexpr int64_t kMaxTestElements = 1024;

bool isinLowerable(const at::Tensor &elements, const at::Tensor &test) {
  return isNpu(elements) && isNpu(test) && test.numel() <= kMaxTestElements &&
         compareType<isa::inst::Eq>(elements, test).has_value();
}

at::Tensor isinCompute(OpCounter &counter, const at::Tensor &elements, const at::Tensor &test,
                       bool invert) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(elements) + " in " + shapeString(test));
  if (test.numel() == 0 || elements.numel() == 0)
    return at::full(elements.sizes(), invert, elements.options().dtype(at::kBool));
  const at::Tensor found = at::any(at::eq(elements.unsqueeze(-1), test.reshape({-1})), -1);
  return invert ? at::bitwise_not(found) : found;
}

at::Tensor isin(const at::Tensor &elements, const at::Tensor &test, bool assumeUnique,
                bool invert) {
  static OpCounter counter("isin");
  if (!isinLowerable(elements, test))
    return fallbackTo<NPU_ATEN_OP2(isin, Tensor_Tensor)>(elements, test, assumeUnique, invert);
  return isinCompute(counter, elements, test, invert);
}

at::Tensor &isinOut(const at::Tensor &elements, const at::Tensor &test, bool assumeUnique,
                    bool invert, at::Tensor &out) {
  static OpCounter counter("isin.Tensor_Tensor_out");
  if (!isinLowerable(elements, test) || !isNpu(out) || out.scalar_type() != at::kBool)
    return fallbackTo<NPU_ATEN_OP2(isin, Tensor_Tensor_out)>(elements, test, assumeUnique, invert,
                                                             out);
  at::native::resize_output(out, elements.sizes());
  checkInternalOverlap(out);
  const at::Tensor result = isinCompute(counter, elements, test, invert);
  copyResult(out, result);
  return out;
}

} // namespace

#define NPU_COMPARE(name, Inst)                                                                    \
  CompareKernels<Inst, NPU_ATEN_OP2(name, Tensor), NPU_ATEN_OP2(name, Scalar),                     \
                 NPU_ATEN_OP2(name, Tensor_out), NPU_ATEN_OP2(name, Scalar_out),                   \
                 NPU_ATEN_OP2(name##_, Tensor), NPU_ATEN_OP2(name##_, Scalar)>::registerIn(m)

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  NPU_COMPARE(eq, isa::inst::Eq);
  NPU_COMPARE(ne, isa::inst::Ne);
  NPU_COMPARE(lt, isa::inst::Lt);
  NPU_COMPARE(le, isa::inst::Le);
  NPU_COMPARE(gt, isa::inst::Gt);
  NPU_COMPARE(ge, isa::inst::Ge);
  m.impl("isin.Tensor_Tensor", isin);
  m.impl("isin.Tensor_Tensor_out", isinOut);
}

} // namespace npu::bridge
