"""CUMSUM against NumPy and PyTorch's CPU: what it promises (docs/arith.md
§3.1) on the ISS and, under co-simulation, on the RTL. Integers wrap as
NumPy's and PyTorch's int32/int64 cumsum do; f32 is the sequential binary32
sum (one rounding per addition, in increasing j from +0), which PyTorch's
CPU is not (it accumulates f32 in binary64); bf16 and f16 equal PyTorch's
CPU, which accumulates them in binary32 and rounds each prefix (bf16 but for
denormals, which these values do not reach)."""
import numpy as np
import pytest

from conftest import run, tool

SRC, DST = 0x10000000, 0x10800000
ROWS, COLS = 3, 301  # rows across two chunk ends of the vector engine


def cumsum_on_device(tmp_path, backend, x, dtype):
    """x (ROWS x COLS) through one CUMSUM packet; the result's raw bytes."""
    (tmp_path / "x.bin").write_bytes(x.tobytes())
    program = tmp_path / "k.npuasm"
    program.write_text(f".text\n    cumsum {DST:#x}, {SRC:#x}, {ROWS}, {COLS}, dtype={dtype}\n"
                       "    halt\n")
    out = tmp_path / "y.bin"
    result = run([tool("npu-sim"), program, "--backend", backend,
                  "--load", f"{tmp_path / 'x.bin'}@{SRC:#x}",
                  "--dump", f"{DST:#x}:{x.nbytes}:{out}"])
    assert result.returncode == 0, result.stderr
    return np.frombuffer(out.read_bytes(), dtype=x.dtype).reshape(x.shape)


BACKENDS = ["iss", "cosim"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["i32", "i64"])
def test_integer_cumsum_wraps_as_numpy(tmp_path, backend, dtype):
    rng = np.random.default_rng(15)
    np_type = np.int32 if dtype == "i32" else np.int64
    info = np.iinfo(np_type)
    x = rng.integers(info.min, info.max, size=(ROWS, COLS), dtype=np_type, endpoint=True)
    x[0, :4] = [info.max, 1, info.min, -1]  # wrap up, then down
    got = cumsum_on_device(tmp_path, backend, x, dtype)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, np.cumsum(x, axis=-1, dtype=np_type))


@pytest.mark.parametrize("backend", BACKENDS)
def test_f32_cumsum_is_the_sequential_binary32_sum(tmp_path, backend):
    rng = np.random.default_rng(16)
    x = (rng.standard_normal((ROWS, COLS)) * np.exp2(rng.integers(-8, 9, (ROWS, COLS))))
    x = x.astype(np.float32)
    x[1, 0] = -0.0  # +0 + -0 = +0
    got = cumsum_on_device(tmp_path, backend, x, "f32")
    expected = np.empty_like(x)
    s = np.zeros(ROWS, np.float32)
    for j in range(COLS):
        s = (s + x[:, j]).astype(np.float32)
        expected[:, j] = s
    np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_half_float_cumsum_equals_pytorch_cpu(tmp_path, backend, dtype):
    torch = pytest.importorskip("torch")
    torch_type = torch.bfloat16 if dtype == "bf16" else torch.float16
    generator = torch.Generator().manual_seed(17)
    x = (torch.randn(ROWS, COLS, generator=generator) * 4).to(torch_type)
    got = cumsum_on_device(tmp_path, backend, x.view(torch.int16).numpy(), dtype)
    expected = torch.cumsum(x, -1).view(torch.int16).numpy()
    np.testing.assert_array_equal(got, expected)
