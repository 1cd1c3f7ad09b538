// The boxed CPU fallback for every op without an NPU kernel: its npu
// tensors are copied to the host, the CPU kernel runs, results (and mutated
// arguments) are copied back. Each fallback is counted per op, warned about
// once per op, logged as [CPU] and, with NPU_STRICT=1, refused.
#include "Device.h"
#include "Layout.h"
#include "Ops.h"

#include <ATen/core/op_registration/adaption.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <mutex>
#include <unordered_set>

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

void cpuFallback(const c10::OperatorHandle &op, torch::jit::Stack *stack) {
  const std::string name = operatorName(op);
  checkDevices(op, *stack, name);
  TORCH_CHECK(!strictMode(), "NPU_STRICT=1: ", name,
              " has no NPU kernel for these arguments and would run on the CPU");
  countFallback(name);
  if (firstTime(name))
    TORCH_WARN("npu: ", name,
               " has no NPU kernel for these arguments; it runs on the CPU "
               "(its tensors are copied to the host and back). Warned once per op; "
               "torch.npu.fallback_stats() counts every fallback.");
  if (logOps())
    logLine("CPU", name + " " + describeArguments(op, *stack));
  flush();
  at::native::cpu_fallback(op, stack);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpuFallback>());
}

} // namespace npu::bridge
