// What the op files share: the CPU fallback, copies, and helpers for the
// dtypes and scalars the lowering accepts.
#pragma once

#include "Device.h"
#include "Layout.h"
#include "Types.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/result_type.h>
#include <c10/core/DefaultDtype.h>

#include <bitset>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

namespace npu::bridge {

// The boxed CPU fallback (copy to CPU, run, copy back), for every op without
// a native kernel and for native kernels handed operands they cannot lower.
void cpuFallback(const c10::OperatorHandle &op, torch::jit::Stack *stack);

// The operator type of an ATen op (name and overload), as ATen/Operators.h
// names it, without including every operator's header.
#define NPU_ATEN_OP(name) at::_ops::name
#define NPU_ATEN_OP2(name, overload) at::_ops::name##_##overload

// The name of the ATen op `Op` (an NPU_ATEN_OP...) without its namespace and
// overload ("add" for add.Tensor, "erf_"): the name of the counters of the
// functional and in-place kernels.
template <class Op> constexpr const char *baseName() {
  constexpr std::string_view kNamespace = "aten::";
  static_assert(std::string_view(Op::name).starts_with(kNamespace), "not an aten op");
  return Op::name + kNamespace.size();
}
// Its name with the overload ("add.Tensor", "erf", "erf.out"): what a kernel
// registers as, and the name of the counters of the out= kernels.
template <class Op> const char *operatorName() {
  static const std::string name = std::string(baseName<Op>()) +
                                  (*Op::overload_name ? std::string(".") + Op::overload_name : "");
  return name.c_str();
}

// Records that the instruction Inst computes the ATen ops AtenOps (for
// instructionOps()), from a registration line's registerIn.
template <class Inst, class... AtenOps> void recordInstructionOps() {
  (recordInstructionOp(operatorName<AtenOps>(), isa::info(Inst::kOpcode).mnemonic), ...);
}

// Raises PyTorch's device error ("Expected all tensors to be on the same
// device, but got <argument> is on cpu, different from other tensors on
// npu:0 (when checking argument in method <op>)") unless t is undefined, on
// the npu, or a 0-dim CPU tensor (a scalar, which PyTorch lets mix with
// device tensors). The CPU fallback checks every op's tensors so; kernels
// with no fallback call it themselves.
void checkOnNpu(const at::Tensor &t, const std::string &op, const std::string &argument);

// Runs an op whose npu operands include bf16/f16 tensors on binary32 copies
// made on the device, rounding its floating results once back to the
// operands' type (Widening.cpp); false, having changed nothing, for an op it
// does not apply to (views, a dtype argument of a reduced type, no
// reduced-precision operand).
bool runWidened(const c10::OperatorHandle &op, const std::string &name, torch::jit::Stack *stack);

// Says why a native kernel sends a call to the CPU fallback (an argument it
// cannot lower): with NPU_STRICT=1 an error naming the op and the reason,
// otherwise a warning once per op and reason. The fallback itself follows.
void explainFallback(const std::string &op, const std::string &reason);

// Runs the CPU fallback of the op `Op` (an NPU_ATEN_OP...) from a native kernel.
template <class Op, class... Args> decltype(auto) fallbackTo(Args &&...args) {
  return at::native::call_fallback_fn<&cpuFallback, Op>::call(std::forward<Args>(args)...);
}

// dst <- src with broadcasting and dtype conversion, for any devices with
// at least one npu side (the body of _copy_from).
void copyInto(const at::Tensor &dst, const at::Tensor &src);
// copyInto as a native op of its own (counted and submitted as _copy_from),
// without copy_'s overlap checks: for out= kernels that write a computed
// result into out where PyTorch's CPU kernel writes it unchecked.
void copyResult(const at::Tensor &dst, const at::Tensor &src);

// Writes one value (the low itemsize bytes of bits) into every element of
// a contiguous buffer: FILL when the buffer is whole 32-bit words of one
// pattern, else COPY_STRIDED broadcasting the value staged on the device.
void fillContiguous(uint64_t dst, int64_t numel, size_t itemsize, uint64_t bits);
// The bytes of `value` converted to `dtype` (fillContiguous's `bits`).
uint64_t scalarBits(const at::Scalar &value, c10::ScalarType dtype);

// A 0-dim npu tensor of `dtype` holding `value` (converted as
// at::scalar_tensor converts it), written by FILL packets: a scalar operand
// for instructions without an immediate form of the type.
at::Tensor deviceScalar(const at::Scalar &value, c10::ScalarType dtype);

// The dims a reduction over `dim` reduces (none or empty: all of them), and
// the shape of its result (ReductionOps.cpp).
std::bitset<64> reductionDims(const at::Tensor &self, at::OptionalIntArrayRef dim);
std::vector<int64_t> reducedShape(const at::Tensor &self, const std::bitset<64> &dims,
                                  bool keepdim);

// The sum of an integer or bool npu tensor over `dim` in int64 (or dtype),
// exact, by a tree of ADD packets (IntegerReductionOps.cpp); none when ADD
// does not take the type.
std::optional<at::Tensor> integerSum(const at::Tensor &self, at::OptionalIntArrayRef dim,
                                     bool keepdim, std::optional<c10::ScalarType> dtype);
// The maximum (or with `min` the minimum) of the integer npu tensor self
// over `dim` (all dims when none) with keepdim, exact, by a tree of MAX
// (MIN) packets; self's type must be one MAX takes.
at::Tensor integerExtremaKeepdim(const at::Tensor &self, std::optional<int64_t> dim, bool min);

// A CPU tensor with the values of the npu tensor src (waits for the device).
at::Tensor download(const at::Tensor &src);
// dst (npu) <- host (a CPU tensor of dst's dtype and shape).
void upload(const at::Tensor &dst, const at::Tensor &host);

// Grows or shrinks a storage on the device, keeping its contents.
void resizeStorageBytes(c10::StorageImpl *storage, size_t bytes);

// EMBEDDING: row t of the count x width output at dst = row indices[t] of
// the rows x width table. EMBEDDING_BWD: row indices[t] of the table +=
// row t of dy, in increasing t, skipping paddingIdx (-1: none). indices is
// a contiguous npu int32 or int64 tensor of count elements (count > 0).
void emitEmbedding(uint64_t dst, uint64_t table, const at::Tensor &indices, int64_t width,
                   int64_t rows);
void emitEmbeddingBackward(uint64_t table, uint64_t dy, const at::Tensor &indices, int64_t width,
                           int64_t rows, int64_t paddingIdx = -1);

// GATHER: dst [outer, count, inner] from src [outer, n, inner] (contiguous,
// of one ISA type) along the middle dim, by index (a contiguous npu int32 or
// int64 tensor: [outer, count, inner] for mode full, [count] for shared);
// wrap: indices in [-n, n), a negative one counting from the end.
void emitIndexGather(const at::Tensor &dst, const at::Tensor &src, const at::Tensor &index,
                     int64_t outer, int64_t n, int64_t count, int64_t inner, isa::GatherMode mode,
                     bool wrap);

// dst (contiguous, word-aligned) = ~self by NOT, of a bool (logical not of
// the b8 mask) or an integer npu tensor of dst's shape and type
// (LogicalOps.cpp).
void emitNot(const at::Tensor &dst, const at::Tensor &self);

// A float32 npu tensor, or a CPU scalar (a Python number or 0-dim tensor)
// that the scalar instruction forms can take.
inline bool isFloatNpu(const at::Tensor &t) {
  return t.device().type() == c10::DeviceType::PrivateUse1 && t.scalar_type() == at::kFloat;
}
// A float npu tensor of a type Inst takes: f32, and bf16 and f16 where the
// instruction computes them in binary32 and rounds once on store, as the
// CPU's kernels of these types do.
template <class Inst> bool ofAcceptedFloatType(const at::Tensor &t) {
  return t.device().type() == c10::DeviceType::PrivateUse1 &&
         at::isFloatingType(t.scalar_type()) && accepts<Inst>(t.scalar_type());
}
// An npu tensor of like's type (an out= tensor a result of like's type is
// stored into directly).
inline bool sameTypeNpu(const at::Tensor &t, const at::Tensor &like) {
  return t.device().type() == c10::DeviceType::PrivateUse1 && t.scalar_type() == like.scalar_type();
}
inline bool isCpuScalar(const at::Tensor &t) {
  return t.device().is_cpu() && t.dim() == 0;
}

// The generator of torch.npu: a CPU Mersenne-Twister whose device is the NPU.
// Random fills are drawn on the host from it and copied to the device.
class NpuGeneratorImpl : public at::CPUGeneratorImpl {
public:
  explicit NpuGeneratorImpl(c10::DeviceIndex index = 0);
  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }
};
const at::Generator &defaultGenerator();

// --- Elementwise lowering (ElementwiseOps.cpp) ---------------------------------
//
// The emitters are templates on the typed instruction (isa::inst::Mul, ...):
// the instruction is the operation, there is no enum to map to it.

// The scalar instructions of the binary instruction Inst, generated from the
// .td's ScalarForm/ReverseScalarForm: `a op s` (Right) and `s op a` (Left),
// the same instruction when op commutes.
using isa::inst::ScalarForms;

// Whether Inst's second operand is scaled (a op alpha*b): ADD and SUB.
template <class Inst> inline constexpr bool kScalesOperand = requires(Inst inst) {
  inst.alpha;
};

// Whether Inst has scalar forms (POW has none: its scalar form is the
// unary POWS).
template <class Inst> inline constexpr bool kHasScalarForms = requires {
  typename ScalarForms<Inst>::Right;
};

// Whether `a op alpha*b` equals `b op alpha*a`.
template <class Inst> bool commutes(float alpha) {
  if constexpr (kHasScalarForms<Inst>)
    return std::is_same_v<typename ScalarForms<Inst>::Right, typename ScalarForms<Inst>::Left> &&
           (!kScalesOperand<Inst> || alpha == 1.0f);
  else
    return false;
}

// How many f32 operands (scalars such as `s` or `p`) Inst has: the emitters
// check it, so that an instruction with an operand they do not set is
// refused at compile time rather than run with the operand's default.
template <class Inst>
inline constexpr size_t kF32Operands = std::tuple_size_v<decltype(Inst{}.f32Operands())>;

// One packet of the binary instruction Inst: rows x cols elements of a and
// b of type `type`, b broadcast as bcast; alpha only where Inst has it.
template <class Inst>
void emitBinaryPacket(uint64_t dst, uint64_t a, uint64_t b, int64_t rows, int64_t cols,
                      isa::Broadcast bcast, float alpha, isa::DType type) {
  static_assert(kF32Operands<Inst> == (kScalesOperand<Inst> ? 1 : 0),
                "a binary instruction's only f32 operand is alpha");
  Inst inst;
  inst.dst = dst;
  inst.a = a;
  inst.b = b;
  inst.rows = u32(rows, "rows");
  inst.cols = u32(cols, "columns");
  inst.bcast = bcast;
  inst.dtype = type;
  if constexpr (kScalesOperand<Inst>)
    inst.alpha = alpha;
  emit(inst);
}

// Whether a and b can be operands of a device op: npu tensors of an ISA
// type or CPU scalars, at least one of them on the npu.
bool deviceOperands(const at::Tensor &a, const at::Tensor &b);
// Whether the npu tensors among a and b are of `type` or convert to it on
// the device (CAST).
bool convertibleTo(c10::ScalarType type, const at::Tensor &a, const at::Tensor &b);

// Whether a bf16/f16 `a op alpha*b` with a CPU scalar side is one of Inst's
// scalar forms, which take the float types (the tensor forms take f32
// only); alpha only on the right, where it scales the scalar.
template <class Inst>
bool scalarFormTakes(c10::ScalarType type, const at::Tensor &a, const at::Tensor &b, float alpha) {
  if constexpr (kHasScalarForms<Inst>) {
    return c10::isReducedFloatingType(type) &&
           ((isCpuScalar(b) && accepts<typename ScalarForms<Inst>::Right>(type)) ||
            (isCpuScalar(a) && alpha == 1.0f && accepts<typename ScalarForms<Inst>::Left>(type)));
  } else {
    return false;
  }
}

// The type in which the binary instruction Inst computes `a op alpha*b` on
// the device: PyTorch's result type (true division of integers gives the
// default float type), if Inst accepts it and every operand is a CPU
// scalar or an npu tensor that CAST converts to it; else none (the op falls
// back). Integer types take an integer alpha of int32 range (the ISA's
// integer ADD/SUB truncate alpha to an int32), exact as a binary32.
template <class Inst>
std::optional<c10::ScalarType> binaryType(const at::Tensor &a, const at::Tensor &b,
                                          float alpha = 1.0f) {
  if (!deviceOperands(a, b))
    return std::nullopt;
  c10::ScalarType type = at::result_type(a, b);
  if (std::is_same_v<Inst, isa::inst::Div> && c10::isIntegralType(type, /*includeBool=*/true))
    type = c10::typeMetaToScalarType(c10::get_default_dtype());
  if (!(accepts<Inst>(type) || scalarFormTakes<Inst>(type, a, b, alpha)) ||
      !convertibleTo(type, a, b) ||
      (c10::isIntegralType(type, true) &&
       (alpha != std::trunc(alpha) || std::abs(alpha) > float(1 << 24))))
    return std::nullopt;
  return type;
}

// An operand of a binary instruction computing in `type`: an npu tensor of
// another type converted on the device; a CPU scalar, for a type other than
// float32 (whose scalar instruction forms take a binary32 immediate), as a
// device scalar the packet broadcasts.
at::Tensor binaryOperand(const at::Tensor &t, c10::ScalarType type);

using BinaryPacketEmitter = void (*)(uint64_t dst, uint64_t a, uint64_t b, int64_t rows,
                                     int64_t cols, isa::Broadcast bcast, float alpha,
                                     isa::DType type);
// emitBinary with the instruction's packet emitter and whether its operands
// may be swapped (ElementwiseOps.cpp).
void emitBinaryWith(BinaryPacketEmitter emitPacket, bool operandsSwap, const at::Tensor &dst,
                    const at::Tensor &a, const at::Tensor &b, float alpha);

// dst (contiguous, the broadcast shape) = a op alpha*b by the binary
// instruction Inst, for npu tensors a and b of dst's dtype broadcastable to
// dst; alpha only where Inst scales its operand (ADD, SUB).
template <class Inst>
void emitBinary(const at::Tensor &dst, const at::Tensor &a, const at::Tensor &b,
                float alpha = 1.0f) {
  emitBinaryWith(&emitBinaryPacket<Inst>, commutes<Inst>(alpha), dst, a, b, alpha);
}

// n contiguous elements of the float type `type`: dst = a op s by the
// scalar instruction Inst (ADDS, RSUBS, ...), s a binary32.
template <class Inst>
void emitScalar(uint64_t dst, uint64_t a, float s, int64_t n, isa::DType type = isa::DType::f32) {
  static_assert(kF32Operands<Inst> == 1, "a scalar instruction's only f32 operand is s");
  if (n == 0)
    return;
  Inst inst;
  inst.dst = dst;
  inst.a = a;
  inst.s = s;
  inst.n = u32(n, "element count");
  inst.dtype = type;
  emit(inst);
}

// n contiguous elements of `type`: dst = f(src) by the unary instruction
// Inst.
template <class Inst>
void emitUnary(uint64_t dst, uint64_t src, int64_t n, isa::DType type = isa::DType::f32) {
  static_assert(kF32Operands<Inst> == 0, "a unary instruction with f32 operands needs its own "
                                         "emitter (as POWS has)");
  if (n == 0)
    return;
  Inst inst;
  inst.dst = dst;
  inst.src = src;
  inst.n = u32(n, "element count");
  inst.dtype = type;
  emit(inst);
}

} // namespace npu::bridge
