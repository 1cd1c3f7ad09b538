// The negative log-likelihood loss (cross_entropy is log_softmax followed by
// it): nll_loss_forward and nll_loss_backward, on the device from end to end
// so that a compiled graph has no host round trip in it.
//
// The targets stay on the device: NES marks the rows that count (target !=
// ignore_index), SELECTS gives the ignored rows class 0 so that every GATHER
// stays in range, and a target outside [0, classes) faults the GATHER that
// reads it (a device fault at the next synchronisation, as CUDA's
// device-side assert). The ignored rows' terms are zeroed by SELECTS after
// the arithmetic: a zero is exact in every sum, and -inf or NaN read for an
// ignored row never reaches a result. ROW_SUM accumulates element j in lane
// j mod L, so a zero in place of an ignored row moves the later rows to other
// lanes: the sums agree with the CPU's to the reductions' tolerance, not bit
// for bit (docs/pytorch.md).
#include "Device.h"
#include "Layout.h"
#include "Ops.h"

#include <ATen/native/Resize.h>
#include <ATen/ops/nll_loss_backward_ops.h>
#include <ATen/ops/nll_loss_forward_ops.h>
#include <torch/library.h>

#include <bit>
#include <limits>
#include <optional>
#include <vector>

namespace npu::bridge {

namespace {

enum Reduction : int64_t { kNone = 0, kMean = 1, kSum = 2 };

struct Problem {
  int64_t rows;    // samples (1 without a batch dim)
  int64_t classes; // the last dim of the input
  bool perSample;  // reduction none with a batch dim: one loss per row
};

Problem checkProblem(const at::Tensor &self, const at::Tensor &target,
                     const std::optional<at::Tensor> &weight, int64_t reduction) {
  TORCH_CHECK(self.dim() > 0 && self.dim() <= 2, "input tensor should be 1D or 2D");
  TORCH_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
  const bool noBatchDim = self.dim() == 1 && target.dim() == 0;
  TORCH_CHECK(noBatchDim || self.size(0) == target.size(0),
              "size mismatch (got input: ", self.sizes(), ", target: ", target.sizes(), ")");
  const int64_t classes = self.size(-1);
  TORCH_CHECK(!weight || !weight->defined() || (weight->dim() <= 1 && weight->numel() == classes),
              "weight tensor should be defined either for all ", classes,
              " classes or no classes but got weight tensor of shape: ", weight->sizes());
  TORCH_CHECK(reduction == kNone || reduction == kMean || reduction == kSum, reduction,
              " is not a valid value for reduction");
  return {self.dim() == 2 ? self.size(0) : 1, classes, reduction == kNone && self.dim() == 2};
}

// The ISA's compares and IOTA take the ignore index and the class count as
// int32 immediates, and its types have no uint8: other targets run on the
// CPU.
bool lowerable(const at::Tensor &self, const at::Tensor &target,
               const std::optional<at::Tensor> &weight, int64_t ignoreIndex) {
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  return isFloatNpu(self) && (self.dim() == 0 || self.size(-1) <= kInt32Max) && isNpu(target) &&
         target.scalar_type() == at::kLong && ignoreIndex >= std::numeric_limits<int32_t>::min() &&
         ignoreIndex <= kInt32Max && (!weight || !weight->defined() || isFloatNpu(*weight));
}

bool hasWeight(const std::optional<at::Tensor> &weight) {
  return weight && weight->defined();
}

// dst = kept ? a : 0 over rows elements of `type`.
void emitZeroUnlessKept(const at::Tensor &dst, const at::Tensor &kept, const at::Tensor &a,
                        isa::DType type) {
  isa::inst::Selects select;
  select.dst = addressOf(dst);
  select.a = addressOf(a);
  select.mask = addressOf(kept);
  select.rows = 1;
  select.cols = u32(kept.numel(), "target count");
  select.s = 0; // +0.0 and integer 0 alike
  select.dtype = type;
  emit(select);
}

// Per row: whether it counts, and its target with the ignored rows' set to 0.
struct Targets {
  at::Tensor kept;  // bool [rows]
  at::Tensor index; // int64 [rows]
};

Targets deviceTargets(const at::Tensor &target, const Problem &problem, int64_t ignoreIndex) {
  const at::Tensor t = contiguousOnDevice(target);
  Targets targets{emptyNpu({problem.rows}, at::kBool), emptyNpu({problem.rows}, at::kLong)};
  isa::inst::Nes kept;
  kept.dst = addressOf(targets.kept);
  kept.a = addressOf(t);
  kept.s = std::bit_cast<float>(static_cast<int32_t>(ignoreIndex)); // an int32 for i64
  kept.n = u32(problem.rows, "target count");
  kept.dtype = isa::DType::i64;
  emit(kept);
  emitZeroUnlessKept(targets.index, targets.kept, t, isa::DType::i64);
  return targets;
}

// dst[0] = the sum of the `count` floats at src (count > 0).
void emitSumOf(const at::Tensor &dst, const at::Tensor &src, int64_t count) {
  isa::inst::RowSum sum;
  sum.dst = addressOf(dst);
  sum.src = addressOf(src);
  sum.rows = 1;
  sum.cols = u32(count, "target count");
  emit(sum);
}

void emitFillFloat(const at::Tensor &t, float value) {
  emitFillWords(addressOf(t), std::bit_cast<uint32_t>(value), t.numel());
}

// Per row: the weight of its target's class (ignored rows: class 0's).
at::Tensor targetWeights(const at::Tensor &weight, const Targets &targets, int64_t classes) {
  const at::Tensor w = contiguousOnDevice(weight);
  at::Tensor picked = emptyNpu({targets.index.numel()}, at::kFloat);
  emitIndexGather(picked, w, targets.index, 1, classes, targets.index.numel(), 1,
                  isa::GatherMode::shared, false);
  return picked;
}

std::tuple<at::Tensor, at::Tensor> nllLossImpl(OpCounter &counter, const at::Tensor &self,
                                               const at::Tensor &target,
                                               const std::optional<at::Tensor> &weight,
                                               int64_t reduction, int64_t ignoreIndex) {
  const Problem problem = checkProblem(self, target, weight, reduction);
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(self) + "[" + shapeString(target) + "]");
  const int64_t rows = problem.rows;
  at::Tensor output =
      emptyNpu(problem.perSample ? std::vector<int64_t>{rows} : std::vector<int64_t>{}, at::kFloat);
  at::Tensor totalWeight = emptyNpu({}, at::kFloat);
  if (rows == 0) {
    // No terms: the sum 0, the mean 0 / 0 (NaN), as on the CPU.
    emitFillFloat(totalWeight, 0.0f);
    if (!problem.perSample) {
      emitFillFloat(output, 0.0f);
      if (reduction == kMean)
        emitBinary<isa::inst::Div>(output, output, totalWeight);
    }
    return {output, totalWeight};
  }
  const Targets targets = deviceTargets(target, problem, ignoreIndex);
  // Per row: the target's log-probability, times its class weight.
  const at::Tensor input = contiguousOnDevice(self);
  at::Tensor terms = emptyNpu({rows}, at::kFloat);
  emitIndexGather(terms, input, targets.index, rows, problem.classes, 1, 1, isa::GatherMode::full,
                  false);
  at::Tensor weights;
  if (hasWeight(weight)) {
    weights = targetWeights(*weight, targets, problem.classes);
    emitZeroUnlessKept(weights, targets.kept, weights, isa::DType::f32);
    emitBinary<isa::inst::Mul>(terms, terms, weights);
  }
  if (problem.perSample) {
    emitUnary<isa::inst::Neg>(addressOf(terms), addressOf(terms), rows);
    emitZeroUnlessKept(output, targets.kept, terms, isa::DType::f32);
    emitFillFloat(totalWeight, 0.0f);
    return {output, totalWeight};
  }
  emitZeroUnlessKept(terms, targets.kept, terms, isa::DType::f32);
  if (reduction == kNone) {
    emitFillFloat(totalWeight, 0.0f);
  } else if (hasWeight(weight)) {
    emitSumOf(totalWeight, weights, rows);
  } else {
    at::Tensor kept = emptyNpu({}, at::kLong);
    isa::inst::Count count;
    count.dst = addressOf(kept);
    count.src = addressOf(targets.kept);
    count.rows = 1;
    count.cols = u32(rows, "target count");
    emit(count);
    copyInto(totalWeight, kept);
  }
  emitSumOf(output, terms, rows);
  if (reduction == kMean)
    emitBinary<isa::inst::Div>(output, output, totalWeight);
  emitUnary<isa::inst::Neg>(addressOf(output), addressOf(output), 1);
  return {output, totalWeight};
}

std::tuple<at::Tensor, at::Tensor> nllLossForward(const at::Tensor &self, const at::Tensor &target,
                                                  const std::optional<at::Tensor> &weight,
                                                  int64_t reduction, c10::SymInt ignoreIndex) {
  static OpCounter counter("nll_loss_forward");
  if (!lowerable(self, target, weight, ignoreIndex.expect_int()))
    return fallbackTo<NPU_ATEN_OP(nll_loss_forward)>(self, target, weight, reduction,
                                                     ignoreIndex.expect_int());
  return nllLossImpl(counter, self, target, weight, reduction, ignoreIndex.expect_int());
}

std::tuple<at::Tensor &, at::Tensor &>
nllLossForwardOut(const at::Tensor &self, const at::Tensor &target,
                  const std::optional<at::Tensor> &weight, int64_t reduction,
                  c10::SymInt ignoreIndex, at::Tensor &output, at::Tensor &totalWeight) {
  static OpCounter counter("nll_loss_forward.output");
  if (!lowerable(self, target, weight, ignoreIndex.expect_int()) || !isFloatNpu(output) ||
      !isFloatNpu(totalWeight))
    return fallbackTo<NPU_ATEN_OP2(nll_loss_forward, output)>(
        self, target, weight, reduction, ignoreIndex.expect_int(), output, totalWeight);
  const auto [loss, total] =
      nllLossImpl(counter, self, target, weight, reduction, ignoreIndex.expect_int());
  at::native::resize_output(output, loss.sizes());
  at::native::resize_output(totalWeight, {});
  copyResult(output, loss);
  copyResult(totalWeight, total);
  return {output, totalWeight};
}

at::Tensor nllLossBackwardImpl(OpCounter &counter, const at::Tensor &gradOutput,
                               const at::Tensor &self, const at::Tensor &target,
                               const std::optional<at::Tensor> &weight, int64_t reduction,
                               int64_t ignoreIndex, const at::Tensor &totalWeight) {
  const Problem problem = checkProblem(self, target, weight, reduction);
  if (problem.perSample) {
    TORCH_CHECK(gradOutput.dim() == 1 && gradOutput.size(0) == problem.rows,
                "Expected a tensor of dimension 1 and tensor.size[0] == ", problem.rows,
                " but got: dimension ", gradOutput.dim(),
                " and tensor.size[0] == ", gradOutput.dim() > 0 ? gradOutput.size(0) : 1);
  } else {
    TORCH_CHECK(gradOutput.numel() == 1,
                "Expected a single element grad_output tensor, but got: ", gradOutput.sizes());
  }
  TORCH_CHECK(totalWeight.numel() == 1,
              "expected total_weight to be a single element tensor, got: ", totalWeight.sizes(),
              " (", totalWeight.numel(), " elements)");
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(self) + "[" + shapeString(target) + "]");
  const int64_t rows = problem.rows;
  at::Tensor gradInput = emptyNpuLike(self);
  emitFillFloat(gradInput, 0.0f);
  if (rows == 0)
    return gradInput;
  const Targets targets = deviceTargets(target, problem, ignoreIndex);
  // values[row] = -w[target] * g, g = grad_output[row] (per sample), or the
  // scalar grad_output (sum) or grad_output / total_weight (mean); zero
  // where the row is ignored.
  at::Tensor values = emptyNpu({rows}, at::kFloat);
  const at::Tensor go = contiguousOnDevice(gradOutput);
  if (problem.perSample) {
    emitUnary<isa::inst::Neg>(addressOf(values), addressOf(go), rows);
  } else {
    at::Tensor scale = emptyNpu({}, at::kFloat);
    if (reduction == kMean)
      emitBinary<isa::inst::Div>(scale, go.reshape(c10::IntArrayRef()),
                                 totalWeight.reshape(c10::IntArrayRef()));
    else
      emitGather(addressOf(scale), go.reshape(c10::IntArrayRef()));
    emitUnary<isa::inst::Neg>(addressOf(scale), addressOf(scale), 1);
    emitGather(addressOf(values), scale.expand({rows}));
  }
  if (hasWeight(weight))
    emitBinary<isa::inst::Mul>(values, targetWeights(*weight, targets, problem.classes), values);
  emitZeroUnlessKept(values, targets.kept, values, isa::DType::f32);
  // Scattered to row * classes + target (an ignored row adds its zero to
  // class 0).
  at::Tensor positions = emptyNpu({rows}, at::kLong);
  isa::inst::Iota rowStarts;
  rowStarts.dst = addressOf(positions);
  rowStarts.n = u32(rows, "target count");
  rowStarts.start = 0;
  rowStarts.step = u32(problem.classes, "classes"); // int32 for i64
  rowStarts.dtype = isa::DType::i64;
  emit(rowStarts);
  emitBinary<isa::inst::Add>(positions, positions, targets.index);
  emitEmbeddingBackward(addressOf(gradInput), addressOf(values), positions, 1, gradInput.numel());
  return gradInput;
}

bool backwardLowerable(const at::Tensor &gradOutput, const at::Tensor &self,
                       const at::Tensor &target, const std::optional<at::Tensor> &weight,
                       int64_t ignoreIndex, const at::Tensor &totalWeight) {
  return lowerable(self, target, weight, ignoreIndex) && isFloatNpu(gradOutput) &&
         isFloatNpu(totalWeight);
}

at::Tensor nllLossBackward(const at::Tensor &gradOutput, const at::Tensor &self,
                           const at::Tensor &target, const std::optional<at::Tensor> &weight,
                           int64_t reduction, c10::SymInt ignoreIndex,
                           const at::Tensor &totalWeight) {
  static OpCounter counter("nll_loss_backward");
  if (!backwardLowerable(gradOutput, self, target, weight, ignoreIndex.expect_int(), totalWeight))
    return fallbackTo<NPU_ATEN_OP(nll_loss_backward)>(gradOutput, self, target, weight, reduction,
                                                      ignoreIndex.expect_int(), totalWeight);
  return nllLossBackwardImpl(counter, gradOutput, self, target, weight, reduction,
                             ignoreIndex.expect_int(), totalWeight);
}

at::Tensor &nllLossBackwardOut(const at::Tensor &gradOutput, const at::Tensor &self,
                               const at::Tensor &target, const std::optional<at::Tensor> &weight,
                               int64_t reduction, c10::SymInt ignoreIndex,
                               const at::Tensor &totalWeight, at::Tensor &gradInput) {
  static OpCounter counter("nll_loss_backward.grad_input");
  if (!backwardLowerable(gradOutput, self, target, weight, ignoreIndex.expect_int(), totalWeight) ||
      !isFloatNpu(gradInput))
    return fallbackTo<NPU_ATEN_OP2(nll_loss_backward, grad_input)>(
        gradOutput, self, target, weight, reduction, ignoreIndex.expect_int(), totalWeight,
        gradInput);
  const at::Tensor result = nllLossBackwardImpl(counter, gradOutput, self, target, weight,
                                                reduction, ignoreIndex.expect_int(), totalWeight);
  at::native::resize_output(gradInput, self.sizes());
  copyResult(gradInput, result);
  return gradInput;
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("nll_loss_forward", nllLossForward);
  m.impl("nll_loss_forward.output", nllLossForwardOut);
  m.impl("nll_loss_backward", nllLossBackward);
  m.impl("nll_loss_backward.grad_input", nllLossBackwardOut);
}

} // namespace npu::bridge
