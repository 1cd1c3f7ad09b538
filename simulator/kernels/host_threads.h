// The host threads the ISS splits a large packet over: a GEMM's output
// bands, an elementwise packet's ranges, a row operation's rows. Each part
// writes outputs no other part touches and computes every element as one
// thread would, so the results are the same bits for any thread count.
#pragma once

#include <functional>

namespace npu::sim::kernels {

// The host threads a large packet may use: NPU_ISS_THREADS (a positive
// integer), else the host's hardware threads. Read once; a bad value is a
// std::invalid_argument naming the variable and the value, on every call.
unsigned issThreads();

// Runs part(0), ..., part(count - 1): part(0) on the caller, the others on
// a persistent pool of workers (started once, added when a larger count
// first asks for them), each under the caller's MXCSR; returns when all
// have, rethrowing the first exception one threw. One caller at a time: a
// second caller (another ISS's thread, or a part itself) runs its parts on
// its own thread, in order.
void runParts(unsigned count, const std::function<void(unsigned)> &part);

} // namespace npu::sim::kernels
