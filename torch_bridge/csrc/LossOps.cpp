// The negative log-likelihood loss (cross_entropy is log_softmax followed by
// it): nll_loss_forward and nll_loss_backward.
//
// The targets are integer bookkeeping that no instruction can inspect (no
// compare, no integer arithmetic): the host reads them (one wait for the
// device), checks them as the CPU kernel does (out-of-range targets raise
// its error) and turns the kept ones (target != ignore_index) into flat
// positions row * classes + target. The float work runs on the device:
// EMBEDDING gathers the selected log-probabilities (and the class weights),
// ROW_SUM / DIV / NEG reduce them, and EMBEDDING_BWD scatters the gradient
// into a zeroed grad_input in the CPU kernel's rounding order.
#include "Device.h"
#include "Layout.h"
#include "Ops.h"

#include <ATen/core/grad_mode.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/nll_loss_backward_ops.h>
#include <ATen/ops/nll_loss_forward_ops.h>
#include <torch/library.h>

#include <bit>
#include <mutex>
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

bool lowerable(const at::Tensor &self, const at::Tensor &target,
               const std::optional<at::Tensor> &weight) {
  return isFloatNpu(self) && isNpu(target) &&
         (target.scalar_type() == at::kLong || target.scalar_type() == at::kByte) &&
         (!weight || !weight->defined() || isFloatNpu(*weight));
}

bool hasWeight(const std::optional<at::Tensor> &weight) {
  return weight && weight->defined();
}

// The kept targets, as npu int64 vectors of `count` entries (rows of one
// uploaded 3 x count tensor).
struct Selection {
  int64_t count = 0;
  at::Tensor flat;    // row * classes + target: the position in the input
  at::Tensor classes; // target: the row of the weight
  at::Tensor rows;    // row: the position in a per-sample loss
};

Selection selectTargets(const at::Tensor &target, const Problem &problem, int64_t ignoreIndex) {
  const at::Tensor host = download(target).to(at::kLong).contiguous();
  const int64_t *t = host.const_data_ptr<int64_t>();
  std::vector<int64_t> kept;
  for (int64_t row = 0; row < host.numel(); ++row) {
    if (t[row] == ignoreIndex)
      continue;
    TORCH_CHECK(t[row] >= 0 && t[row] < problem.classes, "Target ", t[row], " is out of bounds.");
    kept.push_back(row);
  }
  const int64_t count = static_cast<int64_t>(kept.size());
  at::Tensor table = at::empty({3, count}, at::kLong);
  int64_t *flat = table[0].data_ptr<int64_t>(), *classes = table[1].data_ptr<int64_t>(),
          *rows = table[2].data_ptr<int64_t>();
  for (int64_t k = 0; k < count; ++k) {
    flat[k] = kept[k] * problem.classes + t[kept[k]];
    classes[k] = t[kept[k]];
    rows[k] = kept[k];
  }
  const at::Tensor onDevice = emptyNpu({3, count}, at::kLong);
  if (count > 0)
    upload(onDevice, table);
  return {count, onDevice[0], onDevice[1], onDevice[2]};
}

// A loss's backward reads the same targets as its forward (autograd saved
// the tensor): a forward that records a graph keeps its selection for it,
// keyed by the target tensor and its version, so that the targets are read
// once per step. The backward takes it. One entry, shared by all threads:
// autograd runs the backward on its device thread.
struct SelectionCache {
  c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl> target{
      c10::intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>()};
  uint32_t version = 0;
  int64_t ignoreIndex = 0, classes = 0, rows = 0;
  std::optional<Selection> selection;
};

std::mutex &selectionMutex() {
  static std::mutex mutex;
  return mutex;
}

SelectionCache &selectionCache() {
  static SelectionCache cache;
  return cache;
}

bool sameTargets(const SelectionCache &cache, const at::Tensor &target, const Problem &problem,
                 int64_t ignoreIndex) {
  return cache.selection && cache.target.lock().get() == target.unsafeGetTensorImpl() &&
         cache.version == target._version() && cache.ignoreIndex == ignoreIndex &&
         cache.classes == problem.classes && cache.rows == problem.rows;
}

Selection forwardSelection(const at::Tensor &self, const at::Tensor &target, const Problem &problem,
                           int64_t ignoreIndex) {
  Selection selection = selectTargets(target, problem, ignoreIndex);
  std::lock_guard<std::mutex> lock(selectionMutex());
  SelectionCache &cache = selectionCache();
  cache.selection.reset();
  if (c10::GradMode::is_enabled() && self.requires_grad()) {
    cache.target = c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>(
        target.getIntrusivePtr());
    cache.version = target._version();
    cache.ignoreIndex = ignoreIndex;
    cache.classes = problem.classes;
    cache.rows = problem.rows;
    cache.selection = selection;
  }
  return selection;
}

Selection backwardSelection(const at::Tensor &target, const Problem &problem, int64_t ignoreIndex) {
  {
    std::lock_guard<std::mutex> lock(selectionMutex());
    SelectionCache &cache = selectionCache();
    if (sameTargets(cache, target, problem, ignoreIndex)) {
      Selection selection = std::move(*cache.selection);
      cache.selection.reset();
      return selection;
    }
  }
  return selectTargets(target, problem, ignoreIndex);
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

// The weights of the kept targets' classes (count entries).
at::Tensor keptWeights(const at::Tensor &weight, const Selection &selection, int64_t classes) {
  const at::Tensor w = contiguousOnDevice(weight);
  at::Tensor kept = emptyNpu({selection.count}, at::kFloat);
  emitEmbedding(addressOf(kept), addressOf(w), selection.classes, 1, classes);
  return kept;
}

std::tuple<at::Tensor, at::Tensor> nllLossImpl(OpCounter &counter, const at::Tensor &self,
                                               const at::Tensor &target,
                                               const std::optional<at::Tensor> &weight,
                                               int64_t reduction, int64_t ignoreIndex) {
  const Problem problem = checkProblem(self, target, weight, reduction);
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(self) + "[" + shapeString(target) + "]");
  at::Tensor output = emptyNpu(
      problem.perSample ? std::vector<int64_t>{problem.rows} : std::vector<int64_t>{}, at::kFloat);
  at::Tensor totalWeight = emptyNpu({}, at::kFloat);
  const Selection kept = forwardSelection(self, target, problem, ignoreIndex);
  const int64_t count = kept.count;
  // The selected log-probabilities, times their class weights.
  const at::Tensor input = contiguousOnDevice(self);
  at::Tensor picked = emptyNpu({count}, at::kFloat);
  at::Tensor weights;
  if (count > 0) {
    emitEmbedding(addressOf(picked), addressOf(input), kept.flat, 1, input.numel());
    if (hasWeight(weight)) {
      weights = keptWeights(*weight, kept, problem.classes);
      emitBinary<isa::inst::Mul>(picked, picked, weights);
    }
  }
  if (reduction == kNone) {
    emitFillFloat(totalWeight, 0.0f);
  } else if (hasWeight(weight) && count > 0) {
    emitSumOf(totalWeight, weights, count);
  } else {
    emitFillFloat(totalWeight, static_cast<float>(count));
  }
  if (problem.perSample) {
    // -picked scattered into zeros at the kept rows.
    emitFillFloat(output, 0.0f);
    if (count > 0) {
      emitUnary<isa::inst::Neg>(addressOf(picked), addressOf(picked), count);
      emitEmbeddingBackward(addressOf(output), addressOf(picked), kept.rows, 1, problem.rows);
    }
    return {output, totalWeight};
  }
  if (count > 0) {
    emitSumOf(output, picked, count);
  } else {
    emitFillFloat(output, 0.0f);
  }
  if (reduction == kMean)
    emitBinary<isa::inst::Div>(output, output, totalWeight);
  emitUnary<isa::inst::Neg>(addressOf(output), addressOf(output), 1);
  return {output, totalWeight};
}

std::tuple<at::Tensor, at::Tensor> nllLossForward(const at::Tensor &self, const at::Tensor &target,
                                                  const std::optional<at::Tensor> &weight,
                                                  int64_t reduction, c10::SymInt ignoreIndex) {
  static OpCounter counter("nll_loss_forward");
  if (!lowerable(self, target, weight))
    return fallbackTo<NPU_ATEN_OP(nll_loss_forward)>(self, target, weight, reduction,
                                                     ignoreIndex.expect_int());
  return nllLossImpl(counter, self, target, weight, reduction, ignoreIndex.expect_int());
}

std::tuple<at::Tensor &, at::Tensor &>
nllLossForwardOut(const at::Tensor &self, const at::Tensor &target,
                  const std::optional<at::Tensor> &weight, int64_t reduction,
                  c10::SymInt ignoreIndex, at::Tensor &output, at::Tensor &totalWeight) {
  static OpCounter counter("nll_loss_forward.output");
  if (!lowerable(self, target, weight) || !isFloatNpu(output) || !isFloatNpu(totalWeight))
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
  at::Tensor gradInput = emptyNpuLike(self);
  emitFillFloat(gradInput, 0.0f);
  const Selection kept = backwardSelection(target, problem, ignoreIndex);
  if (kept.count == 0)
    return gradInput;
  // values[k] = -w[target] * g, g = grad_output[row] (per sample), or the
  // scalar grad_output (sum) or grad_output / total_weight (mean).
  at::Tensor values = emptyNpu({kept.count}, at::kFloat);
  const at::Tensor go = contiguousOnDevice(gradOutput);
  if (problem.perSample) {
    emitEmbedding(addressOf(values), addressOf(go), kept.rows, 1, problem.rows);
    emitUnary<isa::inst::Neg>(addressOf(values), addressOf(values), kept.count);
  } else {
    at::Tensor scale = emptyNpu({}, at::kFloat);
    if (reduction == kMean)
      emitBinary<isa::inst::Div>(scale, go.reshape(c10::IntArrayRef()),
                                 totalWeight.reshape(c10::IntArrayRef()));
    else
      emitGather(addressOf(scale), go.reshape(c10::IntArrayRef()));
    emitUnary<isa::inst::Neg>(addressOf(scale), addressOf(scale), 1);
    emitGather(addressOf(values), scale.expand({kept.count}));
  }
  if (hasWeight(weight))
    emitBinary<isa::inst::Mul>(values, keptWeights(*weight, kept, problem.classes), values);
  emitEmbeddingBackward(addressOf(gradInput), addressOf(values), kept.flat, 1, gradInput.numel());
  return gradInput;
}

bool backwardLowerable(const at::Tensor &gradOutput, const at::Tensor &self,
                       const at::Tensor &target, const std::optional<at::Tensor> &weight,
                       const at::Tensor &totalWeight) {
  return lowerable(self, target, weight) && isFloatNpu(gradOutput) && isFloatNpu(totalWeight);
}

at::Tensor nllLossBackward(const at::Tensor &gradOutput, const at::Tensor &self,
                           const at::Tensor &target, const std::optional<at::Tensor> &weight,
                           int64_t reduction, c10::SymInt ignoreIndex,
                           const at::Tensor &totalWeight) {
  static OpCounter counter("nll_loss_backward");
  if (!backwardLowerable(gradOutput, self, target, weight, totalWeight))
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
  if (!backwardLowerable(gradOutput, self, target, weight, totalWeight) || !isFloatNpu(gradInput))
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
