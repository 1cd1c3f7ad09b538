// Fused NN ops: softmax and log-softmax (SOFTMAX), the "safe" softmax of
// scaled_dot_product_attention, RMS norm (RMSNORM, so F.rms_norm and
// nn.RMSNorm are native, and its gradient RMSNORM_BWD, which autograd needs
// once the forward is native), layer norm (LAYERNORM, and its gradient
// LAYERNORM_BWD with COL_SUM, so F.layer_norm is native both ways),
// embedding lookup (EMBEDDING), and the SDPA backend choice that sends
// attention through its math decomposition.
#include "Device.h"
#include "Layout.h"
#include "Ops.h"

#include <ATen/SDPBackend.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_log_softmax_backward_data_ops.h>
#include <ATen/ops/_log_softmax_ops.h>
#include <ATen/ops/_safe_softmax_ops.h>
#include <ATen/ops/_softmax_backward_data_ops.h>
#include <ATen/ops/_softmax_ops.h>
#include <ATen/ops/embedding_dense_backward_ops.h>
#include <ATen/ops/embedding_ops.h>
#include <ATen/ops/native_layer_norm_backward_ops.h>
#include <ATen/ops/native_layer_norm_ops.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <tuple>

namespace npu::bridge {

namespace {

isa::IndexType indexType(const at::Tensor &indices) {
  TORCH_CHECK(indices.scalar_type() == at::kInt || indices.scalar_type() == at::kLong,
              "NPU: embedding indices must be int32 or int64, got ", indices.scalar_type());
  return indices.scalar_type() == at::kInt ? isa::IndexType::i32 : isa::IndexType::i64;
}

} // namespace

void emitEmbedding(uint64_t dst, uint64_t table, const at::Tensor &indices, int64_t width,
                   int64_t rows) {
  isa::inst::Embedding lookup;
  lookup.dst = dst;
  lookup.table = table;
  lookup.indices = addressOf(indices);
  lookup.count = u32(indices.numel(), "index count");
  lookup.dim = u32(width, "embedding width");
  lookup.rows = u32(rows, "table rows");
  lookup.itype = indexType(indices);
  emit(lookup);
}

void emitIndexGather(const at::Tensor &dst, const at::Tensor &src, const at::Tensor &index,
                     int64_t outer, int64_t n, int64_t count, int64_t inner, isa::GatherMode mode,
                     bool wrap) {
  isa::inst::Gather gather;
  gather.dst = addressOf(dst);
  gather.src = addressOf(src);
  gather.index = addressOf(index);
  gather.outer = u32(outer, "outer slices");
  gather.n = u32(n, "length of the gathered dim");
  gather.count = u32(count, "index count");
  gather.inner = u32(inner, "inner elements");
  gather.itype = indexType(index);
  gather.mode = mode;
  gather.wrap = wrap;
  gather.dtype = *isaType(src.scalar_type());
  emit(gather);
}

void emitEmbeddingBackward(uint64_t table, uint64_t dy, const at::Tensor &indices, int64_t width,
                           int64_t rows, int64_t paddingIdx) {
  isa::inst::EmbeddingBwd scatter;
  scatter.dtable = table;
  scatter.dy = dy;
  scatter.indices = addressOf(indices);
  scatter.count = u32(indices.numel(), "index count");
  scatter.dim = u32(width, "embedding width");
  scatter.rows = u32(rows, "table rows");
  scatter.itype = indexType(indices);
  scatter.padding_idx = static_cast<int32_t>(paddingIdx);
  emit(scatter);
}

namespace {

// Runs `rowKernel(dst, src..., rows, cols)` over the rows of `dim` of the
// inputs (all of out's shape): directly when dim is innermost and every input
// contiguous, else on copies with dim moved innermost, the result moved back
// into out afterwards. out is contiguous.
template <class RowKernel, class... Inputs>
void alongDim(const at::Tensor &out, int64_t dim, RowKernel rowKernel, const Inputs &...inputs) {
  const int64_t cols = out.dim() == 0 ? 1 : out.size(dim);
  if (out.numel() == 0)
    return;
  const int64_t rows = out.numel() / cols;
  if (out.dim() == 0 ||
      (dim == out.dim() - 1 && ((inputs.is_contiguous() && wordAligned(inputs)) && ...))) {
    rowKernel(addressOf(out), addressOf(inputs)..., rows, cols);
    return;
  }
  auto innermost = [dim](const at::Tensor &t) {
    at::Tensor moved = emptyNpu(t.movedim(dim, -1).sizes(), t.scalar_type());
    emitGather(addressOf(moved), t.movedim(dim, -1));
    return moved;
  };
  const std::array moved{innermost(inputs)...};
  const at::Tensor result = emptyNpuLike(moved[0]);
  std::apply([&](const auto &...m) { rowKernel(addressOf(result), addressOf(m)..., rows, cols); },
             moved);
  emitGather(addressOf(out), result.movedim(-1, dim));
}

void emitSoftmaxRows(uint64_t dst, uint64_t src, int64_t rows, int64_t cols, bool log,
                     c10::ScalarType type) {
  isa::inst::Softmax softmax;
  softmax.dst = dst;
  softmax.src = src;
  softmax.rows = u32(rows, "rows");
  softmax.cols = u32(cols, "columns");
  softmax.log = log;
  softmax.dtype = *isaType(type);
  emit(softmax);
}

at::Tensor softmaxImpl(OpCounter &counter, const at::Tensor &self, int64_t dim, bool log) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(self) + " dim " + std::to_string(dim));
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  at::Tensor out = emptyNpuLike(self);
  alongDim(
      out, d,
      [log, type = self.scalar_type()](uint64_t dst, uint64_t src, int64_t rows, int64_t cols) {
        emitSoftmaxRows(dst, src, rows, cols, log, type);
      },
      self);
  return out;
}

// A bf16 softmax with a float32 result (half_to_float) runs on binary32
// copies (Widening.cpp).
bool softmaxLowerable(const at::Tensor &self, bool halfToFloat) {
  return ofAcceptedFloatType<isa::inst::Softmax>(self) && !halfToFloat;
}

at::Tensor softmax(const at::Tensor &self, int64_t dim, bool halfToFloat) {
  static OpCounter counter("_softmax");
  if (!softmaxLowerable(self, halfToFloat))
    return fallbackTo<NPU_ATEN_OP(_softmax)>(self, dim, halfToFloat);
  return softmaxImpl(counter, self, dim, false);
}

at::Tensor logSoftmax(const at::Tensor &self, int64_t dim, bool halfToFloat) {
  static OpCounter counter("_log_softmax");
  if (!softmaxLowerable(self, halfToFloat))
    return fallbackTo<NPU_ATEN_OP(_log_softmax)>(self, dim, halfToFloat);
  return softmaxImpl(counter, self, dim, true);
}

at::Tensor &softmaxOut(const at::Tensor &self, int64_t dim, bool halfToFloat, at::Tensor &out) {
  if (!softmaxLowerable(self, halfToFloat) || !sameTypeNpu(out, self))
    return fallbackTo<NPU_ATEN_OP2(_softmax, out)>(self, dim, halfToFloat, out);
  static OpCounter counter("_softmax.out");
  at::native::resize_output(out, self.sizes());
  copyResult(out, softmaxImpl(counter, self, dim, false));
  return out;
}

at::Tensor &logSoftmaxOut(const at::Tensor &self, int64_t dim, bool halfToFloat, at::Tensor &out) {
  if (!softmaxLowerable(self, halfToFloat) || !sameTypeNpu(out, self))
    return fallbackTo<NPU_ATEN_OP2(_log_softmax, out)>(self, dim, halfToFloat, out);
  static OpCounter counter("_log_softmax.out");
  at::native::resize_output(out, self.sizes());
  copyResult(out, softmaxImpl(counter, self, dim, true));
  return out;
}

// The gradients of softmax and log-softmax (SOFTMAX_BWD, `log` for the
// latter) from the forward output and the output's gradient.
at::Tensor softmaxBackwardImpl(OpCounter &counter, const at::Tensor &gradOutput,
                               const at::Tensor &output, int64_t dim, bool log) {
  TORCH_CHECK(gradOutput.sizes() == output.sizes(), "softmax backward: grad_output ",
              gradOutput.sizes(), " and output ", output.sizes(), " must have the same shape");
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(output) + " dim " + std::to_string(dim));
  const int64_t d = c10::maybe_wrap_dim(dim, output.dim());
  at::Tensor gradInput = emptyNpuLike(output);
  alongDim(
      gradInput, d,
      [log, type = output.scalar_type()](uint64_t dx, uint64_t y, uint64_t dy, int64_t rows,
                                         int64_t cols) {
        isa::inst::SoftmaxBwd backward;
        backward.dx = dx;
        backward.y = y;
        backward.dy = dy;
        backward.rows = u32(rows, "rows");
        backward.cols = u32(cols, "columns");
        backward.log = log;
        backward.dtype = *isaType(type);
        emit(backward);
      },
      output, gradOutput);
  return gradInput;
}

bool softmaxBackwardLowerable(const at::Tensor &gradOutput, const at::Tensor &output,
                              c10::ScalarType inputDtype) {
  return ofAcceptedFloatType<isa::inst::SoftmaxBwd>(output) && sameTypeNpu(gradOutput, output) &&
         inputDtype == output.scalar_type();
}

at::Tensor softmaxBackward(const at::Tensor &gradOutput, const at::Tensor &output, int64_t dim,
                           c10::ScalarType inputDtype) {
  static OpCounter counter("_softmax_backward_data");
  if (!softmaxBackwardLowerable(gradOutput, output, inputDtype))
    return fallbackTo<NPU_ATEN_OP(_softmax_backward_data)>(gradOutput, output, dim, inputDtype);
  return softmaxBackwardImpl(counter, gradOutput, output, dim, false);
}

at::Tensor &softmaxBackwardOut(const at::Tensor &gradOutput, const at::Tensor &output, int64_t dim,
                               c10::ScalarType inputDtype, at::Tensor &gradInput) {
  static OpCounter counter("_softmax_backward_data.out");
  if (!softmaxBackwardLowerable(gradOutput, output, inputDtype) || !sameTypeNpu(gradInput, output))
    return fallbackTo<NPU_ATEN_OP2(_softmax_backward_data, out)>(gradOutput, output, dim,
                                                                 inputDtype, gradInput);
  at::native::resize_output(gradInput, output.sizes());
  copyResult(gradInput, softmaxBackwardImpl(counter, gradOutput, output, dim, false));
  return gradInput;
}

at::Tensor logSoftmaxBackward(const at::Tensor &gradOutput, const at::Tensor &output, int64_t dim,
                              c10::ScalarType inputDtype) {
  static OpCounter counter("_log_softmax_backward_data");
  if (!softmaxBackwardLowerable(gradOutput, output, inputDtype))
    return fallbackTo<NPU_ATEN_OP(_log_softmax_backward_data)>(gradOutput, output, dim, inputDtype);
  return softmaxBackwardImpl(counter, gradOutput, output, dim, true);
}

at::Tensor &logSoftmaxBackwardOut(const at::Tensor &gradOutput, const at::Tensor &output,
                                  int64_t dim, c10::ScalarType inputDtype, at::Tensor &out) {
  static OpCounter counter("_log_softmax_backward_data.out");
  if (!softmaxBackwardLowerable(gradOutput, output, inputDtype) || !sameTypeNpu(out, output))
    return fallbackTo<NPU_ATEN_OP2(_log_softmax_backward_data, out)>(gradOutput, output, dim,
                                                                     inputDtype, out);
  at::native::resize_output(out, output.sizes());
  copyResult(out, softmaxBackwardImpl(counter, gradOutput, output, dim, true));
  return out;
}

// Softmax whose fully masked rows (all -inf) give zeros instead of NaN:
// the row maximum is clamped to a finite value before it is subtracted, so
// such rows exponentiate to zeros, and their zero sums are raised to the
// least normal float before dividing (a row with any finite entry sums to
// at least 1, so it is unaffected).
void emitSafeSoftmaxRows(uint64_t dst, uint64_t src, int64_t rows, int64_t cols) {
  const at::Tensor stats = emptyNpu({2, rows}, at::kFloat);
  const uint64_t maxima = addressOf(stats), sums = maxima + 4 * rows;
  auto rowReduce = [&](auto inst, uint64_t out, uint64_t in) {
    inst.dst = out;
    inst.src = in;
    inst.rows = u32(rows, "rows");
    inst.cols = u32(cols, "columns");
    emit(inst);
  };
  // dst = a (op) vector[row], for each row.
  auto perRow = [&](auto inst, uint64_t a, uint64_t vector) {
    inst.dst = dst;
    inst.a = a;
    inst.b = vector;
    inst.rows = u32(rows, "rows");
    inst.cols = u32(cols, "columns");
    inst.bcast = isa::Broadcast::col;
    emit(inst);
  };
  rowReduce(isa::inst::RowMax{}, maxima, src);
  emitScalar<isa::inst::Maxs>(maxima, maxima, std::numeric_limits<float>::lowest(), rows);
  perRow(isa::inst::Sub{}, src, maxima);
  emitUnary<isa::inst::Exp>(dst, dst, rows * cols);
  rowReduce(isa::inst::RowSum{}, sums, dst);
  emitScalar<isa::inst::Maxs>(sums, sums, std::numeric_limits<float>::min(), rows);
  perRow(isa::inst::Div{}, dst, sums);
}

at::Tensor safeSoftmax(const at::Tensor &self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  static OpCounter counter("_safe_softmax");
  if (!isFloatNpu(self) || (dtype && *dtype != at::kFloat))
    return fallbackTo<NPU_ATEN_OP(_safe_softmax)>(self, dim, dtype);
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(self) + " dim " + std::to_string(dim));
  at::Tensor out = emptyNpuLike(self);
  alongDim(out, c10::maybe_wrap_dim(dim, self.dim()), emitSafeSoftmaxRows, self);
  return out;
}

std::tuple<at::Tensor, at::Tensor> fusedRmsNorm(const at::Tensor &input,
                                                at::IntArrayRef normalizedShape,
                                                const std::optional<at::Tensor> &weight,
                                                std::optional<double> eps) {
  static OpCounter counter("_fused_rms_norm");
  const bool hasWeight = weight && weight->defined();
  const int64_t normDims = static_cast<int64_t>(normalizedShape.size());
  TORCH_CHECK(normDims >= 1 && normDims <= input.dim() &&
                  input.sizes().slice(input.dim() - normDims) == normalizedShape,
              "rms_norm: normalized_shape ", normalizedShape,
              " must match the trailing dims of the input ", input.sizes());
  if (!isFloatNpu(input) || (hasWeight && !isFloatNpu(*weight))) {
    // No fused CPU kernel to fall back to: PyTorch's own decomposition, op by op.
    const at::Tensor x = input;
    std::vector<int64_t> dims;
    for (int64_t d = input.dim() - normDims; d < input.dim(); ++d)
      dims.push_back(d);
    const double epsilon = eps.value_or(std::numeric_limits<float>::epsilon());
    at::Tensor rstd = x.mul(x).mean(dims, true).add(epsilon).rsqrt();
    at::Tensor out = x.mul(rstd);
    return {hasWeight ? out.mul(*weight) : out, rstd};
  }
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(input) + (hasWeight ? " * weight" : ""));
  const int64_t cols = c10::multiply_integers(normalizedShape);
  const int64_t rows = cols == 0 ? 0 : input.numel() / cols;
  std::vector<int64_t> rstdShape(input.sizes().begin(), input.sizes().end());
  for (int64_t d = input.dim() - normDims; d < input.dim(); ++d)
    rstdShape[d] = 1;
  at::Tensor out = emptyNpuLike(input);
  at::Tensor rstd = emptyNpu(rstdShape, at::kFloat);
  if (rows == 0 || cols == 0)
    return {out, rstd};
  const at::Tensor src = contiguousOnDevice(input);
  const at::Tensor w = hasWeight ? contiguousOnDevice(*weight) : at::Tensor();
  isa::inst::Rmsnorm norm;
  norm.dst = addressOf(out);
  norm.src = addressOf(src);
  norm.weight = hasWeight ? addressOf(w) : 0;
  norm.rstd = addressOf(rstd);
  norm.rows = u32(rows, "rows");
  norm.cols = u32(cols, "columns");
  norm.eps = static_cast<float>(eps.value_or(std::numeric_limits<float>::epsilon()));
  norm.use_weight = hasWeight;
  norm.write_rstd = true;
  emit(norm);
  return {out, rstd};
}

// The gradient of _fused_rms_norm (autograd calls it for npu tensors, and
// there is no CPU kernel to fall back to): RMSNORM_BWD.
std::tuple<at::Tensor, at::Tensor>
fusedRmsNormBackward(const at::Tensor &gradOut, const at::Tensor &input,
                     at::IntArrayRef normalizedShape, const at::Tensor &rstd,
                     const std::optional<at::Tensor> &weight, std::array<bool, 2> outputMask) {
  static OpCounter counter("_fused_rms_norm_backward");
  const bool hasWeight = weight && weight->defined();
  const std::string op = "aten::_fused_rms_norm_backward";
  checkOnNpu(gradOut, op, "grad_out");
  checkOnNpu(input, op, "input");
  checkOnNpu(rstd, op, "rstd");
  if (hasWeight)
    checkOnNpu(*weight, op, "weight");
  TORCH_CHECK(isFloatNpu(gradOut) && isFloatNpu(input) && isFloatNpu(rstd) &&
                  (!hasWeight || isFloatNpu(*weight)),
              "_fused_rms_norm_backward on the NPU needs float32 npu tensors");
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(input) + (hasWeight ? " * weight" : ""));
  const int64_t cols = c10::multiply_integers(normalizedShape);
  const int64_t rows = cols == 0 ? 0 : input.numel() / cols;
  at::Tensor dx = emptyNpuLike(input);
  const bool wantWeightGrad = hasWeight && outputMask[1];
  at::Tensor dweight = wantWeightGrad ? emptyNpuLike(*weight) : at::Tensor();
  if (rows > 0 && cols > 0) {
    const at::Tensor x = contiguousOnDevice(input);
    const at::Tensor dy = contiguousOnDevice(gradOut);
    const at::Tensor r = contiguousOnDevice(rstd);
    const at::Tensor w = hasWeight ? contiguousOnDevice(*weight) : at::Tensor();
    isa::inst::RmsnormBwd backward;
    backward.dx = addressOf(dx);
    backward.x = addressOf(x);
    backward.dy = addressOf(dy);
    backward.weight = hasWeight ? addressOf(w) : 0;
    backward.rstd = addressOf(r);
    backward.dweight = wantWeightGrad ? addressOf(dweight) : 0;
    backward.rows = u32(rows, "rows");
    backward.cols = u32(cols, "columns");
    backward.use_weight = hasWeight;
    backward.write_dweight = wantWeightGrad;
    emit(backward);
  } else if (wantWeightGrad) {
    emitFillWords(addressOf(dweight), 0, dweight.numel());
  }
  return {outputMask[0] ? dx : at::Tensor(), dweight};
}

at::Tensor embedding(const at::Tensor &weight, const at::Tensor &indices, c10::SymInt paddingIdx,
                     bool scaleGradByFreq, bool sparse) {
  static OpCounter counter("embedding");
  const bool lowerable = isNpu(weight) && weight.dim() == 2 && isNpu(indices) &&
                         (indices.scalar_type() == at::kInt || indices.scalar_type() == at::kLong) &&
                         (weight.scalar_type() == at::kFloat || isaType(weight.scalar_type()));
  if (!lowerable)
    return fallbackTo<NPU_ATEN_OP(embedding)>(weight, indices, paddingIdx.expect_int(),
                                              scaleGradByFreq, sparse);
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(weight) + "[" + shapeString(indices) + "]");
  std::vector<int64_t> shape(indices.sizes().begin(), indices.sizes().end());
  shape.push_back(weight.size(1));
  at::Tensor out = emptyNpu(shape, weight.scalar_type());
  if (out.numel() == 0)
    return out;
  const at::Tensor table = contiguousOnDevice(weight);
  const at::Tensor index = contiguousOnDevice(indices);
  // EMBEDDING moves binary32 rows; a table of another type is a GATHER of
  // its rows (the rows of dim 0 of the table, each of width elements).
  if (weight.scalar_type() == at::kFloat)
    emitEmbedding(addressOf(out), addressOf(table), index, weight.size(1), weight.size(0));
  else
    emitIndexGather(out, table, index, 1, weight.size(0), index.numel(), weight.size(1),
                    isa::GatherMode::shared, false);
  return out;
}

// The gradient of embedding: the rows of grad_output scatter-added into a
// zeroed num_weights x dim table by EMBEDDING_BWD, in index order (as the
// CPU kernel adds them), skipping padding_idx. scale_grad_by_freq needs
// per-index counts, which the ISA cannot compute: it falls back.
bool embeddingBackwardLowerable(const at::Tensor &gradOutput, const at::Tensor &indices,
                                bool scaleGradByFreq) {
  return isFloatNpu(gradOutput) && isNpu(indices) && !scaleGradByFreq &&
         (indices.scalar_type() == at::kInt || indices.scalar_type() == at::kLong);
}

void embeddingBackwardInto(const at::Tensor &table, const at::Tensor &gradOutput,
                           const at::Tensor &indices, int64_t paddingIdx) {
  const int64_t rows = table.size(0), width = table.size(1);
  TORCH_CHECK(gradOutput.numel() == indices.numel() * width,
              "embedding_dense_backward: grad_output ", gradOutput.sizes(),
              " does not hold one row of ", width, " per index of ", indices.sizes());
  TORCH_CHECK(paddingIdx >= -1 && paddingIdx < std::max<int64_t>(rows, 1),
              "embedding_dense_backward: padding_idx ", paddingIdx, " is outside [-1, ", rows, ")");
  emitFillWords(addressOf(table), 0, table.numel());
  if (indices.numel() == 0 || width == 0)
    return;
  const at::Tensor dy = contiguousOnDevice(gradOutput);
  const at::Tensor index = contiguousOnDevice(indices);
  emitEmbeddingBackward(addressOf(table), addressOf(dy), index, width, rows, paddingIdx);
}

// out (num_weights x dim, any layout) = the gradient of the table.
void embeddingBackwardStore(OpCounter &counter, const at::Tensor &out, const at::Tensor &gradOutput,
                            const at::Tensor &indices, int64_t paddingIdx) {
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(gradOutput) + " -> " + shapeString(out));
  if (out.is_contiguous() && !mayOverlap(out, gradOutput) && !mayOverlap(out, indices)) {
    embeddingBackwardInto(out, gradOutput, indices, paddingIdx);
  } else {
    const at::Tensor table = emptyNpuLike(out);
    embeddingBackwardInto(table, gradOutput, indices, paddingIdx);
    storeInto(out, addressOf(table));
  }
}

std::vector<int64_t> embeddingGradShape(const at::Tensor &gradOutput, int64_t numWeights) {
  TORCH_CHECK(gradOutput.dim() >= 1, "embedding_dense_backward: grad_output must have a dim");
  TORCH_CHECK(numWeights >= 0, "embedding_dense_backward: num_weights ", numWeights,
              " is negative");
  return {numWeights, gradOutput.size(-1)};
}

at::Tensor embeddingDenseBackward(const at::Tensor &gradOutput, const at::Tensor &indices,
                                  c10::SymInt numWeights, c10::SymInt paddingIdx,
                                  bool scaleGradByFreq) {
  static OpCounter counter("embedding_dense_backward");
  if (!embeddingBackwardLowerable(gradOutput, indices, scaleGradByFreq))
    return fallbackTo<NPU_ATEN_OP(embedding_dense_backward)>(
        gradOutput, indices, numWeights.expect_int(), paddingIdx.expect_int(), scaleGradByFreq);
  at::Tensor out = emptyNpu(embeddingGradShape(gradOutput, numWeights.expect_int()), at::kFloat);
  embeddingBackwardStore(counter, out, gradOutput, indices, paddingIdx.expect_int());
  return out;
}

at::Tensor &embeddingDenseBackwardOut(const at::Tensor &gradOutput, const at::Tensor &indices,
                                      c10::SymInt numWeights, c10::SymInt paddingIdx,
                                      bool scaleGradByFreq, at::Tensor &out) {
  static OpCounter counter("embedding_dense_backward.out");
  if (!embeddingBackwardLowerable(gradOutput, indices, scaleGradByFreq) || !isFloatNpu(out))
    return fallbackTo<NPU_ATEN_OP2(embedding_dense_backward, out)>(
        gradOutput, indices, numWeights.expect_int(), paddingIdx.expect_int(), scaleGradByFreq,
        out);
  at::native::resize_output(out, embeddingGradShape(gradOutput, numWeights.expect_int()));
  checkInternalOverlap(out); // PyTorch's generated out= form copies into out
  embeddingBackwardStore(counter, out, gradOutput, indices, paddingIdx.expect_int());
  return out;
}

// Whether input, and weight and bias where given, are npu tensors of one
// float type that Inst takes.
// Mixed types (a bf16 input with float32 parameters) are left to the
// binary32 copies of Widening.cpp.
template <class Inst>
bool normLowerable(const at::Tensor &input, const std::optional<at::Tensor> &weight,
                   const std::optional<at::Tensor> &bias) {
  auto sameType = [&](const std::optional<at::Tensor> &t) {
    return !t || !t->defined() || sameTypeNpu(*t, input);
  };
  return ofAcceptedFloatType<Inst>(input) && sameType(weight) && sameType(bias);
}

// A bf16 or f16 input with binary32 parameters: the CPU's mixed-type
// layer_norm, whose output and input gradient have the input's type and
// whose statistics and parameter gradients stay binary32.
bool mixedLayerNorm(const at::Tensor &input, const std::optional<at::Tensor> &weight,
                    const std::optional<at::Tensor> &bias) {
  auto binary32 = [](const std::optional<at::Tensor> &t) {
    return !t || !t->defined() || isFloatNpu(*t);
  };
  const bool given = (weight && weight->defined()) || (bias && bias->defined());
  return isNpu(input) && at::isReducedFloatingType(input.scalar_type()) && given &&
         binary32(weight) && binary32(bias);
}

// A binary32 result of an instruction (statistics, a gradient summed over
// rows), possibly strided, as a new contiguous tensor of `type` and
// `shape`: copied for float32, else rounded once (CAST), as the CPU's
// kernels round their float accumulators.
at::Tensor inType(const at::Tensor &binary32, c10::ScalarType type, at::IntArrayRef shape) {
  at::Tensor result = emptyNpu(shape, type);
  copyInto(result.view(binary32.sizes()), binary32);
  return result;
}

// native_layer_norm (F.layer_norm) by LAYERNORM. Its mean and rstd are the
// two columns of the instruction's (rows, 2) binary32 stats, gathered into
// contiguous tensors of the input's type (the backward kernels read them as
// dense arrays) in torch's shape: the input's leading dims, then a 1 per
// normalised dim.
std::tuple<at::Tensor, at::Tensor, at::Tensor>
nativeLayerNorm(const at::Tensor &input, c10::SymIntArrayRef symNormalizedShape,
                const std::optional<at::Tensor> &weight, const std::optional<at::Tensor> &bias,
                double eps) {
  static OpCounter counter("native_layer_norm");
  const bool hasWeight = weight && weight->defined(), hasBias = bias && bias->defined();
  const at::IntArrayRef normalizedShape = C10_AS_INTARRAYREF_SLOW(symNormalizedShape);
  if (mixedLayerNorm(input, weight, bias)) {
    auto [out, mean, rstd] =
        nativeLayerNorm(input.to(at::kFloat), symNormalizedShape, weight, bias, eps);
    return {out.to(input.scalar_type()), mean, rstd};
  }
  if (!normLowerable<isa::inst::Layernorm>(input, weight, bias))
    return fallbackTo<NPU_ATEN_OP(native_layer_norm)>(input, normalizedShape, weight, bias, eps);
  const int64_t normDims = static_cast<int64_t>(normalizedShape.size());
  TORCH_CHECK(normDims >= 1 && normDims <= input.dim() &&
                  input.sizes().slice(input.dim() - normDims) == normalizedShape,
              "layer_norm: normalized_shape ", normalizedShape,
              " must match the trailing dims of the input ", input.sizes());
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(input) + (hasWeight ? " * weight" : "") +
                   (hasBias ? " + bias" : ""));
  const int64_t cols = c10::multiply_integers(normalizedShape);
  const int64_t rows = cols == 0 ? 0 : input.numel() / cols;
  std::vector<int64_t> statShape(input.sizes().begin(), input.sizes().end());
  for (int64_t d = input.dim() - normDims; d < input.dim(); ++d)
    statShape[d] = 1;
  const c10::ScalarType type = input.scalar_type();
  at::Tensor out = emptyNpuLike(input);
  if (rows == 0 || cols == 0)
    return {out, emptyNpu(statShape, type), emptyNpu(statShape, type)};
  const at::Tensor src = contiguousOnDevice(input);
  const at::Tensor w = hasWeight ? contiguousOnDevice(*weight) : at::Tensor();
  const at::Tensor b = hasBias ? contiguousOnDevice(*bias) : at::Tensor();
  const at::Tensor stats = emptyNpu({rows, 2}, at::kFloat);
  isa::inst::Layernorm norm;
  norm.dst = addressOf(out);
  norm.src = addressOf(src);
  norm.weight = hasWeight ? addressOf(w) : 0;
  norm.bias = hasBias ? addressOf(b) : 0;
  norm.stats = addressOf(stats);
  norm.rows = u32(rows, "rows");
  norm.cols = u32(cols, "columns");
  norm.eps = static_cast<float>(eps);
  norm.use_weight = hasWeight;
  norm.use_bias = hasBias;
  norm.write_stats = true;
  norm.dtype = *isaType(type);
  emit(norm);
  return {out, inType(stats.select(1, 0), type, statShape),
          inType(stats.select(1, 1), type, statShape)};
}

// The gradient of native_layer_norm: LAYERNORM_BWD gives the input and
// weight gradients from (mean, rstd) pairs, which it reads interleaved as
// LAYERNORM wrote them (mean and rstd arrive as separate tensors: they are
// stored back into the pairs); the bias gradient, sum of dy over the rows,
// is COL_SUM (the engine has no fifth input stream for a second accumulator).
// Both sums are binary32, rounded once into bf16 or f16 gradients.
std::tuple<at::Tensor, at::Tensor, at::Tensor>
nativeLayerNormBackward(const at::Tensor &gradOut, const at::Tensor &input,
                        c10::SymIntArrayRef symNormalizedShape, const at::Tensor &mean,
                        const at::Tensor &rstd, const std::optional<at::Tensor> &weight,
                        const std::optional<at::Tensor> &bias, std::array<bool, 3> outputMask) {
  static OpCounter counter("native_layer_norm_backward");
  const bool hasWeight = weight && weight->defined();
  const at::IntArrayRef normalizedShape = C10_AS_INTARRAYREF_SLOW(symNormalizedShape);
  if (mixedLayerNorm(input, weight, bias) && isNpu(gradOut)) {
    auto [dx, dweight, dbias] =
        nativeLayerNormBackward(gradOut.to(at::kFloat), input.to(at::kFloat), symNormalizedShape,
                                mean, rstd, weight, bias, outputMask);
    return {dx.defined() ? dx.to(input.scalar_type()) : dx, dweight, dbias};
  }
  // The bias is not read, but a bias on another device is the fallback's
  // device error, as for every other operand.
  const c10::ScalarType type = input.scalar_type();
  auto floatNpu = [](const at::Tensor &t) { return isNpu(t) && at::isFloatingType(t.scalar_type()); };
  if (!normLowerable<isa::inst::LayernormBwd>(input, weight, bias) || !isNpu(gradOut) ||
      gradOut.scalar_type() != type || !floatNpu(mean) || !floatNpu(rstd))
    return fallbackTo<NPU_ATEN_OP(native_layer_norm_backward)>(
        gradOut, input, normalizedShape, mean, rstd, weight, bias, outputMask);
  const int64_t normDims = static_cast<int64_t>(normalizedShape.size());
  TORCH_CHECK(normDims >= 1 && normDims <= input.dim() &&
                  input.sizes().slice(input.dim() - normDims) == normalizedShape &&
                  gradOut.sizes() == input.sizes(),
              "layer_norm backward: normalized_shape ", normalizedShape,
              " must match the trailing dims of the input ", input.sizes(), " and grad_out ",
              gradOut.sizes(), " the input's shape");
  const int64_t cols = c10::multiply_integers(normalizedShape);
  const int64_t rows = cols == 0 ? 0 : input.numel() / cols;
  TORCH_CHECK(mean.numel() == rows && rstd.numel() == rows, "layer_norm backward: mean (",
              mean.numel(), " elements) and rstd (", rstd.numel(), ") need one value per row (",
              rows, ")");
  OpScope scope(counter);
  if (logOps())
    scope.describe(shapeString(input) + (hasWeight ? " * weight" : ""));
  at::Tensor dx = outputMask[0] ? emptyNpuLike(input) : at::Tensor();
  at::Tensor dweight = outputMask[1] ? emptyNpu(normalizedShape, at::kFloat) : at::Tensor();
  at::Tensor dbias = outputMask[2] ? emptyNpu(normalizedShape, at::kFloat) : at::Tensor();
  auto sums = [&] {
    auto typed = [&](const at::Tensor &sum) {
      return sum.defined() && type != at::kFloat ? inType(sum, type, normalizedShape) : sum;
    };
    return std::tuple{dx, typed(dweight), typed(dbias)};
  };
  if (rows == 0 || cols == 0) {
    for (const at::Tensor &sum : {dweight, dbias})
      if (sum.defined())
        emitFillWords(addressOf(sum), 0, sum.numel());
    return sums();
  }
  const at::Tensor dy = contiguousOnDevice(gradOut);
  if (outputMask[0] || outputMask[1]) {
    const at::Tensor x = contiguousOnDevice(input);
    const at::Tensor w = hasWeight ? contiguousOnDevice(*weight) : at::Tensor();
    const at::Tensor stats = emptyNpu({rows, 2}, at::kFloat);
    copyInto(stats.select(1, 0), mean.reshape({rows}));
    copyInto(stats.select(1, 1), rstd.reshape({rows}));
    // dx is needed as the instruction's output even when only dweight is.
    const at::Tensor dxOut = dx.defined() ? dx : emptyNpuLike(input);
    isa::inst::LayernormBwd backward;
    backward.dx = addressOf(dxOut);
    backward.x = addressOf(x);
    backward.dy = addressOf(dy);
    backward.weight = hasWeight ? addressOf(w) : 0;
    backward.stats = addressOf(stats);
    backward.dweight = dweight.defined() ? addressOf(dweight) : 0;
    backward.rows = u32(rows, "rows");
    backward.cols = u32(cols, "columns");
    backward.use_weight = hasWeight;
    backward.write_dweight = dweight.defined();
    backward.dtype = *isaType(type);
    emit(backward);
  }
  if (dbias.defined()) {
    isa::inst::ColSum sum;
    sum.dst = addressOf(dbias);
    sum.src = addressOf(dy);
    sum.rows = u32(rows, "rows");
    sum.cols = u32(cols, "columns");
    sum.dtype = *isaType(type);
    emit(sum);
  }
  return sums();
}

// scaled_dot_product_attention on the NPU: its math decomposition, whose
// matmuls, softmax and elementwise ops are native here.
int64_t fusedSdpChoice(const at::Tensor &, const at::Tensor &, const at::Tensor &,
                       const std::optional<at::Tensor> &, double, bool, std::optional<double>,
                       bool) {
  return static_cast<int64_t>(at::SDPBackend::math);
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_softmax", softmax);
  m.impl("_softmax.out", softmaxOut);
  m.impl("_log_softmax", logSoftmax);
  m.impl("_log_softmax.out", logSoftmaxOut);
  m.impl("_softmax_backward_data", softmaxBackward);
  m.impl("_softmax_backward_data.out", softmaxBackwardOut);
  m.impl("_log_softmax_backward_data", logSoftmaxBackward);
  m.impl("_log_softmax_backward_data.out", logSoftmaxBackwardOut);
  m.impl("_safe_softmax", safeSoftmax);
  m.impl("_fused_rms_norm", fusedRmsNorm);
  m.impl("_fused_rms_norm_backward", fusedRmsNormBackward);
  m.impl("native_layer_norm", nativeLayerNorm);
  m.impl("native_layer_norm_backward", nativeLayerNormBackward);
  m.impl("embedding", embedding);
  m.impl("embedding_dense_backward", embeddingDenseBackward);
  m.impl("embedding_dense_backward.out", embeddingDenseBackwardOut);
  m.impl("_fused_sdp_choice", fusedSdpChoice);
}

} // namespace npu::bridge
