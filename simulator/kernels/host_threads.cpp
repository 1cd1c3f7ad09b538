#include "host_threads.h"

#include "npu/sim/memory_timing.h"

#include <immintrin.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace npu::sim::kernels {

namespace {

// Whether this thread is running a part: a part that asks for threads
// itself runs its parts in order (the pool is busy with its caller).
thread_local bool tInPart = false;

class Pool {
public:
  ~Pool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread &t : workers_)
      t.join();
  }

  // False when the pool is busy with another caller's parts.
  bool run(unsigned count, const std::function<void(unsigned)> &task) {
    std::unique_lock busy(busy_, std::try_to_lock);
    if (!busy)
      return false;
    {
      std::lock_guard lock(mutex_);
      while (workers_.size() + 1 < count)
        workers_.emplace_back([this, index = unsigned(workers_.size() + 1)] { work(index); });
      task_ = &task;
      count_ = count;
      pending_ = count - 1;
      mxcsr_ = _mm_getcsr();
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    std::exception_ptr error;
    tInPart = true;
    try {
      task(0);
    } catch (...) {
      error = std::current_exception();
    }
    tInPart = false;
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    if (!error)
      error = error_;
    if (error)
      std::rethrow_exception(error);
    return true;
  }

private:
  void work(unsigned index) {
    tInPart = true;
    uint64_t seen = 0;
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_)
        return;
      seen = generation_;
      if (index >= count_)
        continue;
      const std::function<void(unsigned)> &task = *task_;
      const uint32_t mxcsr = mxcsr_;
      lock.unlock();
      const uint32_t saved = _mm_getcsr();
      _mm_setcsr(mxcsr);
      std::exception_ptr error;
      try {
        task(index);
      } catch (...) {
        error = std::current_exception();
      }
      _mm_setcsr(saved);
      lock.lock();
      if (error && !error_)
        error_ = error;
      if (--pending_ == 0)
        done_.notify_one();
    }
  }

  std::mutex busy_, mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(unsigned)> *task_ = nullptr;
  unsigned count_ = 0, pending_ = 0;
  uint32_t mxcsr_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

} // namespace

unsigned issThreads() {
  // Parsed once; a bad value throws again on every call.
  static const auto parsed = []() -> std::pair<unsigned, std::string> {
    try {
      const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
      const uint64_t value = environmentNumber("NPU_ISS_THREADS", hardware, 1024);
      if (value == 0)
        return {0, "NPU_ISS_THREADS='0' is out of range (at least 1)"};
      return {static_cast<unsigned>(value), ""};
    } catch (const std::invalid_argument &e) {
      return {0, e.what()};
    }
  }();
  if (!parsed.first)
    throw std::invalid_argument(parsed.second);
  return parsed.first;
}

void runParts(unsigned count, const std::function<void(unsigned)> &part) {
  static Pool pool;
  if (count > 1 && !tInPart && pool.run(count, part))
    return;
  for (unsigned index = 0; index < count; ++index)
    part(index);
}

} // namespace npu::sim::kernels
