"""ARGMAX, ARGMIN, COUNT, ANY and ALL against PyTorch's CPU on the ISS and, under
co-simulation, on the RTL: the first index of each row's extreme, -0 equal
to +0, subnormals by value, and the first NaN of a row for argmax and for
argmin alike (what PyTorch's CPU returns; docs/types.md §5); the number of
nonzero bytes of each b8 row, whether some or every one is nonzero."""
import numpy as np
import pytest

from conftest import run, tool

SRC, DST = 0x10000000, 0x10800000
COLS = 301  # rows across two chunk ends of the vector engine

BACKENDS = ["iss", "cosim"]


def arg_on_device(tmp_path, backend, mnemonic, x, dtype=None, result_type=np.int64):
    """x (rows x COLS, any array) through one packet; its results, one of
    result_type per row."""
    rows = x.shape[0]
    (tmp_path / "x.bin").write_bytes(x.tobytes())
    program = tmp_path / "k.npuasm"
    typed = f", dtype={dtype}" if dtype else ""
    program.write_text(f".text\n    {mnemonic} {DST:#x}, {SRC:#x}, {rows}, {COLS}{typed}\n"
                       "    halt\n")
    out = tmp_path / "y.bin"
    result = run([tool("npu-sim"), program, "--backend", backend,
                  "--load", f"{tmp_path / 'x.bin'}@{SRC:#x}",
                  "--dump", f"{DST:#x}:{rows * np.dtype(result_type).itemsize}:{out}"])
    assert result.returncode == 0, result.stderr
    return np.frombuffer(out.read_bytes(), dtype=result_type)


def rows_of(torch, torch_type, generator):
    """Random rows and rows whose answer PyTorch defines by a rule: ties of
    +0 and -0, subnormals, infinities, NaNs first, in the middle and last."""
    nan, inf = float("nan"), float("inf")
    x = (torch.randn(12, COLS, generator=generator) * 4).to(torch_type)
    x[1, :] = 0.0
    x[1, 7::2] = -0.0
    x[2, :] = -inf
    x[2, 100] = inf
    x[2, 200] = inf
    x[3, :] = torch.tensor(1e-45).to(torch_type)
    x[3, 150] = 3e-45
    x[4, 0] = nan
    x[5, COLS // 2] = nan
    x[5, COLS // 2 + 9] = -nan
    x[6, -1] = nan
    x[7, :] = 1.5
    x[8, ::3] = x[8].max()  # ties at several places
    x[9, 1::3] = x[9].min()
    return x


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["f32", "bf16", "f16"])
@pytest.mark.parametrize("mnemonic", ["argmax", "argmin"])
def test_float_argmax_equals_pytorch_cpu(tmp_path, backend, dtype, mnemonic):
    torch = pytest.importorskip("torch")
    torch_type = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}[dtype]
    x = rows_of(torch, torch_type, torch.Generator().manual_seed(18))
    bits = x.view(torch.int32 if dtype == "f32" else torch.int16).numpy()
    got = arg_on_device(tmp_path, backend, mnemonic, bits, dtype)
    expected = getattr(torch, mnemonic)(x, -1).numpy()
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mnemonic", ["argmax", "argmin"])
def test_i32_argmax_equals_pytorch_cpu(tmp_path, backend, mnemonic):
    torch = pytest.importorskip("torch")
    info = np.iinfo(np.int32)
    x = torch.randint(info.min, info.max, (8, COLS), dtype=torch.int32,
                      generator=torch.Generator().manual_seed(19))
    x[1, :] = info.min
    x[1, 250] = info.max
    x[2, :] = info.max
    x[2, 3] = info.min
    x[3, ::4] = 7  # ties of a small range
    x[3, 1::4] = -7
    x[3, 2::4] = 7
    x[3, 3::4] = -7
    x[4, :] = 0
    got = arg_on_device(tmp_path, backend, mnemonic, x.numpy(), "i32")
    expected = getattr(torch, mnemonic)(x, -1).numpy()
    np.testing.assert_array_equal(got, expected)


def mask_rows():
    """b8 rows: random bytes, zero half the time; all zero; all 0x80 (any
    nonzero byte is true); zero but the last; nonzero but the first."""
    rng = np.random.default_rng(20)
    x = rng.integers(0, 256, size=(6, COLS), dtype=np.uint8)
    x[rng.random((6, COLS)) < 0.5] = 0
    x[1, :] = 0
    x[2, :] = 0x80
    x[3, :-1] = 0
    x[4, :] = 1
    x[4, 0] = 0
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_count_equals_pytorch_count_nonzero(tmp_path, backend):
    torch = pytest.importorskip("torch")
    x = mask_rows()
    got = arg_on_device(tmp_path, backend, "count", x)
    expected = torch.count_nonzero(torch.from_numpy(x).bool(), dim=-1).numpy()
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mnemonic", ["any", "all"])
def test_any_and_all_equal_pytorch(tmp_path, backend, mnemonic):
    torch = pytest.importorskip("torch")
    x = mask_rows()
    got = arg_on_device(tmp_path, backend, mnemonic, x, result_type=np.uint8)
    expected = getattr(torch, mnemonic)(torch.from_numpy(x).bool(), dim=-1).numpy()
    np.testing.assert_array_equal(got, expected.astype(np.uint8))
