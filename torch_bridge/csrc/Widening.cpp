// bf16 and f16 tensors on instructions that compute in binary32 only: the
// op runs on binary32 copies made on the device (CAST) and its results are
// rounded once, to nearest even, back to the reduced type (CAST again) —
// the semantics docs/types.md §2 gives a reduced-precision instruction, and
// what PyTorch's CPU kernels of these types compute (they widen, compute in
// float and round once on store). Every native kernel hands the operands it
// cannot lower to the fallback, so this one step before the CPU copy covers
// every op: nothing of a bf16/f16 model leaves the device for its type.
//
// Not widened (left to the CPU fallback): ops returning views (a copy would
// break the aliasing), ops told to compute in a reduced type (a dtype
// argument of bf16 or f16), and calls with no bf16/f16 npu tensor.
#include "Device.h"
#include "Ops.h"

#include <ATen/native/TypeProperties.h>
#include <ATen/ops/_to_copy.h>

#include <optional>
#include <utility>
#include <vector>

namespace npu::bridge {

namespace {

bool isReducedFloat(c10::ScalarType type) {
  return type == at::kBFloat16 || type == at::kHalf;
}

bool isReducedNpu(const at::Tensor &t) {
  return t.defined() && isNpu(t) && isReducedFloat(t.scalar_type());
}

// Whether an argument's value chooses the result type (`dtype=`): the op
// then does not compute in the type of its operands.
bool choosesResultType(const c10::Argument &argument, const c10::IValue &value) {
  if (value.isNone())
    return false;
  c10::TypePtr type = argument.real_type();
  if (const auto optional = type->cast<c10::OptionalType>())
    type = optional->getElementType();
  return type->kind() == c10::TypeKind::ScalarTypeType;
}

template <class Visit> void forEachTensor(const c10::IValue &value, Visit &&visit) {
  if (value.isTensor()) {
    visit(value.toTensor());
  } else if (value.isTensorList()) {
    for (const at::Tensor &t : value.toTensorList())
      visit(t);
  } else if (value.isOptionalTensorList()) {
    for (const std::optional<at::Tensor> &t : value.toOptionalTensorList())
      if (t)
        visit(*t);
  }
}

at::Tensor widened(const at::Tensor &t) {
  return isReducedNpu(t) ? at::_to_copy(t, at::kFloat) : t;
}

c10::IValue widenedValue(const c10::IValue &value) {
  if (value.isTensor())
    return widened(value.toTensor());
  if (value.isTensorList()) {
    c10::List<at::Tensor> list = value.toTensorList().copy();
    for (size_t i = 0; i < list.size(); ++i)
      list.set(i, widened(list.get(i)));
    return list;
  }
  return value;
}

} // namespace

bool runWidened(const c10::OperatorHandle &op, const std::string &name, torch::jit::Stack *stack) {
  const c10::FunctionSchema &schema = op.schema();
  for (const c10::Argument &ret : schema.returns())
    if (ret.alias_info() && !ret.alias_info()->isWrite())
      return false;
  const std::vector<c10::Argument> &arguments = schema.arguments();
  const size_t first = stack->size() - arguments.size();

  bool reduced = false;
  bool keepBinary32 = false; // a dtype argument, or _softmax's half_to_float
  at::native::ResultTypeState promotion{};
  for (size_t i = 0; i < arguments.size(); ++i) {
    c10::IValue &value = (*stack)[first + i];
    if (choosesResultType(arguments[i], value)) {
      // sum(bf16, dtype=float32) accumulates the widened values: the copies
      // are the operands, the result is not rounded back.
      if (isReducedFloat(value.toScalarType()))
        return false;
      keepBinary32 = true;
    }
    if (arguments[i].name() == "half_to_float" && value.isBool() && value.toBool()) {
      keepBinary32 = true;
      value = false;
    }
    forEachTensor(value, [&](const at::Tensor &t) {
      if (!t.defined())
        return;
      reduced = reduced || isReducedNpu(t);
      // The result type is the operands' (an out= tensor receives it).
      if (!arguments[i].is_out())
        promotion = at::native::update_result_type_state(t, promotion);
    });
  }
  if (!reduced)
    return false;
  const c10::ScalarType resultType = at::native::result_type(promotion);
  const bool roundResults = isReducedFloat(resultType) && !keepBinary32;

  countWidened(name);
  if (logOps())
    logLine("F32", name);

  // Arguments the op writes (in-place and out=) are computed into binary32
  // copies, then rounded into the originals — through the op's result type
  // first, where PyTorch computes a float32 out= of bf16 operands in bf16.
  std::vector<std::pair<at::Tensor, at::Tensor>> written; // original, binary32 copy
  for (size_t i = 0; i < arguments.size(); ++i) {
    c10::IValue &value = (*stack)[first + i];
    const c10::AliasInfo *alias = arguments[i].alias_info();
    if (alias && alias->isWrite() && value.isTensor()) {
      const at::Tensor original = value.toTensor();
      if (isReducedNpu(original) ||
          (roundResults && isNpu(original) && at::isFloatingType(original.scalar_type()))) {
        written.emplace_back(original, at::_to_copy(original, at::kFloat));
        value = written.back().second;
        continue;
      }
    }
    value = widenedValue(value);
  }

  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), stack);

  for (const auto &[original, copy] : written) {
    if (original.sizes() != copy.sizes())
      original.resize_(copy.sizes());
    original.copy_(roundResults && original.scalar_type() != resultType
                       ? at::_to_copy(copy, resultType)
                       : copy);
  }
  auto result = [&](const at::Tensor &t) -> at::Tensor {
    for (const auto &[original, copy] : written)
      if (t.defined() && t.is_same(copy))
        return original;
    return roundResults && t.defined() && t.scalar_type() == at::kFloat
               ? at::_to_copy(t, resultType)
               : t;
  };
  const size_t returns = schema.returns().size();
  for (size_t i = stack->size() - returns; i < stack->size(); ++i) {
    c10::IValue &value = (*stack)[i];
    if (value.isTensor()) {
      value = result(value.toTensor());
    } else if (value.isTensorList()) {
      c10::List<at::Tensor> list = value.toTensorList();
      for (size_t j = 0; j < list.size(); ++j)
        list.set(j, result(list.get(j)));
      value = list;
    }
  }
  return true;
}

} // namespace npu::bridge
