#include "backends.h"

#include <map>
#include <mutex>
#include <stdexcept>

namespace npu::rt {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, BackendFactory> factories;
  Registry() {
    factories["iss"] = makeIssBackend;
#ifdef NPU_HAVE_RTL
    factories["rtl"] = makeRtlBackend;
    factories["cosim"] = makeCosimBackend;
#endif
#ifdef NPU_HAVE_REMOTE
    factories["remote"] = makeRemoteBackend;
#endif
  }
};

Registry &registry() {
  static Registry r;
  return r;
}

} // namespace

void registerBackend(std::string name, BackendFactory factory) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.factories[std::move(name)] = std::move(factory);
}

std::vector<std::string> availableBackends() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const auto &[name, factory] : r.factories)
    names.push_back(name);
  return names;
}

std::unique_ptr<Backend> createBackend(std::string_view name, const BackendOptions &options) {
  BackendFactory factory;
  {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.factories.find(std::string(name));
    if (it != r.factories.end())
      factory = it->second;
  }
  if (!factory) {
    std::string available;
    for (const std::string &n : availableBackends())
      available += (available.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown backend '" + std::string(name) +
                                "' (available: " + available + ")");
  }
  return factory(options);
}

} // namespace npu::rt
