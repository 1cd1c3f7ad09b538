// A multi-kernel program driven through the C API is captured, then
// replayed by npu-sim, whose check regions must all match.
#include "npu_runtime.h"

#include "npu/rt/runtime.h"

#include "npu/bin/object.h"
#include "npu/isa/isa.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <vector>

namespace {

using namespace npu;

TEST(CaptureTest, CapturedProgramReplaysOnNpuSim) {
  const std::filesystem::path trace = std::filesystem::temp_directory_path() /
                                      ("capture_test_" + std::to_string(getpid()) + ".npubin");
  ASSERT_EQ(npuInit("iss"), npuSuccess) << npuGetLastErrorMessage();
  // Memory written before the capture begins must end up in the trace too.
  npuDevicePtr weights;
  const uint32_t m = 8, k = 16, n = 12;
  std::vector<float> w(k * n);
  std::iota(w.begin(), w.end(), -50.0f);
  ASSERT_EQ(npuMalloc(&weights, w.size() * 4), npuSuccess);
  ASSERT_EQ(npuMemcpyHtoD(weights, w.data(), w.size() * 4), npuSuccess);

  ASSERT_EQ(npuCaptureBegin(trace.c_str()), npuSuccess) << npuGetLastErrorMessage();
  npuDevicePtr x, y, z;
  ASSERT_EQ(npuMalloc(&x, m * k * 4), npuSuccess);
  ASSERT_EQ(npuMalloc(&y, m * n * 4), npuSuccess);
  ASSERT_EQ(npuMalloc(&z, m * n * 4), npuSuccess);
  std::vector<float> input(m * k);
  for (size_t i = 0; i < input.size(); ++i)
    input[i] = static_cast<float>(i % 7) * 0.5f - 1.0f;
  ASSERT_EQ(npuMemcpyHtoD(x, input.data(), input.size() * 4), npuSuccess);
  ASSERT_EQ(npuMemset(z, 0, m * n * 4), npuSuccess);

  isa::inst::Matmul mm;
  mm.c = y;
  mm.a = x;
  mm.b = weights;
  mm.m = m;
  mm.k = k;
  mm.n = n;
  isa::inst::Relu relu;
  relu.dst = z;
  relu.src = y;
  relu.n = m * n;
  isa::inst::Adds bias;
  bias.dst = z;
  bias.a = z;
  bias.s = 0.5f;
  bias.n = m * n;
  const isa::Packet program[] = {isa::packetOf(mm), isa::packetOf(relu), isa::packetOf(bias)};
  ASSERT_EQ(npuSubmit(program, 3), npuSuccess);
  std::vector<float> out(m * n);
  ASSERT_EQ(npuMemcpyDtoH(out.data(), z, out.size() * 4), npuSuccess);
  ASSERT_EQ(npuMemcpyDtoH(out.data(), y, out.size() * 4), npuSuccess);
  ASSERT_EQ(npuCaptureEnd(), npuSuccess) << npuGetLastErrorMessage();
  ASSERT_EQ(npuShutdown(), npuSuccess);

  bin::Object object = bin::readFile(trace.string());
  EXPECT_FALSE(object.checks.empty()); // y and z, merged if adjacent
  EXPECT_GE(object.text.size(), 5u);   // staged copies, fill, the program, halt
  const std::string command = std::string(NPU_SIM_PATH) + " --quiet " + trace.string();
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  std::filesystem::remove(trace);
}

TEST(CaptureTest, NpuTraceEnvironmentVariableCapturesAWholeRuntimeLifetime) {
  const std::filesystem::path trace = std::filesystem::temp_directory_path() /
                                      ("env_trace_" + std::to_string(getpid()) + ".npubin");
  ::setenv("NPU_TRACE", trace.c_str(), 1);
  {
    rt::Runtime runtime;
    EXPECT_TRUE(runtime.capturing());
    const uint64_t a = runtime.malloc(256);
    std::vector<float> x(64, 2.0f), y(64);
    runtime.memcpyHostToDevice(a, x.data(), 256);
    isa::inst::Muls square;
    square.dst = a;
    square.a = a;
    square.s = 3.0f;
    square.n = 64;
    const isa::Packet p[] = {isa::packetOf(square)};
    runtime.submit(p);
    runtime.memcpyDeviceToHost(y.data(), a, 256);
    EXPECT_EQ(y[0], 6.0f);
  } // the destructor writes the trace
  ::unsetenv("NPU_TRACE");
  ASSERT_TRUE(std::filesystem::exists(trace));
  const std::string command = std::string(NPU_SIM_PATH) + " --quiet " + trace.string();
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  std::filesystem::remove(trace);
}

} // namespace
