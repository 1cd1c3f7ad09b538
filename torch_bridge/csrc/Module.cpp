// npu_bridge._C: what torch.npu (npu_bridge/device.py) needs from C++.
#include "Allocator.h"
#include "Device.h"
#include "GraphCapture.h"
#include "Ops.h"

#include <torch/csrc/Generator.h>
#include <torch/csrc/utils/pybind.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <unistd.h>

namespace py = pybind11;

namespace npu::bridge {

namespace {

py::dict memoryStats() {
  const DeviceAllocator::Stats a = allocator().stats();
  const rt::MemoryStats r = runtime().memoryStats();
  py::dict stats;
  stats["allocated_bytes.all.current"] = a.allocatedBytes.current;
  stats["allocated_bytes.all.peak"] = a.allocatedBytes.peak;
  stats["requested_bytes.all.current"] = a.requestedBytes.current;
  stats["reserved_bytes.all.current"] = a.reservedBytes.current;
  stats["reserved_bytes.all.peak"] = a.reservedBytes.peak;
  stats["active.all.current"] = a.liveBlocks.current;
  stats["cached_blocks"] = a.cachedBlocks;
  stats["num_alloc"] = a.allocations;
  stats["num_cache_hits"] = a.cacheHits;
  stats["num_free"] = a.frees;
  stats["num_ooms"] = a.ooms;
  stats["device.allocated_bytes"] = r.allocatedBytes;
  stats["device.peak_allocated_bytes"] = r.peakAllocatedBytes;
  stats["device.capacity_bytes"] = r.reservedBytes;
  stats["device.largest_free_block"] = r.largestFreeBlock;
  stats["device.live_allocations"] = r.liveAllocations;
  return stats;
}

py::dict deviceStats() {
  synchronize();
  py::dict stats;
  stats["cycles"] = deviceCall([] { return runtime().deviceCycles(); });
  stats["packets"] = packetCount();
  return stats;
}

// The runtime writes a trace when the capture ends; a path it cannot write
// must fail here, before the work to be captured runs, not after it.
void checkTracePath(const std::string &path) {
  namespace fs = std::filesystem;
  TORCH_CHECK(!path.empty(), "torch.npu.capture: the trace path is empty");
  const fs::path trace(path);
  const fs::path directory = trace.has_parent_path() ? trace.parent_path() : fs::path(".");
  std::error_code error;
  const fs::file_status status = fs::status(directory, error);
  TORCH_CHECK(fs::exists(status), "torch.npu.capture: cannot write the trace '", path,
              "': directory '", directory.string(), "' does not exist");
  TORCH_CHECK(fs::is_directory(status), "torch.npu.capture: cannot write the trace '", path, "': '",
              directory.string(), "' is not a directory");
  TORCH_CHECK(access(directory.c_str(), W_OK) == 0, "torch.npu.capture: cannot write the trace '",
              path, "' into directory '", directory.string(), "': ", std::strerror(errno));
  TORCH_CHECK(!fs::is_directory(fs::status(trace, error)), "torch.npu.capture: the trace path '",
              path, "' is a directory");
}

void beginCapture(const std::string &path) {
  checkTracePath(path);
  flush();
  deviceCall([&] { runtime().beginCapture(path); });
}

void endCapture() {
  flush();
  deviceCall([] { runtime().endCapture(); });
}

// At interpreter exit: a capture still running is written out. A runtime
// that never started (the device was not used, or could not start, e.g. an
// unknown NPU_BACKEND) is not started now.
void shutdown() {
  rt::Runtime *started = startedRuntime();
  if (!started)
    return;
  flush();
  if (started->capturing())
    deviceCall([started] { started->endCapture(); });
}

} // namespace

} // namespace npu::bridge

PYBIND11_MODULE(_C, m) {
  using namespace npu::bridge;
  m.doc() = "The NPU's PyTorch PrivateUse1 backend (use torch.npu after import npu_bridge)";
  // PyTorch's errors as Python exceptions with their message, not the C++ trace.
  py::register_local_exception_translator([](std::exception_ptr error) {
    try {
      std::rethrow_exception(error);
    } catch (const c10::Error &e) {
      PyErr_SetString(PyExc_RuntimeError, e.what_without_backtrace());
    }
  });
  m.def("_backend_name", [] { return backendName(); });
  m.def("_set_backend", &setBackend, py::arg("name"));
  m.def("_synchronize", [] { synchronize(); });
  m.def("_memory_stats", &memoryStats);
  m.def("_device_stats", &deviceStats);
  m.def("_reset_peak_memory_stats", [] {
    allocator().resetPeak();
    runtime().resetPeakMemoryStats();
  });
  m.def("_empty_cache", [] { allocator().releaseCache(); });
  m.def("_mem_get_info", [] { return allocator().getMemoryInfo(0); });
  m.def("_packet_count", &packetCount);
  m.def("_submission_count", &submissionCount);
  m.def("_op_stats", &nativeOpStats);
  m.def("_fallback_stats", &fallbackStats);
  m.def("_widened_stats", &widenedStats);
  m.def("_instruction_ops", &instructionOps);
  m.def("_reset_stats", &resetStats);
  m.def("_debug_level", &debugLevel);
  m.def("_set_debug_level", &setDebugLevel, py::arg("level"));
  m.def("_strict", &strictMode);
  m.def("_set_strict", &setStrictMode, py::arg("strict"));
  m.def("_host_random", &hostRandom);
  m.def("_set_host_random", &setHostRandom, py::arg("host"));
  m.def("_capture_begin", &beginCapture, py::arg("path"));
  m.def("_capture_end", &endCapture);
  m.def("_capturing", [] { return runtime().capturing(); });
  m.def("_shutdown", &shutdown);
  py::class_<GraphStream>(m, "_GraphStream")
      .def("bind", &GraphStream::bind, py::arg("inputs"), py::arg("outputs"))
      .def("replay", &GraphStream::replay, py::arg("inputs"), py::arg("outputs"))
      .def("owns", &GraphStream::owns, py::arg("address"))
      .def_property_readonly("packets", &GraphStream::packetCount)
      .def_property_readonly("patches", &GraphStream::patchCount)
      .def_property_readonly("pool_bytes", &GraphStream::poolBytes)
      .def_property_readonly("explicit_flushes", &GraphStream::explicitFlushes);
  m.def("_graph_capture_begin", &beginGraphCapture);
  m.def("_graph_capture_counters", &graphCaptureCounters);
  m.def("_graph_capture_end", &endGraphCapture);
  m.def("_default_generator", [] {
    return py::reinterpret_steal<py::object>(THPGenerator_initDefaultGenerator(defaultGenerator()));
  });
}
