#include "randgen_options.h"

#include <sstream>

namespace npu::cli {

namespace {

std::vector<std::string> splitList(const std::string &text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty())
      items.push_back(item);
  return items;
}

uint32_t percentOption(const po::variables_map &vm, const char *name) {
  const uint32_t value = vm[name].as<uint32_t>();
  if (value > 100)
    throw po::error(std::string("--") + name + " = " + std::to_string(value) + " is above 100");
  return value;
}

} // namespace

void addGeneratorOptions(po::options_description &options) {
  const verify::GeneratorOptions defaults;
  options.add_options()("seed,s", po::value<uint64_t>()->default_value(0),
                        "random seed (the same seed gives the same stream)")(
      "packets,n", po::value<uint32_t>()->default_value(defaults.packets),
      "packets per stream, a final HALT included")(
      "fault-percent", po::value<uint32_t>()->default_value(defaults.faultPercent),
      "chance per packet that it is made to fault")(
      "faults", po::value<std::string>()->default_value("", "all"),
      "comma-separated fault classes to inject: unmapped, permission, out-of-region, misaligned, "
      "invalid-operand, unknown-opcode, reserved-bits, overlap, index-out-of-range")(
      "opcodes", po::value<std::string>()->default_value("", "all"),
      "comma-separated mnemonics to restrict the instruction mix to")(
      "large-percent", po::value<uint32_t>()->default_value(defaults.largePercent),
      "chance per packet of a large shape")(
      "pair-percent", po::value<uint32_t>()->default_value(defaults.pairPercent),
      "chance that a large packet has a second large size, past a blocking edge")(
      "chain-percent", po::value<uint32_t>()->default_value(defaults.chainPercent),
      "chance that an input is an earlier packet's output")(
      "alias-percent", po::value<uint32_t>()->default_value(defaults.aliasPercent),
      "chance of in-place and coinciding operands where legal")(
      "special-percent", po::value<uint32_t>()->default_value(defaults.specialPercent),
      "share of special float values (zeros, subnormals, infinities, NaN, huge, tiny)");
}

verify::GeneratorOptions generatorOptionsFrom(const po::variables_map &vm) {
  verify::GeneratorOptions options;
  options.seed = vm["seed"].as<uint64_t>();
  options.packets = vm["packets"].as<uint32_t>();
  if (options.packets == 0)
    throw po::error("--packets must be at least 1");
  options.faultPercent = percentOption(vm, "fault-percent");
  options.largePercent = percentOption(vm, "large-percent");
  options.pairPercent = percentOption(vm, "pair-percent");
  options.chainPercent = percentOption(vm, "chain-percent");
  options.aliasPercent = percentOption(vm, "alias-percent");
  options.specialPercent = percentOption(vm, "special-percent");
  try {
    for (const std::string &name : splitList(vm["faults"].as<std::string>()))
      options.faultClasses.push_back(verify::parseFaultClass(name));
  } catch (const std::invalid_argument &e) {
    throw po::error(std::string("--faults: ") + e.what());
  }
  for (const std::string &name : splitList(vm["opcodes"].as<std::string>())) {
    const isa::InstrInfo *info = isa::findMnemonic(name);
    if (!info)
      throw po::error("--opcodes: unknown mnemonic '" + name + "' (npu-isa lists them)");
    options.opcodes.push_back(info->opcode);
  }
  return options;
}

} // namespace npu::cli
