// npu._npu: the assembler, the runtime and the ISA tables for the Python
// package `npu` (python/npu/__init__.py wraps them; docs/python.md). Values
// cross as plain dicts, lists and bytes; the package gives them their
// classes and exceptions.
#include "npu/asm/assembler.h"
#include "npu/bin/check.h"
#include "npu/bin/object.h"
#include "npu/isa/isa.h"
#include "npu/rt/runtime.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace nb = nanobind;
using namespace npu;

namespace {

nb::bytes toBytes(const std::vector<uint8_t> &bytes) {
  return nb::bytes(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

std::vector<uint8_t> fromBytes(const nb::bytes &bytes) {
  const auto *data = static_cast<const uint8_t *>(bytes.data());
  return {data, data + bytes.size()};
}

// What the package's Program holds: the container and its parts.
nb::dict describeObject(const bin::Object &object) {
  nb::dict out;
  out["container"] = toBytes(bin::write(object));
  out["packets"] = object.text.size();
  nb::list symbols, data, checks, metadata;
  for (const bin::Symbol &s : object.symbols)
    symbols.append(nb::make_tuple(s.name, s.kind == bin::Symbol::Kind::Packet ? "packet" : "address",
                                  s.value));
  for (const bin::DataSegment &d : object.data)
    data.append(nb::make_tuple(d.address, d.bytes.size()));
  for (const bin::CheckRegion &c : object.checks)
    checks.append(nb::make_tuple(c.address, c.expected.size(),
                                 c.kind == bin::CheckRegion::Kind::F32Ulp
                                     ? nb::object(nb::int_(c.ulpTolerance))
                                     : nb::none()));
  for (const auto &[key, value] : object.metadata)
    metadata.append(nb::make_tuple(key, value));
  out["symbols"] = symbols;
  out["data"] = data;
  out["checks"] = checks;
  out["metadata"] = metadata;
  return out;
}

nb::dict describeAssembly(const as::AssembleResult &result) {
  nb::list diagnostics;
  for (const as::Diagnostic &d : result.diagnostics) {
    nb::dict entry;
    entry["severity"] = d.severity == as::Diagnostic::Severity::Error ? "error" : "warning";
    entry["file"] = d.file;
    entry["line"] = d.line;
    entry["column"] = d.column;
    entry["message"] = d.message;
    entry["formatted"] = as::formatDiagnostic(d);
    diagnostics.append(entry);
  }
  nb::dict out = result.ok() ? describeObject(result.object) : nb::dict();
  out["diagnostics"] = diagnostics;
  out["ok"] = result.ok();
  return out;
}

as::Options assemblerOptions(const std::vector<std::string> &includeDirs) {
  as::Options options;
  options.includeDirs = includeDirs;
  return options;
}

// One device: a runtime on a backend, with loader access to physical
// memory (as npu-sim), running whole programs.
class Device {
public:
  Device(const std::string &backend, const std::vector<std::string> &regions) {
    rt::RuntimeOptions options;
    options.backend = backend;
    for (const std::string &spec : regions)
      options.backendOptions.addressMap.applyOverride(spec);
    options.backendOptions.addressMap.validate();
    runtime_ = std::make_unique<rt::Runtime>(options);
  }

  std::string backend() const { return runtime_->backendName(); }

  void write(uint64_t address, const nb::bytes &bytes) {
    runtime_->writePhysical(address, bytes.data(), bytes.size());
  }

  nb::bytes read(uint64_t address, uint64_t size) {
    std::vector<uint8_t> bytes(size);
    runtime_->readPhysical(address, bytes.data(), size);
    return toBytes(bytes);
  }

  // Loads the program's data segments (unless `loadData` is false: the
  // caller loaded them and then its own inputs), runs its text to the end
  // (or its HALT) and compares its check regions. A device fault comes back
  // as "fault" (the device is reset, memory kept), not as an exception: the
  // package raises.
  nb::dict run(const nb::bytes &container, bool loadData) {
    const std::vector<uint8_t> bytes = fromBytes(container);
    const bin::Object object = bin::read(bytes);
    if (object.isaHash != isa::kIsaHash)
      throw std::invalid_argument("the program was built for ISA hash " +
                                  std::to_string(object.isaHash) +
                                  ", this toolchain has a different encoding (re-assemble it)");
    runtime_->reset();
    if (loadData)
      load(object);
    // A HALT ends the stream: nothing after it is submitted (as npu-sim).
    std::span<const isa::Packet> text = object.text;
    const auto halt = std::find_if(text.begin(), text.end(), [](const isa::Packet &p) {
      return isa::detail::load32(p.data(), 0) == static_cast<uint32_t>(isa::Opcode::HALT);
    });
    if (halt != text.end())
      text = text.first(size_t(halt - text.begin()) + 1);
    nb::dict out;
    out["fault"] = nb::none();
    try {
      runtime_->submit(text);
      runtime_->synchronize();
    } catch (const rt::Error &error) {
      const std::optional<rt::FaultInfo> fault = runtime_->lastFault();
      if (!fault)
        throw;
      nb::dict f;
      f["packet"] = fault->streamIndex;
      f["address"] = fault->fault.address;
      f["code"] = static_cast<uint32_t>(fault->fault.code);
      f["description"] = fault->describe();
      f["disassembly"] = fault->disassembly;
      out["fault"] = f;
      runtime_->reset();
      return out;
    }
    const sim::Stats stats = runtime_->deviceStats();
    out["packets"] = stats.packets;
    out["cycles"] = stats.cycles;
    out["bytes_read"] = stats.bytesRead;
    out["bytes_written"] = stats.bytesWritten;
    nb::list checks;
    for (const bin::CheckRegion &check : object.checks) {
      std::vector<uint8_t> actual(check.expected.size());
      runtime_->readPhysical(check.address, actual.data(), actual.size());
      const bin::CheckOutcome outcome = bin::compareCheck(check, actual);
      std::string description = bin::describeOutcome(check, outcome);
      for (const bin::CheckMismatch &m : outcome.shown)
        description += "\n" + bin::describeMismatch(check, m);
      nb::dict c;
      c["address"] = check.address;
      c["size"] = check.expected.size();
      c["ok"] = outcome.ok();
      c["mismatches"] = outcome.mismatches;
      c["worst_ulp"] = outcome.worstUlp;
      c["description"] = description;
      checks.append(c);
    }
    out["checks"] = checks;
    return out;
  }

  void loadContainer(const nb::bytes &container) { load(bin::read(fromBytes(container))); }

private:
  void load(const bin::Object &object) {
    for (const bin::DataSegment &segment : object.data)
      runtime_->writePhysical(segment.address, segment.bytes.data(), segment.bytes.size());
  }

  std::unique_ptr<rt::Runtime> runtime_;
};

nb::list instructionTable() {
  nb::list out;
  for (const isa::InstrInfo &info : isa::instructions()) {
    nb::list operands;
    for (const isa::OperandInfo &op : info.operandList()) {
      nb::dict o;
      o["name"] = op.name;
      o["kind"] = isa::kindName(op.kind);
      o["optional"] = op.optional;
      o["doc"] = op.doc;
      nb::list values;
      if (op.kind == isa::OperandKind::Enum)
        for (uint32_t v = 0; v < op.enumInfo->numValues; ++v)
          if (op.accepts(op.enumInfo->values[v].value))
            values.append(op.enumInfo->values[v].name);
      o["values"] = values;
      operands.append(o);
    }
    nb::dict i;
    i["name"] = info.name;
    i["mnemonic"] = info.mnemonic;
    i["opcode"] = static_cast<uint32_t>(info.opcode);
    i["family"] = info.family;
    i["engine"] = isa::engineName(info.engine);
    i["doc"] = info.doc;
    i["operands"] = operands;
    out.append(i);
  }
  return out;
}

} // namespace

NB_MODULE(_npu, m) {
  m.doc() = "The NPU toolchain's assembler, runtime and ISA tables (use the package npu).";
  m.def(
      "assemble_text",
      [](const std::string &text, const std::string &name,
         const std::vector<std::string> &includeDirs) {
        return describeAssembly(as::assembleString(text, name, assemblerOptions(includeDirs)));
      },
      nb::arg("text"), nb::arg("name"), nb::arg("include_dirs"));
  m.def(
      "assemble_file",
      [](const std::string &path, const std::vector<std::string> &includeDirs) {
        return describeAssembly(as::assembleFile(path, assemblerOptions(includeDirs)));
      },
      nb::arg("path"), nb::arg("include_dirs"));
  m.def(
      "read_container",
      [](const nb::bytes &container) { return describeObject(bin::read(fromBytes(container))); },
      nb::arg("container"));
  m.def("instructions", &instructionTable);
  m.attr("isa_version") =
      std::to_string(isa::kIsaVersionMajor) + "." + std::to_string(isa::kIsaVersionMinor);
  m.attr("isa_hash") = isa::kIsaHash;
  nb::class_<Device>(m, "Device")
      .def(nb::init<const std::string &, const std::vector<std::string> &>(), nb::arg("backend"),
           nb::arg("regions"))
      .def_prop_ro("backend", &Device::backend)
      .def("write", &Device::write, nb::arg("address"), nb::arg("data"))
      .def("read", &Device::read, nb::arg("address"), nb::arg("size"))
      .def("load", &Device::loadContainer, nb::arg("container"))
      .def("run", &Device::run, nb::arg("container"), nb::arg("load_data"));
}
