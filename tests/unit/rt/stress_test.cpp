// Several host threads allocating, copying and submitting at once (as
// PyTorch's autograd thread does); run under ThreadSanitizer in CI.
#include "npu/rt/runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

namespace {

using namespace npu;

TEST(RuntimeStressTest, FourThreadsTenThousandMixedOperations) {
  rt::Runtime runtime;
  const rt::MemoryStats baseline = runtime.memoryStats();
  constexpr int kThreads = 4, kOps = 10000;
  std::atomic<int> failures{0};
  auto worker = [&](int seed) {
    std::mt19937 rng(seed);
    std::vector<std::pair<uint64_t, uint32_t>> live; // address, words
    for (int op = 0; op < kOps; ++op) {
      const unsigned choice = rng() % 4;
      if (choice == 0 || live.empty()) {
        const uint32_t words = 1 + rng() % 256;
        live.emplace_back(runtime.malloc(words * 4), words);
      } else if (choice == 1) {
        const size_t i = rng() % live.size();
        runtime.free(live[i].first);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (choice == 2) {
        auto [address, words] = live[rng() % live.size()];
        std::vector<uint32_t> in(words), out(words);
        for (uint32_t &w : in)
          w = static_cast<uint32_t>(rng());
        runtime.memcpyHostToDevice(address, in.data(), words * 4);
        runtime.memcpyDeviceToHost(out.data(), address, words * 4);
        if (in != out)
          failures++;
      } else {
        auto [address, words] = live[rng() % live.size()];
        const uint32_t value = static_cast<uint32_t>(rng());
        isa::inst::Fill fill;
        fill.dst = address;
        fill.value = value;
        fill.count = words;
        isa::Packet packet;
        fill.toPacket(packet.data());
        runtime.submit({&packet, 1});
        runtime.synchronize();
        uint32_t last = 0;
        runtime.memcpyDeviceToHost(&last, address + (words - 1) * 4, 4);
        if (last != value)
          failures++;
      }
    }
    for (auto [address, words] : live)
      runtime.free(address);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back(worker, 100 + t);
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures, 0);
  const rt::MemoryStats end = runtime.memoryStats();
  EXPECT_EQ(end.allocatedBytes, baseline.allocatedBytes);
  EXPECT_EQ(end.liveAllocations, baseline.liveAllocations);
  EXPECT_EQ(end.largestFreeBlock, baseline.largestFreeBlock);
  EXPECT_FALSE(runtime.lastFault());
}

} // namespace
