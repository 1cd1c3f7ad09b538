"""NPU_ISS_THREADS: the host threads the ISS may split a large packet over
(docs/simulator.md, *Exactness on the host*). A bad value is an error naming
the variable and the value; a MATMUL large enough to be split gives the same
bits on 1, 2 and 3 threads (the threads split C, never K), and so do the
vector instructions (the threads split the elements or the rows)."""
import os

import numpy as np
import pytest

from conftest import run, tool

A, B, C = 0x10000000, 0x10400000, 0x10800000
M, K, N = 192, 300, 160  # 9.2M multiply-adds: three bands of C


@pytest.mark.parametrize("value, message", [
    ("x", "NPU_ISS_THREADS='x' is not a non-negative integer"),
    ("-1", "NPU_ISS_THREADS='-1' is not a non-negative integer"),
    ("2 ", "NPU_ISS_THREADS='2 ' is not a non-negative integer"),
    ("0", "NPU_ISS_THREADS='0' is out of range (at least 1)"),
    ("1025", "NPU_ISS_THREADS='1025' is out of range (at most 1024)"),
])
def test_a_bad_thread_count_is_an_error(tmp_path, value, message):
    program = tmp_path / "k.npuasm"
    program.write_text(".text\n    halt\n")
    result = run([tool("npu-sim"), program], env=dict(os.environ, NPU_ISS_THREADS=value))
    assert result.returncode != 0
    assert f"npu-sim: error: {message}" in result.stderr


def test_matmul_gives_the_same_bits_on_any_thread_count(tmp_path):
    rng = np.random.default_rng(17)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    (tmp_path / "a.bin").write_bytes(a.tobytes())
    (tmp_path / "b.bin").write_bytes(b.tobytes())
    program = tmp_path / "k.npuasm"
    program.write_text(f".text\n    matmul {C:#x}, {A:#x}, {B:#x}, {M}, {K}, {N}, {K}, {N}, {N}\n"
                       "    halt\n")
    results = {}
    for threads in ("1", "2", "3"):
        out = tmp_path / f"c{threads}.bin"
        result = run([tool("npu-sim"), program,
                      "--load", f"{tmp_path / 'a.bin'}@{A:#x}",
                      "--load", f"{tmp_path / 'b.bin'}@{B:#x}",
                      "--dump", f"{C:#x}:{M * N * 4}:{out}"],
                     env=dict(os.environ, NPU_ISS_THREADS=threads))
        assert result.returncode == 0, result.stderr
        results[threads] = out.read_bytes()
    assert results["1"] == results["2"] == results["3"]
    c = np.frombuffer(results["1"], dtype=np.float32).reshape(M, N)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=0, atol=1e-4)


# More than three threads' worth of elements (vector_ops.h: 2^16 each), with
# a tail past every vector width.
ROWS, COLS = 301, 1001
ELEMENTS = ROWS * COLS
X, Y, Z, W = 0x10000000, 0x10400000, 0x10800000, 0x10c00000


def test_vector_instructions_give_the_same_bits_on_any_thread_count(tmp_path):
    rng = np.random.default_rng(18)
    x = rng.normal(0, 4, ELEMENTS).astype(np.float32)
    w = rng.uniform(-1, 1, COLS).astype(np.float32)
    (tmp_path / "x.bin").write_bytes(x.tobytes())
    (tmp_path / "w.bin").write_bytes(w.tobytes())
    program = tmp_path / "k.npuasm"
    # EXP and ADD over the elements; SILU on bf16 (the recipe runner);
    # SOFTMAX and RMSNORM over rows; each into its own buffer.
    program.write_text(f""".text
    exp {Y:#x}, {X:#x}, {ELEMENTS}
    add {Y:#x}, {Y:#x}, {X:#x}, 1, {ELEMENTS}, alpha=0.5
    silu {Z:#x}, {X:#x}, {ELEMENTS}, dtype=bf16
    softmax {W:#x}, {X:#x}, {ROWS}, {COLS}, scale=0.5
    rmsnorm {W + ROWS * COLS * 4:#x}, {X:#x}, {X + ROWS * COLS * 4:#x}, 0, {ROWS}, {COLS}, 1e-6, use_weight
    halt
""")
    dumps = {"y": (Y, ELEMENTS * 4), "z": (Z, ELEMENTS * 2), "w": (W, 2 * ROWS * COLS * 4)}
    results = {}
    for threads in ("1", "2", "3"):
        command = [tool("npu-sim"), program, "--load", f"{tmp_path / 'x.bin'}@{X:#x}",
                   "--load", f"{tmp_path / 'w.bin'}@{X + ROWS * COLS * 4:#x}"]
        for name, (address, size) in dumps.items():
            command += ["--dump", f"{address:#x}:{size}:{tmp_path / (name + threads + '.bin')}"]
        result = run(command, env=dict(os.environ, NPU_ISS_THREADS=threads))
        assert result.returncode == 0, result.stderr
        results[threads] = [(tmp_path / (name + threads + ".bin")).read_bytes() for name in dumps]
    assert results["1"] == results["2"] == results["3"]
    y = np.frombuffer(results["1"][0], dtype=np.float32)
    np.testing.assert_allclose(y, np.exp(x.astype(np.float64)) + 0.5 * x, rtol=1e-5, atol=1e-6)
    softmax = np.frombuffer(results["1"][2], dtype=np.float32)[:ROWS * COLS].reshape(ROWS, COLS)
    np.testing.assert_allclose(softmax.sum(axis=1), 1, rtol=1e-5)
