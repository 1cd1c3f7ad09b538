"""The RTL's generated fault codes agree with npu::mem::FaultCode.

isa/faults.td is the source of the RTL's fault_e (npu_isa_pkg); the runtime
reads ERROR_CODE as mem::FaultCode (memory/include/npu/mem/fault.h), so the
two must name the same values in the same order.
"""
import re

from conftest import REPO, build_dir


def cpp_fault_codes():
    header = (REPO / "memory" / "include" / "npu" / "mem" / "fault.h").read_text()
    body = re.search(r"enum class FaultCode : \w+ \{(.*?)\};", header, re.S).group(1)
    body = re.sub(r"//[^\n]*", "", body)
    codes, value = {}, -1
    for entry in filter(None, (e.strip() for e in body.split(","))):
        name, _, explicit = (part.strip() for part in entry.partition("="))
        value = int(explicit, 0) if explicit else value + 1
        codes[re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).upper()] = value
    return codes


def sv_fault_codes():
    package = (build_dir() / "generated" / "rtl" / "npu_isa_pkg.sv").read_text()
    body = re.search(r"typedef enum logic \[\d+:0\] \{(.*?)\} fault_e;", package, re.S).group(1)
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"FAULT_(\w+) = \d+'d(\d+)", body)}


def test_rtl_fault_codes_equal_the_cpp_enum():
    cpp = cpp_fault_codes()
    assert cpp["NONE"] == 0 and cpp["INDEX_OUT_OF_RANGE"] == 9  # the parser read the enum
    assert sv_fault_codes() == cpp
