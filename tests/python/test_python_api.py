"""The Python package npu (docs/python.md): assemble, run on every backend,
move arrays, faults and diagnostics as exceptions, the ISA tables, and a
kernel test written with the npu_device fixture (npu.testing)."""
import json

import numpy as np
import pytest

import npu

from conftest import REPO, run, tool

GEMM = REPO / "examples" / "gemm.npuasm"


def test_a_kernel_is_one_function(npu_device):
    # The fixture's device; the kernel's own .check region verifies C, and
    # the read-back equals numpy's product of the inputs the kernel holds.
    program = npu.assemble(GEMM)
    result = npu_device.run(program)
    assert result.ok and result.packets == program.packets and result.cycles > 0
    a = npu_device.read(program.symbols["A"], (16, 16))
    b = npu_device.read(program.symbols["B"], (16, 16))
    assert np.array_equal(npu_device.read(program.symbols["C"], (16, 16)), a @ b)


@pytest.mark.parametrize("backend", ["iss", "rtl", "cosim"])
def test_round_trip_on_every_backend(backend):
    device = npu.Device(backend=backend)
    assert device.backend == backend
    x = np.arange(-8, 8, dtype=np.float32).reshape(4, 4)
    program = npu.assemble("""
        exp 0x20000, 0x10000, 16
        halt
    .data 0x10000
        .fill 16, 4, 0
    .data 0x20000
        .fill 16, 4, 0
    """, name="exp.npuasm")
    device.load(program)
    device.write(0x10000, x)
    result = device.run(program, load=False)
    assert result.packets == 2 and result.bytes_read >= 64 and result.bytes_written >= 64
    y = device.read(0x20000, (4, 4), "float32")
    assert np.allclose(y, np.exp(x), rtol=1e-6)
    # The same program on the ISS gives the same bits and cycles.
    iss = npu.Device(backend="iss")
    iss.load(program)
    iss.write(0x10000, x)
    assert iss.run(program, load=False).cycles == result.cycles
    assert np.array_equal(iss.read(0x20000, (4, 4)), y)


def test_assembly_errors_carry_their_location():
    with pytest.raises(npu.AssemblyError) as error:
        npu.assemble("    nop\n    matmul 1, 2\n", name="bad.npuasm")
    assert (error.value.file, error.value.line, error.value.column) == ("bad.npuasm", 2, 12)
    assert "must be aligned to 4 bytes" in error.value.message
    assert "bad.npuasm:2:12: error:" in str(error.value)
    with pytest.raises(FileNotFoundError):
        npu.assemble(REPO / "no-such.npuasm")


def test_a_fault_is_an_exception_and_the_device_stays_usable():
    device = npu.Device()
    bad = npu.assemble("    exp 0x700000000000, 0x10000, 4\n    halt\n")
    with pytest.raises(npu.DeviceFault) as fault:
        device.run(bad)
    assert fault.value.packet == 0 and fault.value.address == 0x700000000000
    assert "unmapped write of 16 bytes at 0x700000000000" in str(fault.value)
    assert device.run(npu.assemble(GEMM)).ok


def test_a_failed_check_raises_check_error(tmp_path):
    program = npu.assemble("    halt\n.data 0x10000\n    .float 1.0\n.check 0x10000\n    .float 2.0\n")
    with pytest.raises(npu.CheckError) as error:
        npu.Device().run(program)
    assert "FAILED" in str(error.value)
    result = npu.Device().run(program, verify=False)
    assert not result.ok and result.checks[0].mismatches > 0
    program.save(tmp_path / "p.npubin")
    assert npu.load(tmp_path / "p.npubin").container == program.container
    (tmp_path / "junk.npubin").write_bytes(b"not a container")
    with pytest.raises(ValueError, match="junk.npubin"):
        npu.load(tmp_path / "junk.npubin")


def test_memory_regions_and_bad_backends():
    device = npu.Device(memory={"scratch": (0x2_0000_0000, 1 << 16)})
    device.write(0x2_0000_0000, np.array([1, 2, 3], dtype=np.int64))
    assert device.read(0x2_0000_0000, 3, np.int64).tolist() == [1, 2, 3]
    with pytest.raises(RuntimeError, match="unmapped"):
        npu.Device().read(0x2_0000_0000, 4)
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        npu.Device(backend="nope")
    with pytest.raises(ValueError, match="overlaps"):
        npu.Device(memory=["x=0x1000:4K"])


def test_isa_tables():
    matmul = npu.isa.instruction("MATMUL")
    assert matmul.engine == "matrix" and matmul.operands[0].kind == "addr"
    add = npu.isa.instruction("add")
    assert "bf16" in next(o for o in add.operands if o.name == "dtype").values
    # The same table as npu-isa --json.
    listed = json.loads(run([tool("npu-isa"), "--json"]).stdout)["instructions"]
    assert [(i.mnemonic, i.opcode) for i in npu.isa.instructions()] == [(i["mnemonic"], i["opcode"]) for i in listed]
    with pytest.raises(KeyError, match="no instruction 'frobnicate'"):
        npu.isa.instruction("frobnicate")
