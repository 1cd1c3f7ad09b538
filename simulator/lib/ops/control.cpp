// NOP, FENCE, HALT: no data. HALT's effect (ending the stream) is the
// caller's; FENCE has nothing to order in a model that never overlaps packets.
#include "../context.h"

namespace npu::sim {

Work work(const isa::inst::Nop &) { return {}; }
void execute(ExecContext &, const isa::inst::Nop &) {}

Work work(const isa::inst::Fence &) { return {}; }
void execute(ExecContext &, const isa::inst::Fence &) {}

Work work(const isa::inst::Halt &) { return {}; }
void execute(ExecContext &, const isa::inst::Halt &) {}

} // namespace npu::sim
