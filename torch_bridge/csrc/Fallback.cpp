// The boxed CPU fallback for every op without an NPU kernel: its npu
// tensors are copied to the host, the CPU kernel runs, results (and mutated
// arguments) are copied back. Each fallback is counted per op, warned about
// once per op, logged as [CPU] and, with NPU_STRICT=1, refused.
#include "Device.h"
#include "Layout.h"
#include "Ops.h"

#include <ATen/core/op_registration/adaption.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/convolution_backward.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <optional>
#include <tuple>
#include <unordered_set>
#include <utility>

namespace npu::bridge {

namespace {

std::string operatorName(const c10::OperatorHandle &op) {
  const c10::OperatorName &name = op.schema().operator_name();
  return name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
}

// Whether `key` is seen for the first time (warnings are given once each).
bool firstTime(const std::string &key) {
  static std::mutex mutex;
  static std::unordered_set<std::string> warned;
  std::lock_guard<std::mutex> lock(mutex);
  return warned.insert(key).second;
}

std::string describeArguments(const c10::OperatorHandle &op, const torch::jit::Stack &stack) {
  const size_t count = op.schema().arguments().size();
  std::string text;
  for (size_t i = stack.size() - count; i < stack.size(); ++i) {
    if (!stack[i].isTensor())
      continue;
    const at::Tensor &t = stack[i].toTensor();
    if (t.defined())
      text += (text.empty() ? "" : ", ") + shapeString(t) + (isNpu(t) ? "" : " cpu");
  }
  return text;
}

// PyTorch's kernels refuse tensors on different devices (TensorIterator,
// and the device checks of the generated CUDA wrappers); run on the host,
// such a call would succeed instead, its result on the device of its first
// tensor. Allowed, as for CUDA tensors: 0-dim CPU tensors (scalars) and CPU
// index lists (Tensor?[] arguments, for indexing).
void checkDevices(const c10::OperatorHandle &op, const torch::jit::Stack &stack,
                  const std::string &name) {
  const std::vector<c10::Argument> &arguments = op.schema().arguments();
  const size_t first = stack.size() - arguments.size();
  for (size_t i = 0; i < arguments.size(); ++i) {
    const c10::IValue &value = stack[first + i];
    if (value.isTensor()) {
      checkOnNpu(value.toTensor(), name, arguments[i].name());
    } else if (value.isTensorList()) {
      for (const at::Tensor &t : value.toTensorList())
        checkOnNpu(t, name, arguments[i].name());
    }
  }
}

// PyTorch's cpu_fallback puts new results on the device of the first tensor
// argument, which is the host when that is a 0-dim CPU scalar (`1 - t` is
// sub(wrapped 1, t)). A result of an op with npu arguments belongs on the
// npu, unless it is one of the CPU arguments itself (an in-place op on it).
void moveResultsToNpu(torch::jit::Stack &stack, size_t returns, c10::Device npu,
                      const std::vector<const c10::TensorImpl *> &cpuArguments) {
  auto place = [&](const at::Tensor &t) {
    const bool isCpuArgument = std::find(cpuArguments.begin(), cpuArguments.end(),
                                         t.unsafeGetTensorImpl()) != cpuArguments.end();
    return t.defined() && t.device().is_cpu() && !isCpuArgument ? t.to(npu) : t;
  };
  for (size_t i = stack.size() - returns; i < stack.size(); ++i) {
    if (stack[i].isTensor()) {
      stack[i] = place(stack[i].toTensor());
    } else if (stack[i].isTensorList()) {
      c10::List<at::Tensor> list = stack[i].toTensorList();
      for (size_t j = 0; j < list.size(); ++j)
        list.set(j, place(list.get(j)));
      stack[i] = list;
    }
  }
}

} // namespace

void checkOnNpu(const at::Tensor &t, const std::string &op, const std::string &argument) {
  if (t.defined() && !isNpu(t) && !(t.device().is_cpu() && t.dim() == 0))
    c10::impl::common_device_check_failure(c10::Device(c10::DeviceType::PrivateUse1, 0), t,
                                           op.c_str(), argument.c_str());
}

void explainFallback(const std::string &op, const std::string &reason) {
  TORCH_CHECK(!strictMode(), "NPU_STRICT=1: ", op, " would run on the CPU: ", reason);
  if (firstTime(op + "\n" + reason))
    TORCH_WARN("npu: ", op, " runs on the CPU: ", reason);
}

namespace {

// What every fallback does first: NPU_STRICT=1 refuses it; otherwise it is
// counted, warned about once per op, logged, and the queued packets are
// submitted (the host reads their results).
void enterFallback(const std::string &name, const std::string &arguments) {
  TORCH_CHECK(!strictMode(), "NPU_STRICT=1: ", name,
              " has no NPU kernel for these arguments and would run on the CPU");
  countFallback(name);
  if (firstTime(name))
    TORCH_WARN("npu: ", name,
               " has no NPU kernel for these arguments; it runs on the CPU "
               "(its tensors are copied to the host and back). Warned once per op; "
               "torch.npu.fallback_stats() counts every fallback.");
  if (logOps())
    logLine("CPU", name + " " + arguments);
  flush();
}

std::optional<at::Tensor> onHost(const std::optional<at::Tensor> &t) {
  return t && t->defined() ? std::optional<at::Tensor>(t->cpu()) : std::nullopt;
}

at::Tensor onNpu(const at::Tensor &t, c10::Device npu) {
  return t.defined() ? t.to(npu) : t;
}

// Convolutions: ATen's convolution sends a device it has no kernel for to
// convolution_overrideable, whose default kernel refuses (the boxed
// fallback is never reached, and the CPU has no such kernel either). These
// run ATen's own convolution and its backward on host copies instead, as
// the boxed fallback would.
at::Tensor convolutionOnHost(const at::Tensor &input, const at::Tensor &weight,
                             const std::optional<at::Tensor> &bias, c10::SymIntArrayRef stride,
                             c10::SymIntArrayRef padding, c10::SymIntArrayRef dilation,
                             bool transposed, c10::SymIntArrayRef outputPadding,
                             c10::SymInt groups) {
  const std::string name = "aten::convolution_overrideable";
  checkOnNpu(input, name, "input");
  checkOnNpu(weight, name, "weight");
  if (bias)
    checkOnNpu(*bias, name, "bias");
  enterFallback(name, shapeString(input) + ", " + shapeString(weight));
  return onNpu(at::convolution_symint(input.cpu(), weight.cpu(), onHost(bias), stride, padding,
                                      dilation, transposed, outputPadding, std::move(groups)),
               input.device());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor>
convolutionBackwardOnHost(const at::Tensor &gradOutput, const at::Tensor &input,
                          const at::Tensor &weight, c10::SymIntArrayRef stride,
                          c10::SymIntArrayRef padding, c10::SymIntArrayRef dilation,
                          bool transposed, c10::SymIntArrayRef outputPadding, c10::SymInt groups,
                          std::array<bool, 3> outputMask) {
  const std::string name = "aten::convolution_backward_overrideable";
  checkOnNpu(gradOutput, name, "grad_output");
  checkOnNpu(input, name, "input");
  checkOnNpu(weight, name, "weight");
  enterFallback(name,
                shapeString(gradOutput) + ", " + shapeString(input) + ", " + shapeString(weight));
  // The bias has one element per output channel.
  const c10::SymInt channels = transposed ? weight.sym_size(1) * groups : weight.sym_size(0);
  const std::vector<c10::SymInt> biasSizes{channels};
  auto [gradInput, gradWeight, gradBias] = at::convolution_backward_symint(
      gradOutput.cpu(), input.cpu(), weight.cpu(), c10::SymIntArrayRef(biasSizes), stride, padding,
      dilation, transposed, outputPadding, std::move(groups), outputMask);
  const c10::Device npu = input.device();
  return {onNpu(gradInput, npu), onNpu(gradWeight, npu), onNpu(gradBias, npu)};
}

} // namespace

void cpuFallback(const c10::OperatorHandle &op, torch::jit::Stack *stack) {
  const std::string name = operatorName(op);
  checkDevices(op, *stack, name);
  if (runWidened(op, name, stack))
    return;
  enterFallback(name, describeArguments(op, *stack));
  std::vector<const c10::TensorImpl *> cpuArguments;
  std::optional<c10::Device> npuDevice;
  const size_t arguments = op.schema().arguments().size();
  for (size_t i = stack->size() - arguments; i < stack->size(); ++i) {
    auto note = [&](const at::Tensor &t) {
      if (!t.defined())
        return;
      if (isNpu(t))
        npuDevice = npuDevice.value_or(t.device());
      else
        cpuArguments.push_back(t.unsafeGetTensorImpl());
    };
    if ((*stack)[i].isTensor())
      note((*stack)[i].toTensor());
    else if ((*stack)[i].isTensorList())
      for (const at::Tensor &t : (*stack)[i].toTensorList())
        note(t);
  }
  at::native::cpu_fallback(op, stack);
  if (npuDevice)
    moveResultsToNpu(*stack, op.schema().returns().size(), *npuDevice, cpuArguments);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpuFallback>());
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("convolution_overrideable", &convolutionOnHost);
  m.impl("convolution_backward_overrideable", &convolutionBackwardOnHost);
}

} // namespace npu::bridge
