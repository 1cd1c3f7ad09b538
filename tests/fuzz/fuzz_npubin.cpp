// Fuzzes the .npubin reader and the objdump formatting: arbitrary bytes are
// either rejected with a FormatError or read into an object that writes
// back to the same bytes (the format has one canonical layout) and
// disassembles.
#include "npu/asm/disassembler.h"
#include "npu/bin/object.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  npu::bin::Object object;
  try {
    object = npu::bin::read({data, size});
  } catch (const npu::bin::FormatError &) {
    return 0;
  }
  const std::vector<uint8_t> again = npu::bin::write(object);
  if (again.size() != size || !std::equal(again.begin(), again.end(), data))
    std::abort();
  for (bool full : {false, true}) {
    npu::as::DumpOptions dump;
    dump.fullContents = full;
    (void)npu::as::formatObject(object, dump);
  }
  return 0;
}
