#include "npu/arith/functions.h"

#include "host_kernels.h"
#include "npu/arith/float_env.h"
#include "npu/arith/provider.h"

#include <bit>
#include <stdexcept>
#include <string>

namespace npu::arith {

bool hostHasAvx2Fma() {
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported;
}

bool hostHasAvx512() {
  static const bool supported =
      hostHasAvx2Fma() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  return supported;
}

Implementation fastestImplementation() {
  static const Implementation fastest = hostHasAvx512()    ? Implementation::Avx512
                                        : hostHasAvx2Fma() ? Implementation::Avx2
                                                           : Implementation::Reference;
  return fastest;
}

const char *implementationName(Implementation impl) {
  switch (impl) {
  case Implementation::Reference: return "reference";
  case Implementation::HostScalar: return "host-scalar";
  case Implementation::Avx2: return "avx2";
  case Implementation::Avx512: return "avx512";
  }
  return "?";
}

namespace {

void checkArity(Program program, size_t given) {
  const microcode::ProgramInfo &info = microcode::kPrograms[static_cast<size_t>(program)];
  if (given != info.numInputs)
    throw std::invalid_argument(std::string("micro-program ") + info.name + " takes " +
                                std::to_string(info.numInputs) + " inputs, got " +
                                std::to_string(given));
}

void checkHost(Implementation impl) {
  if (impl == Implementation::Avx512 && !hostHasAvx512())
    throw std::runtime_error("the avx512 implementation needs a CPU with AVX-512 F and DQ");
  if (impl != Implementation::Reference && !hostHasAvx2Fma())
    throw std::runtime_error(std::string("the ") + implementationName(impl) +
                             " implementation needs a CPU with AVX2 and FMA");
}

using detail::kMaxInputs;

} // namespace

void apply(Program program, std::span<const Operand> inputs, float *dst, size_t n,
           Implementation impl) {
  checkArity(program, inputs.size());
  checkHost(impl);
  if (impl == Implementation::Reference) {
    uint32_t v[kMaxInputs] = {};
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < inputs.size(); ++k)
        v[k] = std::bit_cast<uint32_t>(inputs[k].data[inputs[k].broadcast ? 0 : i]);
      dst[i] = std::bit_cast<float>(microcode::run<ReferenceProvider>(program, v));
    }
    return;
  }
  FloatEnvGuard env;
  if (impl == Implementation::Avx512)
    detail::applyAvx512(program, inputs, dst, n);
  else if (impl == Implementation::Avx2)
    detail::applyAvx2(program, inputs, dst, n);
  else
    detail::applyHostScalar(program, inputs, dst, n);
}

uint32_t evaluate(Program program, std::span<const uint32_t> inputs, Implementation impl) {
  checkArity(program, inputs.size());
  checkHost(impl);
  switch (impl) {
  case Implementation::Reference: {
    uint32_t v[kMaxInputs] = {};
    for (size_t k = 0; k < inputs.size(); ++k)
      v[k] = inputs[k];
    return microcode::run<ReferenceProvider>(program, v);
  }
  case Implementation::HostScalar: {
    FloatEnvGuard env;
    return detail::evaluateHostScalar(program, inputs);
  }
  case Implementation::Avx2: {
    FloatEnvGuard env;
    return detail::evaluateAvx2(program, inputs);
  }
  case Implementation::Avx512: {
    FloatEnvGuard env;
    return detail::evaluateAvx512(program, inputs);
  }
  }
  return 0;
}

} // namespace npu::arith
